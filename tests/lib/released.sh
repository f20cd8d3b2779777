# The stage of the scripts about a BackupEntry released while another Etcd comes onto its
# prefix: kube-sim, warden-webhook (--backup-entries --etcd-backups), warden-controller,
# s3rver and tests/support/job_exec.py for the Jobs of namespace etcd-warden.
#
#   . "$(dirname "$0")/../lib/released.sh"
#   rel_stage "shoot other" 10s   # the bucket (grace period 10s) over s3rver's bucket, the
#                                 # backup Secret in each namespace, shoot/etcd-a on $REL_P
#                                 # with its member
#   ctl_start                     # (one replica, or more)
#   rel_written                   # etcd-a's entry ($REL_E) seen with its member, then one
#                                 # full snapshot of etcd-a's written into $REL_P ($REL_OWN),
#                                 # a second ago
#   rel_release                   # etcd-a, its StatefulSet and member deleted; the entry
#                                 # PendingDeletion
#   rel_policy Ignore             # the failurePolicy of the Etcd webhooks
#   rel_entry_field "$REL_E" '{.spec.etcdLastAliveAt}'
#   out=$(rel_etcd_x "$REL_P" 2>&1)  # other/etcd-x applied on a prefix
#   rel_away_back kc '{"prefix":"x"}' '{"prefix":"y"}' "while ..."  # a store change and back
#                                 # while warden-controller is paused; $REL_X the other's keys
#   rel_judge "$x_keys" "by ..." [GONE]  # etcd-a deleted, its entry's deletion settled: each
#                                 # of the keys (another writer's, under $REL_P) must stay, else
#                                 # HOLE; each of GONE (etcd-a's own) must be gone
#
# $SNAP_WORK/obj is the body every snapshot gets. A script without jq is skipped (exit 77).
. "$(dirname "${BASH_SOURCE[0]}")/snapshot.sh"
. "$(dirname "${BASH_SOURCE[0]}")/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

REL_P=shoot--etcd-a
REL_E=

rel_policy() {
    local k
    for k in validatingwebhookconfiguration mutatingwebhookconfiguration; do
        kc patch $k etcd-warden --type json -p "[{\"op\":\"replace\",\"path\":\"/webhooks/0/failurePolicy\",\"value\":\"$1\"}]" >/dev/null ||
            ctl_fail "cannot set failurePolicy $1 on $k etcd-warden"
    done
}

rel_entry_field() { kc get backupentry "$1" -o jsonpath="$2" 2>/dev/null; }

rel_stage() {
    CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
    echo snapshot >"$SNAP_WORK/obj"
    snap_s3_start
    ctl_stage
    ctl_s3_bucket_secret
    # shellcheck disable=SC2086 # the namespaces, one word each
    ctl_namespace $1
    ctl_s3_bucket "$2"
    ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" "$REL_P"
    ctl_members shoot etcd-a
    ctl_jobs_serve etcd-warden
}

rel_written() {
    ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for etcd-a"
    ctl_members_seen shoot etcd-a
    REL_E=$(ctl_entry_of shoot etcd-a)
    sleep 1
    snap_s3 put "$REL_P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
    sleep 1 # what follows a second later: a window ends before a store change's own second
}
REL_OWN=$REL_P/v2/Full-00000000-00000100-1700000000.gz # what rel_written writes

rel_release() {
    kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
    kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
    kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
    ksim_wait 20 ctl_entry_phase_is "$REL_E" PendingDeletion ||
        ctl_fail "$REL_E: $(ctl_entry_phase "$REL_E")"
    echo "entry $REL_E: PendingDeletion, etcdLastAliveAt $(rel_entry_field "$REL_E" '{.spec.etcdLastAliveAt}')"
}

