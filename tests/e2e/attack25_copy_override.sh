#!/usr/bin/env bash
# docs/backups-and-restores.md + backup-entries.md: a retained copy "was written with the
# destination's Secret and is deleted with the bucket's, so the rule of an Etcd's entry holds
# for it too", and that rule says "an endpointOverride sends the sidecar elsewhere": every
# endpoint the writer may take must be the one the bucket's deletions use. For S3,
# warden-snapshot's --store-endpoint-override "wins over the Secret's endpoint".
# Namespace shoot takes a Retain EtcdBackup o of etcd-main into copies--o with a copy of the
# bucket's Secret but spec.destination.endpointOverride naming the tenant's own service: its copy
# can never land in the operator's store. Its copy Job is made; shoot (Jobs rights in its
# namespace) deletes it before it runs: the result is never read, so the retained window runs to
# the Job's deadline. Meanwhile another seed's cluster writes into copies--o of the operator's
# store. o is deleted; past the grace period its entry must delete nothing there.
# Oracle: s3rver's listing of copies--o.
set -euo pipefail
. "$(dirname "$0")/../lib/retained.sh"
D=copies--o
TENANT_SERVICE=http://minio.tenant.example:9000
ret_stage

if ! out=$(kc apply -f - 2>&1 <<EOF2
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: o, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Retain
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $D, endpointOverride: "$TENANT_SERVICE", secretRef: {name: etcd-backup}}
EOF2
); then
    echo "held: the EtcdBackup with a foreign endpointOverride refused: $out"; exit 0
fi
if ! ksim_wait 60 ret_has_job o; then
    echo "held: no copy Job of o: $(kc -n "$NS" get etcdbackup o -o jsonpath='{.status}')"; ctl_stop; exit 0
fi
ok "o's copy Job: $(ret_job_args o | cut -c1-400)"
sleep 1
theirs=$D/v2/Full-00000000-00000500-1800000000.gz
snap_fixture "$SNAP_WORK/theirs" 4096 Full.gz
snap_s3 put "$theirs" "$SNAP_WORK/theirs"
ok "the other seed wrote $theirs into the operator's store"
kc -n "$NS" delete job o--copy >/dev/null || ctl_fail "cannot delete o's copy Job"
ksim_wait 60 ret_over o || ctl_fail "o did not end: $(kc -n "$NS" get etcdbackup o -o jsonpath='{.status}')"
ok "o $(ret_bstatus o phase): $(kc -n "$NS" get etcdbackup o -o jsonpath='{.status}' | cut -c1-500)"
kc -n "$NS" delete etcdbackup o --timeout=60s >/dev/null || ctl_fail "o not deleted"
e=$(ret_entry_of $D)
if [ -z "$e" ]; then echo "held: no entry for o's prefix; events $(ctl_events "$NS" o | tail -3 | tr '\n' '|')"; ctl_stop; exit 0; fi
ok "entry $e spec $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-700)"
echo "events of o: $(ctl_events "$NS" o | tail -3 | tr '\n' '|' | cut -c1-400)"
ctl_s3_bucket 2s
ksim_wait 90 ctl_entry_settled "$e" || echo "entry $e not settled: $(kc get backupentry "$e" -o jsonpath='{.status}' | cut -c1-300)"
echo "events of $e: $(ctl_events default "$e" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(ret_listing $D)
echo "left under $D: $(echo $left)"
ctl_stop
if ! grep -qF "$theirs" <<<"$left"; then
    echo "HOLE: the entry of shoot's retained copy o, whose destination's endpointOverride named $TENANT_SERVICE (never the operator's store), deleted $theirs, another seed's (left: ${left:-nothing})"
    exit 1
fi
echo "held: $theirs stays"
echo "attack25_copy_override: ok"
