#!/usr/bin/env bash
# The deletion of a BackupEntry's backups after its grace period, driven with kubectl:
# tests/support/job_exec.py stands for the kubelet and the Job controller (kube-sim runs
# no pods) and runs the Jobs the controller creates in the bucket Secret's namespace
# against s3rver and a Local store. Re-created within the grace period: reattached, no
# Job, nothing deleted. Two Etcds in one bucket (S3, and Local): the deleted one's entry
# waits out the grace period, a Job empties its prefix (every other prefix untouched), the
# entry goes; a live Etcd whose prefix the backup sidecar lists with the entry's (a string
# prefix of it) blocks the deletion (PrefixConflict condition and event naming it, no Job,
# nothing deleted), and so does an entry whose prefix is the whole container; the Etcd's
# namespace deleted with its Secret: the entry still cleans up with the bucket's Secret.
# A store that cannot be reached: lastError, a Warning event, retried with backoff, finished
# once the bucket's Secret is right. Re-created once the deletion has begun: not
# reattached, the deletion ends, then a new entry; and when that run fails, no other run
# starts (the new cluster's snapshots kept), the entry reattached. Every snapshot is written
# once its Etcd exists: a deletion deletes only what was written from its claim on
# (controller_bke_authority has the objects from before). Locked objects (a fault proxy refusing their DELETE as S3
# Object Lock does): the entry
# stays Deleting with objectsImmutable, the Job re-runs, and once the lock is gone the
# entry finishes. The controller SIGKILLed at random points of the deletion (a few
# rounds): no object outside the prefix is ever deleted and the entry converges.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ctl_takeover_timings # a successor takes over from a SIGKILLed or lost leader
# kubesim.sh's EXIT trap is the one left: it runs snapshot.sh's clean-ups (emulators, work dir).
ksim_on_exit snap_cleanups

# The Local bucket's Secret names a host directory other than etcd-druid's default
# /etc/gardener/local-backupbuckets: the Job must mount that one.
LOCAL_ROOT=$SNAP_WORK/node/var/lib/local-buckets
export CRONJOB_EXEC_HOST_ROOT=$SNAP_WORK/node

bucket() { # name provider container secret grace [secret namespace]
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket $1"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: $1}
spec:
  provider: $2
  container: $3
  secretRef: {namespace: ${6:-etcd-warden}, name: $4}
  deletionGracePeriod: "$5"
EOF
}
# endpoint [namespace]: the bucket's credentials, as etcd-druid's backup Secret holds them, and
# the same in shoot's backup Secret (an Etcd gets an entry only when its Secret holds them)
s3_secret() {
    local ns name
    for ns in "${2:-etcd-warden}" shoot; do
        name=s3-bucket
        [ "$ns" != shoot ] || name=etcd-backup
        kc -n "$ns" create secret generic $name --dry-run=client -o yaml \
            --from-literal=accessKeyID=S3RVER --from-literal=secretAccessKey=S3RVER \
            --from-literal=region=us-east-1 --from-literal=s3ForcePathStyle=true \
            --from-literal=endpoint="$1" | kc apply -f - >/dev/null
    done
}
has_event() { ctl_events default "$1" | grep -q "$2"; }
s3_keys() { snap_s3 ls "$1" | sort; }
local_keys() { [ -d "$LOCAL_ROOT/bkt/$1" ] || return 0; (cd "$LOCAL_ROOT/bkt" && find "$1" -type f | sort); }
# the objects, then a second: a window ends the second before its Etcd goes (object times have
# seconds), so an object of the deletion's own second would stay
seed_s3() {
    for k in "$@"; do snap_s3 put "$k" "$SNAP_WORK/obj"; done
    sleep 1
}
seed_local() {
    for k in "$@"; do mkdir -p "$(dirname "$LOCAL_ROOT/bkt/$k")" && cp "$SNAP_WORK/obj" "$LOCAL_ROOT/bkt/$k"; done
}
all_s3() { snap_s3 ls "" | sort; }
# the keys of a prefix: <p>/...
outside() { grep -v "^$1/" || true; }

