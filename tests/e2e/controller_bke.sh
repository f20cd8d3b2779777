#!/usr/bin/env bash
# Backups that outlive their Etcd, driven with kubectl: a BackupBucket shared by two Etcds
# gets one BackupEntry each (an Etcd in another container none); `kubectl get
# backupentries` shows bucket, prefix, Etcd and phase; the bucket keeps a finalizer and
# counts them. A deleted Etcd's entry turns PendingDeletion with the time; the Etcd
# re-created with the same namespace, name and store reattaches (uid updated, pending
# deletion cancelled, no second entry); an Etcd moved to another prefix leaves its old
# entry and gets a new one. Two Etcds in one prefix get a PrefixConflict condition and a
# Warning event on their entries, nothing more. A second bucket of the same store is
# InvalidSpec naming the first and keeps no entries. A bucket with a grace period the CRD's
# pattern admits but no duration the controller can hold (more hours than fit in 64 bits), or
# not positive (0s), is Ready False/InvalidSpec; one whose Secret is missing
# False/SecretNotFound until it exists. A deleted bucket waits (Ready False/EntriesRemain, a
# DeletionBlocked event, no new entries) until its entries are gone, then goes.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

etcd() { ctl_store_etcd "$1" "$2" S3 "$3" "$4"; } # ns name container prefix: an S3 store
bucket() { # name grace [container [secret]]
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket $1"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: $1}
spec:
  provider: aws
  container: ${3:-etcd-bucket}
  secretRef: {namespace: etcd-warden, name: ${4:-bucket-credentials}}
  deletionGracePeriod: "$2"
EOF
}
entries() { # bucket: "<ns>/<etcd> <prefix> <phase>" per entry of the bucket, sorted
    kc get backupentries -o jsonpath='{range .items[*]}{.spec.bucketName} {.spec.etcd.namespace}/{.spec.etcd.name} {.spec.prefix} {.status.phase}{"\n"}{end}' |
        awk -v b="$1" '$1 == b { print $2, $3, $4 }' | sort
}
entries_are() { [ "$(entries "$1")" = "$2" ]; }
entry_of() { # ns name prefix: the entry's name
    kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name} {.spec.etcd.namespace}/{.spec.etcd.name} {.spec.prefix}{"\n"}{end}' |
        awk -v e="$1/$2" -v p="$3" '$2 == e && $3 == p { print $1 }'
}
cond() { # bucket: status/reason of its Ready condition
    kc get backupbucket "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}'
}
count() { kc get backupbucket "$1" -o jsonpath='{.status.entryCount}'; }
count_is() { [ "$(count "$1")" = "$2" ]; }
cond_is() { [ "$(cond "$1")" = "$2" ]; }
has_event() { ctl_events default "$1" | grep -q "$2"; }

ctl_stage
ctl_namespace shoot
ctl_namespace other
etcd shoot etcd-main etcd-bucket shoot--etcd-main
etcd shoot etcd-events etcd-bucket shoot--etcd-events
etcd other etcd-main other-bucket other--etcd-main
ctl_backup_secret etcd-warden bucket-credentials
bucket shared 1h
bucket broken 99999999999999999999h
bucket zero 0s zero-bucket
ctl_start

want="shoot/etcd-events shoot--etcd-events Active
shoot/etcd-main shoot--etcd-main Active"
ksim_wait 20 entries_are shared "$want" || ctl_fail "entries: $(entries shared)"
ok "one entry per Etcd of the bucket, none for another container"
e_main=$(entry_of shoot etcd-main shoot--etcd-main)
uid=$(kc -n shoot get etcd etcd-main -o jsonpath='{.metadata.uid}')
# named after the claim (store and canonical prefix), so the API server lets one Etcd have it
expect "entry name" "shoot--etcd-main--$(printf 'Object|etcd-bucket|\nshoot--etcd-main' | sha256sum | cut -c1-16)" "$e_main"
table=$(kc get backupentries)
head -1 <<<"$table" | grep -q 'NAME *BUCKET *PREFIX *NAMESPACE *ETCD *PHASE *AGE' ||
    ctl_fail "kubectl get backupentries columns: $table"
grep -q "^$e_main *shared *shoot--etcd-main *shoot *etcd-main *Active" <<<"$table" ||
    ctl_fail "kubectl get backupentries row: $table"
