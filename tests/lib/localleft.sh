# shellcheck shell=bash
# The Local backups an Etcd left behind read by another namespace (issue 29), for
# tests/e2e/attack10_local_deleted_away.sh and attack10_local_moved_away.sh: the set-up, the
# control, the way etcd-a leaves its directory, then namespace other's Etcd, drill and restore on
# it. Sourced by a script that has run `set -euo pipefail`.
#   local_left_attack HOW SCRIPT: HOW "deleted" (shoot deletes etcd-a) or "moved" (shoot moves
#   etcd-a to prefix shoot--a/etcd2); SCRIPT names the test in its last line.
. "$(dirname "${BASH_SOURCE[0]}")/snapshot.sh"
. "$(dirname "${BASH_SOURCE[0]}")/controller.sh"
. "$(dirname "${BASH_SOURCE[0]}")/localstore.sh"

local_left_attack() {
local how=$1
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
DIR=$NODE/var/lib/lb/bkt/shoot--a/etcd
TGT=$NODE/var/lib/lb/obkt/other/restored
etcd() { local_etcd "$1" "$2" bkt "$3" etcd-backup; } # ns name prefix
dst() { jp "$1" etcdrestoredrill/d "{.status.$2}"; }
ended() { [ -n "$(dst "$1" lastResult)" ]; }
mounts() { kc -n "$1" get jobs -o jsonpath='{range .items[*]}{.metadata.name}={.spec.template.spec.volumes[*].hostPath.path} {end}'; }
rphase() { jp "$1" "etcdrestore/$2" '{.status.phase}'; }
over() { p=$(rphase "$1" "$2"); [ "$p" = Completed ] || [ "$p" = Failed ]; }
files() { if [ -d "$1" ]; then (cd "$1" && find . -type f | sort | xargs); fi; }

mkdir -p "$DIR/v2" "$NODE/var/lib/lb/obkt"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other etcd-backup /var/lib/lb
wh_register_backups
ctl_jobs_serve shoot
ctl_jobs_serve other
ctl_start

out=$(etcd shoot etcd-a shoot--a/etcd 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
theirs=Full-00000000-00000100-$(($(date +%s) - 60)).gz
cp "$SNAP_WORK/full" "$DIR/v2/$theirs" # etcd-a's sidecar
wh_caught_up # the caches
if out=$(etcd other etcd-x shoot--a/etcd 2>&1); then
    ctl_fail "control: other's Etcd on shoot's live directory admitted: $out"
fi
ok "control: other's Etcd on shoot's live directory refused: ${out:0:160}"

# control: the owner's drill reads its own snapshot
local_drill shoot etcd-a
ksim_wait 120 ended shoot || ctl_fail "shoot's drill: no verdict: $(kc -n shoot get etcdrestoredrill d -o jsonpath='{.status}')"
st=$(kc -n shoot get etcdrestoredrill d -o jsonpath='{.status}')
grep -qF "shoot--a/etcd/v2/$theirs" <<<"$st" || ctl_fail "shoot's drill did not read its own snapshot: $st"
ok "shoot's drill of its own directory read $theirs ($(dst shoot lastResult))"

if [ "$how" = moved ]; then
    # shoot moves its Etcd to another prefix: the old directory keeps its snapshots
    out=$(etcd shoot etcd-a shoot--a/etcd2 2>&1) || ctl_fail "shoot's move of etcd-a to shoot--a/etcd2 refused: $out"
    ok "shoot moved etcd-a to prefix shoot--a/etcd2; /var/lib/lb/bkt/shoot--a/etcd still holds $(files "$DIR")"
else
    # shoot deletes its Etcd: the directory keeps its snapshots
    kc -n shoot delete etcd etcd-a --wait=false >/dev/null || ctl_fail "cannot delete shoot/etcd-a"
    ksim_wait 30 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get etcd etcd-a >/dev/null 2>&1" ||
        ctl_fail "shoot/etcd-a is still stored"
    ok "shoot deleted etcd-a; /var/lib/lb/bkt/shoot--a/etcd still holds $(files "$DIR"); entries: $(kc get backupentries -o name 2>/dev/null | xargs)"
fi
wh_caught_up # the caches (a deleted Etcd's directory entry was made while etcd-a lived)

holes=0
out=$(etcd other etcd-x shoot--a/etcd 2>&1) || { echo "held: other's Etcd on shoot's old directory refused: ${out:0:300}"; }
if kc -n other get etcd etcd-x >/dev/null 2>&1; then
    ok "other's etcd-x admitted on /var/lib/lb/bkt/shoot--a/etcd (its sidecar would restore shoot's snapshots at its first start)"
    # D1: a drill of etcd-x
    local_drill other etcd-x
    ksim_wait 120 ended other || ctl_fail "other's drill: no verdict: $(kc -n other get etcdrestoredrill d -o jsonpath='{.status}')"
    st=$(kc -n other get etcdrestoredrill d -o jsonpath='{.status}')
    if grep -qF "$theirs" <<<"$st"; then
        echo "HOLE: D1: namespace other drilled shoot's old directory /var/lib/lb/bkt/shoot--a/etcd (left when shoot $how etcd-a; other's Etcd claims it now): Jobs $(mounts other); status ${st:0:400}"
        holes=$((holes + 1))
    else echo "held: D1: $(dst other lastResult): ${st:0:300}"; fi
    # R1: a restore from the old directory
    out=$(kc apply -f - 2>&1 <<EOF2
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: other}
spec:
  source: {store: {provider: Local, container: bkt, prefix: shoot--a/etcd, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-r, store: {provider: Local, container: obkt, prefix: other/restored, secretRef: {name: etcd-backup}}}
EOF2
) || echo "held: R1: refused at admission: ${out:0:300}"
    if kc -n other get etcdrestore r >/dev/null 2>&1; then
        ksim_wait 120 over other r || ctl_fail "r did not end: $(kc -n other get etcdrestore r -o jsonpath='{.status}')"
        got=$(files "$TGT")
        if grep -qF "$theirs" <<<"$got" && cmp -s "$SNAP_WORK/full" "$TGT/v2/$theirs"; then
            echo "HOLE: R1: namespace other's EtcdRestore r ($(rphase other r)) copied shoot's $theirs from the directory etcd-a left ($how) /var/lib/lb/bkt/shoot--a/etcd into /var/lib/lb/obkt/other/restored (there: $got)"
            holes=$((holes + 1))
        else echo "held: R1: $(rphase other r): nothing copied: $(jp other etcdrestore/r '{.status.error}' | head -c 300)"; fi
    fi
fi
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): the Local backups of an Etcd $how away read by another namespace"; exit 1; }
echo "$2: ok"
}
