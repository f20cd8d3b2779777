#!/usr/bin/env bash
# The etcd-warden demo, the README's first command. On a fresh Debian 12 machine (as
# root) it installs what is missing, builds the three programs and the test doubles
# (build/demo), then on kube-sim, the project's Kubernetes API server:
#   - applies the chart's rendered manifests (CRDs, service accounts, RBAC, Services,
#     Deployments, webhook configurations) and runs warden-webhook and
#     warden-controller locally with the flags of their rendered Deployments, each as
#     its own service account (kube-sim runs no pods);
#   - starts s3rver (an S3 emulator) as the backup bucket and backup-double (etcd-druid's
#     backup sidecar stand-in) on the Etcd's client Service;
#   - walks through component protection, hibernation with the immutability task and its
#     CronJob, a backup-and-restore, backups that outlive their Etcd (a BackupBucket, a
#     re-attachment within the grace period, a deletion Job after it), and an
#     EtcdBackupSchedule firing every minute whose first EtcdBackup (an EtcdOpsTask's full
#     snapshot, copied by a Job to a second bucket) an EtcdRestore brings up as a new Etcd on
#     a new prefix (and one refused restore onto an existing Etcd), and a restore drill
#     finding the store's snapshots not restorable (a Warning event, the metric at 0),
#     printing every kubectl command and its output. tests/support/job_exec.py runs the Jobs as a kubelet would.
# Chapter 5 waits for the schedule's first fire time: up to a minute of the run.
# It exits 0 only when every step behaved as shown, and leaves no process behind.
# Under ctest (WARDEN_BINARY_DIR set) it installs and builds nothing.
#
#   tests/demo.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started=$SECONDS

# shellcheck source=lib/stage-build.sh
. tests/lib/stage-build.sh
if [ -z "${WARDEN_BINARY_DIR:-}" ]; then
    stage_build
    started=$SECONDS
fi
# shellcheck source=lib/stage.sh
. tests/lib/stage.sh

# ---- narration -------------------------------------------------------------------
if [ -t 1 ]; then B=$'\033[1m' G=$'\033[32m' X=$'\033[0m'; else B="" G="" X=""; fi
chapter() { printf '\n%s==== %s%s  (%ss)\n' "$B" "$*" "$X" "$((SECONDS - started))"; }
say() { printf '%s\n' "$*" | fold -s -w 92; }
quote() {
    local a out=""
    for a in "$@"; do
        case $a in
        *[!A-Za-z0-9_./:=,@%+-]* | "") out+=" '${a//\'/\'\\\'\'}'" ;;
        *) out+=" $a" ;;
        esac
    done
    printf '%s' "${out# }"
}
# Print "$ CMD ARGS", run it, print its output indented; OUT and RC keep them.
show() {
    local name=$1
    shift
    printf '%s$ %s%s\n' "$B" "$(quote "$name" "$@")" "$X"
    set +e
    case $name in
    kubectl) OUT=$(kc "$@" 2>&1) ;;
    warden-snapshot) OUT=$(snap_run "$@" 2>&1) ;;
    *) OUT=$("$name" "$@" 2>&1) ;;
    esac
    RC=$?
    set -e
    [ -z "$OUT" ] || printf '%s\n' "$OUT" | sed 's/^/    /'
}
k() { show kubectl "$@"; }
# Print "$ kubectl apply -f - <<END", the document and END, then apply it as show does.
k_apply() {
    local doc
    doc=$(cat)
    printf '%s$ kubectl apply -f - <<END%s\n%s\nEND\n' "$B" "$X" "$doc"
    set +e
    OUT=$(kc apply -f - 2>&1 <<<"$doc")
    RC=$?
    set -e
    [ -z "$OUT" ] || printf '%s\n' "$OUT" | sed 's/^/    /'
}
# The last command succeeded / failed, its output holding the text.
ok() { [ "$RC" = 0 ] || demo_fail "the command failed"; }
refused() {
    [ "$RC" != 0 ] || demo_fail "the command was not refused"
    case $OUT in *"$1"*) ;; *) demo_fail "the refusal does not say: $1" ;; esac
}
has() { case $OUT in *"$1"*) ;; *) demo_fail "the output does not show: $1" ;; esac; }
check() { # what, want, got
    [ "$2" = "$3" ] || demo_fail "$1: want \"$2\", got \"$3\""
    printf '%s  ✓ %s: %s%s\n' "$G" "$1" "$3" "$X"
}
demo_fail() {
    printf '\nDEMO FAILED: %s\n' "$*" >&2
    ctl_fail "the step above did not behave as shown"
}
jp() { kc -n "$1" get "$2" -o jsonpath="$3"; }

