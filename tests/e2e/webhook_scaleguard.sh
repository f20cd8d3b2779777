#!/usr/bin/env bash
# The scale-down guard end to end on kube-sim with kubectl: a managed StatefulSet of an
# Etcd with a backup store cannot go from above 0 replicas to 0 - by patch or through
# `kubectl scale`, as a person, as etcd-druid or as warden-controller - until a full
# snapshot EtcdOpsTask of that Etcd has Succeeded after its traffic cut
# (etcd-warden.io/traffic-cut-at), and then only warden-controller's own patch, in phase
# ScalingDown, of the StatefulSet it checked the snapshot against (final-snapshot-checked: its
# uid and generation); a scale-up since voids that (etcd-druid's wake, then a scale to 0, is
# refused until warden-controller checks again); two Etcds of one namespace each need their own; a task
# created before the cut, or in the cut's own second, does not count; the break-glass annotation lets it through with
# a warning and an event; without a backup store nothing is guarded. A request that also
# drops the managed-by or part-of label is judged by the old object (and nobody but the
# reconcilers changes those labels); deleting the StatefulSet with its pods is guarded too. Every review is
# answered from the caches: the webhook's API-lookup counter does not move.
set -euo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
MPORT=$(wh_free_port)
while [ "$MPORT" = "$WH_PORT" ] || [ "$MPORT" = "$WH_HEALTH_PORT" ]; do MPORT=$(wh_free_port); done
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs" \
    --metrics-bind-address "127.0.0.1:$MPORT"
druid_register_webhooks

for e in etcd-main etcd-events etcd-broken; do druid_etcd shoot "$e"; done
druid_etcd shoot etcd-nostore --no-store

metric() { # the value of a metric line (name{labels}), 0 when absent
    curl -sf "http://127.0.0.1:$MPORT/metrics" | awk -v m="$1" '$1 == m { print $2; f = 1 } END { if (!f) print 0 }'
}
api_lookups() { metric 'warden_webhook_cache_lookups_total{result="api"}'; }
# As allowed, retrying until the webhook's caches have caught up with a change.
allowed_soon() {
    ksim_wait 10 wh_allowed "$@" >/dev/null 2>&1 || wh_allowed "$@"
    echo "ok: $1"
}
guard_msg() { # etcd
    echo "scaling StatefulSet shoot/$1 to 0 replicas needs a full snapshot of Etcd $1 taken for this hibernation"
}
scale_to_0() { # token, etcd: a merge patch of the StatefulSet, as Gardener's and druid's clients send
    wh_as "$1" patch statefulset "$2" --type merge -p '{"spec":{"replicas":0}}'
}
# a scale-up brings ordinals in: the webhook lists the namespace's PVCs from the API server
# (not cached) for a claim planted with a foreign owner, one API lookup per scale-up
ups=0
back_to_3() {
    wh_as druid scale statefulset "$1" --replicas=3 >/dev/null && ups=$((ups + 1))
}
# Wait until the clock (kube-sim's, on this machine) is in a later second than TIME (RFC 3339):
# a task created then counts for a cut at TIME.
after_second() {
    local t
    t=$(date -u -d "$1" +%s)
    past() { test "$(date -u +%s)" -gt "$t"; }
    ksim_wait 10 past || wh_fail "the clock never passed $1"
}
stamp() { # etcd: the StatefulSet as it is, as warden-controller stamps it after its check
    kc -n shoot get statefulset "$1" -o jsonpath='{.metadata.uid}/{.metadata.generation}'
}
cut() { # etcd, time: the traffic cut and the check as warden-controller records them (only it may)
    wh_as warden annotate etcd "$1" --overwrite "etcd-warden.io/traffic-cut-at=$2" \
        etcd-warden.io/hibernation-phase=ScalingDown \
        "etcd-warden.io/final-snapshot-checked=$(stamp "$1")" >/dev/null
}
ONLY="only warden-controller scales to 0 on a final snapshot"
# task NAME ETCD TYPE: a Succeeded on-demand snapshot task (created as druid's executor
# would, its status written through /status); prints its creationTimestamp.
task() {
    kc -n shoot apply -f - >/dev/null <<EOT
apiVersion: druid.gardener.cloud/v1alpha1
kind: EtcdOpsTask
metadata: {name: $1}
spec: {etcdName: $2, config: {onDemandSnapshot: {type: $3}}}
EOT
    kc_druid -n shoot patch etcdopstask "$1" --subresource=status --type merge \
        -p '{"status":{"state":"Succeeded"}}' >/dev/null
    kc -n shoot get etcdopstask "$1" -o jsonpath='{.metadata.creationTimestamp}'
}

# The caches hold the four Etcds and their StatefulSets before the first review.
sts_cached() { test "$(metric 'warden_webhook_cache_objects{resource="statefulsets"}')" = 4; }
ksim_wait 20 sts_cached ||
    wh_fail "the StatefulSet cache never held the four StatefulSets"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for e in etcd-main etcd-events etcd-broken; do cut "$e" "$now"; done
