#!/usr/bin/env bash
# Break glass used up by a forged AdmissionReview, on kube-sim with warden-webhook (registered
# as ctl_stage registers it) and backup-double. Issue 30: "an attacker who reaches the webhook".
# docs/protection.md ("Authenticating the API server"): "Anyone who can reach the webhook's
# HTTPS port can post an AdmissionReview of their own making. A decision on such a forged
# review changes nothing in the cluster, except one thing": the prefix claim of an Etcd CREATE
# with --backup-entries. docs/hibernation.md ("Break glass once"): "Before the webhook admits
# such a request it records the use: in a Lease etcd-warden-glass-<hash> ... of two requests on
# one value ... only the first is admitted". A forged review is such a request: the webhook
# records the use of the operator's break glass for a scale-down the API server never saw, and
# the operator's own scale-down on it is then refused ("its value was used ... by mallory").
# Without --client-ca (the chart's default: webhook.clientAuth off) nothing tells them apart.
#   G1. Etcd etcd-main (backup store, 3 replicas, writes acknowledged), its bucket lost: the
#       operator sets etcd-warden.io/allow-scale-down-without-snapshot="<now + 2h> bucket lost".
#       mallory (no Kubernetes identity; she reaches the webhook's port) posts an
#       AdmissionReview of a StatefulSet UPDATE 3 -> 0 of g1/etcd-main. Then alice (namespace
#       edit rights, protection disabled, the operator's runbook) scales the StatefulSet to 0.
#   G0. control: the same without mallory: alice's scale to 0 is admitted on the break glass.
# Now: mallory's review of a StatefulSet she cannot read (made-up uid and resourceVersion) records
# nothing; a reader's (trudy's) exact copy of alice's coming request is that request: alice's is
# admitted on its record, and a second request on the value is refused.
# Oracle: what kube-sim stores: a break-glass use recorded for g1/etcd-main naming mallory (no
# request of hers reached the API server; the StatefulSet stayed at 3), and the StatefulSet
# still at 3 after alice's scale to 0 on the operator's value.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/glass.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
glass_stage g0 g1
wh_caught_up

forge() { # forge USER FILE: a review of g1/etcd-main 3 -> 0 from the StatefulSet in $old
glass_sts_review g1 "$1" 6f1c5a52-0000-4000-8000-00000000f0f0 "$old" >"$2"
answer=$(glass_post "$2" etcdcomponents)
echo "$1's forged review answered: $(jq -c '.response | {allowed, warnings, status}' <<<"$answer" 2>/dev/null | head -c 300)"
}

# mallory knows names only: the StatefulSet as etcd-druid makes it, with a uid and
# resourceVersion of her making. Her review must record nothing.
old=$(kc -n g1 get statefulset etcd-main -o json | jq '.metadata.uid = "0b5f3e1c-1111-4222-8333-444455556666"
    | .metadata.resourceVersion = "1"')
forge mallory "$CTL_DIR/forged.json"
[ "$(glass_replicas g1)" = 3 ] || ctl_fail "G1: the StatefulSet moved without a request"
rec=$(glass_uses mallory)
[ -z "$rec" ] || {
    echo "HOLE: G1: a forged review of an object she cannot read (mallory) used up the break glass of g1/etcd-main: $(head -c 250 <<<"$rec")"
    exit 1
}
echo "held: G1: a forged review of a StatefulSet mallory cannot read records no use"
# trudy reads the namespace (a viewer): her copy of the request alice is about to make, on the
# StatefulSet as it is stored, is that request; alice's own is admitted on its record.
old=$(kc -n g1 get statefulset etcd-main -o json)
forge trudy "$CTL_DIR/forged2.json"
[ "$(glass_replicas g1)" = 3 ] || ctl_fail "G1: the StatefulSet moved without a request"

glass_control g0 G0
out1=$(WH_AS_NS=g1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
rec=$(glass_uses trudy)
if [ "$(glass_replicas g1)" != 0 ]; then
    echo "HOLE: G2: a forged copy of alice's request (trudy, no request to the API server) used up the break glass of g1/etcd-main (recorded: $(head -c 250 <<<"$rec")), and the operator's scale-down on it is refused: $(tr '\n' ' ' <<<"$out1" | head -c 300)"
    echo "FAIL: 1 hole(s): a forged AdmissionReview changes the cluster: it uses up an Etcd's break glass"
    exit 1
fi
echo "held: G2: alice's scale to 0 admitted on the use trudy's copy of it recorded (${rec:+recorded})"
# the value is used: another request (the StatefulSet back at 3, then at 0 again) is refused
glass_up g1 G2
out2=$(WH_AS_NS=g1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
[ "$(glass_replicas g1)" = 3 ] || ctl_fail "G2: a second scale-down on one break glass value admitted"
grep -q "was used" <<<"$out2" || ctl_fail "G2: the second scale-down refused for another reason: $out2"
echo "ok: G2: a second scale-down on the same value is refused"
echo "attack12_forged_glass: ok"
