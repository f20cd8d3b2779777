#!/usr/bin/env bash
# An EtcdRestore of one namespace copies another's Local backups out of a Local BackupBucket both
# may use, the other's part given to it by prefixScope: Namespace. Issue 29: a restore reads only
# backups its namespace owns.
# docs/backups-and-restores.md: "Any source store is refused at admission when the restore's
# namespace could not claim it: a BackupBucket owning that store ... whose prefixScope: Namespace
# gives the prefix to another namespace"; docs/backup-entries.md (Local stores): warden-controller
# judges the source again when it makes the copy Job, "(one directory, one cluster: a Secret
# moved onto another namespace's directory proves nothing)".
#   1. BackupBucket local (Local, container bkt, hostPath /var/lib/lb, prefixScope Namespace)
#      selecting namespaces shoot and other (one bucket shared by a seed's tenants, a part
#      each). shoot's Etcd etcd-a (prefix shoot/etcd-a, its part) wrote a full snapshot to
#      /var/lib/lb/bkt/shoot/etcd-a.
#   2. Namespace other: Etcd etcd-x, Local, container bkt, prefix shoot/etcd-a, hostPath
#      /var/lib/evil (a directory of its own, no bucket's). EtcdRestore r: source Local
#      bkt/shoot/etcd-a with its Secret src at /var/lib/evil (inside etcd-x's claim: admitted),
#      target Local obkt/other/restored (hostPath /var/lib/evil). Before the controller runs (so
#      the order is certain), other edits src's hostPath to /var/lib/lb.
#   R1. the same restore (rlb) with its source Secret at /var/lib/lb from the start, no edit.
#   R2. the restore r above, its Secret moved after admission.
#   P1. (the partition itself) other's Etcd etcd-z at prefix third/etcd of the bucket, a part
#       that is not other's: docs/backup-entries.md "A claim of a prefix that belongs to another
#       namespace (or to none) is refused at admission".
# Control: shoot's own EtcdRestore r0 from its directory copies its snapshot.
# Wanted: R1 refused at admission, r fails (the namespace does not own the directory), nothing copied. Oracle: the node's
# directories (job_exec.py mounts hostPath volumes under $CRONJOB_EXEC_HOST_ROOT): shoot's
# snapshot under other's target. Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
DIR=$NODE/var/lib/lb/bkt/shoot/etcd-a
TGT=$NODE/var/lib/evil/obkt/other/restored
OWN=$NODE/var/lib/lb/bkt/shoot/restored
bucket() { # name hostPath-secret namespace-label
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket $1"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: $1}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: $2}
  deletionGracePeriod: 1h
  prefixScope: Namespace
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: $3}}
EOF
}
restore() { # ns name target-container target-prefix [source-secret]
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $2, namespace: $1}
spec:
  source: {store: {provider: Local, container: bkt, prefix: shoot/etcd-a, secretRef: {name: ${5:-src}}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-$2, store: {provider: Local, container: $3, prefix: $4, secretRef: {name: etcd-backup}}}
EOF
}
rphase() { jp "$1" "etcdrestore/$2" '{.status.phase}'; }
over() { p=$(rphase "$1" "$2"); [ "$p" = Completed ] || [ "$p" = Failed ]; }
files() { if [ -d "$1" ]; then (cd "$1" && find . -type f | sort | xargs); fi; }

mkdir -p "$DIR/v2" "$NODE/var/lib/evil/obkt" "$NODE/var/lib/evil/bkt"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
kc label namespace shoot etcd-warden.io/backups=local >/dev/null
kc label namespace other etcd-warden.io/backups=local >/dev/null
bucket local local-bucket local
[ "$(kc get backupbucket local -o jsonpath='{.spec.prefixScope}')" = Namespace ] ||
    ctl_fail "BackupBucket local is not stored with prefixScope Namespace"
local_host_path shoot etcd-backup /var/lib/lb
local_host_path shoot src /var/lib/lb
local_host_path other etcd-backup /var/lib/evil
local_host_path other src /var/lib/evil
local_host_path other src-lb /var/lib/lb
wh_register_backups
ctl_jobs_serve shoot
ctl_jobs_serve other

