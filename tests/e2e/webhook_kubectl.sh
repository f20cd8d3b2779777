#!/usr/bin/env bash
# warden-webhook end to end on kube-sim, driven with kubectl as different users:
# registered through webhook configurations shaped like etcd-druid's chart (the
# component webhook with an objectSelector on managed-by, the statefulsets/scale
# webhook without) plus the Etcd validating and mutating webhooks; then every
# component-protection rule, the restoring rules and the mutating patches,
# asserting what kubectl prints.
set -euo pipefail
src=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${WARDEN_BINARY_DIR:-$src/build/debug}
ksim=${KUBE_SIM:-$bin/tests/kube-sim/kube-sim}
wh=${WARDEN_WEBHOOK:-$bin/webhook/warden-webhook}
for b in "$ksim" "$wh"; do
    [ -x "$b" ] || { echo "FAIL: $b is not built"; exit 1; }
done
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*"
    echo "--- webhook log (last 20 lines)"; tail -20 "$work/webhook.log" || true
    exit 1
}

# Poll a command until it succeeds, for at most $1 seconds.
eventually() {
    local limit=$1 start=$SECONDS
    shift
    until "$@" >/dev/null 2>&1; do
        [ $((SECONDS - start)) -lt "$limit" ] || return 1
        sleep 0.1
    done
}

free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 12000)) # below the ephemeral range
        (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}

DRUID=system:serviceaccount:etcd-druid:etcd-druid
WARDEN=system:serviceaccount:etcd-warden:warden-controller
GC=system:serviceaccount:kube-system:generic-garbage-collector
MEMBER=system:serviceaccount:shoot:etcd-main
cat >"$work/tokens.csv" <<EOF
admin-token,admin,u-admin,"system:masters"
druid-token,$DRUID,u-druid,"system:serviceaccounts"
warden-token,$WARDEN,u-warden,"system:serviceaccounts"
gc-token,$GC,u-gc,"system:serviceaccounts"
member-token,$MEMBER,u-member,"system:serviceaccounts"
alice-token,alice,u-alice,"dev"
EOF

"$src/certs/gen-certs.sh" -o "$work/certs" -n etcd-warden -s warden-webhook >/dev/null
wport=$(free_port)
"$ksim" --data-dir "$work/ksim" --token-file "$work/tokens.csv" \
    --service-alias "warden-webhook.etcd-warden=127.0.0.1:$wport" >"$work/ksim.log" 2>&1 &
pids+=($!)
eventually 20 test -s "$work/ksim/admin.kubeconfig" || fail "kube-sim did not start"
export KUBECONFIG=$work/ksim/admin.kubeconfig
eventually 20 kubectl get --raw /version || fail "kube-sim does not answer"

hport=$(free_port)
"$wh" --kubeconfig "$KUBECONFIG" --reconciler-service-account "$DRUID" \
    --reconciler-service-account "$WARDEN" \
    --etcd-components-webhook-exempt-service-accounts "$GC" \
    --webhook-server-tls-server-cert-dir "$work/certs" --webhook-server-port "$wport" \
    --webhook-server-bind-address 127.0.0.1 --metrics-bind-address 0 \
    --health-probe-bind-address "127.0.0.1:$hport" >"$work/webhook.log" 2>&1 &
pids+=($!)
whpid=$!

kubectl apply -f "$src/charts/etcd-warden/crds/druid.gardener.cloud_etcds.yaml" >/dev/null
eventually 20 kubectl get etcds -A || fail "the Etcd CRD is not served"
eventually 20 curl -sf "http://127.0.0.1:$hport/readyz" || fail "the webhook never became ready"

ca=$(base64 -w0 <"$work/certs/ca.crt")
svc() { # path
    printf 'service: {name: warden-webhook, namespace: etcd-warden, path: %s, port: 9443}\n      caBundle: %s' "$1" "$ca"
}
kubectl apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: etcd-druid
  labels: {app.kubernetes.io/name: etcd-druid}
