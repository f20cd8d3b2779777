#!/usr/bin/env bash
# Deleting a failed EtcdRestore deletes "only the objects the restore wrote"
# (docs/backups-and-restores.md, "Deleting a restore": delete-snapshots --written-since
# status.copyStartedAt, "the restore's creation: no later than the copy"); the cleanup keeps
# the target while any backup sidecar may write it. A writer that has finished writes no more
# and holds nothing, yet what it wrote stays in the window. Namespace shoot restores its
# etcd-main into writer--b. Before the copy Job runs, a backup sidecar of namespace other (a
# bare Pod) writes its first full snapshot into writer--b, then its Pod is gone (deleted: the
# cluster moved on). The copy then fails (--require-empty-destination: it wrote nothing);
# shoot deletes the failed restore and its cleanup Job runs delete-snapshots on writer--b over
# [restore creation, failure]. Lost: other's snapshot, which the restore never wrote.
# Oracle: s3rver's listing of writer--b before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
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
kc -n other delete pod writer --grace-period=0 >/dev/null 2>&1 || ctl_fail "cannot delete other's writer pod"
echo "other's writer pod is gone"

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
    echo "HOLE: deleting shoot's failed EtcdRestore r deleted $(echo $lost), written into $T by namespace other's backup sidecar after the restore's creation and before its copy Job ran (the writer then gone); the copy wrote nothing"
    exit 1
fi
echo "held: other's snapshot in $T stays"
echo "attack22_restore_writer_gone: ok"
