#!/usr/bin/env bash
# A tenant fills the store's claim Lease and blocks every tenant's new Etcd in the store. The
# webhook records each admitted claim (the whole prefix) in one Lease per store for 120 s,
# and an Etcd prefix has no length limit; a CREATE that the webhook admits but the API server
# then does not store (here: the name already exists, AlreadyExists comes after admission)
# leaves its record behind with no object. So namespace evil, owning one Etcd "mine", sends
# about twenty `kubectl create` of "mine" with prefixes "zz-aaa..." of 90000 bytes down to 1
# byte until the Lease's annotations are within a few bytes of the API server's 256 KiB
# limit: from then on every claim in the store, by anyone, cannot be recorded and is refused
# ("recording the prefix claim: ... metadata.annotations: Too long"), for 120 s after each
# round, and the rounds can go on forever. Nothing of it is visible as an object.
# Wanted: shoot/etcd-main, on a prefix nothing claims, is admitted. The bounds: a prefix of
# more than 1024 bytes is refused at admission (no object key could hold it); one Etcd has one
# record (a newer request for its namespace and name replaces it), so the phantoms do not
# accumulate; a namespace has at most 16 Etcds' records in one store's Lease, its next claim
# refused with its own message; and a record whose Etcd is not stored (here: deleted) is
# dropped once 30 s old, so evil may claim again.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

edoc() { # ns name prefix
    cat <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: etcd-bucket, prefix: "$3", secretRef: {name: etcd-backup}}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot evil
edoc evil mine evil--mine | kc apply -f - >/dev/null || ctl_fail "evil/mine refused"
n=0 phantoms=0 long=0
for len in 90000 90000 60000 30000 15000 8000 4000 2000 1000 500 250 120 60 30 15 8 4 2 1; do
    n=$((n + 1))
    c=$(printf "\\x$(printf %x $((96 + n)))")
    out=$(edoc evil mine "zz-$(head -c "$len" /dev/zero | tr '\0' "$c")" | kc create -f - 2>&1) || true
    case "$out" in
    *AlreadyExists*) phantoms=$((phantoms + 1)) ;;
    *"bytes: at most 1024 (an object store's keys are at most 1024 bytes"*) long=$((long + 1)) ;;
    *) ctl_fail "CREATE $n (${len} bytes): ${out:0:400}" ;;
    esac
done
expect "prefixes over 1024 bytes refused" 8 "$long"
expect "admitted CREATEs of an existing name" 11 "$phantoms"
records() { # evil's records in the store's claim Lease
    kc get leases -A -o json | jq '[.items[] | select(.metadata.name | startswith("etcd-warden-claims-")) | .metadata.annotations["etcd-warden.io/claims"] | fromjson | .[] | select(.namespace == "evil")] | length'
}
expect "evil's records after $phantoms phantom CREATEs of one name" 1 "$(records)"
ok "$long over-long prefixes refused; $phantoms phantom CREATEs of one Etcd left one record"
# 15 more Etcds of evil, stored (their records count for 120 s): its 17th Etcd claim is refused
for i in $(seq 1 15); do
    edoc evil "e$i" "evil--e$i-x" | kc apply -f - >/dev/null || ctl_fail "evil/e$i refused"
done
out=$(edoc evil other evil-other | kc apply -f - 2>&1) && ctl_fail "a 17th Etcd of evil admitted: $out"
grep -q 'namespace evil has 16 Etcds with prefix claims in this store admitted in the last 120 s' <<<"$out" ||
    ctl_fail "refused for another reason: $out"
ok "evil's share of the claim Lease is full: its own claims refused"
size=$(kc get leases -A -o json | jq '[.items[] | select(.metadata.name | startswith("etcd-warden-claims-")) | .metadata.annotations["etcd-warden.io/claims"] | length] | max')
[ "$size" -le 32768 ] || ctl_fail "the claim Lease holds $size bytes of records"
ok "the claim Lease holds $size bytes of records"
if ! out=$(edoc shoot etcd-main shoot--etcd-main | kc apply -f - 2>&1); then
    ctl_fail "shoot/etcd-main refused after namespace evil filled the claim Lease: ${out:0:400}"
fi
ok "another namespace's new Etcd is admitted whatever evil recorded"
# evil's Etcds deleted: their records name no stored Etcd, and are dropped (30 s after they
# were recorded, at the latest when they lapse)
for i in $(seq 1 15); do kc -n evil delete etcd "e$i" --wait=false >/dev/null; done
again() { edoc evil other evil-other | kc apply -f - >/dev/null; }
ksim_wait 40 again || ctl_fail "evil's phantom records never dropped: $(edoc evil other evil-other | kc apply -f - 2>&1)"
ok "records of requests never stored are dropped after the pending window"

# The whole Lease at its byte budget: records of twenty namespaces (written here as admin, as
# twenty namespaces at their share would leave them) take the annotations to 20 bytes short of
# the API server's 256 KiB. A claim that would take it past is refused at admission with its
# own message (403), never written (a write the API server would refuse, a 500 for everyone);
# once those records are 30 s old and name no stored Etcd they make room, and the next claim
# is admitted: the Lease is never left unwritable.
lease=$(kc get leases -A -o json | jq -r '[.items[] | select(.metadata.name | startswith("etcd-warden-claims-"))][0] | .metadata.namespace + "/" + .metadata.name')
kc -n "${lease%%/*}" get lease "${lease#*/}" -o json | python3 -c '
import json, sys, time
l = json.load(sys.stdin)
key = "etcd-warden.io/claims"
budget = 262144 - len(key) - 20
recs, i, now = [], 0, int(time.time())
while True:
    r = {"namespace": "f%d" % (i % 20), "name": "e%d" % i, "prefix": "flood-%d-" % i + "p" * 900, "at": now}
    if len(json.dumps(recs + [r], separators=(",", ":"))) > budget:
        break
    recs.append(r)
    i += 1
text = json.dumps(recs, separators=(",", ":"))
recs[-1]["prefix"] += "p" * (budget - len(text))
l["metadata"]["annotations"] = {key: json.dumps(recs, separators=(",", ":"))}
json.dump(l, sys.stdout)' >"$CTL_DIR/full-lease.json"
kc replace -f "$CTL_DIR/full-lease.json" >/dev/null || ctl_fail "cannot fill the claim Lease"
if out=$(edoc shoot etcd-late shoot--late | kc apply -f - 2>&1); then
    ctl_fail "a claim past the Lease's byte budget admitted: $out"
fi
grep -q "holds as many claims admitted in the last 120 s as the API server stores in one object" <<<"$out" ||
    ctl_fail "the full Lease refused otherwise than with its message: ${out:0:400}"
grep -q 'Forbidden' <<<"$out" || ctl_fail "the full Lease's refusal is not a 403: ${out:0:400}"
ok "a claim past the Lease's byte budget is refused with its message"
late() { edoc shoot etcd-late shoot--late | kc apply -f - >/dev/null 2>&1; }
ksim_wait 60 late || ctl_fail "the full Lease never made room: $(edoc shoot etcd-late shoot--late | kc apply -f - 2>&1 | head -c 400)"
ok "records of requests never stored make room in a full Lease"
echo "attack29_claim_lease_flood: ok"
