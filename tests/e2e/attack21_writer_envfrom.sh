#!/usr/bin/env bash
# The cluster-wide writer hold (docs/backup-entries.md, "Deletion blocked"): a container is a
# backup sidecar "whatever its name" when it is named backup-restore, its image names etcdbrctl
# or etcd-backup-restore, a string of its command or args contains a store flag, or it has an
# env STORAGE_CONTAINER. A sidecar whose flags come from a ConfigMap through envFrom and the
# kubelet's $(VAR) expansion has none of these in its spec: container "agent", image
# registry.local/backup-agent:1.0 (built on etcdbrctl), args [server, $(PROVIDER), $(PREFIX)],
# envFrom the ConfigMap that sets PROVIDER=--storage-provider=S3, PREFIX=--store-prefix=P and
# STORAGE_CONTAINER. shoot/etcd-a on P is deleted; namespace w's Deployment (not judged by any
# admission: not an Etcd's StatefulSet) then backs up into P and writes its first full snapshot
# within etcd-a's window. When the grace period ends, the deletion must wait while the
# Deployment may write P, or keep what it wrote. Oracle: s3rver's listing of P.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot w" 25s
ctl_start
rel_written
E=$REL_E

kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"

# namespace w's backup agent on P
kc -n w create configmap agent --from-literal=PROVIDER=--storage-provider=S3 \
    --from-literal=PREFIX=--store-prefix=$P --from-literal=STORAGE_CONTAINER="$SNAP_BUCKET" >/dev/null ||
    ctl_fail "cannot create the ConfigMap"
kc -n w create -f - >/dev/null <<JSON || ctl_fail "cannot create the Deployment"
{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"agent"},
 "spec":{"replicas":1,"selector":{"matchLabels":{"app":"agent"}},
  "template":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[
   {"name":"agent","image":"registry.local/backup-agent:1.0","args":["server","\$(PROVIDER)","\$(PREFIX)"],
    "envFrom":[{"configMapRef":{"name":"agent"}}]}]}}}}
JSON
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000012-1800000000.gz" "$SNAP_WORK/obj"
w_keys=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
echo "namespace w's agent wrote $(echo $w_keys) into $P; entry $E etcdLastAliveAt $(rel_entry_field "$E" '{.spec.etcdLastAliveAt}')"

decided() { ksim_gone backupentry "$E" || rel_entry_field "$E" '{.status.conditions[*].message}' | grep -q postponed; }
ksim_wait 40 decided || echo "entry $E neither deleted nor postponed"
ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.conditions[0].message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$w_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written into $P by namespace w's Deployment agent (a backup sidecar whose store flags come from a ConfigMap by envFrom) while it ran"
    exit 1
fi
echo "held: w's snapshot stays"
echo "attack21_writer_envfrom: ok"
