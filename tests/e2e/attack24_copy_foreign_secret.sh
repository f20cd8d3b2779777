#!/usr/bin/env bash
# A retained EtcdBackup copy is deleted with the bucket's credentials, but was written with its
# destination's Secret: the rule an Etcd's entry needs holds for it too (docs/backup-entries.md,
# a retained copy's entry). Namespace shoot takes two Retain EtcdBackups of its etcd-main into
# the operator's bucket: b with a Secret that is not the bucket's (a key of the tenant's own: its
# copy, wherever that Secret writes, is not shown written into the operator's store), c with a copy of the bucket's Secret.
# While each copy Job is made and not yet run, another seed's cluster writes into b's prefix.
# Both backups are deleted; past the grace period c's entry deletes c's copy (the control), and
# b's entry must delete nothing: what lies under its prefix in the operator's store is not shown
# to be the copy's. Oracle: s3rver's listing of both prefixes.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
NS=shoot

bstatus() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
job_args() { kc -n "$NS" get job "$1--copy" -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args "$1")" ]; }
over() { p=$(bstatus "$1" phase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
entry_of() { kc get backupentries -o json | jq -r ".items[] | select(.spec.prefix == \"$1\") | .metadata.name"; }
listing() { snap_s3 ls "$1/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
ctl_backup_secret "$NS" || ctl_fail "cannot create the backup Secret"
# the bucket's keys and one of the tenant's (s3rver knows only the bucket's keys, so this
# Secret stands for any whose writes cannot be shown to land in the operator's store)
kc -n "$NS" create secret generic own --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" \
    --from-literal=sessionToken=TENANT >/dev/null || ctl_fail "cannot create the tenant's own Secret"
druid_double_for "$NS" etcd-main
ctl_s3_bucket 1h
wh_register_backups
ctl_jobs_serve etcd-warden
ctl_start

# backup NAME PREFIX SECRET: its copy Job made (not run), the source snapshot in place
backup() {
    kc apply -f - >/dev/null <<EOF2 || ctl_fail "EtcdBackup $1 refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Retain
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $2, secretRef: {name: $3}}
EOF2
    ksim_wait 60 has_job "$1" || ctl_fail "no copy Job of $1: $(kc -n "$NS" get etcdbackup "$1" -o jsonpath='{.status}')"
    snap=$(tr ',' '\n' <<<"$(job_args "$1")" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
    snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
    snap_s3 put "$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')/v2/$snap" "$SNAP_WORK/snap"
}
backup b copies--b own
backup c copies--c etcd-backup
sleep 1 # object times have seconds: written after the copies began
theirs=copies--b/v2/Full-00000000-00000500-1700005000.gz
snap_fixture "$SNAP_WORK/theirs" 4096 Full.gz
snap_s3 put "$theirs" "$SNAP_WORK/theirs"
ok "the other seed wrote $theirs while b's copy ran"
ctl_jobs_serve "$NS"
ksim_wait 60 over b || ctl_fail "b did not end: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
ksim_wait 60 over c || ctl_fail "c did not end: $(kc -n "$NS" get etcdbackup c -o jsonpath='{.status}')"
[ "$(bstatus b phase) $(bstatus c phase)" = "Completed Completed" ] ||
    ctl_fail "b $(bstatus b phase) c $(bstatus c phase): the script's premise failed"
before_b=$(listing copies--b)
before_c=$(listing copies--c)
ok "b and c Completed: copies--b holds $before_b; copies--c holds $before_c"

kc -n "$NS" delete etcdbackup b c --timeout=60s >/dev/null || ctl_fail "b, c not deleted"
eb=$(entry_of copies--b)
ec=$(entry_of copies--c)
[ -n "$eb" ] && [ -n "$ec" ] || ctl_fail "no entries keep the retained copies: b '$eb' c '$ec'"
ctl_events "$NS" b | grep -q '^Warning NotAuthorised: ' ||
    ctl_fail "no NotAuthorised event on b: $(ctl_events "$NS" b | tail -3)"
ok "b's entry $eb: credentialsLostAt $(kc get backupentry "$eb" -o jsonpath='{.spec.credentialsLostAt}'); c's entry $ec: '$(kc get backupentry "$ec" -o jsonpath='{.spec.credentialsLostAt}')'"
ctl_s3_bucket 2s
ksim_wait 90 ksim_gone backupentry "$ec" || ctl_fail "$ec: the deletion did not end: $(kc get backupentry "$ec" -o jsonpath='{.status}')"
ksim_wait 90 ksim_gone backupentry "$eb" || ctl_fail "$eb: the deletion did not end: $(kc get backupentry "$eb" -o jsonpath='{.status}')"
left_c=$(listing copies--c)
[ -z "$left_c" ] || ctl_fail "control: c's retained copy was not deleted with the bucket's credentials: $left_c"
ok "control: c's copy (written with the bucket's credentials) deleted"
left_b=$(listing copies--b)
if ! grep -qF "$theirs" <<<"$left_b"; then
    echo "HOLE: b's entry, its copy written with a Secret that is not the bucket's, deleted $theirs (another seed's) with the bucket's credentials (left: ${left_b:-nothing})"
    exit 1
fi
ok "b's entry deleted nothing of copies--b (left: $left_b)"
ctl_stop
echo "attack24_copy_foreign_secret: ok"
