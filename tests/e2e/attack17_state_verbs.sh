#!/usr/bin/env bash
# The state annotations the scale-down guard decides from, forged through every verb a
# namespace editor has, during FinalSnapshot (the final snapshot's upload held, writes made
# after an older user snapshot): if any request stores phase ScalingDown, a
# final-snapshot-checked of the live StatefulSet and an old traffic-cut-at, etcd-druid's scale to
# 0 would count the old snapshot. On kube-sim with warden-webhook, warden-controller and a
# backup-double (ground truth: the double's acknowledged writes and stored snapshots; what
# kube-sim stores).
# docs/toggles.md (State annotations): "Only warden-controller's identity ... may set, change or
# remove them ... Anyone else (an admin included) is refused"; "An Etcd created with them by
# anyone else ... is created without them". docs/hibernation.md (The scale-down guard):
# "etcd-druid's scale to 0 after its pre-sync snapshot, or a person's, is refused".
# Verbs, each by alice (namespace rights) and the last ones by etcd-druid too:
#   V1 annotate --overwrite; V2 JSON patch add/replace of each key; V3 JSON patch replacing the
#   whole annotations map (the state keys forged, the rest kept); V4 merge patch; V5 PUT
#   (kubectl replace) of the stored object with the keys forged; V6 server-side apply with
#   --force-conflicts; V7 the etcds/status subresource carrying metadata.annotations; V8 JSON
#   patch `move` of a user key onto a state key; V9 removal of every annotation (JSON patch
#   remove /metadata/annotations); V10 etcd-druid (a reconciler, not warden-controller) V1;
#   V11 an Etcd CREATE carrying them (stored without them).
# After each: the stored state keys must be warden-controller's (unchanged), and etcd-druid's
# scale of the StatefulSet to 0 must be refused while the final snapshot is held.
#   Control: after the release the hibernation completes and, at 0, the store holds every write.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
NS=v1
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { kc -n $NS get sts etcd-main -o jsonpath='{.spec.replicas}'; }
state() {
    kc -n $NS get etcd etcd-main -o json | jq -cS '(.metadata.annotations // {}) | with_entries(select(.key |
        IN("etcd-warden.io/traffic-cut-at", "etcd-warden.io/hibernation-phase", "etcd-warden.io/final-snapshot-checked",
           "etcd-warden.io/final-snapshot-store", "etcd-warden.io/hibernation-condition", "etcd-warden.io/suspend-added",
           "etcd-warden.io/restore-progress", "etcd-warden.io/status-backup-exists")))'
}

ctl_start
druid_etcd $NS etcd-main
druid_double_for $NS etcd-main
U=$DRUID_DOUBLE_URL
curl -sf -X POST "$U/admin/write?n=3" >/dev/null
kc -n $NS create -f - >/dev/null <<EOF || ctl_fail "cannot create the user's snapshot task"
apiVersion: druid.gardener.cloud/v1alpha1
kind: EtcdOpsTask
metadata: {name: user-snapshot, namespace: $NS}
spec: {etcdName: etcd-main, config: {onDemandSnapshot: {type: full}}}
EOF
ksim_wait 30 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $NS get etcdopstask user-snapshot -o jsonpath='{.status.state}')\" = Succeeded ]" ||
    ctl_fail "the user's snapshot did not succeed"
curl -sf -X POST "$U/admin/write?n=5" >/dev/null
curl -sf -X POST "$U/admin/hold" >/dev/null
kc -n $NS annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase $NS etcd-main FinalSnapshot 30
ksim_wait 30 bash -c "[ \"\$(curl -sf '$U/admin/held')\" = 1 ]" || ctl_fail "the final snapshot was not requested"
W=$(last_write "$U")
S=$(stored_rev "$U")
[ "${S:-0}" -lt "$W" ] || ctl_fail "setup: the store already holds write $W"
echo "setup: phase FinalSnapshot, final snapshot held; last write $W, store holds ${S:-none}"
BEFORE=$(state)
UID_=$(kc -n $NS get sts etcd-main -o jsonpath='{.metadata.uid}')
GEN=$(kc -n $NS get sts etcd-main -o jsonpath='{.metadata.generation}')
OLD=2000-01-01T00:00:00Z
FORGED=$(jq -cn --arg c "$UID_/$GEN" --arg t $OLD '{"etcd-warden.io/hibernation-phase":"ScalingDown",
    "etcd-warden.io/final-snapshot-checked":$c, "etcd-warden.io/traffic-cut-at":$t}')
echo "state before: $BEFORE"

holes=0
# judge WHAT: after a forging attempt (accepted or not), the stored state keys and the guard
judge() {
    local what=$1 now r
    now=$(state)
    if [ "$now" != "$BEFORE" ]; then
        # the controller may have moved on legitimately: only a forged value is a hole
        if jq -e --argjson f "$FORGED" 'to_entries | any(.value == $f[.key])' <<<"$now" >/dev/null ||
            ! jq -e 'has("etcd-warden.io/hibernation-phase")' <<<"$now" >/dev/null; then
            echo "HOLE: $what: the stored state annotations were changed by someone else: $now (before $BEFORE)"
            holes=$((holes + 1))
        fi
    fi
    kc_druid -n $NS scale sts etcd-main --replicas=0 >/dev/null 2>&1
    r=$(replicas)
    if [ "$r" = 0 ]; then
        s=$(stored_rev "$U")
        echo "HOLE: $what: etcd-druid's scale of StatefulSet $NS/etcd-main to 0 admitted with write $W acknowledged and the store holding ${s:-none}"
        holes=$((holes + 1))
        kc_druid -n $NS scale sts etcd-main --replicas=3 >/dev/null 2>&1
    fi
    [ "$now" = "$BEFORE" ] && [ "$r" != 0 ] && echo "held: $what${2:+: $2}"
}
try() { # WHAT CMD...: run as given, report the refusal line
    local what=$1 out
    shift
    out=$("$@" 2>&1 | tr '\n' ' ')
    judge "$what" "${out:0:200}"
}
A() { WH_AS_NS=$NS wh_as alice "$@"; }

