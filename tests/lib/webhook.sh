# Helpers for end-to-end scripts that run warden-webhook in front of kube-sim. Source this
# file (it sources kubesim.sh, whose helpers it uses):
#
#   . "$(dirname "$0")/../lib/webhook.sh"
#   wh_init                           # temporary directory and free ports
#   wh_certs                          # development certificates (certs/gen-certs.sh)
#   kubesim_start --service-alias "$(wh_alias)" [kube-sim flags]
#   wh_etcd_crd                       # the Etcd and EtcdOpsTask CRDs, applied and served
#   wh_etcd NS NAME                   # namespace NS and an Etcd NAME in it
#   kc apply -f - <<EOF ... $(wh_statefulset NAME) ... EOF   # its StatefulSet
#   wh_start [warden-webhook flags]   # start it and wait for /readyz
#   kc apply -f - <<EOF ... $(wh_webhook NAME PATH) ... EOF
#   wh_register_etcd [--components]  # the etcd-warden webhook configurations
#   wh_restored_etcd NS NAME VALUE BACKUP [LABELS]   # an Etcd re-created from a backup
#   wh_is_restoring NS NAME           # does it carry the restoring label?
#   wh_await_admitted SECS WHAT CMD...  # until a server-side dry run of CMD is admitted
#   wh_fail "message"                 # FAIL, the tail of the webhook log, exit 1
#   wh_stop                           # SIGTERM: must exit 0, no sanitizer report in its log
#
# Variables (wh_init sets the first three; the rest may be set before the calls):
#   WH_DIR          temporary directory, removed on exit (certs/, webhook.log)
#   WH_PORT         HTTPS port of the webhook server on 127.0.0.1
#   WH_HEALTH_PORT  plain-HTTP port of /healthz and /readyz
#   WH_LOG          the webhook's output, appended by every wh_start ($WH_DIR/webhook.log)
#   WH_PID          process id of the running webhook (wh_start)
#   WH_CA_BUNDLE    base64 of the CA for caBundle (wh_certs); empty: no caBundle is written
#   WH_SERVICE      Service name in certificates and configurations (warden-webhook)
#   WH_NAMESPACE    its namespace (etcd-warden)
#   WH_READY_SECONDS  how long wh_start waits for /readyz (30)
#
# The warden-webhook binary is $WARDEN_WEBHOOK (set by CTest), else found under
# $WARDEN_BINARY_DIR or the usual build directories.

# shellcheck source=kubesim.sh
. "$(dirname "${BASH_SOURCE[0]}")/kubesim.sh"

WH_SERVICE=${WH_SERVICE:-warden-webhook}
WH_NAMESPACE=${WH_NAMESPACE:-etcd-warden}
WH_CA_BUNDLE=${WH_CA_BUNDLE:-}
WH_READY_SECONDS=${WH_READY_SECONDS:-30}
WH_PID=""
_wh_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Print "FAIL: message" and the last lines of the webhook log, then exit 1.
wh_fail() {
    echo "FAIL: $*" >&2
    if [ -n "${WH_LOG:-}" ] && [ -f "$WH_LOG" ]; then
        echo "--- webhook log (last 20 lines)" >&2
        tail -20 "$WH_LOG" >&2 || true
    fi
    exit 1
}

# kubectl in namespace WH_AS_NS (default shoot) as the user of the token TOKEN-token.
#   wh_as TOKEN KUBECTL-ARGS...
wh_as() {
    local tok=$1
    shift
    kc_as "$tok-token" -n "${WH_AS_NS:-shoot}" "$@"
}

# wh_as ... must go through: "ok: WHAT", else wh_fail with what kubectl printed.
#   wh_allowed WHAT TOKEN KUBECTL-ARGS...
wh_allowed() {
    local what=$1 out
    shift
    out=$(wh_as "$@" 2>&1) || wh_fail "$what: refused: $out"
    echo "ok: $what"
}

# wh_as ... must be refused with TEXT in what kubectl prints (shown with E2E_VERBOSE set):
# "ok: WHAT", else wh_fail.
#   wh_denied WHAT TEXT TOKEN KUBECTL-ARGS...
wh_denied() {
    local what=$1 want=$2 out
    shift 2
    if out=$(wh_as "$@" 2>&1); then wh_fail "$what: allowed: $out"; fi
    grep -qF -- "$want" <<<"$out" || wh_fail "$what: expected \"$want\" in: $out"
    [ -z "${E2E_VERBOSE:-}" ] || echo "$out"
    echo "ok: $what"
}

