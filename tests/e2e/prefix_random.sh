#!/usr/bin/env bash
# One prefix, one cluster, and backups deleted only for their writer, under seeded random
# sequences on the whole stack: kube-sim, warden-webhook with the one-prefix rule and the
# BackupBucket authority check (--backup-entries --etcd-backups, the Etcd webhook on CREATE too
# and the backups webhook, as the chart registers them), warden-controller keeping
# BackupEntries and running their deletion Jobs (tests/support/job_exec.py runs them with
# warden-snapshot, one at a time, recording each run) against Ceph's RADOS Gateway (which keeps
# a key's leading '/', as AWS does: the keys etcd-backup-restore v0.41+ writes for "/a") behind
# tests/support/fault_proxy.py, which records every request the operator's credentials make;
# each seed's bucket has a grace period of 2 s and a namespaceSelector. From each seed alone
# tests/support/prefix_random.py draws Etcd creates (one, or two at the same moment) over
# prefixes drawn to collide, provider spellings, endpoint aliases, sidecar versions (v0.28.4,
# v0.43.0) and credentials (none, a missing Secret), in two selected namespaces and one the
# bucket does not select; deletes, re-creates, prefix moves, respellings of live Etcds,
# EtcdBackups of no Etcd or to a failing destination and their deletion, time passing and the
# sidecars writing. After every operation, from the bucket, the store's record and the Job
# runs: no snapshot of a cluster still alive was deleted, every live cluster lists only its
# own snapshots, every deleted object was written by the Etcd whose entry's Job deleted it,
# and the unselected namespace has no entry and no admitted claim (the script's header says
# how).
#
#   PREFIX_RANDOM_SEEDS="1 2"  these seeds (default 1 2 3: the run always tries the same; 1 to
#                              12 with WARDEN_LONG_TESTS=1)
#   PREFIX_RANDOM_STEPS=N      operations per seed (default 40; 100 with WARDEN_LONG_TESTS=1)
#   PREFIX_RANDOM_TRACE=FILE   every seed's operations, with their outcomes, appended to FILE
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
# kubesim.sh's EXIT trap is the one left: it runs snapshot.sh's clean-ups (emulators, work dir).
ksim_on_exit snap_cleanups

long=${WARDEN_LONG_TESTS:-0}
SEEDS=${PREFIX_RANDOM_SEEDS:-$([ "$long" = 1 ] && seq -s ' ' 1 12 || echo 1 2 3)}
STEPS=${PREFIX_RANDOM_STEPS:-$([ "$long" = 1 ] && echo 100 || echo 40)}

. "$(dirname "$0")/../lib/ceph-rgw.sh"
rgw_start
# the operator's credentials reach the store through a proxy that records every request (the
# deletion Jobs'); the tenants' sidecars write to it directly
store_record=$SNAP_WORK/store-record.jsonl
export JOB_EXEC_RECORD=$SNAP_WORK/job-record.jsonl
: >"$store_record"
proxy_start "$RGW_URL" --record "$store_record"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
wh_register_backups
kc -n etcd-warden create secret generic s3-bucket --from-literal=accessKeyID="$RGW_ACCESS" \
    --from-literal=secretAccessKey="$RGW_SECRET" --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$PROXY_URL" >/dev/null
ctl_jobs_serve etcd-warden 3600
# leader-election timings a loaded machine keeps (the tests' 2 s Lease can lapse under load,
# and a controller that lost it exits: no entries after that, for no fault of the rule)
CTL_LEASE=30s CTL_RENEW=20s CTL_RETRY=1s ctl_start
echo "seeds: $SEEDS; $STEPS operations each"

deleted=0
for seed in $SEEDS; do
    bucket=seed-$seed
    rgw_s3 -X PUT "$RGW_URL/$bucket" -o /dev/null || ctl_fail "cannot create the bucket $bucket"
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply the BackupBucket $bucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: $bucket}
spec:
  provider: aws
  container: $bucket
  secretRef: {namespace: etcd-warden, name: s3-bucket}
  deletionGracePeriod: 2s
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: $bucket}}
EOF
    out=$(KUBECTL_CACHE=$KSIM_DIR/kubectl-cache S3_URL=$RGW_URL S3_CREDENTIALS="$RGW_ACCESS:$RGW_SECRET" BUCKET=$bucket \
        SELECTOR=etcd-warden.io/backups=$bucket STORE_RECORD=$store_record \
        JOB_RECORD=$JOB_EXEC_RECORD CONTROLLER_PID=$CTL_PID JOBS_PID=$CTL_JOBS_PID python3 "$SNAP_SRC/tests/support/prefix_random.py" \
        "$seed" "$STEPS" 2>&1) ||
        { printf '%s\n' "$out" | tail -80 >&2; ctl_fail "seed $seed: an invariant broke (above)"; }
    [ -z "${PREFIX_RANDOM_TRACE:-}" ] || printf '%s\n' "$out" >>"$PREFIX_RANDOM_TRACE"
    summary=$(tail -1 <<<"$out")
    echo "$summary"
    n=$(sed -n 's/.*deleted by etcd-warden \([0-9]*\).*/\1/p' <<<"$summary")
    deleted=$((deleted + ${n:-0}))
done
# the deletions ran: the property was tested against real deletion Jobs, not an idle controller
[ "$deleted" -gt 0 ] || ctl_fail "no snapshot was deleted in any seed: the deletion Jobs never ran"
ctl_stop
echo "prefix_random: ok ($deleted snapshots of deleted clusters deleted, each by its writer's entry, none of a live one)"
