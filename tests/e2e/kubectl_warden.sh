#!/usr/bin/env bash
# kubectl-warden as a kubectl plugin: kubectl finds it on PATH and runs `kubectl warden ...`
# against kube-sim with warden-webhook and warden-controller (backup-double as the sidecar).
#  - conventions: usage errors exit 2, failures 1; KUBECONFIG, --kubeconfig, --context (its
#    namespace, its server) and -n as kubectl reads them;
#  - status: the last full snapshot as the sidecar records it in its Lease (written here as
#    etcd-backup-restore writes it), protection, the BackupEntry the controller made, the
#    hibernation phase and cut, the last restore drill of the Etcd, -o json; one line per
#    Etcd without a name;
#  - hibernate --wait / wake --wait: the phases the controller goes through, to Hibernated
#    and back (the StatefulSet at 0, then back); wake of a spec.replicas-0 hibernation refused;
#  - restore: an EtcdRestore of a Failed backup, --wait to Failed with the controller's error;
#  - backup: an EtcdBackup with the destination of an EtcdBackupSchedule; --wait to Failed
#    (a destination inside another Etcd's prefix, refused by the controller) with its error,
#    and `why` then shows the controller's Warning event and the backup's error; --wait
#    bounded by --timeout; --wait to Completed follows each phase (the controller stopped,
#    the test writes the phases as the controller would, each held until it is printed).
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

bin=${WARDEN_KUBECTL_WARDEN:-}
for c in "$bin" "${WARDEN_BINARY_DIR:-/nonexistent}/controller/kubectl-warden/kubectl-warden" \
         "$(dirname "$0")/../../build/debug/controller/kubectl-warden/kubectl-warden"; do
    [ -n "$c" ] && [ -x "$c" ] && { bin=$c; break; }
done
[ -x "$bin" ] || { echo "FAIL: kubectl-warden is not built" >&2; exit 1; }

ctl_stage
plugdir=$CTL_DIR/plugins
mkdir -p "$plugdir"
ln -s "$(cd "$(dirname "$bin")" && pwd)/kubectl-warden" "$plugdir/kubectl-warden"
export PATH=$plugdir:$PATH KUBECONFIG
kubectl plugin list 2>/dev/null | grep -qx "$plugdir/kubectl-warden" || ctl_fail "kubectl does not find the plugin"
out=$CTL_DIR/out
# kubectl runs the plugin; its output in $out (a sanitizer build's report is kept and fails
# the script at its end)
kw() {
    local rc=0
    kubectl warden "$@" >"$out" 2>&1 || rc=$?
    if grep -qE 'Sanitizer|runtime error:' "$out"; then cat "$out" >>"$CTL_DIR/sanitizer"; fi
    return $rc
}
kw_rc() { local rc=0; kw "$@" || rc=$?; echo $rc; }
has() { grep -qF -- "$1" "$out" || { cat "$out" >&2; ctl_fail "no \"$1\" in the output of kubectl warden"; }; }

# ---- conventions
expect "no command: usage, 2" 2 "$(kw_rc)"
has "Commands:"
expect "--help: 0" 0 "$(kw_rc --help)"
has "hibernate ETCD"
expect "unknown command: 2" 2 "$(kw_rc frobnicate)"
has 'unknown command "frobnicate"'
expect "-o yaml: 2" 2 "$(kw_rc status -o yaml)"
expect "unknown flag: 2" 2 "$(kw_rc status --bogus)"
expect "two names: 2" 2 "$(kw_rc status a b)"

druid_etcd shoot etcd-main
druid_double_for shoot etcd-main
druid_etcd shoot etcd-events --replicas 1
kc -n shoot create secret generic etcd-backup --from-literal=accessKeyID=a --from-literal=secretAccessKey=b >/dev/null
kc -n shoot create secret generic offsite --from-literal=hostPath=/etc/gardener/local-backupbuckets >/dev/null
kc create -n etcd-warden secret generic bucket-credentials --from-literal=accessKeyID=a --from-literal=secretAccessKey=b >/dev/null
kc apply -f - >/dev/null <<END
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: eu-west-1}
spec: {provider: aws, container: etcd-bucket, secretRef: {namespace: etcd-warden, name: bucket-credentials}}
END
ctl_start

expect "not in the default namespace: 1" 1 "$(kw_rc status etcd-main)"
has 'not found'
expect "-n shoot" 0 "$(kw_rc -n shoot status etcd-main)"
has "Etcd:           shoot/etcd-main"
expect "-nshoot" 0 "$(kw_rc status etcd-main -nshoot)"
expect "--namespace=shoot" 0 "$(kw_rc status --namespace=shoot etcd-main)"