_wh_binary() {
    local c
    if [ -n "${WARDEN_WEBHOOK:-}" ] && [ -x "$WARDEN_WEBHOOK" ]; then
        echo "$WARDEN_WEBHOOK"; return 0
    fi
    for c in "${WARDEN_BINARY_DIR:-/nonexistent}/webhook/warden-webhook" \
             "$_wh_root"/build/debug/webhook/warden-webhook "$_wh_root"/build*/webhook/warden-webhook; do
        [ -x "$c" ] && { echo "$c"; return 0; }
    done
    echo "warden-webhook binary not found (set WARDEN_WEBHOOK)" >&2
    return 1
}

# A free port (free_port, ports.sh), never one handed out before in this test once WH_DIR
# exists.
wh_free_port() {
    free_port "${WH_DIR:+$WH_DIR/ports}"
}

# Create WH_DIR and pick WH_PORT and WH_HEALTH_PORT (before kube-sim starts: its
# --service-alias needs the webhook's port).
wh_init() {
    WH_BIN=$(_wh_binary) || exit 1
    WH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/warden-webhook.XXXXXX")
    ksim_on_exit "rm -rf '$WH_DIR'"
    WH_LOG=$WH_DIR/webhook.log
    WH_PORT=$(wh_free_port)
    WH_HEALTH_PORT=$(wh_free_port)
    while [ "$WH_HEALTH_PORT" = "$WH_PORT" ]; do WH_HEALTH_PORT=$(wh_free_port); done
    WH_METRICS_PORT=$(wh_free_port)
    while [ "$WH_METRICS_PORT" = "$WH_PORT" ] || [ "$WH_METRICS_PORT" = "$WH_HEALTH_PORT" ]; do
        WH_METRICS_PORT=$(wh_free_port)
    done
    export WH_DIR WH_LOG WH_PORT WH_HEALTH_PORT WH_METRICS_PORT WH_BIN
}

# The --service-alias of kube-sim that sends calls for the webhook Service to WH_PORT.
wh_alias() {
    echo "$WH_SERVICE.$WH_NAMESPACE=127.0.0.1:$WH_PORT"
}

# Development certificates for the webhook Service in $WH_DIR/certs (tls.crt, tls.key,
# ca.crt: the layout of --webhook-server-tls-server-cert-dir); sets WH_CA_BUNDLE.
wh_certs() {
    "$_wh_root/certs/gen-certs.sh" -o "$WH_DIR/certs" -n "$WH_NAMESPACE" -s "$WH_SERVICE" \
        >/dev/null || wh_fail "certs/gen-certs.sh failed"
    WH_CA_BUNDLE=$(base64 -w0 <"$WH_DIR/certs/ca.crt")
}

# Apply the chart's Etcd and EtcdOpsTask CRDs (the webhook caches both) and wait until
# kube-sim serves them.
wh_etcd_crd() {
    kc apply -f "$_wh_root/charts/etcd-warden/crds/druid.gardener.cloud_etcds.yaml" >/dev/null
    kc apply -f "$_wh_root/charts/etcd-warden/crds/druid.gardener.cloud_etcdopstasks.yaml" >/dev/null
    ksim_wait 20 kc get etcds,etcdopstasks -A || wh_fail "the Etcd CRDs are not served"
}

# The labels of a component of Etcd NAME managed by etcd-druid (YAML flow map).
#   wh_managed_labels NAME
wh_managed_labels() {
    echo "{app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $1}"
}

# Apply namespace NS and in it Etcd NAME as etcd-druid's users write one: three
# replicas, backup store prefix NS--NAME.
#   wh_etcd NS NAME
wh_etcd() {
    kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: $1}
---
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec: {replicas: 3, labels: {app: etcd}, etcd: {}, backup: {store: {prefix: $1--$2}}}
EOF
}

# Print the YAML document of the StatefulSet of Etcd NAME as etcd-druid creates it
# (managed labels, three replicas, no namespace: apply it with -n).
#   wh_statefulset NAME
wh_statefulset() {
    local labels
    labels=$(wh_managed_labels "$1")
    cat <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $1, labels: $labels}