# ---- the stage -------------------------------------------------------------------
chapter "Stage: kube-sim, the chart, warden-webhook, warden-controller, S3, the backup sidecar"
stage_kubesim -v
rendered=$STAGE_RENDERED
say "kube-sim serves the Kubernetes API at $KSIM_URL. The chart, rendered as
'helm template etcd-warden charts/etcd-warden -n etcd-warden --set crds.etcd=true
--set crds.etcdOpsTask=true' would (no etcd-druid here, so its CRDs come from the chart):"
k create namespace etcd-warden
ok
k apply -f "$rendered"
ok
check "every rendered object accepted" "$(grep -c '^kind: ' "$rendered")" "$(grep -c ' created$' <<<"$OUT")"

say "kube-sim runs no pods: each program runs here with its Deployment's flags, as its
service account (only addresses and the kubeconfig are changed)."
stage_programs
printf '    warden-webhook\n'; printf '        %s\n' "${STAGE_WH_ARGS[@]}"
printf '    warden-controller\n'; printf '        %s\n' "${STAGE_CTL_ARGS[@]}"
k get validatingwebhookconfigurations,mutatingwebhookconfigurations
ok
say "s3rver serves the bucket '$SNAP_BUCKET' at $SNAP_S3_URL."

# ---- 1. protection ---------------------------------------------------------------
chapter "1. Component protection: only etcd-druid (and warden-controller) change an Etcd's objects"
druid_etcd shoot etcd-main --bucket --schedule "0 */6 * * *"
kc -n shoot create secret generic etcd-backup --from-file="$SNAP_WORK/aws" --dry-run=client -o yaml |
    kc apply -f - >/dev/null
druid_double_for shoot etcd-main
double_ip=$(jp shoot svc/etcd-main-client '{.spec.clusterIP}')
say "etcd-druid (here tests/lib/druid.sh, acting as its service account) created the Etcd
'etcd-main' and its components; the backup sidecar answers on the client Service."
k -n shoot get etcd,statefulsets,services
ok
k -n shoot scale statefulset etcd-main --replicas=5
refused "changes from service account kubernetes-admin are disallowed at the moment"
say "Refused with etcd-druid's own message. The annotation on the Etcd lets it through:"
k -n shoot annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection=
ok
k -n shoot label statefulset etcd-main demo=hand-edited
ok
k -n shoot annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection-
ok
k -n shoot label statefulset etcd-main demo-
refused "are disallowed at the moment"
kc_druid -n shoot label statefulset etcd-main demo- >/dev/null

# ---- 2. hibernation --------------------------------------------------------------
chapter "2. Hibernation: cut traffic, final snapshot, scale to zero, keep the snapshot immutable"
now=$(date +%s)
seed() { # kind-revisions, age in seconds, suffix
    snap_fixture "$WH_DIR/seed" $((2000 + RANDOM)) "$3"
    snap_s3 put "shoot--etcd-main/v2/$1-$((now - $2))$3" "$WH_DIR/seed"
}
seed Full-00000000-00000003 7200 .gz   # revisions below the sidecar stand-in's final one
seed Incr-00000004-00000006 3600 .gz
store=(--storage-provider S3 --store-container "$SNAP_BUCKET" --store-prefix shoot--etcd-main)
say "The bucket holds what the sidecar has written so far:"
show warden-snapshot list "${store[@]}"
ok
ctl_watch_phases shoot etcd-main "$WH_DIR/phases"
k -n shoot annotate etcd etcd-main etcd-warden.io/hibernate=true
ok
k -n shoot wait etcd/etcd-main --timeout=40s \
    '--for=jsonpath={.metadata.annotations.etcd-warden\.io/hibernation-phase}=Hibernated'
ok
sleep 0.3
check "phases, in order" "- CuttingTraffic FinalSnapshot ScalingDown Hibernated" "$(ctl_phases "$WH_DIR/phases")"
k -n shoot get etcdopstasks -o 'custom-columns=NAME:.metadata.name,STATE:.status.state,RESULT:.status.lastOperation.description'
ok
has Succeeded
final=$(grep -oE 'Full-[0-9]{8}-[0-9]{8}-[0-9]+(\.[a-z]+)?\.final' <<<"$OUT" | head -1)
[ -n "$final" ] || demo_fail "the task names no final snapshot"
# backup-double answers like the sidecar but stores nothing: put the object where the
# sidecar would have uploaded it
snap_fixture "$WH_DIR/final" 4096 "$final"
snap_s3 put "shoot--etcd-main/v2/$final" "$WH_DIR/final"
reqs=$(curl -sf "$DRUID_DOUBLE_URL/admin/requests")
check "the sidecar took one final full snapshot" 1 \
    "$(grep -v '"skipped":true' <<<"$reqs" | grep -c '"final":"true"')"