webhooks:
- name: etcdcomponents.webhooks.druid.gardener.cloud
  admissionReviewVersions: [v1beta1, v1]
  clientConfig:
      $(svc /webhooks/etcdcomponents)
  failurePolicy: Fail
  matchPolicy: Exact
  namespaceSelector: {}
  objectSelector:
    matchLabels: {app.kubernetes.io/managed-by: etcd-druid}
  sideEffects: None
  timeoutSeconds: 10
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [serviceaccounts, services, configmaps], scope: "*"}
  - {apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [persistentvolumeclaims], scope: "*"}
  - {apiGroups: [rbac.authorization.k8s.io], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [roles, rolebindings], scope: "*"}
  - {apiGroups: [apps], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [statefulsets], scope: "*"}
  - {apiGroups: [policy], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [poddisruptionbudgets], scope: "*"}
  - {apiGroups: [batch], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [jobs], scope: "*"}
  - {apiGroups: [coordination.k8s.io], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [leases], scope: "*"}
- name: stsscale.etcdcomponents.webhooks.druid.gardener.cloud
  admissionReviewVersions: [v1beta1, v1]
  clientConfig:
      $(svc /webhooks/etcdcomponents)
  failurePolicy: Fail
  matchPolicy: Exact
  namespaceSelector: {}
  sideEffects: None
  timeoutSeconds: 10
  rules:
  - {apiGroups: [apps], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [statefulsets/scale], scope: "*"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: etcd-warden
webhooks:
- name: etcd.webhooks.etcd-warden.io
  admissionReviewVersions: [v1]
  clientConfig:
      $(svc /webhooks/etcd)
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 10
  rules:
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [UPDATE, DELETE], resources: [etcds], scope: Namespaced}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: etcd-warden
webhooks:
- name: etcd-mutate.webhooks.etcd-warden.io
  admissionReviewVersions: [v1]
  clientConfig:
      $(svc /webhooks/etcd-mutate)
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 10
  rules:
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [CREATE], resources: [etcds], scope: Namespaced}
- name: components-mutate.webhooks.etcd-warden.io
  admissionReviewVersions: [v1]
  clientConfig:
      $(svc /webhooks/etcd-mutate)
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 10
  objectSelector:
    matchLabels: {app.kubernetes.io/managed-by: etcd-druid}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [serviceaccounts, services, configmaps, persistentvolumeclaims], scope: Namespaced}
  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [statefulsets], scope: Namespaced}
EOF

as() { # token, kubectl args...
    local tok=$1
    shift
    kubectl --token "$tok-token" -n shoot "$@"
}
allowed() { # what, token, kubectl args...
    local what=$1 out
    shift
    out=$(as "$@" 2>&1) || fail "$what: refused: $out"
    echo "ok: $what"
}
denied() { # what, expected text, token, kubectl args...
    local what=$1 want=$2 out
    shift 2
    if out=$(as "$@" 2>&1); then fail "$what: allowed: $out"; fi
    grep -qF -- "$want" <<<"$out" || fail "$what: expected \"$want\" in: $out"
    [ -z "${E2E_VERBOSE:-}" ] || echo "$out"
    echo "ok: $what"
}
# As denied, retrying until the webhook's cache has caught up with a change.
denied_soon() {
    local start=$SECONDS
    until (denied "$@") >/dev/null 2>&1; do
        [ $((SECONDS - start)) -lt 10 ] || denied "$@"
        sleep 0.1
    done
    echo "ok: $1"
}

COMP='admission webhook "etcdcomponents.webhooks.druid.gardener.cloud" denied the request: '
SCALE='admission webhook "stsscale.etcdcomponents.webhooks.druid.gardener.cloud" denied the request: '
deny_msg() { # user
    echo "changes from service account $1 are disallowed at the moment. Please consider disabling component protection by setting annotation \`druid.gardener.cloud/disable-etcd-component-protection\` on the parent Etcd resource"
}

# ---- an Etcd and its components, created by etcd-druid
kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: shoot}
---
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-main, namespace: shoot}
spec: {replicas: 3, labels: {app: etcd}, etcd: {}, backup: {store: {prefix: shoot--etcd-main}}}
EOF
LABELS='{app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}'
as druid apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata: {name: etcd-main-config, labels: $LABELS}
data: {etcd.conf.yaml: "name: etcd-main"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: etcd-main-scratch, labels: $LABELS}
---
apiVersion: v1
kind: Service
metadata: {name: etcd-main-client, labels: $LABELS}
spec: {ports: [{name: client, port: 2379}]}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: etcd-main, labels: $LABELS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: etcd-main, labels: $LABELS}
rules: []
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: etcd-main-0, labels: $LABELS}
spec: {holderIdentity: etcd-main-0}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: etcd-main, labels: $LABELS}
spec: {minAvailable: 2, selector: {matchLabels: $LABELS}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: etcd-main, labels: $LABELS}
spec:
  replicas: 3
  serviceName: etcd-main-peer
  selector: {matchLabels: $LABELS}
  template:
    metadata: {labels: $LABELS}
    spec: {containers: [{name: etcd, image: etcd-wrapper}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: etcd-main-etcd-main-0, labels: $LABELS}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unmanaged}
