#!/usr/bin/env bash
# The state the scale-down guard decides from is warden-controller's alone, end to end on
# kube-sim with kubectl: a person (or an admin) cannot forge, change or remove
# etcd-warden.io/traffic-cut-at, hibernation-phase and the other state annotations, while
# warden-controller can; an Etcd created with them (a re-applied manifest, a restore) loses
# them with a warning, except status-backup-exists (the restore still works); an unknown
# etcd-warden.io key and a retention-type typo are refused with what is known; a presence
# annotation set to "false" is allowed with a warning kubectl prints. A cut of an earlier
# sleep (phase Hibernated, the StatefulSet scaled up since) lets nothing through even with a
# snapshot after it; break glass needs an expiry, at most 24h ahead, and is ignored once it
# has passed.
set -euo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
druid_register_webhooks
druid_etcd shoot etcd-main
druid_etcd shoot etcd-other

M="scaling StatefulSet shoot/etcd-main to 0 replicas needs a full snapshot of Etcd etcd-main"
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
# task NAME: a Succeeded full snapshot task of etcd-main; prints its creationTimestamp.
task() {
    kc -n shoot apply -f - >/dev/null <<EOT
apiVersion: druid.gardener.cloud/v1alpha1
kind: EtcdOpsTask
metadata: {name: $1}
spec: {etcdName: etcd-main, config: {onDemandSnapshot: {type: full}}}
EOT
    kc_druid -n shoot patch etcdopstask "$1" --subresource=status --type merge \
        -p '{"status":{"state":"Succeeded"}}' >/dev/null
    kc -n shoot get etcdopstask "$1" -o jsonpath='{.metadata.creationTimestamp}'
}
ann() { kc -n shoot get etcd "$1" -o jsonpath="{.metadata.annotations.etcd-warden\.io/$2}"; }

# ---- 1. the state annotations are warden-controller's
CUT=$(now)
wh_allowed "warden-controller records a cut and its phase" warden annotate etcd etcd-main \
    "etcd-warden.io/traffic-cut-at=$CUT" etcd-warden.io/hibernation-phase=FinalSnapshot
for who in alice admin; do
    wh_denied "$who forges the cut" \
        "metadata.annotations[etcd-warden.io/traffic-cut-at] is written by warden-controller only" \
        "$who" annotate etcd etcd-main --overwrite etcd-warden.io/traffic-cut-at=2000-01-01T00:00:00Z
done
wh_denied "a person removes the phase" \
    "metadata.annotations[etcd-warden.io/hibernation-phase] is written by warden-controller only" \
    alice annotate etcd etcd-main etcd-warden.io/hibernation-phase-
wh_denied "a person sets suspend-added" "etcd-warden.io/suspend-added] is written by warden-controller only" \
    alice annotate etcd etcd-main etcd-warden.io/suspend-added=true
wh_denied "etcd-druid sets hibernation-condition" "is written by warden-controller only" \
    druid annotate etcd etcd-main etcd-warden.io/hibernation-condition={}
[ "$(ann etcd-main traffic-cut-at) $(ann etcd-main hibernation-phase)" = "$CUT FinalSnapshot" ] ||
    wh_fail "the state changed: $(ann etcd-main traffic-cut-at) $(ann etcd-main hibernation-phase)"
echo "ok: the cut and the phase are as warden-controller wrote them"
wh_allowed "other annotations stay free" alice annotate etcd etcd-main example.com/note=x

# ---- created with state annotations: stripped with a warning; status-backup-exists kept
out=$(kc apply -f - 2>&1 <<EOT
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-forged
  namespace: shoot
  annotations: {etcd-warden.io/traffic-cut-at: "2000-01-01T00:00:00Z", etcd-warden.io/hibernation-phase: ScalingDown}
spec: {replicas: 3, labels: {app: etcd-statefulset}, etcd: {clientPort: 2379}, backup: {port: 8080}}
EOT
) || wh_fail "the Etcd with state annotations was refused: $out"
grep -q "Warning: metadata.annotations\[etcd-warden.io/traffic-cut-at\] removed: warden-controller alone writes it" <<<"$out" ||
    wh_fail "no warning for the stripped cut: $out"
[ -z "$(ann etcd-forged traffic-cut-at)$(ann etcd-forged hibernation-phase)" ] ||
    wh_fail "the state annotations were kept: $(kc -n shoot get etcd etcd-forged -o jsonpath='{.metadata.annotations}')"
echo "ok: an Etcd created with state annotations is created without them, with a warning"
kc apply -f - >/dev/null <<EOT || wh_fail "the re-created Etcd was refused"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-restored
  namespace: shoot
  annotations: {etcd-warden.io/status-backup-exists: "true", etcd-warden.io/traffic-cut-at: "2000-01-01T00:00:00Z"}
spec: {replicas: 3, labels: {app: etcd-statefulset}, etcd: {clientPort: 2379}, backup: {port: 8080}}
EOT
[ "$(ann etcd-restored status-backup-exists)|$(ann etcd-restored traffic-cut-at)|$(kc -n shoot get etcd etcd-restored -o jsonpath='{.metadata.labels.etcd-warden\.io/restoring}')" = "true||" ] ||
    wh_fail "re-created Etcd: $(kc -n shoot get etcd etcd-restored -o jsonpath='{.metadata}')"
kc -n shoot get etcd etcd-restored -o jsonpath='{.metadata.labels}' | grep -q 'etcd-warden.io/restoring' ||
    wh_fail "the re-created Etcd is not restoring"