spec:
  replicas: 3
  serviceName: $1-peer
  selector: {matchLabels: $labels}
  template:
    metadata: {labels: $labels}
    spec:
      containers:
      - {name: etcd, image: etcd-wrapper}
      - {name: backup-restore, image: etcdbrctl, args: [server], volumeMounts: [{name: etcd-config-file, mountPath: /var/etcd/config/}]}
      volumes:
      - {name: etcd-config-file, configMap: {name: $1-config, items: [{key: etcd.conf.yaml, path: etcd.conf.yaml}]}}
EOF
}

_wh_cleanup() {
    [ -n "$WH_PID" ] || return 0
    reap_child "$WH_PID" 10 || true
    WH_PID=""
}

# Start warden-webhook against kube-sim (--kubeconfig $KUBECONFIG) on WH_PORT, with its
# probes on WH_HEALTH_PORT and its metrics on WH_METRICS_PORT, plus the given flags (a later
# flag wins: --metrics-bind-address ADDR moves the metrics, WH_METRICS_ADDR says where, "0"
# none); its output is appended to WH_LOG.
# Returns once /readyz answers (WH_READY_SECONDS deadline, else wh_fail).
wh_start() {
    local a next=""
    WH_METRICS_ADDR=127.0.0.1:$WH_METRICS_PORT
    for a in "$@"; do
        if [ "$next" = 1 ]; then WH_METRICS_ADDR=$a; next=""; fi
        case $a in
        --metrics-bind-address) next=1 ;;
        --metrics-bind-address=*) WH_METRICS_ADDR=${a#*=} ;;
        esac
    done
    "$WH_BIN" --kubeconfig "$KUBECONFIG" --webhook-server-port "$WH_PORT" \
        --webhook-server-bind-address 127.0.0.1 --metrics-bind-address "127.0.0.1:$WH_METRICS_PORT" \
        --health-probe-bind-address "127.0.0.1:$WH_HEALTH_PORT" "$@" >>"$WH_LOG" 2>&1 &
    WH_PID=$!
    ksim_on_exit _wh_cleanup
    ksim_wait "$WH_READY_SECONDS" curl -sf "http://127.0.0.1:$WH_HEALTH_PORT/readyz" ||
        wh_fail "the webhook never became ready"
}

# Wait (SECS, scaled by ksim_secs) until a server-side dry run of the kubectl command CMD (kc,
# kc_as, wh_as, kc_druid ...; no stdin) is admitted, else wh_fail "WHAT". The webhook decides
# from watch-fed caches, which see a change made just before (an annotation, a status) some
# time after the API server stored it: a request that is admitted only once they do is made
# after this, never after a sleep. The dry run changes nothing.
#   wh_await_admitted SECS WHAT CMD...
wh_await_admitted() {
    local secs=$1 what=$2
    shift 2
    ksim_wait "$secs" "$@" --dry-run=server >/dev/null ||
        wh_fail "$what (a dry run, for $(ksim_secs "$secs") s: the webhook's caches never saw the change)"
}