kc apply -f - >/dev/null <<EOF || ctl_fail "shoot/etcd-a refused"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-a, namespace: shoot}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: bkt, prefix: shoot/etcd-a, secretRef: {name: etcd-backup}}}
EOF
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
theirs=Full-00000000-00000100-$(($(date +%s) - 60)).gz
cp "$SNAP_WORK/full" "$DIR/v2/$theirs" # etcd-a's sidecar
wh_caught_up # the caches

kc apply -f - >/dev/null <<EOF || ctl_fail "other/etcd-x (hostPath /var/lib/evil) refused"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-x, namespace: other}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: bkt, prefix: shoot/etcd-a, secretRef: {name: etcd-backup}}}
EOF
ok "other's etcd-x admitted in its own directory /var/lib/evil/bkt/shoot/etcd-a"
wh_caught_up # the caches
# the partition holds for claims in the bucket: other's Etcd at a free prefix outside its part
if out=$(kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-z, namespace: other}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: bkt, prefix: third/etcd, secretRef: {name: src-lb}}}
EOF
); then
    pz="other's Etcd etcd-z admitted at prefix third/etcd of BackupBucket local (prefixScope Namespace: namespace third's part, not other's): $out"
else
    pz=""
    echo "held: P1: other's Etcd at prefix third/etcd of BackupBucket local refused: ${out:0:300}"
fi
holes=0
[ -z "$pz" ] || { echo "HOLE: P1: $pz"; holes=$((holes + 1)); }
# R1: other's restore straight from shoot's part of the bucket (its Secret src-lb at /var/lib/lb)
out=$(restore other rlb obkt other/restored-lb src-lb) || echo "held: R1: refused at admission: ${out:0:300}"
out=$(restore shoot r0 bkt shoot/restored) || ctl_fail "shoot's own restore refused: $out"
out=$(restore other r obkt other/restored) ||
    ctl_fail "other's restore from its own /var/lib/evil/bkt/shoot/etcd-a refused: $out"
ok "other's EtcdRestore r admitted (source /var/lib/evil/bkt/shoot/etcd-a, inside its Etcd etcd-x's claim)"
local_host_path other src /var/lib/lb # moved onto shoot's directory before any copy Job
ctl_start

ksim_wait 120 over shoot r0 || ctl_fail "r0 did not end: $(kc -n shoot get etcdrestore r0 -o jsonpath='{.status}')"
expect "shoot's own restore" Completed "$(rphase shoot r0)"
cmp -s "$SNAP_WORK/full" "$OWN/v2/$theirs" || ctl_fail "shoot's restore did not copy its snapshot: $(files "$OWN")"
ok "shoot's restore copied its own $theirs"

judge() { # CASE RESTORE TARGET-DIR HOW
    local got
    if kc -n other get etcdrestore "$2" >/dev/null 2>&1; then
        ksim_wait 120 over other "$2" || ctl_fail "$1: $2 did not end: $(kc -n other get etcdrestore "$2" -o jsonpath='{.status}')"
    fi
    got=$(files "$3")
    if grep -qF "$theirs" <<<"$got" && cmp -s "$SNAP_WORK/full" "$3/v2/$theirs"; then
        echo "HOLE: $1: namespace other's EtcdRestore $2 ($(rphase other "$2")) copied shoot's $theirs from /var/lib/lb/bkt/shoot/etcd-a (shoot's part of BackupBucket local, prefixScope Namespace) into ${3#$NODE}: $4 (there: $got)"
        holes=$((holes + 1))
    else echo "held: $1: $2 $(rphase other "$2" 2>/dev/null): nothing copied: $(jp other "etcdrestore/$2" '{.status.error}' 2>/dev/null | head -c 300)"; fi
}
judge R1 rlb "$NODE/var/lib/evil/obkt/other/restored-lb" "its source Secret at /var/lib/lb from the start"
judge R2 r "$TGT" "admitted from its own /var/lib/evil, its Secret src moved to /var/lib/lb before the copy Job"
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a restore copied another namespace's part of a shared Local bucket"; exit 1; }
echo "attack10_restore_bucket_part: ok"