ok "kubectl get backupentries shows bucket, prefix, Etcd and phase"
ksim_wait 10 has_event "$e_main" '^Normal Created: ' ||
    ctl_fail "no Created event: $(ctl_events default "$e_main")"
ksim_wait 10 cond_is shared True/EntriesKept || ctl_fail "bucket condition $(cond shared)"
table=$(kc get backupbuckets)
head -1 <<<"$table" | grep -q 'ENTRIES *READY *AGE' || ctl_fail "kubectl get backupbuckets columns: $table"
grep -q '^shared .* 2 *True ' <<<"$table" || ctl_fail "kubectl get backupbuckets row: $table"
ok "kubectl get backupbuckets shows Ready"
expect "entry count" 2 "$(count shared)"
expect "bucket finalizer" '["etcd-warden.io/backup-entries"]' \
    "$(kc get backupbucket shared -o jsonpath='{.metadata.finalizers}')"
ksim_wait 10 cond_is broken False/InvalidSpec || ctl_fail "broken bucket: $(cond broken)"
# One store, one bucket: a second BackupBucket of the same store (another spelling of the
# provider) is refused its entries, and the first keeps them.
sleep 1 # a later creationTimestamp
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: twin}
spec: {provider: S3, container: etcd-bucket, secretRef: {namespace: etcd-warden, name: bucket-credentials}, deletionGracePeriod: 1s}
EOF
ksim_wait 10 cond_is twin False/InvalidSpec || ctl_fail "twin bucket: $(cond twin)"
kc get backupbucket twin -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}' |
    grep -q "is BackupBucket shared's: one store, one bucket" ||
    ctl_fail "twin's message: $(kc get backupbucket twin -o jsonpath='{.status.conditions}')"
expect "the twin keeps no entries" "" "$(entries twin)"
expect "the first bucket keeps its entries" 2 "$(count shared)"
kc delete backupbucket twin >/dev/null
ok "a second BackupBucket of one store: InvalidSpec naming the first, no entries"
grep -q 'spec.deletionGracePeriod' <<<"$(kc get backupbucket broken -o jsonpath='{.status.conditions[0].message}')" ||
    ctl_fail "InvalidSpec message does not name the field"
ok "a grace period too long to hold: Ready False/InvalidSpec"
ksim_wait 10 cond_is zero False/InvalidSpec || ctl_fail "a grace period of 0s: $(cond zero)"
grep -q 'spec.deletionGracePeriod: "0s" must be positive, e.g. 168h' <<<"$(kc get backupbucket zero -o jsonpath='{.status.conditions[0].message}')" ||
    ctl_fail "0s: $(kc get backupbucket zero -o jsonpath='{.status.conditions[0].message}')"
ok "a grace period of 0s: Ready False/InvalidSpec, must be positive"
# A Secret that is not there: not Ready, named; Ready once it exists.
bucket nosecret 1h lonely-bucket missing-credentials
ksim_wait 10 cond_is nosecret False/SecretNotFound || ctl_fail "a missing Secret: $(cond nosecret)"
grep -q 'Secret etcd-warden/missing-credentials (spec.secretRef) not found' <<<"$(kc get backupbucket nosecret -o jsonpath='{.status.conditions[0].message}')" ||
    ctl_fail "SecretNotFound message: $(kc get backupbucket nosecret -o jsonpath='{.status.conditions}')"
ksim_wait 10 has_event nosecret '^Warning SecretNotFound: ' || ctl_fail "no SecretNotFound event: $(ctl_events default nosecret)"
ctl_backup_secret etcd-warden missing-credentials
kc annotate backupbucket nosecret touched=1 >/dev/null
ksim_wait 10 cond_is nosecret True/EntriesKept || ctl_fail "Secret created: $(cond nosecret)"
kc delete backupbucket nosecret zero >/dev/null
ok "a BackupBucket whose Secret is missing: Ready False/SecretNotFound, Ready once it exists"

# The Etcd deleted: its entry is kept, PendingDeletion with the time.
kc -n shoot delete etcd etcd-main --wait=false >/dev/null
want="shoot/etcd-events shoot--etcd-events Active
shoot/etcd-main shoot--etcd-main PendingDeletion"
ksim_wait 20 entries_are shared "$want" || ctl_fail "after the delete: $(entries shared)"
deleted=$(kc get backupentry "$e_main" -o jsonpath='{.spec.etcdDeletedAt}')
[ -n "$deleted" ] || ctl_fail "no spec.etcdDeletedAt"
ksim_wait 10 has_event "$e_main" '^Normal PendingDeletion: .*kept until' ||
    ctl_fail "no PendingDeletion event: $(ctl_events default "$e_main")"