# Wait (SECS, default 30, scaled by ksim_secs) until every cache of warden-webhook has applied
# all that the API server stored before the call, else wh_fail. A fence, not a sleep: the
# API server's revision now (a LIST's resourceVersion) against each cache's
# (warden_webhook_cache_resource_version; kube-sim's watch bookmarks carry its revision once a
# watcher has nothing left to send, every KSIM_BOOKMARK_INTERVAL). For a request that must be
# decided on what was just written (a refusal after a change; an admission: wh_await_admitted).
#   wh_caught_up [SECS]
wh_caught_up() {
    local secs=${1:-30} fence
    case ${WH_METRICS_ADDR:-0} in 0 | *:0) wh_fail "wh_caught_up: warden-webhook has no metrics listener" ;; esac
    fence=$(kc get --raw '/api/v1/namespaces?limit=1' | jq -er '.metadata.resourceVersion') ||
        wh_fail "wh_caught_up: no resourceVersion from the API server"
    ksim_wait "$secs" _wh_rv_at_least "$fence" ||
        wh_fail "warden-webhook's caches did not reach resourceVersion $fence in $(ksim_secs "$secs") s: $(curl -sf "http://$WH_METRICS_ADDR/metrics" | grep '^warden_webhook_cache_resource_version' | tr '\n' ' ')"
}
_wh_rv_at_least() {
    curl -sf "http://$WH_METRICS_ADDR/metrics" | awk -v f="$1" '
        /^warden_webhook_cache_resource_version\{/ { n++; if ($NF + 0 < f + 0) low = 1 }
        END { exit !(n > 0 && !low) }'
}

# SIGTERM the webhook; fail unless it exits 0 and its log holds no sanitizer report
# (a sanitizer build reports leaks and errors at exit).
wh_stop() {
    local status=0
    reap_child "$WH_PID" 20 || status=$?
    WH_PID=""
    [ "$status" -eq 0 ] || wh_fail "warden-webhook exited with $status on SIGTERM"
    if grep -qE 'Sanitizer|runtime error' "$WH_LOG"; then
        grep -vE '^\{' "$WH_LOG" >&2
        wh_fail "sanitizer report from warden-webhook"
    fi
}

# The first lines of one entry of a webhook configuration's "webhooks" list (YAML, two
# spaces deep): name, admissionReviewVersions (VERSIONS, default v1), the webhook Service
# at PATH with caBundle WH_CA_BUNDLE when set, failurePolicy Fail, sideEffects None,
# timeoutSeconds 10. The caller adds rules and selectors below it.
#   wh_webhook NAME PATH [VERSIONS]
wh_webhook() {
    echo "- name: $1"
    echo "  admissionReviewVersions: [${3:-v1}]"
    echo "  clientConfig:"
    echo "    service: {name: $WH_SERVICE, namespace: $WH_NAMESPACE, path: $2, port: 443}"
    [ -z "$WH_CA_BUNDLE" ] || echo "    caBundle: $WH_CA_BUNDLE"
    echo "  failurePolicy: Fail"
    echo "  sideEffects: None"
    echo "  timeoutSeconds: 10"
}

# The chart's members entry (componentProtection on): StatefulSet CREATE/UPDATE/DELETE and PVC
# UPDATE/DELETE without the managed-by objectSelector, to /webhooks/etcdcomponents (an Etcd's
# StatefulSet and its member PVCs are recognised by name and owner as well as by labels).
# Prints the entry, for a "webhooks:" list.
wh_members_webhook() {
    wh_webhook members.etcdcomponents.webhooks.etcd-warden.io /webhooks/etcdcomponents "v1beta1, v1"
    echo "  matchPolicy: Exact"
    echo "  rules:"
    echo '  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE, DELETE], resources: [statefulsets], scope: "*"}'
    echo '  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE, DELETE], resources: [persistentvolumeclaims], scope: "*"}'
    echo '  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps], scope: Namespaced}'
}

# Register the ValidatingWebhookConfiguration "etcd-druid" as the chart registers
# etcd-druid's component protection (webhook.componentProtection, leaseUpdates on): the
# component kinds by etcd-druid's objectSelector, the members entry (StatefulSet
# CREATE/UPDATE/DELETE and PVC CREATE/UPDATE/DELETE, wh_members_webhook) without it, and the
# StatefulSet scale subresource, pointed at warden-webhook.
wh_register_druid() {
    kc apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: etcd-druid
  labels: {app.kubernetes.io/name: etcd-druid}
webhooks:
$(wh_webhook etcdcomponents.webhooks.druid.gardener.cloud /webhooks/etcdcomponents "v1beta1, v1")
  matchPolicy: Exact
  namespaceSelector: {}
  objectSelector:
    matchLabels: {app.kubernetes.io/managed-by: etcd-druid}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [serviceaccounts, services, configmaps], scope: "*"}
  - {apiGroups: [rbac.authorization.k8s.io], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [roles, rolebindings], scope: "*"}
  - {apiGroups: [policy], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [poddisruptionbudgets], scope: "*"}
  - {apiGroups: [batch], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [jobs], scope: "*"}
  - {apiGroups: [coordination.k8s.io], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [leases], scope: "*"}
$(wh_members_webhook)
$(wh_webhook stsscale.etcdcomponents.webhooks.druid.gardener.cloud /webhooks/etcdcomponents "v1beta1, v1")
  matchPolicy: Exact
  namespaceSelector: {}
  rules:
  - {apiGroups: [apps], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [statefulsets/scale], scope: "*"}
EOF
}

# Register the ValidatingWebhookConfiguration "etcd-warden-backups": EtcdBackup,
# EtcdBackupSchedule and EtcdRestore CREATE and UPDATE to /webhooks/backups (their
# destinations' and restore targets' claims at admission).
wh_register_backups() {
    kc apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: etcd-warden-backups}
webhooks:
$(wh_webhook backups.webhooks.etcd-warden.io /webhooks/backups)
  rules:
  - {apiGroups: [etcd-warden.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [etcdbackups, etcdbackupschedules, etcdrestores], scope: Namespaced}
EOF
}

