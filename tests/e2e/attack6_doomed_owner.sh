#!/usr/bin/env bash
# A live Etcd's StatefulSet deleted with its pods under cover of another Etcd's deletion, against
# the webhook registered as the chart registers it. Issue 30: a StatefulSet of an Etcd never
# reaches fewer members (0 included) without a final snapshot, whoever asks, break glass aside;
# the guard decides from facts only etcd-warden or the API server writes. A DELETE of an
# Etcd's StatefulSet that takes its pods needs the hibernation snapshot "unless the Etcd is
# itself being deleted (its deletionTimestamp, which only the API server sets)", and a
# StatefulSet is an Etcd's "by labels, by an Etcd of its name, by an Etcd owner". Which Etcd is
# being deleted is a fact of the API server; which Etcd a StatefulSet belongs to is not, when
# owner references count: anyone who may update the StatefulSet adds one.
#   O1. protection disabled on Etcd etcd-main (3 members, live): alice creates her own Etcd
#       doomed, holds it with a finalizer of hers and deletes it (its deletionTimestamp is
#       set); she adds doomed as a (non-controller) owner of StatefulSet etcd-main, then
#       deletes StatefulSet etcd-main with its pods (background propagation).
#   O2. the same, with etcd-main's protection on: the owner reference by alice is expected to be
#       refused by component protection; recorded for the report.
# Oracle: what kube-sim stores: StatefulSet etcd-main gone or carrying a deletionTimestamp
# without the orphan finalizer (its pods go with it) while Etcd etcd-main, at spec.replicas 3,
# has no deletionTimestamp. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

WH_AS_NS=o1 druid_etcd o1 etcd-main
druid_etcd o2 etcd-main
WH_AS_NS=o1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection of o1/etcd-main"
for ns in o1 o2; do # alice's Etcd doomed, held by her finalizer, then deleted
    WH_AS_NS=$ns wh_as alice apply -f - >/dev/null <<EOF || wh_fail "alice cannot create Etcd $ns/doomed"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: doomed, finalizers: [example.com/alice-hold]}
spec:
  replicas: 1
  labels: {app: doomed}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080}
EOF
    WH_AS_NS=$ns wh_as alice delete etcd doomed --wait=false >/dev/null 2>&1 || wh_fail "alice cannot delete Etcd $ns/doomed"
    [ -n "$(kc -n $ns get etcd doomed -o jsonpath='{.metadata.deletionTimestamp}')" ] ||
        wh_fail "Etcd $ns/doomed is not held in deletion"
done
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
taken() { # StatefulSet NS/etcd-main gone or being deleted with its pods, Etcd etcd-main live at 3
    local s
    [ "$(kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.replicas}/{.metadata.deletionTimestamp}')" = 3/ ] || return 1
    s=$(kc -n "$1" get statefulset etcd-main -o jsonpath='{.metadata.deletionTimestamp}/{.metadata.finalizers}' 2>/dev/null) || return 0
    [ "${s%%/*}" != "" ] && ! grep -q orphan <<<"$s"
}

for ns in o1 o2; do
    # ---- control: the DELETE with the pods, no cover
    WH_AS_NS=$ns wh_as alice delete statefulset etcd-main --wait=false >/dev/null 2>&1
    taken $ns && wh_fail "control: $ns: alice deleted StatefulSet etcd-main with its pods without any cover"
    echo "ok: control: $ns: the DELETE of StatefulSet etcd-main with its pods is refused"
    uid=$(kc -n $ns get etcd doomed -o jsonpath='{.metadata.uid}')
    out=$(WH_AS_NS=$ns wh_as alice patch statefulset etcd-main --type json -p "[{\"op\":\"add\",
        \"path\":\"/metadata/ownerReferences/-\",\"value\":{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",
        \"kind\":\"Etcd\",\"name\":\"doomed\",\"uid\":\"$uid\"}}]" 2>&1)
    echo "${ns^^}: alice's owner reference to Etcd doomed on StatefulSet etcd-main: $(tr '\n' ' ' <<<"$out" | head -c 300)"
    wh_caught_up # the caches see it
    out=$(WH_AS_NS=$ns wh_as alice delete statefulset etcd-main --wait=false 2>&1)
    if taken $ns; then
        hole "${ns^^}: alice deleted StatefulSet $ns/etcd-main with its pods (live Etcd etcd-main at 3, no snapshot, no break glass) once it named her Etcd doomed, held in deletion, as an owner: $(tr '\n' ' ' <<<"$out")"
    else held "${ns^^}: the DELETE refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"; fi
done

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a live Etcd's StatefulSet deleted with its pods without a final snapshot"; exit 1; }
echo "attack6_doomed_owner: ok"
