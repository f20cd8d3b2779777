# tenant.sh - a tenant's Etcd tenant/etcd-x on the operator's bucket, on the prefix
# $TENANT_P of a cluster that lives on another seed and backs up into that prefix of the
# operator's store: does the deletion of etcd-x's entry delete what the other seed wrote?
# Oracle: the operator's store's listing of the prefix (s3rver, or Azurite with
# TENANT_STORE=abs), never etcd-warden's own records.
#
#   TENANT_STORE=s3|abs (before sourcing; default s3)
#   tenant_stage              # the store, kube-sim, warden-webhook (backups), namespace tenant;
#                             # with s3, the bucket's Secret etcd-warden/s3-bucket
#   tenant_holding            # the tenant's Secret etcd-backup holds the bucket's credentials
#                             # (ctl_backup_secret): etcd-x gets an entry
#   tenant_own_secret NAME    # Secret NAME in tenant: the tenant's own keys and service
#   tenant_before             # after the BackupBucket: the other seed's snapshot from before
#   tenant_run WHAT           # etcd-x's member, the Jobs, warden-controller: no entry within
#                             # 10 s prints "held" and exits 0; else E is the entry's name
#   tenant_others_write       # the other seed's cluster writes on; TENANT_KEYS its snapshots
#   tenant_judge WHAT NAME    # etcd-x deleted, past the grace period: HOLE (exit 1) when the
#                             # entry's deletion took the other seed's snapshots; NAME: ok
. "$(dirname "${BASH_SOURCE[0]}")/snapshot.sh"
. "$(dirname "${BASH_SOURCE[0]}")/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

TENANT_P=shoot--proj--victim--0c5a/etcd-main
TENANT_STORE=${TENANT_STORE:-s3}
_tenant_put() { "snap_$TENANT_STORE" put "$TENANT_P/$1" "$SNAP_WORK/obj"; }
_tenant_ls() { "snap_$TENANT_STORE" ls "$TENANT_P/" | sort; }

tenant_stage() {
    CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
    echo snapshot >"$SNAP_WORK/obj"
    "snap_${TENANT_STORE}_start"
    ctl_stage
    wh_register_backups
    [ "$TENANT_STORE" != s3 ] || ctl_s3_bucket_secret || ctl_fail "cannot create the bucket's Secret"
    kc create namespace tenant >/dev/null || ctl_fail "cannot create namespace tenant"
}

TENANT_SERVICE=http://minio.tenant.example:9000
tenant_holding() { ctl_backup_secret tenant || ctl_fail "cannot create the tenant's Secret"; }
tenant_own_secret() {
    kc -n tenant create secret generic "$1" --from-literal=accessKeyID=AKIATENANT \
        --from-literal=secretAccessKey=TENANT --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$TENANT_SERVICE" >/dev/null ||
        ctl_fail "cannot create the tenant's Secret $1"
}

tenant_before() {
    _tenant_put v2/Full-00000000-00000100-1700000000.gz
    sleep 1
}

tenant_run() {
    ctl_members tenant etcd-x
    ctl_jobs_serve etcd-warden
    ctl_start
    if ! ksim_wait 10 ctl_has_entry tenant etcd-x; then
        echo "held: tenant/etcd-x gets no entry in the operator's bucket: $(ctl_events tenant etcd-x | tail -2 | tr '\n' '|')"
        ctl_jobs_stop
        ctl_stop
        exit 0
    fi
    ctl_members_seen tenant etcd-x
    E=$(ctl_entry_of tenant etcd-x)
    echo "entry $E for tenant/etcd-x ($1): store $(kc get backupentry "$E" -o jsonpath='{.spec.store}')"
}

tenant_others_write() {
    _tenant_put v2/Full-00000000-00000200-1800000000.gz
    _tenant_put v2/Incr-00000201-00000300-1800000100.gz
    TENANT_KEYS=$(_tenant_ls)
    echo "the other seed's snapshots in the operator's store: $(echo $TENANT_KEYS)"
}

tenant_judge() {
    local left lost
    kc -n tenant delete pod etcd-x-0 --grace-period=0 >/dev/null 2>&1
    kc -n tenant delete statefulset etcd-x >/dev/null 2>&1
    kc -n tenant delete etcd etcd-x >/dev/null || ctl_fail "cannot delete etcd-x"
    ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
    # judged once the entry's deletion settled (ctl_entry_settled)
    ksim_wait 40 ctl_entry_settled "$E" ||
        echo "entry $E not settled: $(kc get backupentry "$E" -o jsonpath='{.status.phase} {.status.message}' | cut -c1-300)"
    ksim_gone backupentry "$E" ||
        echo "entry $E stays: $(kc get backupentry "$E" -o jsonpath='{.status.phase} {.status.message} {.status.conditions[0].message}' | cut -c1-400)"
    echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
    left=$(_tenant_ls)
    echo "left under $TENANT_P: $(echo $left)"
    ctl_jobs_stop
    ctl_stop
    lost=$(comm -23 <(echo "$TENANT_KEYS") <(echo "$left"))
    if [ -n "$lost" ]; then
        echo "HOLE: the entry of tenant/etcd-x ($1) deleted $(echo $lost) from the operator's store, another seed's cluster's snapshots"
        exit 1
    fi
    echo "held: the other seed's snapshots stay"
    echo "$2: ok"
}