say "Before scaling to zero the controller asked for a final snapshot once more, to see that
etcd's revision was still the final snapshot's; nothing had changed, so the sidecar took none
(asked again once a second had passed since the snapshot, on the sidecar's clock, when the
first answer came sooner):"
skipped=$(grep '"skipped":true' <<<"$reqs" | grep -c '"final":"true"')
case $skipped in 1 | 2) ;; *) demo_fail "final snapshot requests answered \"skipped\": $skipped" ;; esac
check "final snapshot requests the sidecar answered \"skipped\" (1 or 2)" "$skipped" "$skipped"
k -n shoot get statefulset etcd-main
ok
check "scaled to zero" "0 0" "$(jp shoot sts/etcd-main '{.spec.replicas} {.status.replicas}')"
k -n shoot get service etcd-main-client -o 'jsonpath={.spec.ports[*].name}'
ok
check "client and peer ports removed, backup port kept" backuprestore "$OUT"
k -n shoot get extendfullsnapshotimmutabilitytasks,cronjobs
ok
has etcd-main-extend-immutability
k -n shoot get events --field-selector involvedObject.name=etcd-main
ok
has Hibernated

say "The CronJob's command, run once as the kubelet would run it (Secret volume and
environment materialised from the CronJob and its Secret):"
kc -n shoot get cronjob etcd-main-extend-immutability -o json >"$WH_DIR/cronjob.json"
mkdir -p "$WH_DIR/secrets"
kc -n shoot get secret etcd-backup -o json >"$WH_DIR/secrets/etcd-backup.json"
k -n shoot get cronjob etcd-main-extend-immutability \
    -o 'jsonpath={.spec.jobTemplate.spec.template.spec.containers[0].command} {.spec.jobTemplate.spec.template.spec.containers[0].args}'
ok
taken=$(cut -d- -f4 <<<"$final" | cut -d. -f1)
while [ "$(date +%s)" -le "$taken" ]; do sleep 0.2; done   # the copy gets a newer name
printf '%s$ %s%s\n' "$B" "(the CronJob's container command)" "$X"
cronjob_exec "$WH_DIR/cronjob.json" "$WH_DIR/secrets" >"$WH_DIR/cronjob.log" 2>&1 ||
    { cat "$WH_DIR/cronjob.log"; demo_fail "the CronJob's command failed"; }