try "V1 annotate --overwrite" A annotate --overwrite etcd etcd-main \
    etcd-warden.io/hibernation-phase=ScalingDown "etcd-warden.io/final-snapshot-checked=$UID_/$GEN" etcd-warden.io/traffic-cut-at=$OLD
for k in hibernation-phase final-snapshot-checked traffic-cut-at; do
    v=$(jq -r --arg k "etcd-warden.io/$k" '.[$k]' <<<"$FORGED")
    try "V2 JSON patch replace $k" A patch etcd etcd-main --type json \
        -p "[{\"op\":\"add\",\"path\":\"/metadata/annotations/etcd-warden.io~1$k\",\"value\":\"$v\"}]"
done
ann=$(kc -n $NS get etcd etcd-main -o json | jq -c --argjson f "$FORGED" '.metadata.annotations + $f')
try "V3 JSON patch replace /metadata/annotations" A patch etcd etcd-main --type json \
    -p "[{\"op\":\"replace\",\"path\":\"/metadata/annotations\",\"value\":$ann}]"
try "V4 merge patch" A patch etcd etcd-main --type merge -p "{\"metadata\":{\"annotations\":$FORGED}}"
kc -n $NS get etcd etcd-main -o json | jq --argjson f "$FORGED" '.metadata.annotations += $f' >"$CTL_DIR/v5.json"
try "V5 PUT (kubectl replace)" A replace -f "$CTL_DIR/v5.json"
jq -n --argjson f "$FORGED" --arg ns $NS '{apiVersion:"druid.gardener.cloud/v1alpha1",kind:"Etcd",
    metadata:{name:"etcd-main",namespace:$ns,annotations:$f}}' >"$CTL_DIR/v6.json"
try "V6 server-side apply --force-conflicts" A apply --server-side --force-conflicts --field-manager=alice -f "$CTL_DIR/v6.json"
try "V7 etcds/status carrying metadata.annotations" A patch etcd etcd-main --subresource=status --type merge \
    -p "{\"metadata\":{\"annotations\":$FORGED},\"status\":{\"ready\":true}}"
A annotate etcd etcd-main "foo.example/x=$OLD" >/dev/null 2>&1
try "V8 JSON patch move onto traffic-cut-at" A patch etcd etcd-main --type json \
    -p '[{"op":"move","from":"/metadata/annotations/foo.example~1x","path":"/metadata/annotations/etcd-warden.io~1traffic-cut-at"}]'
try "V9 JSON patch remove /metadata/annotations" A patch etcd etcd-main --type json -p '[{"op":"remove","path":"/metadata/annotations"}]'
try "V10 etcd-druid annotate --overwrite" kc_druid -n $NS annotate --overwrite etcd etcd-main \
    etcd-warden.io/hibernation-phase=ScalingDown "etcd-warden.io/final-snapshot-checked=$UID_/$GEN" etcd-warden.io/traffic-cut-at=$OLD

# V11: an Etcd CREATE carrying them (a re-applied manifest): created without them
kc -n $NS get etcd etcd-main -o json | jq --argjson f "$FORGED" '{apiVersion, kind, spec,
    metadata: {name: "etcd-copy", namespace: .metadata.namespace, annotations: $f}}' >"$CTL_DIR/v11.json"
out=$(A create -f "$CTL_DIR/v11.json" 2>&1 | tr '\n' ' ')
kept=$(kc -n $NS get etcd etcd-copy -o json 2>/dev/null | jq -c --argjson f "$FORGED" '(.metadata.annotations // {}) | with_entries(select(.key | in($f)))')
if [ -n "$kept" ] && [ "$kept" != "{}" ]; then
    echo "HOLE: V11 CREATE: Etcd $NS/etcd-copy stored with state annotations someone else wrote: $kept"
    holes=$((holes + 1))
else
    echo "held: V11 CREATE with state annotations: ${kept:+stored without them; }${out:0:240}"
fi
kc -n $NS delete etcd etcd-copy --wait=false >/dev/null 2>&1

# control: the release completes the hibernation, and at 0 the store holds every write
curl -sf -X POST "$U/admin/release" >/dev/null
ksim_wait 60 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $NS get sts etcd-main -o jsonpath='{.spec.replicas}')\" = 0 ]" ||
    ctl_fail "control: not hibernated after the release: $(ctl_phase $NS etcd-main)"
W2=$(last_write "$U")
S2=$(stored_rev "$U")
[ "${S2:-0}" -ge "$W2" ] || ctl_fail "control: at 0 the store holds ${S2:-none}, last write $W2"
ok "control: released, at 0 the store holds every write (last $W2, stored $S2)"
ctl_stop
if [ "$holes" -gt 0 ]; then
    echo "FAIL: $holes hole(s): the guard's state forged by someone other than warden-controller"
    exit 1
fi
echo "attack17_state_verbs: ok"