EOF

# ---- component protection
denied "a person edits a managed ConfigMap" "$COMP$(deny_msg alice)" \
    alice label configmap etcd-main-config edited=yes
denied "a person deletes the client Service" "$COMP$(deny_msg alice)" \
    alice delete service etcd-main-client
denied "a person edits the Role" "$COMP$(deny_msg alice)" alice label role etcd-main x=y
denied "a person edits the PDB" "$COMP$(deny_msg alice)" alice label pdb etcd-main x=y
denied "a person scales the StatefulSet" "$SCALE$(deny_msg alice)" \
    alice scale statefulset etcd-main --replicas=0
denied "a person deletes a member's PVC" "$COMP$(deny_msg alice)" \
    alice delete pvc etcd-main-etcd-main-0
allowed "a person edits an unmanaged ConfigMap" alice label configmap unmanaged x=y
allowed "etcd-druid edits a managed ConfigMap" druid label configmap etcd-main-config by=druid
allowed "warden-controller edits a managed ConfigMap" warden label configmap etcd-main-config \
    by=warden --overwrite
allowed "etcd-druid scales the StatefulSet" druid scale statefulset etcd-main --replicas=3
allowed "an etcd member renews its Lease" member annotate lease etcd-main-0 renew=1
denied "an etcd member edits a ConfigMap" "$COMP$(deny_msg "$MEMBER")" \
    member label configmap etcd-main-config x=y
allowed "the exempt service account edits while the Etcd is idle" gc label service \
    etcd-main-client gc=yes

# Etcd being reconciled: the exempt service account is refused too.
kubectl -n shoot patch etcd etcd-main --subresource=status --type=merge \
    -p '{"status":{"lastOperation":{"type":"Reconcile","state":"Processing"}}}' >/dev/null
denied_soon "the exempt service account during a reconciliation" "$COMP$(deny_msg "$GC")" \
    gc label service etcd-main-client gc=again --overwrite

# Etcd being deleted: only the reconcilers and exempt accounts may delete.
kubectl -n shoot patch etcd etcd-main --subresource=status --type=merge \
    -p '{"status":{"lastOperation":{"type":"Delete","state":"Processing"}}}' >/dev/null
denied_soon "a person deletes during the deletion of the Etcd" \
    "${COMP}no external intervention allowed during ongoing deletion of Etcd etcd-main by etcd-druid" \
    alice delete configmap etcd-main-scratch
allowed "the exempt service account deletes during the deletion" gc delete configmap \
    etcd-main-scratch

# The protection annotation on the Etcd turns it off.
kubectl -n shoot annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= \
    >/dev/null
start=$SECONDS
until as alice label configmap etcd-main-config protection=off >/dev/null 2>&1; do
    [ $((SECONDS - start)) -lt 10 ] || fail "the disable annotation was not honoured"
    sleep 0.1
done
echo "ok: protection disabled by the Etcd annotation"

# ---- the restoring rules
EW='admission webhook "etcd.webhooks.etcd-warden.io" denied the request: '
kubectl apply -f - >/dev/null <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-restored
  namespace: shoot
  annotations: {etcd-warden.io/status-backup-exists: "true"}
spec: {replicas: 1, labels: {app: etcd}, etcd: {}, backup: {store: {prefix: ""}}}
EOF
got=$(kubectl -n shoot get etcd etcd-restored \
    -o jsonpath='{.metadata.labels.etcd-warden\.io/restoring}|{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')
[ "$got" = "|true" ] || fail "the mutating webhook did not mark the restored Etcd: '$got'"
kubectl -n shoot get etcd etcd-restored -o jsonpath='{.metadata.labels}' |
    grep -q '"etcd-warden.io/restoring":""' || fail "no restoring label"
