#!/usr/bin/env bash
# Authority and evidence before a claim, provenance before a deletion (docs/backup-entries.md,
# "Who may claim a prefix"), driven with kubectl against s3rver; tests/support/job_exec.py
# runs the deletion Jobs (kube-sim runs no pods). The oracle is what s3rver holds.
#  - A BackupBucket with spec.namespaceSelector: an Etcd of a namespace it does not select
#    gets no BackupEntry (a Warning event NotAuthorised) and its deletion deletes nothing,
#    though its Secret is right and its sidecar wrote.
#  - An Etcd of a selected namespace without credentials (its secretRef names no Secret)
#    on a prefix nothing owns now (a deleted EtcdBackup's retained copy): no entry, and its
#    deletion deletes nothing.
#  - An Etcd with credentials created on a prefix that already held objects (backups from
#    before the install): once deleted and past the grace period, the Job deletes what was
#    written from its creation on and keeps what predates it; the entry goes.
#  - The selector no longer selecting an entry's namespace: its deletion is refused.
#  - An Etcd created again without credentials within the grace period: the entry is not
#    reattached to it (it stays its predecessor's, PendingDeletion; NotAuthorised).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

bucket() { # grace
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: s3}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: s3-bucket}
  deletionGracePeriod: "$1"
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: allowed}}
EOF
}
etcd_event() { ctl_events "$1" "$2" | grep -q "^Warning $3"; } # ns name pattern
entry_event() { ctl_events default "$1" | grep -q "$2"; }
seed() { for k in "$@"; do snap_s3 put "$k" "$SNAP_WORK/obj"; done; }
all_s3() { snap_s3 ls "" | sort; }

echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
ctl_s3_bucket_secret
for ns in tenant tenant2 outsider; do
    kc create namespace "$ns" >/dev/null
    ctl_backup_secret "$ns"
done
kc label namespace tenant etcd-warden.io/backups=allowed >/dev/null
kc label namespace tenant2 etcd-warden.io/backups=allowed >/dev/null
bucket 1h
# written before any Etcd below exists: an old cluster's backups, a retained copy
seed old/v2/Full-00000000-00000100-1700000000.gz copy/v2/Full-00000000-00000100-1700000000.gz
sleep 1.1 # object times have seconds: what the sidecars write below is later
ctl_jobs_serve etcd-warden
ctl_start

# not selected: no entry, though it has credentials
ctl_store_etcd outsider etcd-o S3 "$SNAP_BUCKET" outsider--etcd-o
ksim_wait 20 etcd_event outsider etcd-o 'NotAuthorised: namespace outsider is not selected' ||
    ctl_fail "no NotAuthorised event for outsider/etcd-o"
# no credentials: no entry on a prefix nothing owns
kc apply -f - >/dev/null <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-n, namespace: tenant}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: copy, secretRef: {name: nothing-here}}}
EOF
ksim_wait 20 etcd_event tenant etcd-n 'NotAuthorised: its backup Secret tenant/nothing-here does not exist' ||
    ctl_fail "no NotAuthorised event for tenant/etcd-n"
# credentials, selected, on a prefix holding older objects
ctl_store_etcd tenant etcd-t S3 "$SNAP_BUCKET" old
ctl_store_etcd tenant2 etcd-k S3 "$SNAP_BUCKET" kept
ctl_members tenant etcd-t
ctl_members tenant2 etcd-k
ksim_wait 20 ctl_has_entry tenant etcd-t || ctl_fail "no entry for tenant/etcd-t"
ksim_wait 20 ctl_has_entry tenant2 etcd-k || ctl_fail "no entry for tenant2/etcd-k"
ctl_members_seen tenant etcd-t
ctl_members_seen tenant2 etcd-k
expect "entries: only the authorised, credentialed Etcds'" 2 \
    "$(kc get backupentries -o name | wc -l | tr -d ' ')"
e_t=$(ctl_entry_of tenant etcd-t); e_k=$(ctl_entry_of tenant2 etcd-k)
[ -n "$(kc get backupentry "$e_t" -o jsonpath='{.spec.claimedAt}')" ] || ctl_fail "no spec.claimedAt"
ok "no entry for a namespace the bucket does not select, nor for an Etcd without credentials"

# created again without credentials: it does not take over its predecessor's entry
ctl_store_etcd tenant etcd-r S3 "$SNAP_BUCKET" again
ksim_wait 20 ctl_has_entry tenant etcd-r || ctl_fail "no entry for tenant/etcd-r"
e_r=$(ctl_entry_of tenant etcd-r)
uid_r=$(kc get backupentry "$e_r" -o jsonpath='{.spec.etcd.uid}')
kc -n tenant delete etcd etcd-r >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e_r" PendingDeletion || ctl_fail "$e_r: $(ctl_entry_phase "$e_r")"
kc apply -f - >/dev/null <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-r, namespace: tenant}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: again}}
EOF
ksim_wait 20 etcd_event tenant etcd-r 'NotAuthorised: spec.backup.store.secretRef names no Secret' ||
    ctl_fail "no NotAuthorised event for the re-created tenant/etcd-r: $(ctl_events tenant etcd-r)"
expect "the entry stays its predecessor's" "$uid_r PendingDeletion" \
    "$(kc get backupentry "$e_r" -o jsonpath='{.spec.etcd.uid} {.status.phase}')"
ok "an Etcd created again without credentials is not reattached to its predecessor's entry"

# the sidecars write (after their Etcds' members were seen running)
sleep 1
seed outsider--etcd-o/v2/Full-00000000-00000100-1800000000.gz copy/v2/Full-00000000-00000100-1800000000.gz \
    old/v2/Full-00000000-00000100-1800000000.gz old/v2/Incr-00000101-00000200-1800000100.gz \
    kept/v2/Full-00000000-00000100-1800000000.gz
before=$(all_s3)
kc label namespace tenant2 etcd-warden.io/backups- >/dev/null
kc -n tenant delete etcd etcd-n etcd-t >/dev/null
kc -n tenant2 delete etcd etcd-k >/dev/null
kc -n outsider delete etcd etcd-o >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e_t" PendingDeletion || ctl_fail "$e_t: $(ctl_entry_phase "$e_t")"
ksim_wait 20 ctl_entry_phase_is "$e_k" PendingDeletion || ctl_fail "$e_k: $(ctl_entry_phase "$e_k")"
bucket 2s
ksim_wait 60 ksim_gone backupentry "$e_t" ||
    ctl_fail "$e_t stays: $(kc get backupentry "$e_t" -o jsonpath='{.status}')"
entry_event "$e_t" '^Normal Deleted: prefix "old": 2 objects deleted; 1 objects kept' ||
    ctl_fail "no Deleted event naming the kept object: $(ctl_events default "$e_t")"
cond_k() { kc get backupentry "$e_k" -o jsonpath='{.status.conditions[0].message}'; }
refused_k() { cond_k | grep -q 'namespace tenant2 is not selected'; }
ksim_wait 30 refused_k || ctl_fail "$e_k: deletion not refused: $(cond_k)"
expect "what etcd-t wrote is deleted, everything else kept" \
    "$(grep -v '^old/v2/.*-18000' <<<"$before")" "$(all_s3)"
expect "the refused entry stays" PendingDeletion "$(ctl_entry_phase "$e_k")"
ok "deletion: only what the Etcd wrote since its claim began, of authorised namespaces only"