sed 's/^/    /' "$WH_DIR/cronjob.log" | tail -5
show warden-snapshot list "${store[@]}"
ok
newest=$(grep -oE "$(cut -d- -f1-3 <<<"$final")-[0-9]+" <<<"$OUT" | sort -t- -k4 -n | tail -1)
check "the newest full snapshot is a fresh copy of the final one" "newer than $taken" \
    "$([ "${newest##*-}" -gt "$taken" ] && echo "newer than $taken" || echo "$newest")"

chapter "2b. Wake-up"
: >"$WH_DIR/phases.wake"
ctl_watch_phases shoot etcd-main "$WH_DIR/phases.wake"
k -n shoot annotate etcd etcd-main etcd-warden.io/hibernate-
ok
ctl_wait_phase shoot etcd-main "" 30
sleep 0.3
check "wake-up phases" "Hibernated WakingUp -" "$(ctl_phases "$WH_DIR/phases.wake")"
replicas_back() { test "$(jp shoot sts/etcd-main '{.status.replicas}')" = 3; }
ksim_wait 10 replicas_back || demo_fail "replicas not back"
k -n shoot get statefulset etcd-main
ok
k -n shoot get service etcd-main-client -o 'jsonpath={.spec.ports[*].name}'
ok
check "ports back" "client server backuprestore" "$OUT"
ksim_wait 10 test -z "$(jp shoot extendfullsnapshotimmutabilitytasks,cronjobs '{.items[*].metadata.name}')" ||
    demo_fail "the immutability task or its CronJob is left"
k -n shoot get extendfullsnapshotimmutabilitytasks,cronjobs
ok

# ---- 3. backup and restore -------------------------------------------------------
chapter "3. Backup and restore: a re-created Etcd waits, refuses edits, then resumes"
ksim_wait 20 kc -n shoot get etcdstatusbackup etcd-main >/dev/null || demo_fail "no status backup"
k -n shoot get etcd etcd-main -o 'jsonpath={.metadata.annotations.etcd-warden\.io/status-backup-exists}'
ok
check "status backup recorded on the Etcd" true "$OUT"
old_uid=$(jp shoot etcd/etcd-main '{.metadata.uid}')
k -n shoot get etcdstatusbackup etcd-main -o 'jsonpath={range .spec.components[*]}{.kind}/{.name} {end}'
ok
inventory=$(jp shoot etcdstatusbackup/etcd-main '{range .spec.components[*]}{.kind}/{.name}{"\n"}{end}')
[ "$(wc -l <<<"$inventory")" -ge 8 ] || demo_fail "the status backup lists too few components"
say "A backup tool (here kubectl get -o json, stripped of uid, resourceVersion, status and
owner references as Velero strips them) saves the Etcd, its status backup and its
components. Then the Etcd is lost, and the garbage collector takes everything it owned:"
mkdir -p "$WH_DIR/backup"
strip() { # kubectl -o json (an object or a List) as documents without what a restore must not carry
    python3 -c '
import json, sys
doc = json.load(sys.stdin)
for o in doc.get("items", [doc]):
    o.pop("status", None)
    for k in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
              "ownerReferences", "selfLink"):
        o["metadata"].pop(k, None)
    spec = o.get("spec", {})
    if o["kind"] == "Service" and spec.get("clusterIP") != "None":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
print("\n".join(json.dumps(o) for o in doc.get("items", [doc])))'
}
read -r -a components <<<"$(tr '\n' ' ' <<<"$inventory")"
kc -n shoot get etcd etcd-main -o json | strip >"$WH_DIR/etcd.json"
kc -n shoot get "${components[@]}" etcdstatusbackup/etcd-main -o json | strip >"$WH_DIR/backup/rest.json"
k -n shoot delete etcd etcd-main
ok
gone() { [ -z "$(kc -n shoot get sa,role,rolebinding,svc,cm,pdb,sts,lease,etcdstatusbackups -o name -l app.kubernetes.io/part-of=etcd-main 2>/dev/null)" ]; }
ksim_wait 30 gone || demo_fail "the garbage collector left components"
k -n shoot get statefulsets,services,etcdstatusbackups
ok

say "The restore applies the Etcd first. warden-webhook sees the status-backup-exists
annotation and marks it restoring; warden-controller pauses it until its status and its
components are back:"
k create -f "$WH_DIR/etcd.json"
ok
k -n shoot get etcd etcd-main --show-labels
ok
has etcd-warden.io/restoring
k -n shoot patch etcd etcd-main --type=merge -p '{"spec":{"replicas":5}}'
refused "spec changes not allowed while etcd-warden.io/restoring label exists"
ksim_wait 20 sh -c "kubectl --kubeconfig '$KUBECONFIG' -n shoot get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/restore-progress}' | grep -q awaiting" ||
    demo_fail "no restore progress"
k -n shoot get etcd etcd-main -o 'jsonpath={.metadata.annotations.etcd-warden\.io/restore-progress}'
ok
say "Then the rest of the backup:"
k create -f "$WH_DIR/backup/rest.json" -o name
ok
resumed() { [ -z "$(jp shoot etcd/etcd-main '{.metadata.labels.etcd-warden\.io/restoring}{.metadata.annotations.etcd-warden\.io/restore-progress}')" ]; }
ksim_wait 30 resumed ||
    demo_fail "the restore did not finish ($(jp shoot etcd/etcd-main '{.metadata.annotations.etcd-warden\.io/restore-progress}'))"
k -n shoot get etcd etcd-main --show-labels
ok
new_uid=$(jp shoot etcd/etcd-main '{.metadata.uid}')
owned() {
    [ "$(kc -n shoot get "${components[@]}" -o jsonpath='{range .items[*]}{.metadata.ownerReferences[*].uid}{"\n"}{end}' | sort -u)" = "$new_uid" ]
}
ksim_wait 20 owned || demo_fail "owner references not repaired"
k -n shoot get statefulset etcd-main -o 'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].uid}'
ok
check "every component owned by the new Etcd (the old one was $old_uid)" "Etcd/etcd-main $new_uid" "$OUT"
k -n shoot patch etcd etcd-main --type=merge -p '{"spec":{"replicas":3}}'
ok
# The restored client Service got a new clusterIP (the restore dropped it, as Velero does): the
# sidecar stand-in moves behind it, where the members' sidecars would answer
if [ "$(jp shoot svc/etcd-main-client '{.spec.clusterIP}')" != "$double_ip" ]; then
    druid_double_stop || demo_fail "backup-double did not stop cleanly"
    druid_double_for shoot etcd-main