echo snapshot >"$SNAP_WORK/obj"
mkdir -p "$LOCAL_ROOT/bkt"
snap_s3_start
ctl_stage
ctl_namespace shoot doomed
s3_secret "$SNAP_S3_URL"
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/local-buckets >/dev/null
bucket s3 aws "$SNAP_BUCKET" s3-bucket 1h
bucket local Local bkt local-bucket 1h
ctl_store_etcd doomed etcd-a S3 "$SNAP_BUCKET" shoot--etcd-a
ctl_store_etcd shoot etcd-a-events S3 "$SNAP_BUCKET" shoot--events-a
ctl_store_etcd shoot etcd-l Local bkt shoot--etcd-l
ctl_store_etcd shoot etcd-l2 Local bkt shoot--etcd-l2
for e in doomed/etcd-a shoot/etcd-a-events shoot/etcd-l shoot/etcd-l2; do ctl_members "${e%/*}" "${e#*/}"; done
ctl_jobs_serve etcd-warden
ctl_start
for e in doomed/etcd-a shoot/etcd-a-events shoot/etcd-l shoot/etcd-l2; do
    ksim_wait 20 ctl_has_entry "${e%/*}" "${e#*/}" || ctl_fail "no entry for $e"
    ctl_members_seen "${e%/*}" "${e#*/}"
done
sleep 1 # object times have seconds: written after the members were seen
seed_s3 shoot--etcd-a/v2/Full-00000000-00000100-1700000000.gz \
    shoot--etcd-a/v2/Incr-00000101-00000200-1700000100.gz shoot--etcd-a/v2/nested/member.json \
    shoot--events-a/v2/Full-00000000-00000100-1700000000.gz \
    other/shoot--etcd-a/v2/Full-00000000-00000100-1700000000.gz
seed_local shoot--etcd-l/v2/Full-00000000-00000100-1700000000.gz shoot--etcd-l/v2/chunk/1 \
    shoot--etcd-l2/v2/Full-00000000-00000100-1700000000.gz
s3_before=$(all_s3)

e_a=$(ctl_entry_of doomed etcd-a); e_ev=$(ctl_entry_of shoot etcd-a-events)
e_l=$(ctl_entry_of shoot etcd-l); e_l2=$(ctl_entry_of shoot etcd-l2)
ok "four entries in two buckets"

# Re-created within the grace period: reattached, no Job, nothing deleted.
kc -n shoot delete etcd etcd-a-events >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e_ev" PendingDeletion || ctl_fail "not pending: $(ctl_entry_phase "$e_ev")"
ctl_store_etcd shoot etcd-a-events S3 "$SNAP_BUCKET" shoot--events-a
ksim_wait 20 has_event "$e_ev" '^Normal Reattached: ' || ctl_fail "not reattached"
expect "phase after reattachment" Active "$(ctl_entry_phase "$e_ev")"
expect "no deletion Job" "" "$(kc -n etcd-warden get jobs -o name)"
expect "nothing deleted" "$s3_before" "$(all_s3)"
ok "re-created within the grace period: reattached, nothing deleted"

# Deleted: etcd-a, then its namespace with its Secret (the Secret read when the entry is
# released, still holding the bucket's credentials: controller/entries/bkeheld.h), and etcd-l;
# then the grace period ends.
kc -n doomed delete etcd etcd-a >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e_a" PendingDeletion || ctl_fail "$e_a: $(ctl_entry_phase "$e_a")"
kc delete namespace doomed --wait=false >/dev/null
kc -n shoot delete etcd etcd-l >/dev/null
ksim_wait 30 ksim_gone namespace doomed || ctl_fail "namespace doomed stays"
ksim_wait 20 ctl_entry_phase_is "$e_l" PendingDeletion || ctl_fail "$e_l: $(ctl_entry_phase "$e_l")"
bucket s3 aws "$SNAP_BUCKET" s3-bucket 2s
bucket local Local bkt local-bucket 2s
ksim_wait 60 ksim_gone backupentry "$e_a" || ctl_fail "$e_a stays: $(kc get backupentry "$e_a" -o jsonpath='{.status}')"
ksim_wait 60 ksim_gone backupentry "$e_l" || ctl_fail "$e_l stays: $(kc get backupentry "$e_l" -o jsonpath='{.status}')"
expect "S3 prefix emptied" "" "$(s3_keys shoot--etcd-a/)"
expect "S3: nothing outside the prefix deleted" "$(outside shoot--etcd-a <<<"$s3_before")" "$(all_s3)"
expect "Local prefix emptied" "" "$(local_keys shoot--etcd-l)"
expect "Local: the other prefix untouched" shoot--etcd-l2/v2/Full-00000000-00000100-1700000000.gz \
    "$(local_keys shoot--etcd-l2)"