# rel_away_back KC AWAY BACK WHILE: etcd-a's spec.backup.store patched (merge) to AWAY and then
# to BACK through KC (kc, or kc_druid as etcd-druid), warden-controller paused (SIGSTOP, a starved
# process, its watch unbroken) throughout; between the two the cluster on another seed writes
# two snapshots into $REL_P (their keys in $REL_X; WHILE says when, in the log); then the
# controller resumes and gets a few seconds. A patch refused: "held: ..." and exit 0.
rel_away_back() {
    local out
    sleep 1
    kill -STOP "$CTL_PID" && REL_STOPPED=$CTL_PID
    ksim_on_exit "kill -CONT $REL_STOPPED 2>/dev/null || true"
    echo "controller paused; entry $REL_E spec $(rel_entry_field "$REL_E" '{.spec}' | cut -c1-600)"
    out=$("$1" -n shoot patch etcd etcd-a --type merge -p "{\"spec\":{\"backup\":{\"store\":$2}}}" 2>&1) ||
        { kill -CONT "$REL_STOPPED"; echo "held: the first patch refused: $out"; exit 0; }
    echo "etcd-a's store: $(jp shoot etcd/etcd-a '{.spec.backup.store}') (generation $(jp shoot etcd/etcd-a '{.metadata.generation}'))"
    sleep 1
    snap_s3 put "$REL_P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
    snap_s3 put "$REL_P/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
    REL_X=$(snap_s3 ls "$REL_P/v2/" | grep -- '-18000' | sort)
    echo "the other seed wrote $(echo $REL_X) $4"
    sleep 1
    out=$("$1" -n shoot patch etcd etcd-a --type merge -p "{\"spec\":{\"backup\":{\"store\":$3}}}" 2>&1) ||
        { kill -CONT "$REL_STOPPED"; echo "held: the patch back refused: $out"; exit 0; }
    echo "etcd-a's store back (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entry $REL_E spec $(rel_entry_field "$REL_E" '{.spec}' | cut -c1-700)"
    kill -CONT "$REL_STOPPED"
    sleep 8
    echo "after the pause: entry $REL_E phase $(ctl_entry_phase "$REL_E"); spec $(rel_entry_field "$REL_E" '{.spec}' | cut -c1-900); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
    sleep 1
}

# rel_judge KEYS WHY [GONE]: etcd-a released (rel_release), its entry's deletion settled
# (ctl_entry_settled, bounded), the controller and the Jobs stopped; every key of KEYS (one a
# line: what another writer put under $REL_P) must still be listed there, else "HOLE: the
# deletion of shoot/etcd-a's entry deleted <keys>, written into "$REL_P" WHY" and exit 1; and no
# key of GONE (what etcd-a was shown to have written: its entry's windows) may be.
rel_judge() {
    local left lost
    rel_release
    echo "entry $REL_E: spec $(rel_entry_field "$REL_E" '{.spec}' | cut -c1-900)"
    ksim_wait 90 ctl_entry_settled "$REL_E" ||
        echo "entry $REL_E stays: $(rel_entry_field "$REL_E" '{.status.phase} {.status.message}' | cut -c1-300)"
    echo "events of $REL_E: $(ctl_events default "$REL_E" | tail -3 | tr '\n' '|' | cut -c1-500)"
    left=$(snap_s3 ls "$REL_P/v2/" | sort)
    echo "left under $REL_P: $(echo $left)"
    ctl_jobs_stop
    ctl_stop
    lost=$(comm -23 <(echo "$1") <(echo "$left"))
    if [ -n "$lost" ]; then
        echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written into \"$REL_P\" $2"
        exit 1
    fi
    echo "held: the other writer's snapshots stay"
    [ -z "$(comm -12 <(echo "${3:-}" | sort) <(echo "$left"))" ] ||
        ctl_fail "what etcd-a was shown to have written stays: $(echo "$3")"
}

# rel_etcd_x PREFIX: Etcd other/etcd-x (one replica, aws on the bucket) on PREFIX, applied;
# kubectl's output and status.
rel_etcd_x() {
    kc apply -f - <<YAML
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-x, namespace: other}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: aws, container: $SNAP_BUCKET, prefix: "$1", secretRef: {name: etcd-backup}}}
YAML
}
