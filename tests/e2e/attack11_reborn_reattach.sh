#!/usr/bin/env bash
# A namespace deleted and created again takes over the earlier namespace's BackupEntry through
# warden-controller. Issue 29: warden-webhook refuses an Etcd that would reattach to an entry
# made before its namespace was created (common/pborn: a namespace created again is another
# owner), but warden-controller reattached any Etcd of the entry's namespace and name, so an
# Etcd the webhook did not judge (created while it was down, or registered without
# --backup-entries, as here) took the old cluster's entry: its pending deletion cancelled, its
# uid the new Etcd's, the old namespace's backups the new tenant's.
#   1. BackupBucket shared (aws, container etcd-bucket, grace 1h). Namespace shoot: Etcd
#      etcd-main in the bucket, Etcd etcd-free in a container no bucket owns; namespace keep:
#      Etcd etcd-k in the bucket. warden-controller makes their BackupEntries.
#   2. The three Etcds are deleted: the entries turn PendingDeletion.
#   3. Control: keep/etcd-k is created again (its namespace is the one its entry was made for):
#      it reattaches (uid updated, Active).
#   4. Namespace shoot is deleted and created again; etcd-main and etcd-free are created again
#      there, with credentials.
# Wanted: neither reattaches (the entries keep the old uids and stay PendingDeletion), a Warning
# event NotAuthorised on each Etcd says why. Oracle: the entries' spec.etcd.uid and phase.
# Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

uid_of() { kc -n "$1" get etcd "$2" -o jsonpath='{.metadata.uid}'; }
entry_uid() { kc get backupentry "$1" -o jsonpath='{.spec.etcd.uid}'; }
entry_uid_is() { [ "$(entry_uid "$1")" = "$2" ]; }
warned() { ctl_events "$1" "$2" | grep -q '^Warning NotAuthorised: .*created after'; }
settled() { # ns etcd entry uid: reattached (the hole) or refused with a Warning
    entry_uid_is "$3" "$4" || warned "$1" "$2"
}

ctl_stage
ctl_namespace shoot keep
ctl_backup_secret etcd-warden bucket-credentials
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket shared"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: etcd-bucket
  secretRef: {namespace: etcd-warden, name: bucket-credentials}
  deletionGracePeriod: 1h
EOF
ctl_store_etcd shoot etcd-main S3 etcd-bucket shoot--etcd-main
ctl_store_etcd shoot etcd-free S3 free-bucket shoot--etcd-free
ctl_store_etcd keep etcd-k S3 etcd-bucket keep--etcd-k
ctl_start
for e in shoot/etcd-main shoot/etcd-free keep/etcd-k; do
    ksim_wait 20 ctl_has_entry "${e%/*}" "${e#*/}" || ctl_fail "no entry for $e"
done
e_main=$(ctl_entry_of shoot etcd-main)
e_free=$(ctl_entry_of shoot etcd-free)
e_k=$(ctl_entry_of keep etcd-k)
uid_main=$(uid_of shoot etcd-main)
uid_free=$(uid_of shoot etcd-free)
kc -n shoot delete etcd etcd-main etcd-free >/dev/null
kc -n keep delete etcd etcd-k >/dev/null
for e in "$e_main" "$e_free" "$e_k"; do
    ksim_wait 20 ctl_entry_phase_is "$e" PendingDeletion || ctl_fail "$e: $(ctl_entry_phase "$e")"
done
ok "the Etcds deleted, their entries PendingDeletion"

ctl_store_etcd keep etcd-k S3 etcd-bucket keep--etcd-k
uid_k=$(uid_of keep etcd-k)
ksim_wait 20 entry_uid_is "$e_k" "$uid_k" || ctl_fail "keep/etcd-k not reattached: $(entry_uid "$e_k")"
ksim_wait 20 ctl_entry_phase_is "$e_k" Active || ctl_fail "$e_k: $(ctl_entry_phase "$e_k")"
ok "control: keep/etcd-k, created again in its own namespace, reattached to $e_k"

kc delete namespace shoot --wait=false >/dev/null
ksim_wait 30 ksim_gone namespace shoot || ctl_fail "namespace shoot stays"
sleep 1.1 # creation times have seconds: the new namespace is created after the entries, visibly
ctl_namespace shoot
kc get backupentry "$e_main" "$e_free" >/dev/null || ctl_fail "the entries went with the namespace"
ctl_store_etcd shoot etcd-main S3 etcd-bucket shoot--etcd-main
ctl_store_etcd shoot etcd-free S3 free-bucket shoot--etcd-free
new_main=$(uid_of shoot etcd-main)
new_free=$(uid_of shoot etcd-free)
ksim_wait 30 settled shoot etcd-main "$e_main" "$new_main" || ctl_fail "etcd-main: neither reattached nor warned"
ksim_wait 30 settled shoot etcd-free "$e_free" "$new_free" || ctl_fail "etcd-free: neither reattached nor warned"
for x in "$e_main $uid_main $new_main" "$e_free $uid_free $new_free"; do
    set -- $x
    if [ "$(entry_uid "$1")" = "$3" ]; then
        ctl_fail "HOLE: BackupEntry $1, made for the earlier namespace shoot's Etcd, reattached by warden-controller to the Etcd of the namespace shoot created again: the earlier namespace's backups handed to the new owner"
    fi
    expect "$1 keeps its Etcd's uid" "$2" "$(entry_uid "$1")"
    expect "$1 stays pending" PendingDeletion "$(ctl_entry_phase "$1")"
done
ctl_events shoot etcd-main | grep -q "BackupEntry $e_main .*holds this prefix for Etcd shoot/etcd-main of an earlier namespace shoot" ||
    ctl_fail "the warning: $(ctl_events shoot etcd-main)"
ok "the re-created namespace's Etcds do not reattach: $(ctl_events shoot etcd-main | head -1 | cut -c1-200)"
echo "attack11_reborn_reattach: ok"