for e in "$e_a" "$e_l"; do
    has_event "$e" '^Normal DeletionStarted: Job etcd-warden/' || ctl_fail "$e: no DeletionStarted"
    has_event "$e" '^Normal Deleted: prefix .* emptied' || ctl_fail "$e: no Deleted event"
done
expect "the other entries" "Active Active" "$(ctl_entry_phase "$e_ev") $(ctl_entry_phase "$e_l2")"
no_jobs() { [ -z "$(kc -n etcd-warden get jobs -o name)" ]; }
ksim_wait 20 no_jobs || ctl_fail "Jobs left: $(kc -n etcd-warden get jobs -o name)"
ok "grace period over: prefixes emptied (namespace gone: the bucket's Secret), entries gone"

# A live Etcd the sidecar lists with the entry's prefix ("shoot--etcd-b" lists
# "shoot--etcd-b-2/..."), made before the webhook's rule: the deletion never starts.
seed_s3 shoot--etcd-b/v2/Full-00000000-00000100-1700000000.gz \
    shoot--etcd-b-2/v2/Full-00000000-00000100-1700000200.gz
ctl_store_etcd shoot etcd-b S3 "$SNAP_BUCKET" shoot--etcd-b
ctl_store_etcd shoot etcd-b-2 S3 "$SNAP_BUCKET" shoot--etcd-b-2
ksim_wait 20 ctl_has_entry shoot etcd-b || ctl_fail "no entry for etcd-b"
e_b=$(ctl_entry_of shoot etcd-b)
b_before=$(all_s3)
kc -n shoot delete etcd etcd-b >/dev/null
blocked_by() { kc get backupentry "$1" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}' | grep -q "$2"; }
ksim_wait 30 blocked_by "$e_b" 'blocked: it overlaps the prefix "shoot--etcd-b-2" of Etcd shoot/etcd-b-2' ||
    ctl_fail "$e_b not blocked: $(kc get backupentry "$e_b" -o jsonpath='{.status}')"
ksim_wait 10 has_event "$e_b" '^Warning PrefixConflict: deletion of prefix "shoot--etcd-b" blocked' ||
    ctl_fail "no PrefixConflict event: $(ctl_events default "$e_b")"
sleep 3 # the grace period (2s) is over: a Job would have been made by now
expect "blocked: still PendingDeletion" PendingDeletion "$(ctl_entry_phase "$e_b")"
expect "blocked: no deletion Job" "" "$(kc -n etcd-warden get jobs -o name)"
expect "blocked: nothing deleted" "$b_before" "$(all_s3)"
ok "a live Etcd in an overlapping prefix blocks the deletion: condition, event, no Job"

# An entry whose prefix is the whole container: never emptied, said once.
bucket whole aws whole-bucket s3-bucket 2s
ctl_store_etcd shoot etcd-root S3 whole-bucket ""
ksim_wait 20 ctl_has_entry shoot etcd-root || ctl_fail "no entry for etcd-root"
e_root=$(ctl_entry_of shoot etcd-root)
kc -n shoot delete etcd etcd-root >/dev/null
ksim_wait 30 blocked_by "$e_root" 'is the whole container whole-bucket' ||
    ctl_fail "$e_root: $(kc get backupentry "$e_root" -o jsonpath='{.status}')"
expect "whole container: no deletion Job" "" "$(kc -n etcd-warden get jobs -o name)"
[ "$(ctl_events default "$e_root" | grep -c 'PrefixConflict')" = 1 ] ||
    ctl_fail "the whole-container entry's event: $(ctl_events default "$e_root")"
