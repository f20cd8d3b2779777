#!/usr/bin/env bash
# "A claim needs the bucket owner's authority and evidence of a writer, and a deletion deletes
# only what its owner wrote" (docs/backup-entries.md, "Who may claim a prefix"); "an Etcd gets
# an entry only when spec.backup.store.secretRef names a Secret that exists in its namespace";
# stores compare by provider and container, "the endpoint is not compared". A tenant (namespace
# edit rights, no credentials for the operator's bucket) creates an Etcd on the operator's
# container, on the prefix of a cluster that lives on another seed (unclaimed here), with a
# Secret whose endpoint is the tenant's own object store. Its member runs; its sidecar writes
# into the tenant's store. Meanwhile the other seed's cluster goes on backing up into that
# prefix of the operator's bucket. The tenant deletes its Etcd; past the grace period the
# entry's Job, with the operator's credentials, deletes the other seed's snapshots written
# while the tenant's Etcd existed. Oracle: s3rver's (the operator's store) listing before and
# after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--proj--victim--0c5a/etcd-main
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
wh_register_backups
ctl_s3_bucket_secret
kc create namespace tenant >/dev/null || ctl_fail "cannot create namespace tenant"
# the tenant's own store: not the operator's s3rver
kc -n tenant create secret generic etcd-backup --from-literal=accessKeyID=TENANT \
    --from-literal=secretAccessKey=TENANT --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint=http://minio.tenant.example:9000 >/dev/null ||
    ctl_fail "cannot create the tenant's Secret"
ctl_s3_bucket 10s
# the other seed's cluster's backups from before
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
sleep 1
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$P"
ctl_members tenant etcd-x
ctl_jobs_serve etcd-warden
ctl_start
if ! ksim_wait 10 ctl_has_entry tenant etcd-x; then
    echo "held: tenant/etcd-x gets no entry in the operator's bucket: $(ctl_events tenant etcd-x | tail -2 | tr '\n' '|')"
    ctl_jobs_stop; ctl_stop; exit 0
fi
ctl_members_seen tenant etcd-x
E=$(ctl_entry_of tenant etcd-x)
echo "entry $E for tenant/etcd-x: store $(kc get backupentry "$E" -o jsonpath='{.spec.store}')"
sleep 1
# the other seed's cluster backs up on (its sidecar, with the operator's credentials)
snap_s3 put "$P/v2/Full-00000000-00000200-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000201-00000300-1800000100.gz" "$SNAP_WORK/obj"
victim_keys=$(snap_s3 ls "$P/" | sort)
echo "the other seed's snapshots in the operator's bucket: $(echo $victim_keys)"

kc -n tenant delete pod etcd-x-0 --grace-period=0 >/dev/null 2>&1
kc -n tenant delete statefulset etcd-x >/dev/null 2>&1
kc -n tenant delete etcd etcd-x >/dev/null || ctl_fail "cannot delete etcd-x"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
ksim_wait 40 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(kc get backupentry "$E" -o jsonpath='{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls "$P/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$victim_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the entry of tenant/etcd-x (whose Secret opens another store: it never wrote the operator's bucket) deleted $(echo $lost) from the operator's bucket, another seed's cluster's snapshots"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack21_endpoint_elsewhere: ok"