# a kubeconfig of two contexts: sim (namespace shoot) and broken (nothing listens), current
cfg=$CTL_DIR/two.kubeconfig
cp "$KUBECONFIG" "$cfg"
cluster=$(kubectl --kubeconfig "$cfg" config view -o jsonpath='{.contexts[0].context.cluster}')
user=$(kubectl --kubeconfig "$cfg" config view -o jsonpath='{.contexts[0].context.user}')
kubectl --kubeconfig "$cfg" config set-context sim --cluster="$cluster" --user="$user" --namespace=shoot >/dev/null
kubectl --kubeconfig "$cfg" config set-cluster broken --server=https://127.0.0.1:1 >/dev/null
kubectl --kubeconfig "$cfg" config set-context broken --cluster=broken --user="$user" >/dev/null
kubectl --kubeconfig "$cfg" config use-context broken >/dev/null
expect "--kubeconfig, current context broken: 1" 1 "$(kw_rc --kubeconfig "$cfg" status etcd-main)"
expect "--kubeconfig --context sim: its namespace" 0 "$(kw_rc --kubeconfig "$cfg" --context sim status etcd-main)"
has "shoot/etcd-main"
expect "KUBECONFIG, --context sim" 0 "$(KUBECONFIG=$cfg kw_rc --context sim status etcd-main)"
expect "KUBECONFIG, current context broken: 1" 1 "$(KUBECONFIG=$cfg kw_rc status etcd-main)"
expect "--context nope: 1" 1 "$(kw_rc --kubeconfig "$cfg" --context nope status etcd-main)"
has "nope"

# ---- status
# the sidecar's record of its last full snapshot (etcd-backup-restore's heartbeat: renewTime
# is when the snapshot was taken, holderIdentity its last revision), two hours ago
taken=$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%S.000000Z)
kc_druid -n shoot patch lease etcd-main-full-snap --type merge \
    -p "{\"spec\":{\"holderIdentity\":\"4711\",\"renewTime\":\"$taken\"}}" >/dev/null
entry_of_main() { kc get backupentries -o jsonpath='{.items[?(@.spec.etcd.name=="etcd-main")].metadata.name}'; }
has_entry() { [ -n "$(entry_of_main)" ]; }
ksim_wait 30 has_entry || ctl_fail "no BackupEntry for etcd-main"
entry=$(entry_of_main)
kw -n shoot status etcd-main -o json || { cat "$out"; ctl_fail "status -o json"; }
expect "json: revision" '"4711"' "$(jq -c .lastFullSnapshot.revision "$out")"
expect "json: lease" '"etcd-main-full-snap"' "$(jq -c .lastFullSnapshot.lease "$out")"
age=$(jq .lastFullSnapshot.timeAgeSeconds "$out")
[ "$age" -ge 7200 ] && [ "$age" -lt 7800 ] || ctl_fail "age of the last full snapshot: $age"
expect "json: protection" '"on"' "$(jq -c .protection "$out")"
expect "json: entry" "\"$entry\"" "$(jq -c .backupEntry.name "$out")"
expect "json: store" '"S3 etcd-bucket shoot--etcd-main"' "$(jq -c '.store | "\(.provider) \(.container) \(.prefix)"' "$out")"
expect "json: not hibernating" 'null false' "$(jq -c .hibernation.phase,.hibernation.requested "$out" | paste -sd' ')"
expect "json: the Lease's time" "\"$(kc -n shoot get lease etcd-main-full-snap -o jsonpath='{.spec.renewTime}')\"" \
    "$(jq -c .lastFullSnapshot.time "$out")"
kw -n shoot status etcd-main
has "Last full:      $(kc -n shoot get lease etcd-main-full-snap -o jsonpath='{.spec.renewTime}')"
has "revision 4711 (Lease etcd-main-full-snap)"
has "(2h ago)"
has "Backup entry:   $entry Active"
cat "$out"
# a restore drill of etcd-main whose last drill, an hour ago, found the chain broken; its
# last good one restored a snapshot of 26 hours ago (the status as the controller writes it)
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestoreDrill
metadata: {name: nightly, namespace: shoot}
spec: {schedule: "0 3 * * *", mode: Verify, target: {etcdName: etcd-main}}
EOF
drilled=$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%SZ)
newest=$(date -u -d '-26 hours' +%Y-%m-%dT%H:%M:%SZ)
kc -n shoot patch etcdrestoredrill nightly --subresource=status --type merge -p \
    "{\"status\":{\"etcdName\":\"etcd-main\",\"lastResult\":\"NotRestorable\",\"lastDrillTime\":\"$drilled\",\"newestRestorableSnapshotTime\":\"$newest\",\"restorableRevision\":4700,\"message\":\"p/v2/Incr-1: gap\"}}" >/dev/null