fi
# the StatefulSet controller starts the members of the restored StatefulSet again (kube-sim
# runs none): warden-controller asks their sidecars, never the Service
# (the old members' pods go with the old StatefulSet, when the garbage collector gets to them)
sts_uid=$(jp shoot sts/etcd-main '{.metadata.uid}')
pod_owner() { kc -n shoot get pod "etcd-main-$1" -o jsonpath='{.metadata.ownerReferences[0].uid}' 2>/dev/null; }
old_pods_gone() {
    local i o
    for i in 0 1 2; do
        o=$(pod_owner "$i")
        [ -z "$o" ] || [ "$o" = "$sts_uid" ] || return 1
    done
}
ksim_wait 60 old_pods_gone || demo_fail "the garbage collector left the old members' pods"
[ "$(pod_owner 0)" = "$sts_uid" ] || druid_pods shoot etcd-main 3

# ---- 4. backups that outlive their Etcd ----------------------------------------------
chapter "4. Backups that outlive their Etcd: a shared bucket, a grace period, a deletion Job"
kc -n etcd-warden create secret generic bucket-credentials --from-file="$SNAP_WORK/aws" >/dev/null
say "The operator declares the bucket the Etcds share, with credentials of its own in the
namespace etcd-warden, and a grace period during which a deleted Etcd's backups are kept:"
k_apply <<END
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: demo-bucket}
spec: {provider: aws, container: $SNAP_BUCKET, secretRef: {namespace: etcd-warden, name: bucket-credentials}, deletionGracePeriod: 1h}
END
ok
cat >"$WH_DIR/etcd-events.yaml" <<END
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-events, namespace: shoot}
spec:
  replicas: 1
  labels: {app: etcd-events}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-events, secretRef: {name: etcd-backup}}}
END
kc apply -f "$WH_DIR/etcd-events.yaml" >/dev/null
ctl_members shoot etcd-events # its StatefulSet's member, running (kube-sim runs no pods)
entry_phase() { # etcd name: the phase of its entry
    kc get backupentries -o jsonpath='{range .items[*]}{.spec.etcd.name} {.status.phase}{"\n"}{end}' |
        awk -v e="$1" '$1 == e { print $2 }'
}
phase_is() { [ "$(entry_phase "$1")" = "$2" ]; }
ksim_wait 20 phase_is etcd-events Active || demo_fail "no entry for etcd-events"
# a deletion deletes only what was written once a member of the Etcd was seen running
ctl_members_seen shoot etcd-events
sleep 1
echo snapshot >"$WH_DIR/snap"
snap_s3 put shoot--etcd-events/v2/Full-00000000-00000100-1700000000.gz "$WH_DIR/snap"
ksim_wait 20 phase_is etcd-main Active || demo_fail "no entry for etcd-main"
say "warden-controller keeps one BackupEntry per Etcd of the bucket:"
k get backupentries
ok
e_events=$(kc get backupentries -o jsonpath='{range .items[?(@.spec.etcd.name=="etcd-events")]}{.metadata.name}{end}')
say "Deleted by mistake, etcd-events leaves its entry PendingDeletion; created again within
the grace period, it reattaches, and its snapshots are where it left them:"
k -n shoot delete etcd etcd-events
ok
ksim_wait 20 phase_is etcd-events PendingDeletion || demo_fail "not PendingDeletion"
k get backupentries
ok
k create -f "$WH_DIR/etcd-events.yaml"
ok
ksim_wait 20 phase_is etcd-events Active || demo_fail "not reattached"
k -n default get events --field-selector involvedObject.name="$e_events"
ok
has Reattached
check "its snapshot kept" shoot--etcd-events/v2/Full-00000000-00000100-1700000000.gz "$(snap_s3 ls shoot--etcd-events/)"

