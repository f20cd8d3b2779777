#!/usr/bin/env bash
# The adopt rule reads another Etcd's claims as its own, against the webhook registered as the
# chart registers it (issue 30). A StatefulSet CREATE of a live Etcd is judged against the member
# claims whose pods are gone ("<template>-<sts>-<n>", mounted as etcd-druid mounts them). Etcd
# main's StatefulSet is main; Etcd etcd-main's claims etcd-main-etcd-main-<n> end in "-main-<n>",
# so they read as main's under template "etcd-main-etcd", which main's template does not have:
# the re-creation of StatefulSet main (its pods gone, as etcd-druid re-creates it after an
# immutable field changed) was refused, "pod main-0 keeps its data on claim
# etcd-main-etcd-main-0 ... which no volumeClaimTemplate of it gives member 0", for a claim that
# is provably etcd-main's (its labels name Etcd etcd-main).
#   A. StatefulSet main orphan-deleted, its pods deleted, created again as it was, beside
#      etcd-main's claims: must be admitted (HOLE: refused, a false refusal that holds etcd-druid's
#      re-creation of Etcd main off for good).
# What must stay refused (the seventh attack's rule):
#   B. main re-created with its claim template renamed "data": its members would start on new,
#      empty claims and leave main-main-<n> behind.
#   C. a claim old-main-main-0 labelled for Etcd main (its template was "old-main"): the name
#      reads as StatefulSet main-main's too, but its labels say it is main's: re-creating main
#      would leave it behind; refused. Control: claim x-main-main-1, labelled for main-main,
#      does not hold the same CREATE.
# Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

druid_etcd shoot etcd-main
druid_etcd shoot main
claim() { # NAME ETCD: a member claim as the StatefulSet controller creates it
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $2}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
}
for i in 0 1 2; do claim etcd-main-etcd-main-$i etcd-main; claim main-main-$i main; done |
    kc -n shoot create -f - >/dev/null || wh_fail "cannot create the member PVCs"
wh_as alice annotate etcd main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection of main"
sleep 2 # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
stored() { kc -n shoot get statefulset main >/dev/null 2>&1; }
orphan() { # CASE: alice orphan-deletes StatefulSet main and its pods; OBJ: the object it was
    local obj i
    obj=$(kc -n shoot get statefulset main -o json | jq -c 'del(.status, .metadata.uid,
        .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation,
        .metadata.managedFields)') || wh_fail "$1: cannot read StatefulSet main"
    wh_await_admitted 10 "$1: the orphaning delete of StatefulSet main refused" \
        wh_as alice delete statefulset main --cascade=orphan
    wh_as alice delete statefulset main --cascade=orphan --wait=false >/dev/null 2>&1 ||
        wh_fail "$1: the orphaning delete of StatefulSet main refused"
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get statefulset main >/dev/null 2>&1" ||
        wh_fail "$1: StatefulSet main is still stored"
    for i in 0 1 2; do
        kc -n shoot delete pod "main-$i" --wait=false >/dev/null 2>&1
    done
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get pods -o name | grep -q '^pod/main-'" ||
        wh_fail "$1: the pods of main are still stored"
    sleep 1 # the caches see them gone
    OBJ=$obj
}

# ---- A: main re-created as it was, beside etcd-main's claims
orphan A; obj=$OBJ
out=$(wh_as alice create -f - <<<"$obj" 2>&1)
if stored; then
    echo "ok: A: StatefulSet main re-created as it was, beside etcd-main's claims"
else
    hole "A: re-creating StatefulSet main as it was is refused for Etcd etcd-main's claims, labelled for etcd-main: $(tr '\n' ' ' <<<"$out" | head -c 400)"
    kc -n shoot create -f - <<<"$obj" >/dev/null 2>&1 # as admin past nothing: the rest still runs
    ksim_wait 10 bash -c "kubectl --kubeconfig '$KUBECONFIG' -n shoot get statefulset main >/dev/null 2>&1" ||
        { echo "FAIL: $holes hole(s); StatefulSet main cannot be stored again"; exit 1; }
fi

# ---- B: the claim template renamed
orphan B; obj=$OBJ
out=$(wh_as alice create -f - <<<"$(jq -c '.spec.volumeClaimTemplates[0].metadata.name = "data" |
    .spec.template.spec.containers |= map(.volumeMounts = [{"name":"data","mountPath":"/var/etcd/data"}])' <<<"$obj")" 2>&1)
if stored; then hole "B: StatefulSet main re-created with its claim template renamed, off claims main-main-<n>"
else echo "held: B: refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"; fi

# ---- C control: a claim named as main's and main-main's, labelled for StatefulSet main-main
claim x-main-main-1 main-main | kc -n shoot create -f - >/dev/null || wh_fail "C: cannot create claim x-main-main-1"
out=$(wh_as alice create -f - <<<"$obj" 2>&1)
stored || hole "C control: re-creating StatefulSet main as it was is refused for claim x-main-main-1, labelled for main-main: $(tr '\n' ' ' <<<"$out" | head -c 400)"
stored && echo "ok: C control: claim x-main-main-1, labelled for main-main, does not hold main's re-creation"

# ---- C: a claim of main's under a name that reads as main-main's too
if stored; then orphan C; obj=$OBJ; fi
claim old-main-main-0 main | kc -n shoot create -f - >/dev/null || wh_fail "C: cannot create claim old-main-main-0"
out=$(wh_as alice create -f - <<<"$obj" 2>&1)
if stored; then hole "C: StatefulSet main re-created off claim old-main-main-0, labelled for Etcd main"
else echo "held: C: refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): the adopt rule judged claims by name alone"; exit 1; }
echo "attack10_adopt_names: ok"