echo "ok: a re-created Etcd is marked restoring and suspended"

denied "a spec change while restoring" \
    "spec changes not allowed while etcd-warden.io/restoring label exists" \
    admin patch etcd etcd-restored --type=merge -p '{"spec":{"replicas":3}}'
# KubeDirector's form: the reasons start on a new line after the API server's prefix.
out=$(kubectl -n shoot patch etcd etcd-restored --type=merge -p '{"spec":{"replicas":3}}' 2>&1) || true
[ "$out" = "Error from server (Forbidden): $EW
spec changes not allowed while etcd-warden.io/restoring label exists" ] ||
    fail "unexpected form of the restoring denial: $out"
denied "a delete while restoring" \
    "delete not allowed while etcd-warden.io/restoring label exists, unless etcd-warden.io/allow-delete-while-restoring label also exists" \
    admin delete etcd etcd-restored
denied "leaving the restoring state with an invalid Etcd" \
    "etcd-warden.io/restoring label cannot be removed: spec.backup.store.prefix is missing although a store is set" \
    admin label etcd etcd-restored etcd-warden.io/restoring-
denied "leaving the restoring state together with a spec change" \
    "spec changes not allowed while etcd-warden.io/restoring label exists" admin patch etcd etcd-restored --type=merge \
    -p '{"metadata":{"labels":{"etcd-warden.io/restoring":null}},"spec":{"backup":{"store":{"prefix":"shoot--r"}}}}'
allowed "a metadata edit while restoring" admin label etcd etcd-restored team=storage
allowed "the allow-delete label while restoring" admin label etcd etcd-restored \
    etcd-warden.io/allow-delete-while-restoring=
allowed "a delete with the allow-delete label" admin delete etcd etcd-restored

kubectl apply -f - >/dev/null <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-back
  namespace: shoot
  annotations: {etcd-warden.io/status-backup-exists: "false"}
  labels: {team: storage}
spec: {replicas: 1, labels: {app: etcd}, etcd: {}, backup: {store: {prefix: shoot--etcd-back}}}
EOF
kubectl -n shoot get etcd etcd-back -o jsonpath='{.metadata.labels}' |
    grep -q '"etcd-warden.io/restoring":""' || fail "no restoring label next to existing labels"
allowed "leaving the restoring state with a valid Etcd" admin label etcd etcd-back \
    etcd-warden.io/restoring-
allowed "a spec change once restored" admin patch etcd etcd-back --type=merge \
    -p '{"spec":{"replicas":3}}'

# ---- owner references of restored components
uid=$(kubectl -n shoot get etcd etcd-back -o jsonpath='{.metadata.uid}')
ref() { # uid
    echo "{apiVersion: druid.gardener.cloud/v1alpha1, kind: Etcd, name: etcd-back, uid: $1, controller: true}"
}
BACK='{app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-back}'
as druid apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata: {name: restored-stale, labels: $BACK, ownerReferences: [$(ref 0000-old-uid)]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: restored-live, labels: $BACK, ownerReferences: [$(ref "$uid")]}
EOF
got=$(as druid get configmap restored-stale -o jsonpath='{.metadata.ownerReferences}')
[ -z "$got" ] || fail "the stale owner reference was kept: $got"
got=$(as druid get configmap restored-live -o jsonpath='{.metadata.ownerReferences[0].uid}')
[ "$got" = "$uid" ] || fail "the live owner reference was dropped: '$got'"
echo "ok: stale owner references dropped, live ones kept"

# ---- the webhook logs the review uid; SIGTERM drains and exits
grep -q '"msg":"admission review".*"uid":"[0-9a-f-]\{8,\}"' "$work/webhook.log" ||
    fail "no review log line with a uid"
kill -TERM "$whpid"
wait "$whpid" || fail "warden-webhook exited with $? on SIGTERM"
grep -q 'webhook server stopped' "$work/webhook.log" || fail "no drain on SIGTERM"
# A sanitizer build reports leaks and errors at exit: show them (CTest fails on the report).
if grep -qE 'Sanitizer|runtime error' "$work/webhook.log"; then
    grep -vE '^\{' "$work/webhook.log"
    fail "sanitizer report from warden-webhook"
fi
echo "webhook_kubectl: all checks passed"
