#!/usr/bin/env bash
# A break glass value used once, used again after another value, on kube-sim with warden-webhook
# (registered as ctl_stage registers it) and a backup-double. Issue 30 / docs/hibernation.md
# "Break glass once": a value of etcd-warden.io/allow-scale-down-without-snapshot "allows one
# scale-down"; "a later request on the same value is refused". The webhook keeps one record
# per Etcd, the last value used ("a new value's use replaces it"), so a value is refused as used
# only until another one has been used: the first value, set again while it has not expired (a
# re-applied manifest, a runbook's command run again, kubectl apply of the file that set it:
# the issue's own "re-applied old manifest" accident), lets one more scale-down through without
# a snapshot. warden-controller is down throughout (an upgrade): "whoever asks and whether
# warden-controller runs or not".
#   G0. control: value A used by etcd-druid's scale to 0, the Etcd woken (0 -> 3), a second
#       scale to 0 on A: refused (the fifth attack's fix).
#   G1. value A used (etcd-druid's scale to 0 on a broken bucket), woken; value B set for a
#       second incident and used, woken; clients write; the old manifest is applied again with
#       value A (still unexpired); etcd-druid's scale to 0 (its pre-sync fallback): admitted.
#   G2. value A used on Etcd etcd-main of g2; the Etcd is deleted (its components with it) and
#       created again from the same manifest, A in it (unexpired: the record is kept per Etcd
#       uid); clients write; etcd-druid's scale to 0: admitted.
# Oracle: ground truth. The double records every acknowledged write and every snapshot; the
# StatefulSet at 0 (what kube-sim stores) with a write acknowledged after A's first use missing
# from the store is the loss. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage

last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
write() { curl -sf -X POST "$1/admin/write?n=$2" >/dev/null; }
replicas() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
glass() { # NS VALUE: the operator sets break glass VALUE (kubectl annotate --overwrite)
    kc -n "$1" annotate --overwrite etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$2" >/dev/null ||
        ctl_fail "$1: break glass \"$2\" cannot be set"
    wh_caught_up # the webhook's cache
}
down() { kc_druid -n "$1" patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}' 2>&1; }
up() {
    kc_druid -n "$1" patch statefulset etcd-main --type merge -p '{"spec":{"replicas":3}}' >/dev/null ||
        ctl_fail "$1: etcd-druid cannot wake the Etcd"
}
expiry=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
A="$expiry bucket lost"
B="$expiry member 2 volume corrupt"

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }

for ns in g0 g1; do
    druid_etcd $ns etcd-main
    druid_double_for $ns etcd-main
    eval "URL_$ns=\$DRUID_DOUBLE_URL"
    write "$DRUID_DOUBLE_URL" 3
    glass $ns "$A"
    out=$(down $ns)
    [ "$(replicas $ns)" = 0 ] || ctl_fail "$ns: the first use of value A (etcd-druid's scale to 0) was refused: $out"
    up $ns
done
echo "ok: value A used once in g0 and g1 (3 -> 0), both woken (0 -> 3)"

# ---- G0: control, a second use of A
write "$URL_g0" 5
sleep 1
out=$(down g0)
[ "$(replicas g0)" = 3 ] || ctl_fail "control: a second scale to 0 on value A was admitted (the fifth attack's fix is not there): $out"
echo "ok: control: a second scale-down on value A is refused"

# ---- G1: A, then B, then A again
glass g1 "$B"
out=$(down g1)
[ "$(replicas g1)" = 0 ] || ctl_fail "G1: the use of value B was refused: $out"
up g1
echo "G1: value B used (3 -> 0), woken (0 -> 3)"
write "$URL_g1" 5
glass g1 "$A" # the old manifest applied again
out=$(down g1)
w=$(last_write "$URL_g1")
s=$(stored_rev "$URL_g1")
if [ "$(replicas g1)" = 0 ] && [ "${s:-0}" -lt "${w:-0}" ]; then
    hole "G1: break glass value A, used once, set again after value B was used: etcd-druid's scale to 0 admitted on it, StatefulSet g1/etcd-main at 0 with write ${w:-0} acknowledged and the store holding ${s:-nothing}"
else held "G1: the replayed value A refused (replicas $(replicas g1), last write ${w:-none}, stored ${s:-none}): $(head -c 300 <<<"$out")"; fi

# ---- G2: A used, the Etcd deleted and created again from the same manifest (A in it)
druid_etcd g2 etcd-main
druid_double_for g2 etcd-main
write "$DRUID_DOUBLE_URL" 3
glass g2 "$A"
out=$(down g2)
[ "$(replicas g2)" = 0 ] || ctl_fail "G2: the use of value A was refused: $out"
kc -n g2 delete etcd etcd-main --wait=false >/dev/null || ctl_fail "G2: cannot delete Etcd etcd-main"
ksim_wait 20 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n g2 get statefulset,etcd etcd-main >/dev/null 2>&1 &&
    [ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n g2 get pods,services -o name)\" ]" ||
    ctl_fail "G2: Etcd etcd-main, its StatefulSet, Services or pods still stored"
echo "G2: value A used (3 -> 0), Etcd etcd-main deleted with its components"
druid_etcd g2 etcd-main # the same manifest applied again (GitOps, a runbook), A still in it
druid_double_for g2 etcd-main
write "$DRUID_DOUBLE_URL" 5
glass g2 "$A"
out=$(down g2)
w=$(last_write "$DRUID_DOUBLE_URL")
s=$(stored_rev "$DRUID_DOUBLE_URL")
if [ "$(replicas g2)" = 0 ] && [ "${s:-0}" -lt "${w:-0}" ]; then
    hole "G2: break glass value A, used once on Etcd g2/etcd-main, carried by the same manifest into the Etcd of that name created again: etcd-druid's scale to 0 admitted on it, StatefulSet at 0 with write ${w:-0} acknowledged and the store holding ${s:-nothing}"
else held "G2: value A refused on the re-created Etcd (replicas $(replicas g2), last write ${w:-none}, stored ${s:-none}): $(head -c 300 <<<"$out")"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): one break glass value let more than one scale-down through"; exit 1; }
echo "attack7_glass_replay: ok"
