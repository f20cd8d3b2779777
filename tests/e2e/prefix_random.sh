#!/usr/bin/env bash
# One prefix, one cluster under seeded random sequences, on the whole stack: kube-sim,
# warden-webhook with the one-prefix rule (--backup-entries, the Etcd webhook on CREATE too, as
# the chart registers it), warden-controller keeping BackupEntries and running their deletion
# Jobs (tests/support/job_exec.py runs them with warden-snapshot against s3rver), a bucket with
# a grace period of 2 s. tests/support/prefix_random.py draws, from each seed alone, Etcd
# creates (one, or two at the same moment), deletes, re-creates and prefix moves over prefixes
# drawn to collide, time passing and the backup sidecars writing their snapshots (under the
# cleaned prefix, as the real sidecar writes them, once etcd-warden keeps the cluster's
# entry), and checks after every operation that no snapshot of a cluster still alive was
# deleted. Each seed has a bucket and namespaces of its own.
#
#   PREFIX_RANDOM_SEEDS="1 2"  these seeds (default 1 2 3: the run always tries the same; 1 to
#                              12 with WARDEN_LONG_TESTS=1)
#   PREFIX_RANDOM_STEPS=N      operations per seed (default 40; 100 with WARDEN_LONG_TESTS=1)
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
# kubesim.sh's EXIT trap is the one left: it runs snapshot.sh's clean-ups (emulators, work dir).
ksim_on_exit snap_cleanups

long=${WARDEN_LONG_TESTS:-0}
SEEDS=${PREFIX_RANDOM_SEEDS:-$([ "$long" = 1 ] && seq -s ' ' 1 12 || echo 1 2 3)}
STEPS=${PREFIX_RANDOM_STEPS:-$([ "$long" = 1 ] && echo 100 || echo 40)}

snap_s3_start
CTL_WEBHOOK_FLAGS=--backup-entries ctl_stage
kc -n etcd-warden create secret generic s3-bucket --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
ctl_jobs_serve etcd-warden
ctl_start
echo "seeds: $SEEDS; $STEPS operations each"

deleted=0
for seed in $SEEDS; do
    bucket=seed-$seed
    snap_s3_bucket "$bucket"
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply the BackupBucket $bucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: $bucket}
spec: {provider: aws, container: $bucket, secretRef: {namespace: etcd-warden, name: s3-bucket}, deletionGracePeriod: 2s}
EOF
    out=$(KUBECTL_CACHE=$KSIM_DIR/kubectl-cache S3_URL=$SNAP_S3_URL BUCKET=$bucket \
        python3 "$SNAP_SRC/tests/support/prefix_random.py" "$seed" "$STEPS" 2>&1) ||
        { printf '%s\n' "$out" | tail -60 >&2; ctl_fail "seed $seed: a live cluster's snapshots were deleted (above)"; }
    summary=$(tail -1 <<<"$out")
    echo "$summary"
    n=$(sed -n 's/.*deleted by etcd-warden \([0-9]*\).*/\1/p' <<<"$summary")
    deleted=$((deleted + ${n:-0}))
done
# the deletions ran: the property was tested against real deletion Jobs, not an idle controller
[ "$deleted" -gt 0 ] || ctl_fail "no snapshot was deleted in any seed: the deletion Jobs never ran"
ctl_stop
echo "prefix_random: ok ($deleted snapshots of deleted clusters deleted, none of a live one)"