kw -n shoot status etcd-main
has "Last drill:     nightly NotRestorable (Verify) $drilled (1h ago); newest restorable snapshot $newest (1d2h ago), revision 4700: p/v2/Incr-1: gap"
kw -n shoot status etcd-main -o json
expect "json: last drill" '"nightly" "NotRestorable" 4700' "$(jq -c .lastDrill.name,.lastDrill.result,.lastDrill.restorableRevision "$out" | paste -sd' ')"
kc -n shoot annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null
kw -n shoot status etcd-main
has "Protection:     off"
kc -n shoot annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection- >/dev/null
expect "list" 0 "$(kw_rc -n shoot status)"
has "etcd-events"
expect "list: two Etcds" 3 "$(wc -l <"$out")"
grep -E '^etcd-main +on +- +2h ' "$out" >/dev/null || { cat "$out"; ctl_fail "etcd-main's line"; }
expect "list json" 0 "$(kw_rc -n shoot status -o json)"
expect "list json: two items" '"etcd-events" "etcd-main"' "$(jq -c '.items[].name' "$out" | sort | paste -sd' ')"

# ---- hibernate and wake
kw -n shoot hibernate etcd-main --wait --timeout 60s || { cat "$out"; ctl_fail "hibernate --wait"; }
has "etcd-main: CuttingTraffic"
has "etcd-main: Hibernated"
expect "annotation set" true "$(jp shoot etcd/etcd-main '{.metadata.annotations.etcd-warden\.io/hibernate}')"
expect "StatefulSet at 0" 0 "$(jp shoot sts/etcd-main '{.spec.replicas}')"
kw -n shoot status etcd-main -o json
expect "json: Hibernated, requested" '"Hibernated" true' "$(jq -c .hibernation.phase,.hibernation.requested "$out" | paste -sd' ')"
expect "json: the cut" "\"$(jp shoot etcd/etcd-main '{.metadata.annotations.etcd-warden\.io/traffic-cut-at}')\"" \
    "$(jq -c .hibernation.trafficCutAt "$out")"
kw -n shoot status etcd-main
cat "$out"
kw -n shoot status etcd-main -o json
expect "json: final snapshot task" 'true "Succeeded"' "$(jq -c .snapshotTask.final,.snapshotTask.state "$out" | paste -sd' ')"
# hibernated: an immutability task's status.immutableUntil (as the controller reads it from
# its CronJob's last run), three days ahead
until=$(date -u -d '+3 days' +%Y-%m-%dT%H:%M:%SZ)
# (hibernation makes etcd-main-extend-immutability only with bucket immutability, and
# deletes it without)
kc apply -f - >/dev/null <<END
apiVersion: etcd-warden.io/v1alpha1
kind: ExtendFullSnapshotImmutabilityTask
metadata: {name: etcd-main-imm, namespace: shoot}
spec: {etcdName: etcd-main}
END
kc -n shoot patch extendfullsnapshotimmutabilitytask etcd-main-imm --subresource=status \
    --type merge -p "{\"status\":{\"immutableUntil\":\"$until\"}}" >/dev/null || ctl_fail "writing the task's status"
# (its own file: ksim_wait has a local $out)
until_shown() { kubectl warden -n shoot status etcd-main >"$CTL_DIR/until.txt" 2>&1 && grep -qE "immutable until $until \(in (2d2[0-9]h|3d)\)" "$CTL_DIR/until.txt"; }
ksim_wait 30 until_shown || { cat "$CTL_DIR/until.txt"; ctl_fail "status does not show immutable until $until"; }
kw -n shoot status etcd-main -o json
expect "json: immutable until" "\"$until\"" "$(jq -c .immutability.immutableUntil "$out")"
left=$(jq .immutability.immutableForSeconds "$out")
[ "$left" -gt 255000 ] && [ "$left" -le 259200 ] || ctl_fail "immutableForSeconds: $left"
kw -n shoot wake etcd-main --wait --timeout 60s || { cat "$out"; ctl_fail "wake --wait"; }
has "etcd-main: WakingUp"
has "etcd-main: -"
expect "phase gone" "" "$(jp shoot etcd/etcd-main '{.metadata.annotations.etcd-warden\.io/hibernation-phase}')"
expect "StatefulSet back" 3 "$(jp shoot sts/etcd-main '{.spec.replicas}')"
kc -n shoot patch etcd etcd-events --type merge -p '{"spec":{"replicas":0}}' >/dev/null
expect "wake of a spec.replicas 0 hibernation: 1" 1 "$(kw_rc -n shoot wake etcd-events)"
has "hibernates through spec.replicas 0"