# Register the ValidatingWebhookConfiguration "etcd-warden" as the chart registers component
# protection with its defaults (leaseUpdates off: member Leases' DELETE only), the members
# entry (wh_members_webhook), the StatefulSet scale subresource, and /webhooks/etcd for Etcd
# CREATE, UPDATE, DELETE and etcds/scale: the guard's every path, in one configuration.
wh_register_guard() {
    kc apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: etcd-warden}
webhooks:
$(wh_webhook etcdcomponents.webhooks.druid.gardener.cloud /webhooks/etcdcomponents "v1beta1, v1")
  matchPolicy: Exact
  objectSelector:
    matchLabels: {app.kubernetes.io/managed-by: etcd-druid}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [serviceaccounts, services, configmaps], scope: "*"}
  - {apiGroups: [rbac.authorization.k8s.io], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [roles, rolebindings], scope: "*"}
  - {apiGroups: [policy], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [poddisruptionbudgets], scope: "*"}
  - {apiGroups: [batch], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [jobs], scope: "*"}
  - {apiGroups: [coordination.k8s.io], apiVersions: [v1], operations: [DELETE], resources: [leases], scope: "*"}
$(wh_members_webhook)
$(wh_webhook stsscale.etcdcomponents.webhooks.druid.gardener.cloud /webhooks/etcdcomponents "v1beta1, v1")
  matchPolicy: Exact
  rules:
  - {apiGroups: [apps], apiVersions: [v1], operations: [UPDATE, DELETE], resources: [statefulsets/scale], scope: "*"}
$(wh_webhook etcd.webhooks.etcd-warden.io /webhooks/etcd)
  matchPolicy: Equivalent
  rules:
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [CREATE, UPDATE, DELETE], resources: [etcds], scope: Namespaced}
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [UPDATE], resources: [etcds/scale], scope: Namespaced}
EOF
}

# Register the ValidatingWebhookConfiguration and MutatingWebhookConfiguration
# "etcd-warden": Etcd UPDATE and DELETE to /webhooks/etcd, Etcd CREATE
# and UPDATE to /webhooks/etcd-mutate, and with --components the CREATE of managed components
# (objectSelector managed-by etcd-druid) to /webhooks/etcd-mutate as well.
wh_register_etcd() {
    local components=""
    if [ "${1:-}" = --components ]; then
        components="$(wh_webhook components-mutate.webhooks.etcd-warden.io /webhooks/etcd-mutate)
  objectSelector:
    matchLabels: {app.kubernetes.io/managed-by: etcd-druid}
  rules:
  - {apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [serviceaccounts, services, configmaps, persistentvolumeclaims], scope: Namespaced}
  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [statefulsets], scope: Namespaced}"
    fi
    kc apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: etcd-warden}
webhooks:
$(wh_webhook etcd.webhooks.etcd-warden.io /webhooks/etcd)
  rules:
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [CREATE, UPDATE, DELETE], resources: [etcds], scope: Namespaced}
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [UPDATE], resources: [etcds/scale], scope: Namespaced}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: etcd-warden}
webhooks:
$(wh_webhook etcd-mutate.webhooks.etcd-warden.io /webhooks/etcd-mutate)
  rules:
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [etcds], scope: Namespaced}
  - {apiGroups: [etcd-warden.io], apiVersions: [v1alpha1], operations: [CREATE], resources: [etcdstatusbackups], scope: Namespaced}
$components
EOF
}

# Apply Etcd NAME in namespace NS as a restore re-creates it: annotation
# etcd-warden.io/status-backup-exists VALUE, one replica, spec.backup BACKUP (YAML flow
# map) and, when given, the labels LABELS (YAML flow map).
#   wh_restored_etcd NS NAME VALUE BACKUP [LABELS]
wh_restored_etcd() {
    kc apply -f - >/dev/null <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: $2
  namespace: $1
  annotations: {etcd-warden.io/status-backup-exists: "$3"}
${5:+  labels: $5}
spec: {replicas: 1, labels: {app: etcd}, etcd: {}, backup: $4}
EOF
}

# Succeeds when Etcd NAME in NS carries the restoring label (empty value).
#   wh_is_restoring NS NAME
wh_is_restoring() {
    kc -n "$1" get etcd "$2" -o jsonpath='{.metadata.labels}' |
        grep -q '"etcd-warden.io/restoring":""'
}
