#!/usr/bin/env bash
# An EtcdRestoreDrill reads another namespace's Local backups in a Local BackupBucket both
# namespaces may use, the other's part given to it by prefixScope: Namespace. Issue 29: no
# backup is handed to another tenant.
# docs/restore-drills.md: "A Local store is drilled only in a directory the drill's namespace
# owns ... hostPath is in a Secret the namespace edits itself, so warden-controller decides
# whose directory it is each time it makes a drill's Job ... The namespace's own Secrets alone
# never prove it". docs/backup-entries.md (Local stores): "one directory, one cluster: a Secret
# moved onto another namespace's directory proves nothing"; (Prefixes partitioned by namespace)
# "With spec.prefixScope: Namespace the bucket's owner gives every prefix of the store to one
# namespace, named by the prefix itself".
#   1. BackupBucket local (provider Local, container bkt, hostPath /var/lib/lb, prefixScope
#      Namespace) selecting namespaces shoot and other (Gardener's shape: one bucket shared by
#      the tenants of a seed, a part each). Namespace shoot: Etcd etcd-a, Local, container bkt,
#      prefix shoot/etcd-a (shoot's part), hostPath /var/lib/lb; its sidecar wrote a full
#      snapshot to /var/lib/lb/bkt/shoot/etcd-a.
#   2. Namespace other: Etcd etcd-x, Local, container bkt, prefix shoot/etcd-a, hostPath
#      /var/lib/evil (admitted: a directory of its own, no bucket's), then its Secret's hostPath
#      edited to /var/lib/lb, and an EtcdRestoreDrill of etcd-x run by hand.
# Control: shoot's own drill of etcd-a reads its snapshot (the fixture is no bbolt database: the
# verdict NotRestorable names it); other's Etcd at prefix shoot/etcd-a in the bucket's own
# directory is refused at admission (the part is shoot's).
# Wanted: other's drill fails (TargetNotOwned) without a Job. Oracle: other's drill Jobs (their
# hostPath volumes) and its status (the snapshot it read, shoot's). Fails (HOLE) while the hole
# exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
DIR=$NODE/var/lib/lb/bkt/shoot/etcd-a
etcd() { local_etcd "$1" "$2" bkt shoot/etcd-a "$3"; } # ns name hostPath-secret
dst() { jp "$1" etcdrestoredrill/d "{.status.$2}"; }
ended() { [ -n "$(dst "$1" lastResult)" ]; }
mounts() { kc -n "$1" get jobs -o jsonpath='{range .items[*]}{.spec.template.spec.volumes[*].hostPath.path} {end}'; }

mkdir -p "$DIR/v2" "$NODE/var/lib/evil/bkt"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
kc label namespace shoot etcd-warden.io/backups=local >/dev/null
kc label namespace other etcd-warden.io/backups=local >/dev/null
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket local"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: local}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: 1h
  prefixScope: Namespace
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: local}}
EOF
[ "$(kc get backupbucket local -o jsonpath='{.spec.prefixScope}')" = Namespace ] ||
    ctl_fail "BackupBucket local is not stored with prefixScope Namespace"
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other etcd-lb /var/lib/lb
local_host_path other etcd-backup /var/lib/evil
wh_register_backups
ctl_jobs_serve shoot
ctl_jobs_serve other
ctl_start

out=$(etcd shoot etcd-a etcd-backup 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
theirs=Full-00000000-00000100-$(($(date +%s) - 60)).gz
cp "$SNAP_WORK/full" "$DIR/v2/$theirs" # etcd-a's sidecar

# control: shoot's part is not other's at admission
if out=$(etcd other etcd-y etcd-lb 2>&1); then
    ctl_fail "control: other's Etcd at prefix shoot/etcd-a in the bucket's directory admitted: $out"
fi
ok "control: other's Etcd at shoot/etcd-a in /var/lib/lb/bkt refused: ${out:0:200}"
out=$(etcd other etcd-x etcd-backup 2>&1) || ctl_fail "other/etcd-x (hostPath /var/lib/evil) refused: $out"
ok "other's etcd-x admitted in its own directory /var/lib/evil/bkt/shoot/etcd-a"

# control: the owner's drill reads its own snapshot
local_drill shoot etcd-a
ksim_wait 120 ended shoot || ctl_fail "shoot's drill: no verdict: $(kc -n shoot get etcdrestoredrill d -o jsonpath='{.status}')"
st=$(kc -n shoot get etcdrestoredrill d -o jsonpath='{.status}')
grep -qF "shoot/etcd-a/v2/$theirs" <<<"$st" || ctl_fail "shoot's drill did not read its own snapshot: $st"
expect "shoot's drill Job mounts" "/var/lib/lb/bkt" "$(mounts shoot | tr -d ' ')"
ok "shoot's drill of its own directory read $theirs ($(dst shoot lastResult))"

# the attack: other moves its Secret onto the bucket's directory and drills shoot's part
local_host_path other etcd-backup /var/lib/lb
local_drill other etcd-x
ksim_wait 120 ended other || ctl_fail "other's drill: no verdict: $(kc -n other get etcdrestoredrill d -o jsonpath='{.status}')"
st=$(kc -n other get etcdrestoredrill d -o jsonpath='{.status}')
if grep -qF "$theirs" <<<"$st" || grep -qF /var/lib/lb/bkt <<<"$(mounts other)"; then
    ctl_fail "HOLE: namespace other drilled shoot's directory /var/lib/lb/bkt/shoot/etcd-a, in the part of BackupBucket local (prefixScope Namespace) that is shoot's (its Secret's hostPath moved there after admission; the bucket selects other too): Jobs mounting $(mounts other); status $st"
fi
expect "other's drill" Failed "$(dst other lastResult)"
reason=$(jp other etcdrestoredrill/d '{.status.conditions[?(@.type=="Ready")].reason}')
expect "its Ready reason" TargetNotOwned "$reason"
msg=$(jp other etcdrestoredrill/d '{.status.conditions[?(@.type=="Ready")].message}')
! grep -qE "namespace shoot|shoot/etcd-a,|etcd-a\b" <<<"${msg//shoot\/etcd-a\"/}" || ctl_fail "the message names the other namespace: $msg"
ok "other's drill refused: ${msg:0:200}"
expect "no Job of other's drill" "" "$(mounts other | tr -d ' ')"
ctl_stop
echo "attack10_drill_bucket_part: ok"