# ---- why, with nothing recorded
expect "why: nothing" 0 "$(kw_rc -n shoot why etcd-main)"
has "nothing refused or failed is recorded for etcd shoot/etcd-main"

# ---- backup
kc -n shoot apply -f - >/dev/null <<END
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackupSchedule
metadata: {name: offsite}
spec:
  schedule: "0 0 1 1 *"
  backupTemplate:
    etcdName: etcd-main
    destination: {provider: Local, container: offsite, prefix: copies/etcd-main, secretRef: {name: offsite}}
END
expect "schedule of another Etcd: 2" 2 "$(kw_rc -n shoot backup etcd-events --from-schedule offsite)"
expect "no destination: 2" 2 "$(kw_rc -n shoot backup etcd-main)"
expect "--from-schedule" 0 "$(kw_rc -n shoot backup etcd-main --from-schedule offsite --name manual-1)"
has "etcdbackup.etcd-warden.io/manual-1 created"
expect "destination from the schedule" \
    "$(kc -n shoot get etcdbackupschedule offsite -o json | jq -cS .spec.backupTemplate.destination)" \
    "$(kc -n shoot get etcdbackup manual-1 -o json | jq -cS .spec.destination)"
# nothing runs the copy Job here: Uploading until --wait runs out of time
expect "--wait --timeout 3s: 1" 1 "$(kw_rc -n shoot backup etcd-main --from-schedule offsite --name manual-2 --wait --timeout 3s)"
has "timed out after 3s waiting for manual-2"
has "manual-2: Uploading"
# a destination inside etcd-events' prefix: the controller fails it
expect "--wait to Failed: 1" 1 "$(kw_rc -n shoot backup etcd-main --name into-events --provider S3 \
    --container etcd-bucket --prefix shoot--etcd-events/copies --secret etcd-backup --wait --timeout 60s)"
has "into-events: Failed"
has "error: EtcdBackup into-events failed: "
ev=$(ctl_events shoot into-events | grep '^Warning ' | head -1)
[ -n "$ev" ] || ctl_fail "no Warning event on into-events"
expect "why" 0 "$(kw_rc -n shoot why etcd-main)"
has "EtcdBackup/into-events  ${ev#Warning }"
has "now  EtcdBackup/into-events  Failed: $(jp shoot etcdbackup/into-events '{.status.error}')"
cat "$out"

# ---- restore: an EtcdRestore of a Failed backup fails (the controller's answer)
expect "restore without --to: 2" 2 "$(kw_rc -n shoot restore into-events --prefix restored--x)"
expect "restore of a Failed backup: 1" 1 "$(kw_rc -n shoot restore into-events --to etcd-restored \
    --prefix restored--shoot--etcd-main --wait --timeout 60s)"
has "etcdrestore.etcd-warden.io/etcd-restored-restore created"
has "etcd-restored-restore: Failed"
has "error: EtcdRestore etcd-restored-restore failed: $(jp shoot etcdrestore/etcd-restored-restore '{.status.error}')"
expect "restore spec: source, target, the container of the backup's Etcd" \
    '{"source":{"backupName":"into-events"},"target":{"etcdName":"etcd-restored","store":{"container":"etcd-bucket","prefix":"restored--shoot--etcd-main"}}}' \
    "$(kc -n shoot get etcdrestore etcd-restored-restore -o json | jq -cS .spec)"

# --wait to Completed: the controller stopped, the phases written as it writes them
ctl_stop
kubectl warden -n shoot backup etcd-main --from-schedule offsite --name held --wait --timeout 60s >"$CTL_DIR/held" 2>&1 &
held=$!
ksim_on_exit "kill $held 2>/dev/null || true"
for phase in Snapshotting Uploading Completed; do
    ksim_wait 20 kc -n shoot get etcdbackup held >/dev/null || ctl_fail "held not created"
    kc -n shoot patch etcdbackup held --subresource=status --type=merge -p "{\"status\":{\"phase\":\"$phase\"}}" >/dev/null
    ksim_wait 20 grep -qx "held: $phase" "$CTL_DIR/held" || { cat "$CTL_DIR/held"; ctl_fail "--wait did not print $phase"; }
done
rc=0; wait $held || rc=$?
expect "--wait to Completed: 0" 0 "$rc"
if grep -qE 'Sanitizer|runtime error:' "$CTL_DIR/held"; then cat "$CTL_DIR/held" >>"$CTL_DIR/sanitizer"; fi
[ ! -s "$CTL_DIR/sanitizer" ] || { cat "$CTL_DIR/sanitizer" >&2; ctl_fail "sanitizer report from kubectl-warden"; }
ok "kubectl warden: conventions, status, hibernate, wake, backup, restore, why"
