#!/usr/bin/env bash
# BackupEntries of stores no BackupBucket owns (docs/backup-entries.md, "Stores no BackupBucket
# owns"), driven with kubectl; the oracle is what kube-sim stores (entries, Jobs, Etcds).
#  - An Etcd with credentials in an object store no bucket owns gets an entry without a bucket,
#    Active; one without credentials (its Secret missing) gets none.
#  - Its deletion leaves the entry PendingDeletion, kept (no deletion Job is ever made for it),
#    and another namespace's Etcd on the prefix is refused, until the operator deletes the
#    entry: then it is admitted.
#  - A BackupBucket made later for the store adopts the entry of a live Etcd (event Adopted).
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
C=free-bucket

entry_field() { # ns/name prefix jsonpath-field
    kc get backupentries -o jsonpath="{range .items[*]}{.spec.etcd.namespace}/{.spec.etcd.name} {.spec.prefix} {$3}{\"\n\"}{end}" |
        awk -v o="$1" -v p="$2" '$1 == o && $2 == p { print $3 }'
}
entry_name() { entry_field "$1" "$2" .metadata.name; }
phase_is() { [ "$(entry_field "$1" "$2" .status.phase)" = "$3" ]; }
bucket_is() { [ "$(entry_field "$1" "$2" .spec.bucketName)" = "$3" ]; }
admitted() { out=$(ctl_store_etcd other etcd-x S3 "$C" shoot--a 2>&1); }

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other bare
kc -n bare delete secret etcd-backup --ignore-not-found >/dev/null # bare: no credentials
wh_register_backups
ctl_start

ctl_store_etcd shoot etcd-main S3 "$C" shoot--a
ctl_store_etcd bare etcd-y S3 "$C" bare--y # its Secret etcd-backup does not exist
ksim_wait 20 phase_is shoot/etcd-main shoot--a Active ||
    ctl_fail "no Active entry for shoot/etcd-main: $(kc get backupentries -o wide 2>&1)"
expect "its bucket" "" "$(entry_field shoot/etcd-main shoot--a .spec.bucketName)"
e=$(entry_name shoot/etcd-main shoot--a)
ok "an Etcd in a store no bucket owns: entry $e without a bucket, Active"

kc -n shoot delete etcd etcd-main >/dev/null
ksim_wait 20 phase_is shoot/etcd-main shoot--a PendingDeletion ||
    ctl_fail "not PendingDeletion: $(kc get backupentry "$e" -o jsonpath='{.status}')"
kc get backupentry "$e" -o jsonpath='{.status.message}' | grep -q 'until the operator deletes this BackupEntry' ||
    ctl_fail "message: $(kc get backupentry "$e" -o jsonpath='{.status.message}')"
if admitted; then
    ctl_fail "other's Etcd admitted on the deleted Etcd's prefix while its entry is kept: $out"
fi
sleep 5 # reconciles go by: the entry stays, and no Job deletes anything
kc get backupentry "$e" >/dev/null 2>&1 || ctl_fail "the entry went by itself"
expect "deletion Jobs" "" "$(kc get jobs -A -o jsonpath='{.items[*].metadata.name}')"
ok "deleted: the entry is kept, PendingDeletion, no Job; other's Etcd on the prefix refused (${out:0:160})"

kc delete backupentry "$e" >/dev/null
ksim_wait 20 admitted || ctl_fail "other's Etcd still refused once the operator deleted the entry: $out"
ok "the operator deleted the entry: other's Etcd on the prefix admitted"

ctl_store_etcd shoot etcd-b S3 "$C" shoot--b
ksim_wait 20 bucket_is shoot/etcd-b shoot--b "" || ctl_fail "no entry for shoot/etcd-b"
b=$(entry_name shoot/etcd-b shoot--b)
ctl_backup_secret etcd-warden late-credentials
kc apply -f - >/dev/null <<END || ctl_fail "cannot apply BackupBucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: late}
spec: {provider: aws, container: $C, secretRef: {namespace: etcd-warden, name: late-credentials}, deletionGracePeriod: 1h}
END
ksim_wait 20 bucket_is shoot/etcd-b shoot--b late ||
    ctl_fail "entry $b not adopted: $(kc get backupentry "$b" -o jsonpath='{.spec}')"
expect "the entry's name" "$b" "$(entry_name shoot/etcd-b shoot--b)"
ksim_wait 10 phase_is shoot/etcd-b shoot--b Active || ctl_fail "adopted entry not Active"
adopted() { ctl_events default "$b" | grep -q '^Normal Adopted: '; }
ksim_wait 10 adopted || ctl_fail "no Adopted event: $(ctl_events default "$b")"
ok "a bucket made later for the store adopts the live Etcd's entry $b"
expect "entries of bare (no credentials)" "" "$(entry_name bare/etcd-y bare--y)"
ok "an Etcd without credentials gets no entry"
ctl_stop
echo "controller_bke_unowned: ok"