ok "deleted Etcd: entry PendingDeletion since $deleted"

# Re-created within the grace period: reattached to the same entry.
ksim_wait 20 ksim_gone -n shoot etcd etcd-main || ctl_fail "the Etcd is not gone"
etcd shoot etcd-main etcd-bucket shoot--etcd-main
uid2=$(kc -n shoot get etcd etcd-main -o jsonpath='{.metadata.uid}')
[ "$uid2" != "$uid" ] || ctl_fail "the re-created Etcd has the old uid"
want="shoot/etcd-events shoot--etcd-events Active
shoot/etcd-main shoot--etcd-main Active"
ksim_wait 20 entries_are shared "$want" || ctl_fail "after the re-creation: $(entries shared)"
expect "reattached uid" "$uid2" "$(kc get backupentry "$e_main" -o jsonpath='{.spec.etcd.uid}')"
expect "deletion time removed" "" "$(kc get backupentry "$e_main" -o jsonpath='{.spec.etcdDeletedAt}')"
ksim_wait 10 has_event "$e_main" '^Normal Reattached: .*pending deletion cancelled' ||
    ctl_fail "no Reattached event: $(ctl_events default "$e_main")"

# Moved to another prefix: the old entry is released, a new one made.
kc -n shoot patch etcd etcd-events --type merge \
    -p '{"spec":{"backup":{"store":{"prefix":"shoot--etcd-events-v2"}}}}' >/dev/null
want="shoot/etcd-events shoot--etcd-events PendingDeletion
shoot/etcd-events shoot--etcd-events-v2 Active
shoot/etcd-main shoot--etcd-main Active"
ksim_wait 20 entries_are shared "$want" || ctl_fail "after the prefix change: $(entries shared)"
ksim_wait 10 count_is shared 3 || ctl_fail "entry count after the move: $(count shared)"
ok "prefix moved: old entry PendingDeletion, new entry Active"

# Two clusters in one prefix (made while the webhook's rule was off): reported, not disrupted.
conflict_of() { kc get backupentry "$1" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}'; }
has_conflict() { conflict_of "$1" | grep -q "$2"; }
ctl_namespace other2
etcd other2 etcd-dup etcd-bucket shoot--etcd-main/x
ksim_wait 20 has_conflict "$e_main" 'of Etcd other2/etcd-dup' ||
    ctl_fail "no PrefixConflict condition on $e_main: $(conflict_of "$e_main")"
ksim_wait 10 has_event "$e_main" '^Warning PrefixConflict: prefix "shoot--etcd-main" overlaps' ||
    ctl_fail "no PrefixConflict event: $(ctl_events default "$e_main")"
expect "the Etcd in conflict is not disrupted" Active \
    "$(kc get backupentry "$e_main" -o jsonpath='{.status.phase}')"
conflicts_metric() {
    curl -sf "http://127.0.0.1:$CTL_METRICS_PORT/metrics" |
        awk '$1 == "warden_backup_entry_prefix_conflicts" {print $2}'
}
metric_at_least_one() { [ "$(conflicts_metric)" -ge 1 ] 2>/dev/null; }
ksim_wait 10 metric_at_least_one ||
    ctl_fail "warden_backup_entry_prefix_conflicts: '$(conflicts_metric)'"
ok "two Etcds in one prefix: PrefixConflict condition, event and metric ($(conflicts_metric)) on the entries"

# The bucket deleted while entries reference it: kept, no new entries, then gone.
kc delete backupbucket shared --wait=false >/dev/null
ksim_wait 20 cond_is shared False/EntriesRemain || ctl_fail "deleted bucket: $(cond shared)"
ksim_wait 10 has_event shared '^Warning DeletionBlocked: ' ||
    ctl_fail "no DeletionBlocked event: $(ctl_events default shared)"
etcd shoot etcd-late etcd-bucket shoot--etcd-late
kc get backupentries -o name | while read -r e; do kc delete "$e" >/dev/null; done
ksim_wait 20 ksim_gone backupbucket shared || ctl_fail "the bucket stays: $(cond shared)"
expect "no entry made for a bucket being deleted" "" "$(entries shared)"
ok "deleted bucket: kept while entries remain, gone after"
ctl_stop
echo "controller_bke: ok"