api0=$(api_lookups)
hits0=$(metric 'warden_webhook_cache_lookups_total{result="hit"}')
M=$(guard_msg etcd-main)

# ---- nobody scales to 0 before the snapshot
wh_denied "no traffic cut is seen yet, or no snapshot: etcd-druid's patch" "$M" druid \
    patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}'
ksim_wait 10 wh_denied "x" "since its traffic cut at $now" warden patch statefulset etcd-main \
    --type merge -p '{"spec":{"replicas":0}}' >/dev/null ||
    wh_fail "the denial never named the traffic cut"
echo "ok: the denial names the traffic cut at $now"
wh_denied "the denial says how to break glass" \
    "kubectl annotate etcd -n shoot etcd-main etcd-warden.io/allow-scale-down-without-snapshot=\"<RFC 3339 expiry, at most 24h ahead> <reason>\"" \
    druid patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}'
wh_denied "warden-controller's patch" "$M" warden patch statefulset etcd-main --type merge \
    -p '{"spec":{"replicas":0}}'
wh_denied "a person's patch" "$M" alice patch statefulset etcd-main --type merge \
    -p '{"spec":{"replicas":0}}'
wh_denied "etcd-druid's kubectl scale (statefulsets/scale)" \
    "admission webhook \"stsscale.etcdcomponents.webhooks.druid.gardener.cloud\" denied the request: $M" \
    druid scale statefulset etcd-main --replicas=0
wh_denied "a person's kubectl scale" "$M" alice scale statefulset etcd-main --replicas=0
# ---- the labels that decide whether a request is checked are read from the old object
DROP_MANAGED='[{"op":"remove","path":"/metadata/labels/app.kubernetes.io~1managed-by"},{"op":"replace","path":"/spec/replicas","value":0}]'
wh_denied "a person's JSON patch dropping managed-by and scaling to 0" "$M" alice \
    patch statefulset etcd-main --type json -p "$DROP_MANAGED"
wh_denied "a person's merge patch part-of: nope and scaling to 0" "$M" alice \
    patch statefulset etcd-main --type merge \
    -p '{"metadata":{"labels":{"app.kubernetes.io/part-of":"nope"}},"spec":{"replicas":0}}'
wh_denied "etcd-druid's JSON patch dropping managed-by and scaling to 0" "$M" druid \
    patch statefulset etcd-main --type json -p "$DROP_MANAGED"
wh_denied "a person removing managed-by" \
    "label app.kubernetes.io/managed-by of StatefulSet shoot/etcd-main cannot be changed from \"etcd-druid\" to (removed) by alice" \
    alice label statefulset etcd-main app.kubernetes.io/managed-by-
wh_denied "a person changing part-of" \
    "label app.kubernetes.io/part-of of StatefulSet shoot/etcd-main cannot be changed from \"etcd-main\" to \"nope\"" \
    alice label statefulset etcd-main --overwrite app.kubernetes.io/part-of=nope
wh_denied "etcd-druid deleting the StatefulSet with its pods" \
    "deleting StatefulSet shoot/etcd-main needs a full snapshot of Etcd etcd-main" druid \
    delete statefulset etcd-main --wait=false
[ "$(kc -n shoot get statefulset etcd-main -o jsonpath='{.spec.replicas} {.metadata.labels.app\.kubernetes\.io/managed-by} {.metadata.labels.app\.kubernetes\.io/part-of}')" = "3 etcd-druid etcd-main" ] ||
    wh_fail "the StatefulSet changed: $(kc -n shoot get statefulset etcd-main -o jsonpath='{.spec.replicas} {.metadata.labels}')"
echo "ok: the StatefulSet kept 3 replicas and its labels"
wh_denied "etcd-druid scaling 3 to 1 (never etcd-druid's)" \
    "scaling StatefulSet shoot/etcd-main from 3 to 1 replicas (its members 1..2 are deleted) is refused" \
    druid scale statefulset etcd-main --replicas=1
# the StatefulSet changed after warden-controller's check (a new generation)
wh_allowed "etcd-druid changing the pod template" druid patch statefulset etcd-main --type merge \
    -p '{"spec":{"template":{"metadata":{"annotations":{"example.com/rollout":"2"}}}}}'
ksim_wait 10 wh_denied "x" "it was scaled up or changed since" warden patch statefulset \
    etcd-main --type merge -p '{"spec":{"replicas":0}}' >/dev/null ||
    wh_fail "a StatefulSet scaled since warden-controller's check was not refused as such"
echo "ok: scaled since the check (generation $(stamp etcd-main)): refused to warden-controller too"

# ---- a snapshot of the earlier cycle does not count
t_old=$(task snap-old etcd-main full)
later=$(date -u -d "$t_old + 1 second" +%Y-%m-%dT%H:%M:%SZ)
cut etcd-main "$later"
ksim_wait 10 wh_denied "x" "since its traffic cut at $later" warden patch statefulset etcd-main \
    --type merge -p '{"spec":{"replicas":0}}' >/dev/null || wh_fail "the new cut was never seen"