say "Deleted for good: after the grace period (shortened here to 3s) a Job in the bucket
Secret's namespace runs 'warden-snapshot delete-snapshots' on the entry's prefix, and the
entry goes. It deletes what the Etcd wrote before its first deletion (kept in the entry's
spec.earlierWindows at the reattachment) and since; what was written between stays: that time
had no owner here (the same cluster on another seed may have written).
(tests/support/job_exec.py stands for the kubelet.)"
python3 tests/support/job_exec.py serve etcd-warden app.kubernetes.io/managed-by=etcd-warden \
    "$WH_DIR" "$WARDEN_SNAPSHOT" "$WH_DIR/job_exec.stop" 120 2>"$WH_DIR/job_exec.log" &
jobs_pid=$!
ksim_on_exit "touch $WH_DIR/job_exec.stop; reap_child $jobs_pid 10 TERM || true"
main_before=$(snap_s3 ls shoot--etcd-main/)
k -n shoot delete etcd etcd-events
ok
k patch backupbucket demo-bucket --type=merge -p '{"spec":{"deletionGracePeriod":"3s"}}'
ok
no_entry() { [ -z "$(entry_phase etcd-events)" ]; }
ksim_wait 60 no_entry || demo_fail "the entry stays: $(entry_phase etcd-events)"
k -n default get events --field-selector involvedObject.name="$e_events"
ok
has DeletionStarted
has Deleted
k get backupentries
ok
check "its prefix emptied, the snapshot from before the reattachment too" "" "$(snap_s3 ls shoot--etcd-events/)"
check "etcd-main's backups untouched" "$main_before" "$(snap_s3 ls shoot--etcd-main/)"

# ---- 5. scheduled off-site backups, and a restore ----------------------------------
chapter "5. Off-site backups on a schedule, and a restore into a new Etcd"
OFFSITE=etcd-offsite
offsite() { SNAP_BUCKET=$OFFSITE snap_s3 "$@"; }
curl -sS --fail-with-body --aws-sigv4 aws:amz:us-east-1:s3 -u S3RVER:S3RVER \
    -H x-amz-content-sha256:UNSIGNED-PAYLOAD -X PUT "$SNAP_S3_URL/$OFFSITE" -o /dev/null ||
    demo_fail "cannot create the bucket $OFFSITE"
kc -n shoot create secret generic offsite-credentials --from-file="$SNAP_WORK/aws" >/dev/null
say "The sidecar's snapshots are one copy, in the Etcd's own bucket. A second bucket,
'$OFFSITE' (on the same s3rver here; another region or provider in earnest), gets a copy
of a fresh full snapshot every minute, with credentials of its own:"
k_apply <<END
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackupSchedule
metadata: {name: etcd-main-offsite, namespace: shoot}
spec:
  schedule: "* * * * *"
  successfulBackupsHistoryLimit: 3
  backupTemplate:
    etcdName: etcd-main
    destination: {provider: aws, container: $OFFSITE, prefix: shoot--etcd-main, secretRef: {name: offsite-credentials}}
END
ok
deadline=$((SECONDS + 75))
left() { echo $((deadline - SECONDS)); }
fire_in=$((60 - $(date +%s) % 60))
say "It fires at the next minute, in ${fire_in}s. Waiting (at most 75s) for its first EtcdBackup, named
after the schedule and the fire time, to be Completed:"
first_backup() { kc -n shoot get etcdbackups -l etcd-warden.io/backup-schedule=etcd-main-offsite \
    -o jsonpath='{.items[0].metadata.name}' 2>/dev/null; }
made_one() { [ -n "$(first_backup)" ]; }
ksim_wait "$(left)" made_one ||
    demo_fail "the schedule made no EtcdBackup: $(jp shoot ebs/etcd-main-offsite '{.status}')"
b=$(first_backup)
task_done() { [ "$(jp shoot "etcdopstask/$b" '{.status.state}' 2>/dev/null)" = Succeeded ]; }
ksim_wait "$(left)" task_done ||
    demo_fail "the snapshot task of $b did not succeed: $(jp shoot "etcdopstask/$b" '{.status}' 2>&1)"
snap=$(jp shoot "etcdopstask/$b" '{.status.lastOperation.description}' |
    sed -n 's/^full snapshot \(Full-[^ ]*\) taken.*/\1/p')
[ -n "$snap" ] || demo_fail "the task of $b names no snapshot"
printf '    %s: EtcdOpsTask %s took %s through the sidecar\n' "$b" "$b" "$snap"
# backup-double answers like the sidecar but stores nothing: put the snapshot where the
# sidecar would have uploaded it, before the copy Job runs
snap_fixture "$WH_DIR/scheduled" 300000 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$WH_DIR/scheduled"
python3 tests/support/job_exec.py serve shoot app.kubernetes.io/managed-by=etcd-warden \
    "$WH_DIR" "$WARDEN_SNAPSHOT" "$WH_DIR/job_exec_shoot.stop" 120 2>"$WH_DIR/job_exec_shoot.log" &
