#!/usr/bin/env bash
# A break glass value set again after another value was used, on kube-sim with warden-webhook
# (registered as ctl_stage registers it) and backup-double; warden-controller down. Issue 30.
# docs/hibernation.md ("Break glass once"): "Every value used is remembered for 25 hours ..., so
# a value used once stays used when it is set again after another one was used (a re-applied
# manifest, a runbook run twice)"; "A new value ... allows one more; its use replaces the
# record (one per Etcd)".
#   A1. Etcd etcd-main (writes acknowledged), alice (protection disabled): V set, scale to 0
#       (use of V); scaled back to 3, writes; V2 set, scale to 0 (use of V2); scaled back to 3,
#       writes; the manifest carrying V re-applied; alice scales to 0.
#   A0. control: the uses of V and of V2 are admitted (one each).
# Oracle: what kube-sim stores (the StatefulSet at 0) and what backup-double records (writes
# acknowledged after its last snapshot: none was taken).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
. "$(dirname "$0")/../lib/glass.sh"
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { kc -n a1 get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
druid_etcd a1 etcd-main
druid_double_for a1 etcd-main
U=$DRUID_DOUBLE_URL
V="$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ) bucket lost"
V2="$(date -u -d '+3 hours' +%Y-%m-%dT%H:%M:%SZ) bucket lost again"
WH_AS_NS=a1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
use() { # VALUE WHAT: set the value, write, scale to 0; prints kubectl's answer
    kc -n a1 annotate --overwrite etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$1" >/dev/null ||
        ctl_fail "the operator cannot set break glass ($2)"
    curl -sf -X POST "$U/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
    wh_caught_up
    WH_AS_NS=a1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1
}
up() { glass_up a1; }
out=$(use "$V" V)
[ "$(replicas)" = 0 ] || ctl_fail "control: A0: the use of V refused: $out"
up
out=$(use "$V2" V2)
[ "$(replicas)" = 0 ] || ctl_fail "control: A0: the use of V2 refused: $out"
up
echo "ok: control: A0: V and V2 allowed one scale-down each"
out=$(use "$V" "V again")
lw=$(last_write "$U")
sr=$(stored_rev "$U")
if [ "$(replicas)" = 0 ]; then
    echo "HOLE: A1: V, used once and set again after V2 was used, let StatefulSet a1/etcd-main go to 0 a second time with writes up to revision $lw acknowledged after the last snapshot (${sr:-none}): $(tr '\n' ' ' <<<"$out" | head -c 300)"
    echo "FAIL: 1 hole(s): a used break glass value counts again once another value was used"
    exit 1
fi
grep -q "was used" <<<"$out" || ctl_fail "A1: refused for another reason: $out"
echo "held: A1: V set again is refused: $(tr '\n' ' ' <<<"$out" | head -c 200)"
echo "attack13_glass_value_again: ok"