echo "ok: a Succeeded task created before the cut ($t_old < $later) does not count"
# ---- nor one created in the second of the cut: it may predate the cut (one clock, the API
# server's, stamps both)
t_same=$(task snap-same etcd-main full)
later=$t_same
cut etcd-main "$later"
ksim_wait 10 wh_denied "x" "since its traffic cut at $later" warden patch statefulset etcd-main \
    --type merge -p '{"spec":{"replicas":0}}' >/dev/null ||
    wh_fail "a task created in the second of the cut counted"
echo "ok: a Succeeded task created in the cut's own second ($t_same) does not count"

# ---- two Etcds of one namespace: each needs its own fresh snapshot
after_second "$now"
task snap-events etcd-events full >/dev/null
task snap-main-delta etcd-main delta >/dev/null
ksim_wait 10 wh_denied "x" "$ONLY" druid scale statefulset etcd-events --replicas=0 \
    >/dev/null 2>&1 || wh_fail "etcd-druid's scale to 0 on a snapshot was not refused as such"
wh_denied "etcd-druid's scale to 0 on the snapshot: only warden-controller's counts" "$ONLY" \
    druid scale statefulset etcd-events --replicas=0
wh_denied "warden-controller's kubectl scale: the scale subresource shows no generation" \
    "which a scale subresource does not show" warden scale statefulset etcd-events --replicas=0
allowed_soon "etcd-events, with its snapshot, patched to 0 by warden-controller" warden \
    patch statefulset etcd-events --type merge -p '{"spec":{"replicas":0}}'
wh_denied "etcd-main does not take etcd-events' snapshot (nor its own delta)" "$M" warden \
    patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}'
# the next task is created after the second of the cut of etcd-main
after_second "$later"
task snap-main etcd-main full >/dev/null
cut etcd-main "$later"
allowed_soon "etcd-main, with its own snapshot, patched to 0 by warden-controller" warden \
    patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}'
# etcd-druid wakes it (warden-controller down, say): the snapshot no longer holds the last write
back_to_3 etcd-main
wh_denied "woken since the check: etcd-druid's scale to 0 is refused" "$M" druid \
    patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}'
wh_denied "woken since the check: warden-controller's too, until it checks again" \
    "it was scaled up or changed since" warden patch statefulset etcd-main --type merge \
    -p '{"spec":{"replicas":0}}'

# ---- break glass
wh_denied "etcd-broken without a snapshot" "$(guard_msg etcd-broken)" druid scale statefulset \
    etcd-broken --replicas=0
kc -n shoot annotate etcd etcd-broken \
    "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) bucket deleted by the provider" >/dev/null
out=""
for ((i = 0; i < 100; i++)); do
    if out=$(scale_to_0 druid etcd-broken 2>&1); then break; fi
    sleep 0.1
done
grep -q "Warning: StatefulSet shoot/etcd-broken is scaled to 0 without a snapshot of Etcd etcd-broken taken for this hibernation, allowed by annotation etcd-warden.io/allow-scale-down-without-snapshot: bucket deleted by the provider" <<<"$out" ||
    wh_fail "break glass: no admission warning in: $out"
echo "ok: break glass lets etcd-druid through, with an admission warning"
ev=""
for ((i = 0; i < 100; i++)); do
    ev=$(kc -n shoot get events.events.k8s.io -o jsonpath='{range .items[?(@.regarding.name=="etcd-broken")]}{.type} {.reason} {.note}{"\n"}{end}' 2>/dev/null || true)
    grep -q "^Warning ScaleDownWithoutSnapshot " <<<"$ev" && break
    sleep 0.1
done
grep -q "^Warning ScaleDownWithoutSnapshot .*system:serviceaccount:etcd-druid:etcd-druid scaled StatefulSet etcd-broken to 0.*bucket deleted by the provider" <<<"$ev" ||
    wh_fail "break glass: no event on the Etcd: $ev"
echo "ok: break glass is evented on the Etcd"

# ---- without a backup store nothing is guarded
wh_allowed "without a backup store etcd-druid scales to 0" druid scale statefulset etcd-nostore \
    --replicas=0

# ---- every review came from the caches, but for the PVC list of each scale-up
api1=$(api_lookups)
[ "$((api0 + ups))" = "$api1" ] ||
    wh_fail "API lookups during the reviews: $api0 before, $api1 after, $ups scale-up(s)"
hits1=$(metric 'warden_webhook_cache_lookups_total{result="hit"}')
[ "${hits1%.*}" -gt "${hits0%.*}" ] || wh_fail "the cache counters did not move: $hits0 -> $hits1"
echo "ok: 0 API calls for the reviews (warden_webhook_cache_lookups_total{result=\"api\"} stayed $api1; cache hits $hits0 -> $hits1)"
wh_stop
echo PASS