shoot_jobs_pid=$!
ksim_on_exit "touch $WH_DIR/job_exec_shoot.stop; reap_child $shoot_jobs_pid 10 TERM || true"
backup_phase() { jp shoot "etcdbackup/$b" '{.status.phase}'; }
completed() { [ "$(backup_phase)" = Completed ]; }
ksim_wait "$(left)" completed ||
    demo_fail "$b is $(backup_phase): $(jp shoot "etcdbackup/$b" '{.status.error}')"
k -n shoot get ebk -o wide
ok
check "the first scheduled backup" "$b Completed $snap" \
    "$(jp shoot "etcdbackup/$b" '{.metadata.name} {.status.phase} {.status.snapshot.name}')"
successful() { [ -n "$(jp shoot ebs/etcd-main-offsite '{.status.lastSuccessfulTime}')" ]; }
ksim_wait 10 successful || demo_fail "the schedule records no successful backup"
k -n shoot get ebs
ok
has etcd-main-offsite
k -n shoot get events --field-selector involvedObject.name="$b"
ok
has Completed
say "The copy, in etcd-backup-restore's layout, in the off-site bucket (its SHA-256 checked):"
show warden-snapshot list --storage-provider S3 --store-container "$OFFSITE" --store-prefix shoot--etcd-main --verify-hash
ok
check "the destination key" "shoot--etcd-main/v2/$snap" "$(jp shoot "etcdbackup/$b" '{.status.destinationKey}')"
offsite get "shoot--etcd-main/v2/$snap" >"$WH_DIR/copy"
cmp -s "$WH_DIR/scheduled" "$WH_DIR/copy" || demo_fail "the copy differs from the snapshot"
printf '%s  ✓ the copy is the snapshot, byte for byte%s\n' "$G" "$X"
say "The schedule would go on every minute (pruning all but the last 3 Completed backups, and
their copies); suspended for the rest of the demo:"
k -n shoot patch ebs etcd-main-offsite --type=merge -p '{"spec":{"suspend":true}}'
ok
k -n shoot get ebs etcd-main-offsite -o 'jsonpath={.spec.suspend}'
ok
check "suspended" true "$OUT"

say "That backup brought up as a new Etcd, on a new prefix of the Etcd's bucket. A restore never
touches an existing Etcd:"
k_apply <<END
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: etcd-main-from-offsite, namespace: shoot}
spec:
  source: {backupName: $b}
  target: {etcdName: etcd-main-restored, store: {container: $SNAP_BUCKET, prefix: restored--shoot--etcd-main}}
END
ok
restore_phase() { jp shoot "etcdrestore/$1" '{.status.phase}'; }
settled() { case $(restore_phase "$1") in Completed | Failed) return 0 ;; *) return 1 ;; esac; }
ksim_wait 40 settled etcd-main-from-offsite ||
    demo_fail "the restore is $(restore_phase etcd-main-from-offsite): $(tail -3 "$WH_DIR/job_exec_shoot.log")"
k -n shoot get erst
ok
check "the restore" Completed "$(restore_phase etcd-main-from-offsite)"
k -n shoot get events --field-selector involvedObject.name=etcd-main-from-offsite
ok
has Copying
k -n shoot get etcd etcd-main-restored -o 'jsonpath={.spec.backup.store.prefix}'
ok
check "the new Etcd's store prefix" restored--shoot--etcd-main "$OUT"
k -n shoot get etcd etcd-main-restored --show-labels
ok
has etcd-warden.io/restored-from=etcd-main-from-offsite
say "etcd-backup-restore's initializer restores the new cluster's members from its prefix at
their first start; it holds exactly the backup's snapshot:"
show warden-snapshot list --storage-provider S3 --store-container "$SNAP_BUCKET" --store-prefix restored--shoot--etcd-main --verify-hash
ok
check "the target prefix" "restored--shoot--etcd-main/v2/$snap" "$(snap_s3 ls restored--shoot--etcd-main/)"

say "A restore onto an Etcd that exists is refused:"
k_apply <<END
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: etcd-main-in-place, namespace: shoot}
spec:
  source: {backupName: $b}
  target: {etcdName: etcd-main, store: {container: $SNAP_BUCKET, prefix: again--shoot--etcd-main}}
