# shellcheck shell=bash
# The stage of the scripts about a failed EtcdRestore's cleanup and a writer of its target:
# kube-sim, warden-webhook (--backup-entries --etcd-backups), warden-controller, s3rver.
# Namespace shoot restores its etcd-main (one full snapshot in shoot--etcd-main) into $T
# (writer--b); before the copy Job runs, a backup sidecar of namespace other (a bare Pod,
# other/writer) writes its first full snapshot into $T ($other_keys).
#
#   . "$(dirname "$0")/../lib/rcleanup.sh"   # the stage above
#   rc_judge NAME WHY                # the copy fails (--require-empty-destination: it wrote
#                                    # nothing), shoot deletes the failed restore: other's
#                                    # snapshot must stay, else "HOLE: ... WHY" and exit 1
. "$(dirname "${BASH_SOURCE[0]}")/snapshot.sh"
. "$(dirname "${BASH_SOURCE[0]}")/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
phase() { jp shoot etcdrestore/r '{.status.phase}'; }
T=writer--b

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
snap_s3_start
ctl_stage
ctl_namespace shoot other
creds shoot
creds other
wh_register_backups
ctl_start
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/full"

kc apply -f - >/dev/null <<EOF || ctl_fail "the restore refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: shoot}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-t, store: {provider: S3, container: $SNAP_BUCKET, prefix: $T, secretRef: {name: etcd-backup}}}
EOF
has_job() { kc -n shoot get job r--restore >/dev/null 2>&1; }
ksim_wait 30 has_job || ctl_fail "no copy Job: $(kc -n shoot get etcdrestore r -o jsonpath='{.status}')"
echo "restore r created $(jp shoot etcdrestore/r '{.metadata.creationTimestamp}'), copyStartedAt $(jp shoot etcdrestore/r '{.status.copyStartedAt}'); its copy Job waits for a node"

# namespace other's backup sidecar, a bare Pod, writes its first full snapshot into writer--b
kc -n other apply -f - >/dev/null <<EOF || ctl_fail "cannot create other's writer pod"
apiVersion: v1
kind: Pod
metadata: {name: writer}
spec:
  containers:
  - name: backup-restore
    image: "etcdbrctl:v0.34.0"
    args: [server, --storage-provider=S3, --store-prefix=$T]
    env: [{name: STORAGE_CONTAINER, value: $SNAP_BUCKET}]
EOF
kc -n other patch pod writer --subresource=status --type merge \
    -p '{"status":{"phase":"Running","podIP":"10.96.0.20","podIPs":[{"ip":"10.96.0.20"}]}}' >/dev/null ||
    ctl_fail "cannot set the writer's status"
sleep 2 # whole seconds: after the restore's creation
snap_fixture "$SNAP_WORK/other" 2048 Full-00000000-00000042-1800000000.gz
snap_s3 put "$T/v2/Full-00000000-00000042-1800000000.gz" "$SNAP_WORK/other"
other_keys=$(snap_s3 ls "$T/" | sort)
echo "written by namespace other's sidecar: $(echo $other_keys)"

rc_judge() {
    local left lost
    ctl_jobs_serve shoot
    failed() { [ "$(phase)" = Failed ]; }
    ksim_wait 60 failed || ctl_fail "the restore did not fail: $(phase) $(jp shoot etcdrestore/r '{.status.error}'); $(tail -3 "$SNAP_WORK/job_exec.log")"
    echo "r Failed: $(jp shoot etcdrestore/r '{.status.error}' | cut -c1-200); completionTime $(jp shoot etcdrestore/r '{.status.completionTime}')"
    expect "writer--b after the failed copy" "$other_keys" "$(snap_s3 ls "$T/" | sort)"

    # shoot deletes its failed restore
    kc -n shoot delete etcdrestore r --wait=false >/dev/null || ctl_fail "cannot delete r"
    gone() { ksim_gone -n shoot etcdrestore r; }
    ksim_wait 60 gone || echo "r stays: $(jp shoot etcdrestore/r '{.status}' | cut -c1-300)"
    echo "events of r: $(ctl_events shoot r | tail -3 | tr '\n' '|' | cut -c1-400)"
    left=$(snap_s3 ls "$T/" | sort)
    echo "left under $T: $(echo $left)"
    ctl_jobs_stop
    ctl_stop
    lost=$(comm -23 <(echo "$other_keys") <(echo "$left"))
    if [ -n "$lost" ]; then
        echo "HOLE: deleting shoot's failed EtcdRestore r deleted $(echo $lost), written into $T by namespace other's backup sidecar after the restore's creation and before its copy Job ran$2; the copy wrote nothing"
        exit 1
    fi
    echo "held: other's snapshot in $T stays"
    echo "$1: ok"
}