kc delete backupentry "$e_root" >/dev/null
ok "an entry of the whole container: kept PendingDeletion with its reason, no Job"

# A store that cannot be reached: lastError, a DeletionFailed event, retried with backoff;
# once the Secret is right again the entry finishes. Port 9 (discard): nothing listens there,
# while a port free now may be another test's s3rver, with the same bucket, when the Job runs.
s3_secret "http://127.0.0.1:9"
ctl_store_etcd shoot etcd-f S3 "$SNAP_BUCKET" shoot--etcd-f
ctl_members shoot etcd-f
ksim_wait 20 ctl_has_entry shoot etcd-f || ctl_fail "no entry for etcd-f"
ctl_members_seen shoot etcd-f
sleep 1
seed_s3 shoot--etcd-f/v2/Full-00000000-00000100-1700000000.gz
ksim_wait 20 ctl_has_entry shoot etcd-f || ctl_fail "no entry for etcd-f"
e_f=$(ctl_entry_of shoot etcd-f)
kc -n shoot delete etcd etcd-f >/dev/null
failures() { kc get backupentry "$e_f" -o jsonpath='{.status.deletionFailures}'; }
failed_twice() { [ "$(failures)" -ge 2 ] 2>/dev/null; }
ksim_wait 60 failed_twice || ctl_fail "etcd-f: $(kc get backupentry "$e_f" -o jsonpath='{.status}')"
kc get backupentry "$e_f" -o jsonpath='{.status.lastError}' | grep -q "exit status 1" ||
    ctl_fail "etcd-f: no lastError: $(kc get backupentry "$e_f" -o jsonpath='{.status}')"
has_event "$e_f" '^Warning DeletionFailed: Job etcd-warden/.*exit status 1' ||
    ctl_fail "no DeletionFailed event: $(ctl_events default "$e_f")"
expect "etcd-f's backups still there" shoot--etcd-f/v2/Full-00000000-00000100-1700000000.gz \
    "$(s3_keys shoot--etcd-f/)"
s3_secret "$SNAP_S3_URL"
ksim_wait 60 ksim_gone backupentry "$e_f" || ctl_fail "$e_f stays: $(kc get backupentry "$e_f" -o jsonpath='{.status}')"
expect "etcd-f's prefix emptied" "" "$(s3_keys shoot--etcd-f/)"
ok "store unreachable: lastError, DeletionFailed, retried with backoff, finished once reachable"

# Locked objects: the DELETE of one key refused as S3 Object Lock refuses it.
proxy_start "$SNAP_S3_URL" \
    --rule 'DELETE:Full-locked:403:AccessDenied:inf:Access Denied because object protected by object lock.'
s3_secret "$PROXY_URL"
ctl_store_etcd shoot etcd-c S3 "$SNAP_BUCKET" shoot--etcd-c
ctl_members shoot etcd-c
ksim_wait 20 ctl_has_entry shoot etcd-c || ctl_fail "no entry for etcd-c"
ctl_members_seen shoot etcd-c
sleep 1
seed_s3 shoot--etcd-c/v2/Full-locked shoot--etcd-c/v2/Incr-1
ksim_wait 20 ctl_has_entry shoot etcd-c || ctl_fail "no entry for etcd-c"
e_c=$(ctl_entry_of shoot etcd-c)
kc -n shoot delete etcd etcd-c >/dev/null
immutable() { kc get backupentry "$e_c" -o jsonpath='{.status.phase} {.status.objectsLeft} {.status.objectsImmutable}'; }
immutable_is() { [ "$(immutable)" = "$1" ]; }
ksim_wait 60 immutable_is "Deleting 1 1" || ctl_fail "locked: $(immutable)"
ksim_wait 10 has_event "$e_c" '^Normal ObjectsLocked: 1 objects deleted; 1 still immutable' ||
    ctl_fail "no ObjectsLocked event: $(ctl_events default "$e_c")"