echo "ok: a re-created Etcd keeps status-backup-exists (restoring), loses the cut"

# ---- unknown keys, values, warnings
wh_denied "a typo of a key" \
    "metadata.annotations[etcd-warden.io/hibernates]: unknown etcd-warden.io annotation (a typo?); the known ones are etcd-warden.io/hibernate," \
    alice annotate etcd etcd-other etcd-warden.io/hibernates=true
wh_denied "a retention-type typo" 'unsupported value "buket": the only retention type is "bucket"' \
    alice annotate etcd etcd-other etcd-warden.io/immutability-retention-type=buket
wh_denied "an unknown label" "unknown etcd-warden.io label" alice label etcd etcd-other \
    etcd-warden.io/restore=x
out=$(wh_as alice annotate etcd etcd-other druid.gardener.cloud/disable-etcd-component-protection=false 2>&1) ||
    wh_fail "disable-etcd-component-protection=false refused: $out"
grep -q 'Warning: metadata.annotations\[druid.gardener.cloud/disable-etcd-component-protection\]="false" turns it ON' <<<"$out" ||
    wh_fail "no warning for =false: $out"
echo "ok: disable-etcd-component-protection=false is allowed, and kubectl prints the warning"
wh_as alice annotate etcd etcd-other druid.gardener.cloud/disable-etcd-component-protection- >/dev/null

# ---- 2. a cut belongs to one sleep
after=$(date -u -d "$CUT + 1 second" +%s)
# the clock read on every try (a $(date) here would be read once, when ksim_wait is called)
ksim_wait 10 bash -c "[ \"\$(date -u +%s)\" -gt $after ]" || wh_fail "the clock never passed the cut"
t=$(task snap-1)
ksim_wait 10 wh_denied "x" "only warden-controller scales to 0 on a final snapshot" druid scale \
    statefulset etcd-main --replicas=0 >/dev/null ||
    wh_fail "the snapshot after the current cut let etcd-druid's scale-down through"
# warden-controller's check: phase ScalingDown and the StatefulSet it checked against
stamp="$(kc -n shoot get statefulset etcd-main -o jsonpath='{.metadata.uid}/{.metadata.generation}')"
wh_allowed "warden-controller records its check" warden annotate etcd etcd-main --overwrite \
    etcd-warden.io/hibernation-phase=ScalingDown "etcd-warden.io/final-snapshot-checked=$stamp"
ksim_wait 10 wh_allowed "x" warden patch statefulset etcd-main --type merge \
    -p '{"spec":{"replicas":0}}' >/dev/null ||
    wh_fail "the snapshot after the current cut did not let warden-controller's checked scale-down through"
echo "ok: a snapshot ($t) after the current cut ($CUT) lets warden-controller's checked scale-down through, not etcd-druid's"
wh_allowed "warden-controller records the sleep" warden annotate etcd etcd-main --overwrite \
    etcd-warden.io/hibernation-phase=Hibernated
wh_allowed "Gardener wakes it; etcd-druid scales up (warden-controller down)" druid scale \
    statefulset etcd-main --replicas=3
ksim_wait 10 wh_denied "x" "belongs to an earlier sleep" druid scale statefulset etcd-main \
    --replicas=0 >/dev/null || wh_fail "the stale cut let the scale-down through"
wh_denied "etcd-druid's three strikes after the wake: the old cut and snapshot count for nothing" \
    "its traffic cut at $CUT belongs to an earlier sleep (hibernation phase \"Hibernated\"" \
    druid patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}'
wh_denied "nor a delete with the pods" "deleting StatefulSet shoot/etcd-main needs a full snapshot" \
    druid delete statefulset etcd-main --wait=false

# ---- 4. break glass: an expiry, at most 24h ahead, ignored once passed
G=etcd-warden.io/allow-scale-down-without-snapshot
wh_denied "break glass without an expiry" "is not an RFC 3339 expiry" alice annotate etcd etcd-main \
    "$G=bucket lost"
wh_denied "break glass for good" "is more than 24h ahead" alice annotate etcd etcd-main \
    "$G=$(date -u -d '+25 hours' +%Y-%m-%dT%H:%M:%SZ) bucket lost"
wh_denied "break glass already expired" "has passed" alice annotate etcd etcd-main \
    "$G=$(date -u -d '-1 minute' +%Y-%m-%dT%H:%M:%SZ) bucket lost"
exp=$(date -u -d '+3 seconds' +%Y-%m-%dT%H:%M:%SZ)
wh_allowed "break glass for a few seconds" alice annotate etcd etcd-main "$G=$exp bucket lost"
expired() { test "$(date -u +%s)" -gt "$(date -u -d "$exp" +%s)"; }
ksim_wait 10 expired || wh_fail "the clock never passed $exp"
ksim_wait 10 wh_denied "x" "annotation $G expired at $exp" druid scale statefulset etcd-main \
    --replicas=0 >/dev/null || wh_fail "an expired break glass let the scale-down through"
echo "ok: an expired break glass ($exp) is ignored, and the denial says so"
wh_allowed "a new break glass" alice annotate etcd etcd-main --overwrite \
    "$G=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) bucket lost"
ksim_wait 10 wh_allowed "x" druid scale statefulset etcd-main --replicas=0 >/dev/null ||
    wh_fail "a live break glass did not let the scale-down through"
echo "ok: a live break glass lets the scale-down through"
[ "$(kc -n shoot get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] ||
    wh_fail "the StatefulSet is not at 0"
wh_stop
echo PASS
