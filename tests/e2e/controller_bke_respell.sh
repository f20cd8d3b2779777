#!/usr/bin/env bash
# A move is not a deletion, driven with kubectl: tests/support/job_exec.py runs the
# controller's deletion Jobs against s3rver. A live Etcd respelled as etcd-druid allows
# (provider aws -> s3, the endpoint moved from the Secret into endpointOverride, as the
# sidecar's deprecation warning asks) keeps its BackupEntry Active, under the same name, past
# the bucket's grace period, with no Job and nothing deleted; respelled into a provider no
# one knows ("awss": etcd-druid refuses it, its sidecar keeps writing as before) it keeps it
# too, and while it is there the deletion of another entry in that bucket is blocked naming
# it (fail closed: its claim could be anything in the container); spelled right again, that
# deletion goes on. A deleted Etcd's entry in the same bucket is deleted meanwhile (the Jobs
# do run here).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

has_event() { ctl_events default "$1" | grep -q "$2"; }
all_s3() { snap_s3 ls "" | sort; }
store() { kc -n shoot patch etcd etcd-a --type merge -p "{\"spec\":{\"backup\":{\"store\":$1}}}" >/dev/null; }
poke() { kc annotate --overwrite backupbucket s3 "poke=$1" >/dev/null; }
# past the grace period, the bucket reconciled meanwhile: etcd-a's entry still Active, no Job
kept() { # what
    local i
    for i in 1 2 3 4; do
        sleep 1.5
        poke "$1-$i"
    done
    expect "$1: the entry" "$e_a Active" "$(ctl_entry_of shoot etcd-a) $(ctl_entry_phase "$e_a")"
    expect "$1: no deletion Job" "" "$(kc -n etcd-warden get jobs -o name)"
    expect "$1: etcd-a's snapshots" "$a_keys" "$(snap_s3 ls shoot--etcd-a/ | sort)"
    ok "$1: entry kept Active, nothing deleted"
}

echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: s3}
spec: {provider: aws, container: $SNAP_BUCKET, secretRef: {namespace: etcd-warden, name: s3-bucket}, deletionGracePeriod: 2s}
EOF
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" shoot--etcd-a
ctl_store_etcd shoot etcd-b aws "$SNAP_BUCKET" shoot--etcd-b
ctl_store_etcd shoot etcd-c aws "$SNAP_BUCKET" team/etcd-c
for e in etcd-a etcd-b etcd-c; do ctl_members shoot $e; done
ctl_jobs_serve etcd-warden
ctl_start
for e in etcd-a etcd-b etcd-c; do
    ksim_wait 20 ctl_has_entry shoot $e || ctl_fail "no entry for $e"
    ctl_members_seen shoot $e
done
sleep 1 # object times have seconds: written after the members were seen
for p in shoot--etcd-a shoot--etcd-b team/etcd-c; do
    snap_s3 put "$p/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
    snap_s3 put "$p/v2/Incr-00000101-00000200-1700000100.gz" "$SNAP_WORK/obj"
done
a_keys=$(snap_s3 ls shoot--etcd-a/ | sort)
e_a=$(ctl_entry_of shoot etcd-a); e_b=$(ctl_entry_of shoot etcd-b); e_c=$(ctl_entry_of shoot etcd-c)
ksim_wait 20 ctl_entry_phase_is "$e_a" Active || ctl_fail "$e_a: $(ctl_entry_phase "$e_a")"

# the Jobs run: a deleted Etcd's prefix is emptied after the grace period
kc -n shoot delete etcd etcd-b >/dev/null
ksim_wait 60 ksim_gone backupentry "$e_b" || ctl_fail "$e_b stays: $(kc get backupentry "$e_b" -o jsonpath='{.status}')"
expect "etcd-b's prefix emptied" "" "$(snap_s3 ls shoot--etcd-b/)"
ok "a deleted Etcd's backups are deleted after the grace period"

store '{"provider":"s3"}'
kept "provider aws -> s3"
store '{"provider":"S3","endpointOverride":"'"$SNAP_S3_URL"'/"}'
kept "the endpoint moved into endpointOverride"
store '{"provider":"stackit","endpointOverride":"http://another.example:9000"}'
kept "another endpoint spelling"

# a provider etcd-druid refuses: the sidecar keeps writing as it did
store '{"provider":"awss","endpointOverride":null}'
kept "provider awss"
kc -n shoot delete etcd etcd-c >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e_c" PendingDeletion || ctl_fail "$e_c: $(ctl_entry_phase "$e_c")"
ksim_wait 30 has_event "$e_c" "Warning PrefixConflict: .*Etcd shoot/etcd-a" ||
    ctl_fail "$e_c's deletion not blocked: $(ctl_events default "$e_c")"
expect "etcd-c's snapshots while awss is there" 2 "$(snap_s3 ls team/etcd-c/ | wc -l)"
expect "no Job while awss is there" "" "$(kc -n etcd-warden get jobs -o name)"
ok "a store not understood blocks deletions in its container, naming the Etcd"
store '{"provider":"aws"}'
ksim_wait 60 ksim_gone backupentry "$e_c" || ctl_fail "$e_c stays: $(kc get backupentry "$e_c" -o jsonpath='{.status}')"
expect "etcd-c's prefix emptied" "" "$(snap_s3 ls team/etcd-c/)"
expect "etcd-a's entry" "$e_a Active" "$(ctl_entry_of shoot etcd-a) $(ctl_entry_phase "$e_a")"
expect "etcd-a's snapshots" "$a_keys" "$(snap_s3 ls shoot--etcd-a/ | sort)"
ok "spelled right again: the blocked deletion goes on, etcd-a keeps everything"
echo "controller_bke_respell: ok"