expect "the locked object stays" shoot--etcd-c/v2/Full-locked "$(s3_keys shoot--etcd-c/)"
reran() { [ "$(grep -c '/shoot-etcd-c-[0-9a-f]*--delete-[0-9a-f]*: .*exit 0' "$SNAP_WORK/job_exec.log")" -ge 2 ]; }
ksim_wait 30 reran ||
    ctl_fail "the Job was not re-run while locked"
expect "locked objects never fail the entry" "" "$(kc get backupentry "$e_c" -o jsonpath='{.status.lastError}')"
s3_secret "$SNAP_S3_URL" # the retention is over
proxy_stop
ksim_wait 90 ksim_gone backupentry "$e_c" || ctl_fail "$e_c stays: $(immutable)"
expect "locked prefix emptied after the lock" "" "$(s3_keys shoot--etcd-c/)"
ok "locked objects: entry kept Deleting with objectsImmutable, finished once deletable"

# Re-created once the deletion has begun: not reattached; the deletion ends, then a new
# entry. The bucket's Secret moves to a namespace job_exec does not serve, holding the Job.
ctl_namespace held
s3_secret "$SNAP_S3_URL" held
bucket s3 aws "$SNAP_BUCKET" s3-bucket 2s held
ctl_store_etcd shoot etcd-r S3 "$SNAP_BUCKET" shoot--etcd-r
ctl_members shoot etcd-r
ksim_wait 20 ctl_has_entry shoot etcd-r || ctl_fail "no entry for etcd-r"
ctl_members_seen shoot etcd-r
sleep 1
seed_s3 shoot--etcd-r/v2/Full-00000000-00000100-1700000000.gz
ksim_wait 20 ctl_has_entry shoot etcd-r || ctl_fail "no entry for etcd-r"
e_r=$(ctl_entry_of shoot etcd-r)
uid_r=$(kc get backupentry "$e_r" -o jsonpath='{.metadata.uid}')
kc -n shoot delete etcd etcd-r >/dev/null
held_job() { kc -n held get jobs -o name | grep -q .; }
ksim_wait 30 held_job || ctl_fail "no deletion Job in held: $(kc get backupentry "$e_r" -o jsonpath='{.status}')"
ksim_wait 10 ctl_entry_phase_is "$e_r" Deleting || ctl_fail "$e_r: $(ctl_entry_phase "$e_r")"
ctl_store_etcd shoot etcd-r S3 "$SNAP_BUCKET" shoot--etcd-r
ksim_wait 20 has_event "$e_r" '^Warning DeletionInProgress: Etcd shoot/etcd-r is back' ||
    ctl_fail "no DeletionInProgress event: $(ctl_events default "$e_r")"
expect "not reattached while deleting" Deleting "$(ctl_entry_phase "$e_r")"
job_r=$(kc -n held get jobs -o name)
python3 "$SNAP_SRC/tests/support/job_exec.py" run held "${job_r#*/}" "$SNAP_WORK" "$WARDEN_SNAPSHOT" \
    2>>"$SNAP_WORK/job_exec.log" || ctl_fail "job_exec run failed"
# the entry is named after the claim: the new one has the old one's name, not its uid
new_entry() {
    local e
    e=$(ctl_entry_of shoot etcd-r)
    [ -n "$e" ] && [ "$(kc get backupentry "$e" -o jsonpath='{.metadata.uid}')" != "$uid_r" ] &&
        ctl_entry_phase_is "$e" Active
}
ksim_wait 20 new_entry || ctl_fail "no new entry for etcd-r: $(ctl_entry_of shoot etcd-r)"
expect "the old backups deleted" "" "$(s3_keys shoot--etcd-r/)"
ok "re-created after the grace period: the deletion ends first, then a new entry"