END
ok
ksim_wait 20 settled etcd-main-in-place || demo_fail "the restore onto etcd-main is $(restore_phase etcd-main-in-place)"
k -n shoot get erst -o wide
ok
check "the restore onto etcd-main" Failed "$(restore_phase etcd-main-in-place)"
has "Etcd shoot/etcd-main exists: a restore creates a new Etcd, never restores in place"
check "objects written under again--shoot--etcd-main" 0 "$(snap_s3 ls again--shoot--etcd-main/ | wc -l)"

# ---- 6. restore drills -------------------------------------------------------------
chapter "6. A restore drill: is the backup a restore would use actually restorable?"
say "etcd-backup-restore checks a full snapshot's SHA-256 when it uploads it, and nothing
after. The snapshots in this demo's store are stand-ins: random bytes with a correct SHA-256
trailer. They pass that check, but they are no etcd database: a restore from them would fail
on the day it is needed. An EtcdRestoreDrill proves it now, every day, and says so where an
operator looks. A drill by hand: the annotation etcd-warden.io/run-drill."
touch "$WH_DIR/job_exec_shoot.stop" # chapter 5's kubelet: one runs the Jobs of shoot
reap_child "$shoot_jobs_pid" 10 TERM || true
python3 tests/support/job_exec.py serve shoot app.kubernetes.io/managed-by=etcd-warden \
    "$WH_DIR" "$WARDEN_SNAPSHOT" "$WH_DIR/job_exec_drill.stop" 120 2>"$WH_DIR/job_exec_drill.log" &
drill_jobs_pid=$!
ksim_on_exit "touch $WH_DIR/job_exec_drill.stop; reap_child $drill_jobs_pid 10 TERM || true"
k_apply <<END
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestoreDrill
metadata: {name: etcd-main-daily, namespace: shoot}
spec:
  schedule: "30 4 * * *"
  mode: Verify
  target: {etcdName: etcd-main}
END
ok
k -n shoot annotate etcdrestoredrill etcd-main-daily etcd-warden.io/run-drill=demo-1
ok
drill_result() { jp shoot etcdrestoredrill/etcd-main-daily '{.status.lastResult}'; }
drilled() { [ -n "$(drill_result)" ]; }
ksim_wait 60 drilled || demo_fail "no drill result: $(tail -3 "$WH_DIR/job_exec_drill.log")"
k -n shoot get erd etcd-main-daily -o wide
ok
check "the drill's verdict" NotRestorable "$(drill_result)"
k -n shoot get events --field-selector involvedObject.name=etcd-main-daily,type=Warning
ok
has DrillFailed
has "Etcd shoot/etcd-main is NOT restorable"
say "The object and why, in the drill's status and its Restorable condition:"
k -n shoot get erd etcd-main-daily -o 'jsonpath={.status.message}'
ok
say "And in the metrics, which the chart's alert EtcdWardenNotRestorable reads:"
restorable_series() { ctl_metrics | grep '^warden_etcd_restorable{.*drill="etcd-main-daily"' || true; }
has_series() { [ -n "$(restorable_series)" ]; }
ksim_wait 20 has_series || demo_fail "no warden_etcd_restorable series"
printf '    %s\n' "$(restorable_series)"
check "warden_etcd_restorable" 0 "$(restorable_series | awk '{print $2}')"
touch "$WH_DIR/job_exec_drill.stop"

# ---- epilogue ----------------------------------------------------------------------
chapter "Epilogue"
ctl_stop
wh_stop
"$CHARTTOOL" audit "$rendered" --log "$KSIM_DIR/kube-sim.log" --src "$root" \
    --process "webhook=$CHART_NS/warden-webhook:webhook,common" \
    --process "controller=$CHART_NS/warden-controller:$(chart_controller_dirs),common" >"$WH_DIR/audit.log" 2>&1 ||
    { cat "$WH_DIR/audit.log"; demo_fail "a request was not covered by the chart's RBAC"; }
say "Every API request the two programs made in this demo is allowed by the chart's RBAC:"
sed -n 's/^audit: \([a-z]*\): \([0-9]*\) requests, \([0-9]*\) of the \([0-9]*\) .*/    \1: \2 requests of \3 kinds (of the \4 API calls its code can make), every one allowed/p' \
    "$WH_DIR/audit.log"
printf '\n%sdemo passed in %ss%s\n' "$G" "$((SECONDS - started))" "$X"