# Re-created while a run is held, and that run fails (the store cannot be reached): no
# other run starts while the Etcd exists, so what its sidecar writes meanwhile is never
# deleted; the entry is reattached to it.
s3_secret "http://127.0.0.1:9" held
ctl_store_etcd shoot etcd-q S3 "$SNAP_BUCKET" shoot--etcd-q
ctl_members shoot etcd-q
ksim_wait 20 ctl_has_entry shoot etcd-q || ctl_fail "no entry for etcd-q"
ctl_members_seen shoot etcd-q
sleep 1
seed_s3 shoot--etcd-q/v2/Full-00000000-00000100-1700000000.gz
ksim_wait 20 ctl_has_entry shoot etcd-q || ctl_fail "no entry for etcd-q"
e_q=$(ctl_entry_of shoot etcd-q)
kc -n shoot delete etcd etcd-q >/dev/null
ksim_wait 30 held_job || ctl_fail "no deletion Job in held: $(kc get backupentry "$e_q" -o jsonpath='{.status}')"
ksim_wait 10 ctl_entry_phase_is "$e_q" Deleting || ctl_fail "$e_q: $(ctl_entry_phase "$e_q")"
ctl_store_etcd shoot etcd-q S3 "$SNAP_BUCKET" shoot--etcd-q
ksim_wait 20 has_event "$e_q" '^Warning DeletionInProgress: Etcd shoot/etcd-q is back' ||
    ctl_fail "no DeletionInProgress event: $(ctl_events default "$e_q")"
job_q=$(kc -n held get jobs -o name)
python3 "$SNAP_SRC/tests/support/job_exec.py" run held "${job_q#*/}" "$SNAP_WORK" "$WARDEN_SNAPSHOT" \
    2>>"$SNAP_WORK/job_exec.log" || ctl_fail "job_exec run failed"
s3_secret "$SNAP_S3_URL" held # a retry would now delete
seed_s3 shoot--etcd-q/v2/Full-00000000-00000200-1800000000.gz
ksim_wait 30 has_event "$e_q" '^Normal Reattached: Etcd shoot/etcd-q' ||
    ctl_fail "not reattached: $(kc get backupentry "$e_q" -o jsonpath='{.status}')"
expect "reattached" Active "$(ctl_entry_phase "$e_q")"
sleep 3 # past the failed run's backoff (2 s): a retry would have its Job by now
expect "no other run" "" "$(kc -n held get jobs -o name)"
expect "nothing deleted" "shoot--etcd-q/v2/Full-00000000-00000100-1700000000.gz
shoot--etcd-q/v2/Full-00000000-00000200-1800000000.gz" "$(s3_keys shoot--etcd-q/)"
bucket s3 aws "$SNAP_BUCKET" s3-bucket 2s
ok "re-created while a run failed: no retry, reattached, its new snapshot kept"

# The controller SIGKILLed at points spread over the deletion: 1.3 s, 2.6 s and 3.9 s after
# the Etcd's deletion (the grace period is 2 s; the Job runs after it). Fixed, so that a run
# does not pass or fail by the point it drew; BKE_KILL_AT="1.1 4.5" tries others.
kill_at=(${BKE_KILL_AT:-1.3 2.6 3.9})
for round in $(seq 1 ${#kill_at[@]}); do
    p=shoot--kill-$round
    ctl_store_etcd shoot "kill-$round" S3 "$SNAP_BUCKET" "$p"
    ctl_members shoot "kill-$round"
    ksim_wait 20 ctl_has_entry shoot "kill-$round" || ctl_fail "no entry for kill-$round"
    ctl_members_seen shoot "kill-$round"
    sleep 1
    seed_s3 "$p/v2/Full-00000000-00000100-1700000000.gz" "$p/v2/Incr-1" "shoot--neighbour-$round/v2/Incr-1"
    ksim_wait 20 ctl_has_entry shoot "kill-$round" || ctl_fail "no entry for kill-$round"
    e=$(ctl_entry_of shoot "kill-$round")
    before=$(all_s3)
    kc -n shoot delete etcd "kill-$round" >/dev/null
    sleep "${kill_at[round - 1]}"
    ctl_kill9
    ctl_start
    ksim_wait 90 ksim_gone backupentry "$e" || ctl_fail "round $round: $e stays: $(kc get backupentry "$e" -o jsonpath='{.status}')"
    expect "round $round: prefix emptied" "" "$(s3_keys "$p/")"
    expect "round $round: nothing outside the prefix deleted" "$(outside "$p" <<<"$before")" "$(all_s3)"
done
ok "controller killed during deletions (at ${kill_at[*]} s): entries converge, nothing outside a prefix deleted"
ctl_stop
echo "controller_bke_delete: ok"
