#!/usr/bin/env bash
# The chart rendered without helm (tests/chart/charttool: text/template + sprig +
# Helm's built-ins) with its defaults and every value set of tests/chart/values:
# every manifest parses and is a known, complete object; every container flag is
# one its binary's --help lists; the RBAC of each process is exactly the API
# calls a scan of its code finds; the values pass values.schema.json. Then the
# checks are shown to fail on broken input, and bad values (typos, out of enum,
# type or range) to stop the render with their message. Every field of the
# project's CRDs has a description.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../lib/chart.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/chart-render.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

chart_tool
chart_tool_test
"$CHARTTOOL" values-doc "$CHART_DIR/values.yaml" || fail "values.yaml"
printf 'a:\n  # doc\n  b: 1\nc: 2\n' >"$work/undoc.yaml"
if "$CHARTTOOL" values-doc "$work/undoc.yaml" >/dev/null 2>&1; then fail "an undocumented value passed"; fi
read -r -a binaries <<<"$(chart_binaries | tr '\n' ' ')"
read -r -a procs <<<"$(chart_processes | tr '\n' ' ')"
chart_controller_ready || fail "warden-controller is not built"

for v in "$root"/tests/chart/values/*.yaml; do
    name=$(basename "$v" .yaml)
    out=$work/$name.yaml
    chart_render "$out" -f "$v" || fail "$name: render failed"
    without=()
    grep -q 'mode: \(secret\|certManager\)' "$v" && without=(--without webhook/wh_selftls.c)
    grep -q 'opsTaskExecutor: false' "$v" &&
        without+=(--without controller/hibernation/otask.c --without controller/hibernation/otask_ctl.c)
    "$CHARTTOOL" check "$out" "${binaries[@]}" >"$work/check.log" 2>&1 ||
        { cat "$work/check.log"; fail "$name: manifest check"; }
    "$CHARTTOOL" rbac "$out" --src "$root" "${procs[@]}" "${without[@]}" >"$work/rbac.log" 2>&1 ||
        { cat "$work/rbac.log"; fail "$name: RBAC check"; }
    echo "ok $name: $(tail -1 "$work/check.log"); $(paste -sd";" "$work/rbac.log")"
done

# What each value set must change.
expect() { [ "$2" = "$3" ] || fail "$1: want $2, got $3"; }
r=$work
expect "default CRDs" '"etcdstatusbackups.etcd-warden.io"' \
    "$(chart_get "$r/defaults.yaml" CustomResourceDefinition etcdstatusbackups.etcd-warden.io metadata.name)"
chart_get "$r/defaults.yaml" CustomResourceDefinition etcds.druid.gardener.cloud . >/dev/null 2>&1 &&
    fail "the Etcd CRD is rendered by default"
chart_get "$r/crds-all.yaml" CustomResourceDefinition etcds.druid.gardener.cloud metadata.name >/dev/null ||
    fail "crds.etcd does not render the Etcd CRD"
# etcd-druid's rule on spec.replicas (grow, or go to 0), as its own Etcd CRD has it
python3 - "$r/crds-all.yaml" <<'PY' || fail "the Etcd CRD lacks etcd-druid's rule on spec.replicas"
import sys, yaml
want = {"message": "Replicas can either be increased or be downscaled to 0.",
        "rule": "self==0 ? true : self < oldSelf ? false : true"}
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "CustomResourceDefinition" and d["metadata"]["name"] == "etcds.druid.gardener.cloud":
        for v in d["spec"]["versions"]:
            r = v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"]
            if want not in r.get("x-kubernetes-validations", []):
                sys.exit(1)
        sys.exit(0)
sys.exit(1)
PY
# and its rules making spec.volumeClaimTemplate immutable (set, changed or removed)
python3 - "$r/crds-all.yaml" <<'PY' || fail "the Etcd CRD lacks etcd-druid's rules on spec.volumeClaimTemplate"
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "CustomResourceDefinition" and d["metadata"]["name"] == "etcds.druid.gardener.cloud":
        for v in d["spec"]["versions"]:
            spec = v["schema"]["openAPIV3Schema"]["properties"]["spec"]
            vct = spec["properties"]["volumeClaimTemplate"]
            if {"message": "etcd.spec.VolumeClaimTemplate is an immutable field",
                "rule": "self == oldSelf"} not in vct.get("x-kubernetes-validations", []):
                sys.exit(1)
            if not any(r.get("rule") == "has(oldSelf.volumeClaimTemplate) == has(self.volumeClaimTemplate)"
                       for r in spec.get("x-kubernetes-validations", [])):
                sys.exit(1)
        sys.exit(0)
sys.exit(1)
PY
chart_get "$r/crds-all.yaml" CustomResourceDefinition etcdopstasks.druid.gardener.cloud metadata.name >/dev/null ||
    fail "crds.etcdOpsTask does not render the EtcdOpsTask CRD"
! grep -q 'kind: CustomResourceDefinition' "$r/crds-none.yaml" || fail "crds-none renders a CRD"
expect "default webhooks" '["etcdcomponents.webhooks.druid.gardener.cloud","stsscale.etcdcomponents.webhooks.druid.gardener.cloud","etcd.webhooks.etcd-warden.io","backups.webhooks.etcd-warden.io","members.etcdcomponents.webhooks.etcd-warden.io"]' \
    "$(chart_get "$r/defaults.yaml" ValidatingWebhookConfiguration etcd-warden webhooks | grep -o '"name":"[a-z.-]*webhooks[a-z.-]*"' | sed 's/"name"://' | paste -sd, | sed 's/^/[/;s/$/]/')"
expect "backup destinations webhook" '"/webhooks/backups" [{"apiGroups":["etcd-warden.io"],"apiVersions":["v1alpha1"],"operations":["CREATE","UPDATE"],"resources":["etcdbackups","etcdbackupschedules","etcdrestores"],"scope":"Namespaced"}]' \
    "$(chart_get "$r/defaults.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.3.clientConfig.service.path) $(chart_get "$r/defaults.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.3.rules)"
expect "the Etcd webhook records claims, never on a dry run" '"NoneOnDryRun"' \
    "$(chart_get "$r/defaults.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.2.sideEffects)"
expect "component objectSelector" '{"matchLabels":{"app.kubernetes.io/managed-by":"etcd-druid"}}' \
    "$(chart_get "$r/defaults.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.0.objectSelector)"
expect "scale webhook has no objectSelector" null \
    "$(chart_get "$r/defaults.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.1.objectSelector)"
# StatefulSets and PVCs without the objectSelector: recognised by name and owner as well; the
# ConfigMaps <etcd>-config by name (a tenant's own of that name too)
expect "members webhook: no objectSelector, StatefulSets, PVCs and etcd's configuration" 'null [{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE","UPDATE","DELETE"],"resources":["statefulsets"],"scope":"*"},{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE","DELETE"],"resources":["persistentvolumeclaims"],"scope":"*"},{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["configmaps"],"scope":"Namespaced"}]' \
    "$(chart_get "$r/defaults.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.4.objectSelector) $(chart_get "$r/defaults.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.4.rules)"
expect "own namespace excluded" '["etcd-warden"]' \
    "$(chart_get "$r/defaults.yaml" MutatingWebhookConfiguration etcd-warden webhooks.1.namespaceSelector.matchExpressions.0.values)"
hook_names() { # file: the validating webhooks' names as a JSON list
    chart_get "$1" ValidatingWebhookConfiguration etcd-warden webhooks | grep -o '"name":"[a-z.-]*webhooks[a-z.-]*"' |
        sed 's/"name"://' | paste -sd, | sed 's/^/[/;s/$/]/'
}
# componentProtection off: the scale-down guard alone (webhook.scaleDownGuard, on), on its own
# path; StatefulSets and their scale without an objectSelector (recognised by name and owner too).
expect "componentProtection off" '["scaleguard.webhooks.etcd-warden.io","stsscale.scaleguard.webhooks.etcd-warden.io","members.scaleguard.webhooks.etcd-warden.io","etcd.webhooks.etcd-warden.io","backups.webhooks.etcd-warden.io"]' \
    "$(hook_names "$r/crds-none.yaml")"
expect "scale guard path" '"/webhooks/scaleguard" "/webhooks/scaleguard"' \
    "$(chart_get "$r/crds-none.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.0.clientConfig.service.path) $(chart_get "$r/crds-none.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.1.clientConfig.service.path)"
expect "scale guard has no objectSelector (StatefulSets by name and owner too)" null \
    "$(chart_get "$r/crds-none.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.0.objectSelector)"
expect "scale guard rules" '[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE","UPDATE","DELETE"],"resources":["statefulsets"],"scope":"*"}] [{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["UPDATE"],"resources":["statefulsets/scale"],"scope":"*"}]' \
    "$(chart_get "$r/crds-none.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.0.rules) $(chart_get "$r/crds-none.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.1.rules)"
expect "scale guard's scale entry has no objectSelector" null \
    "$(chart_get "$r/crds-none.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.1.objectSelector)"
# the member-volume guard in every mode: PVC DELETEs, no objectSelector (by name and owner too),
# and etcd's configuration (its data-dir on the claims)
expect "member-volume guard" '"/webhooks/scaleguard" null [{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE","DELETE"],"resources":["persistentvolumeclaims"],"scope":"*"},{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["configmaps"],"scope":"Namespaced"}]' \
    "$(chart_get "$r/crds-none.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.2.clientConfig.service.path) $(chart_get "$r/crds-none.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.2.objectSelector) $(chart_get "$r/crds-none.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.2.rules)"
expect "scaleDownGuard off: the member-volume guard stays" '["members.scaleguard.webhooks.etcd-warden.io","etcd.webhooks.etcd-warden.io","backups.webhooks.etcd-warden.io"]' "$(hook_names "$r/no-scale-guard.yaml")"
# the StatefulSets routed to warden-webhook (component protection or the scale-down guard): the
# Local directories they mount are judged, and a claim no StatefulSet may mount blocks nobody
guard_flag() { chart_get "$1" Deployment warden-webhook spec.template.spec.containers.0.args | grep -o '"--local-volume-guard=[a-z]*"'; }
expect "StatefulSets routed: --local-volume-guard" '"--local-volume-guard=true" "--local-volume-guard=true"' \
    "$(guard_flag "$r/defaults.yaml") $(guard_flag "$r/crds-none.yaml")"
expect "StatefulSets not routed: no --local-volume-guard" '"--local-volume-guard=false"' "$(guard_flag "$r/no-scale-guard.yaml")"
expect "a watch namespace limits the webhooks to it" '{"key":"kubernetes.io/metadata.name","operator":"In","values":["shoot--dev--one"]}' \
    "$(chart_get "$r/watch-namespace.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.0.namespaceSelector.matchExpressions.0)"
expect "prefix claims are cluster-wide: the Etcd and backups webhooks see every namespace" \
    '{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["etcd-warden"]} {"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["etcd-warden"]}' \
    "$(chart_get "$r/watch-namespace.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.2.namespaceSelector.matchExpressions.0) $(chart_get "$r/watch-namespace.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.3.namespaceSelector.matchExpressions.0)"
expect "failurePolicy value" '"Ignore"' \
    "$(chart_get "$r/watch-namespace.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.2.failurePolicy)"
expect "timeoutSeconds value" 5 \
    "$(chart_get "$r/watch-namespace.yaml" MutatingWebhookConfiguration etcd-warden webhooks.0.timeoutSeconds)"
args=$(chart_get "$r/defaults.yaml" Deployment warden-webhook spec.template.spec.containers.0.args)
case "$args" in *'"--self-provision-tls"'*'"--validating-webhook-configuration=etcd-warden"'*) ;;
*) fail "self mode webhook args: $args" ;; esac
case "$args" in *'system:serviceaccount:etcd-warden:warden-controller'*) ;;
*) fail "the controller is no trusted reconciler: $args" ;; esac
args=$(chart_get "$r/defaults.yaml" Deployment warden-controller spec.template.spec.containers.0.args)
case "$args" in *'"--immutability-task-image=etcd-warden/controller:0.1.0"'*'"--immutability-task-command=warden-snapshot extend-snapshot-immutability"'*) ;;
*) fail "immutability task flags: $args" ;; esac
expect "secret mode mounts the Secret" '"warden-webhook-serving"' \
    "$(chart_get "$r/tls-secret.yaml" Deployment warden-webhook spec.template.spec.volumes.0.secret.secretName)"
expect "secret mode caBundle" '"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="' \
    "$(chart_get "$r/tls-secret.yaml" ValidatingWebhookConfiguration etcd-warden webhooks.0.clientConfig.caBundle)"
chart_get "$r/tls-secret.yaml" Role warden-webhook-tls . >/dev/null 2>&1 && fail "secret mode grants Secret access"
expect "cainjector annotation" '{"cert-manager.io/inject-ca-from":"etcd-warden/warden-webhook"}' \
    "$(chart_get "$r/tls-certmanager.yaml" MutatingWebhookConfiguration etcd-warden metadata.annotations)"
expect "cert-manager serving certificate" '"warden-webhook-ca"' \
    "$(chart_get "$r/tls-certmanager.yaml" Certificate warden-webhook spec.issuerRef.name)"
expect "existing issuer" '"corp-ca"' \
    "$(chart_get "$r/tls-certmanager-issuer.yaml" Certificate warden-webhook spec.issuerRef.name)"
chart_get "$r/tls-certmanager-issuer.yaml" Issuer warden-webhook-ca . >/dev/null 2>&1 &&
    fail "an issuerRef still renders the chart's own CA"
chart_get "$r/tls-certmanager.yaml" ServiceMonitor warden-controller spec.endpoints >/dev/null ||
    fail "serviceMonitor.enabled renders no ServiceMonitor"
expect "watch namespace binding" '"shoot--dev--one"' \
    "$(chart_get "$r/watch-namespace.yaml" RoleBinding warden-controller metadata.namespace)"
chart_get "$r/watch-namespace.yaml" ClusterRoleBinding warden-controller . >/dev/null 2>&1 &&
    fail "a watch namespace still binds the controller cluster-wide"
expect "leader-election Role namespace" '"kube-system"' \
    "$(chart_get "$r/watch-namespace.yaml" Role warden-controller-leader-election metadata.namespace)"
# the claim Leases of the release namespace, where warden-webhook writes them: the controller
# records a copy's claim there before the copy Job and reads a restore's admitted target
expect "controller claims Role" "\"$CHART_NS\" [{\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"],\"verbs\":[\"get\",\"list\",\"create\",\"update\"]}]" \
    "$(chart_get "$r/watch-namespace.yaml" Role warden-controller-claims metadata.namespace) $(chart_get "$r/watch-namespace.yaml" Role warden-controller-claims rules)"
expect "controller claims RoleBinding" '"warden-controller-claims"' \
    "$(chart_get "$r/watch-namespace.yaml" RoleBinding warden-controller-claims roleRef.name)"
expect "hard anti-affinity" '"kubernetes.io/hostname"' \
    "$(chart_get "$r/watch-namespace.yaml" Deployment warden-webhook spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.0.topologyKey)"
args=$(chart_get "$r/client-auth.yaml" Deployment warden-webhook spec.template.spec.containers.0.args)
case "$args" in *'"--client-ca=/etc/webhook-client-ca/ca.crt","--client-cn=kube-apiserver"'*) ;;
*) fail "clientAuth webhook args: $args" ;; esac
expect "clientAuth mounts the CA Secret" '{"items":[{"key":"ca.crt","path":"ca.crt"}],"secretName":"apiserver-client-ca"}' \
    "$(chart_get "$r/client-auth.yaml" Deployment warden-webhook spec.template.spec.volumes.0.secret)"
case "$(chart_get "$r/defaults.yaml" Deployment warden-webhook spec.template.spec.containers.0.args)" in
*client-ca*) fail "client certificate authentication is on by default" ;; esac
printf 'webhook:\n  clientAuth:\n    enabled: true\n    caBundle: |\n      -----BEGIN CERTIFICATE-----\n      eA==\n      -----END CERTIFICATE-----\n' >"$work/ca-bundle.yaml"
chart_render "$work/client-auth-bundle.yaml" -f "$work/ca-bundle.yaml" || fail "clientAuth.caBundle does not render"
case "$(chart_get "$work/client-auth-bundle.yaml" ConfigMap warden-webhook-client-ca data)" in
*'BEGIN CERTIFICATE'*) ;; *) fail "clientAuth.caBundle renders no ConfigMap" ;; esac
expect "clientAuth.caBundle is mounted" '{"name":"warden-webhook-client-ca"}' \
    "$(chart_get "$work/client-auth-bundle.yaml" Deployment warden-webhook spec.template.spec.volumes.0.configMap)"
expect "PDB" 1 "$(chart_get "$r/defaults.yaml" PodDisruptionBudget warden-webhook spec.minAvailable)"
# What users may do: view reads every namespaced etcd-warden.io kind, edit writes backups
# and schedules, admin restores and reads the cluster-scoped kinds; each role carries the
# labels of the roles above it.
role() { chart_get "$1" ClusterRole "$2" "$3"; }
expect "view" '[{"apiGroups":["etcd-warden.io"],"resources":["etcdstatusbackups","extendfullsnapshotimmutabilitytasks","etcdbackups","etcdbackupschedules","etcdrestores","etcdrestoredrills"],"verbs":["get","list","watch"]}]' \
    "$(role "$r/defaults.yaml" etcd-warden-view rules)"
expect "edit" '[{"apiGroups":["etcd-warden.io"],"resources":["etcdbackups","etcdbackupschedules","etcdrestoredrills"],"verbs":["create","update","patch","delete","deletecollection"]}]' \
    "$(role "$r/defaults.yaml" etcd-warden-edit rules)"
expect "admin" '[{"apiGroups":["etcd-warden.io"],"resources":["etcdrestores"],"verbs":["create","update","patch","delete","deletecollection"]},{"apiGroups":["etcd-warden.io"],"resources":["backupbuckets","backupentries"],"verbs":["get","list","watch"]}]' \
    "$(role "$r/defaults.yaml" etcd-warden-admin rules)"
agg() { role "$r/defaults.yaml" "$1" metadata.labels | grep -o 'aggregate-to-[a-z]*' | sort | paste -sd' '; }
expect "view's labels" "aggregate-to-admin aggregate-to-edit aggregate-to-view" "$(agg etcd-warden-view)"
expect "edit's labels" "aggregate-to-admin aggregate-to-edit" "$(agg etcd-warden-edit)"
expect "admin's labels" "aggregate-to-admin" "$(agg etcd-warden-admin)"
# every etcd-warden.io kind the chart defines is readable by someone
plurals=$(grep -h '^ *plural:' "$CHART_DIR"/crds/etcd-warden.io_*.yaml | awk '{print $2}' | sort | paste -sd' ')
readable=$( (role "$r/defaults.yaml" etcd-warden-view rules.0.resources; role "$r/defaults.yaml" etcd-warden-admin rules.1.resources) |
    tr -d '[]"' | tr ',' '\n' | sort | paste -sd' ')
expect "every etcd-warden.io kind in the user roles" "$plurals" "$readable"
chart_render "$work/nousers.yaml" --set userRoles.enabled=false
! grep -q 'aggregate-to-' "$work/nousers.yaml" || fail "userRoles.enabled=false renders aggregated roles"
chart_render "$work/nobackups.yaml" --set backups.enabled=false --set backupEntries.enabled=false
expect "view without backups" '["etcdstatusbackups","extendfullsnapshotimmutabilitytasks"]' \
    "$(role "$work/nobackups.yaml" etcd-warden-view rules.0.resources)"
role "$work/nobackups.yaml" etcd-warden-edit . >/dev/null 2>&1 && fail "an edit role without backups"
role "$work/nobackups.yaml" etcd-warden-admin . >/dev/null 2>&1 && fail "an admin role without backups"

# Bad values stop the render with their message.
bad() {
    local want=$1 out
    shift
    if out=$(chart_render "$work/bad.yaml" "$@" 2>&1); then fail "rendered with $*"; fi
    case "$out" in *"$want"*) ;; *) fail "render with $* said: $out" ;; esac
}
bad "tls.mode must be one of the following" --set tls.mode=files
bad "tls.secret.name is required when tls.mode is secret" --set tls.mode=secret --set tls.secret.caBundle=eA==
bad "tls.secret.caBundle is required" --set tls.mode=secret --set tls.secret.name=x
bad "webhook.failurePolicy must be one of the following" --set webhook.failurePolicy=Retry
bad "- webhook.timeoutSeconds: Must be less than or equal to 30" --set webhook.timeoutSeconds=31
bad 'webhook.antiAffinity must be one of the following: "soft", "hard"' --set webhook.antiAffinity=never
printf 'webhook:\n  networkPolicy: {enabled: true, apiServer: [], metricsFrom: []}\n' >"$work/np-empty.yaml"
bad "webhook.networkPolicy.apiServer is empty" -f "$work/np-empty.yaml"
bad "webhook.clientAuth.enabled needs webhook.clientAuth.caSecret or webhook.clientAuth.caBundle" \
    --set webhook.clientAuth.enabled=true
bad "webhook.clientAuth: set caSecret or caBundle, not both" -f "$work/ca-bundle.yaml" \
    --set webhook.clientAuth.caSecret=x
bad "- webhook.clientAuth.caBundle: Does not match pattern" --set webhook.clientAuth.enabled=true \
    --set webhook.clientAuth.caBundle=notpem
bad "webhook.leaseUpdates: Invalid type" --set webhook.leaseUpdates=maybe
# values.schema.json: a typo, a value out of its enum, type or range, a duration the
# binaries cannot read; the defaults (every value set above) pass it.
bad "- webhook: Additional property failurPolicy is not allowed" --set webhook.failurPolicy=Ignore
bad "- (root): Additional property watchNamespaces is not allowed" --set watchNamespaces=a
bad '- webhook.failurePolicy: webhook.failurePolicy must be one of the following: "Fail", "Ignore"' \
    --set webhook.failurePolicy=fail
bad '- tls.mode: tls.mode must be one of the following: "self", "secret", "certManager"' --set tls.mode=Self
bad "- controller.workers: Invalid type. Expected: integer/null, given: string" --set controller.workers=four
bad "- controller.opsTaskWorkers: Must be less than or equal to 64" --set controller.opsTaskWorkers=100
bad "- controller.opsTaskCallTimeout: Does not match pattern" --set controller.opsTaskCallTimeout=10min
bad "- tls.self.certLifetime: Does not match pattern" --set "tls.self.certLifetime=1 year"
bad "- webhook.podDisruptionBudget: Additional property minAvailble is not allowed" \
    -f <(printf 'webhook:\n  podDisruptionBudget: {minAvailble: 1}\n')
# Values that render, and would break the cluster: refused with what to do.
bad "webhook.replicas 0 with webhook.failurePolicy Fail: the API server could reach no webhook" \
    --set webhook.replicas=0
chart_render "$work/ok.yaml" --set webhook.replicas=0 --set webhook.failurePolicy=Ignore ||
    fail "no webhook replica with failurePolicy Ignore does not render"
bad "webhook.podDisruptionBudget.minAvailable 2 with webhook.replicas 2: no webhook pod could ever be evicted" \
    --set webhook.podDisruptionBudget.minAvailable=2
bad "webhook.podDisruptionBudget.minAvailable 3 with webhook.replicas 2" \
    -f <(printf 'webhook:\n  podDisruptionBudget: {minAvailable: 3}\n')
bad "webhook.podDisruptionBudget.minAvailable 100%: no webhook pod could ever be evicted" \
    --set webhook.podDisruptionBudget.minAvailable=100%
chart_render "$work/ok.yaml" --set webhook.podDisruptionBudget.minAvailable=50% ||
    fail "minAvailable 50% does not render"
chart_render "$work/ok.yaml" --set webhook.replicas=1 --set webhook.podDisruptionBudget.minAvailable=1 ||
    fail "one replica (no PodDisruptionBudget rendered) does not render"
bad "controller.leaderElection.enabled false with controller.replicas 2: every replica would reconcile" \
    --set controller.leaderElection.enabled=false
chart_render "$work/ok.yaml" --set controller.leaderElection.enabled=false --set controller.replicas=1 ||
    fail "one controller without leader election does not render"
bad 'tls.certManager.renewBefore "8760h" must be shorter than tls.certManager.duration "8760h"' \
    --set tls.mode=certManager --set tls.certManager.renewBefore=8760h
bad 'tls.certManager.renewBefore "100h" must be shorter than tls.certManager.duration "90h"' \
    --set tls.mode=certManager --set tls.certManager.duration=90h --set tls.certManager.renewBefore=100h
bad 'serviceMonitor.scrapeTimeout "1m" must not be longer than serviceMonitor.interval "30s"' \
    --set serviceMonitor.enabled=true --set serviceMonitor.scrapeTimeout=1m
bad 'serviceMonitor.scrapeTimeout "2d" must not be longer than serviceMonitor.interval "1d23h"' \
    --set serviceMonitor.enabled=true --set serviceMonitor.interval=1d23h --set serviceMonitor.scrapeTimeout=2d
chart_render "$work/ok.yaml" --set serviceMonitor.enabled=true --set serviceMonitor.interval=1m \
    --set serviceMonitor.scrapeTimeout=1m || fail "scrapeTimeout equal to the interval does not render"
# Durations in range, as the binaries check them.
bad 'controller.opsTaskCallTimeout must be between 1s and 1h, not "2h"' --set controller.opsTaskCallTimeout=2h
bad 'controller.opsTaskCallTimeout must be between 1s and 1h, not "500ms"' --set controller.opsTaskCallTimeout=500ms
bad 'tls.self.certLifetime must be at least 1h, not "30m"' --set tls.self.certLifetime=30m
bad 'controller.opsTaskCallTimeout must be between 1s and 1h, not "1h30s"' --set controller.opsTaskCallTimeout=1h30s
chart_render "$work/ok.yaml" --set controller.opsTaskCallTimeout=59m60s --set controller.workers=4 ||
    fail "59m60s refused"
grep -q -- '--ops-task-call-timeout=59m60s' "$work/ok.yaml" || fail "no --ops-task-call-timeout=59m60s"

# The checks fail on broken manifests (each mutation of the default render).
d=$work/defaults.yaml
must_fail() {
    local what=$1 want=$2 out
    shift 2
    if out=$("$@" 2>&1); then fail "$what: the check passed"; fi
    case "$out" in *"$want"*) ;; *) fail "$what: the check said: $out" ;; esac
}
sed '0,/verbs: \[get, list, watch\]/s//verbs: [get, list, watch, delete]/' "$d" >"$work/m1.yaml"
must_fail "a verb too many" "never calls" "$CHARTTOOL" rbac "$work/m1.yaml" --src "$root" "${procs[@]}"
sed '0,/verbs: \[get, list, watch\]/s//verbs: [get, list]/' "$d" >"$work/m2.yaml"
must_fail "a verb too few" "may not" "$CHARTTOOL" rbac "$work/m2.yaml" --src "$root" "${procs[@]}"
chart_render "$work/m3.yaml" --set tls.mode=secret --set tls.secret.name=s --set tls.secret.caBundle=eA==
must_fail "self-provisioning code without its RBAC" "may not" "$CHARTTOOL" rbac "$work/m3.yaml" --src "$root" "${procs[@]}"
if [ ${#binaries[@]} -gt 0 ]; then
    sed 's/^\( *\)- --tls-cert-lifetime=8760h/&\n\1- --no-such-flag/' "$d" >"$work/m4.yaml"
    must_fail "an unknown flag" "does not accept --no-such-flag" "$CHARTTOOL" check "$work/m4.yaml" "${binaries[@]}"
fi
sed 's/operator: NotIn/operator: In/' "$d" >"$work/m5.yaml"
must_fail "own namespace not excluded" "own namespace is not excluded" "$CHARTTOOL" check "$work/m5.yaml"
sed 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: false/' "$d" >"$work/m6.yaml"
must_fail "writable root" "readOnlyRootFilesystem is not true" "$CHARTTOOL" check "$work/m6.yaml"
sed 's/^kind: PodDisruptionBudget/kind: PodDisruptionBudgett/' "$d" >"$work/m7.yaml"
must_fail "unknown kind" "unknown apiVersion/kind" "$CHARTTOOL" check "$work/m7.yaml"
printf -- '---\napiVersion: v1\nkind: Service\nmetadata: {name: x, namespace: etcd-warden}\nspec: {ports: [{port: 1}], selector: {app: none}}\n' >>"$work/m7.yaml"
sed 's/^kind: PodDisruptionBudgett/kind: PodDisruptionBudget/' "$work/m7.yaml" >"$work/m8.yaml"
must_fail "a Service selecting nothing" "matches no Deployment" "$CHARTTOOL" check "$work/m8.yaml"
# Every field of the project's CRDs says what it does (kubectl explain prints it); the check
# fails on a field without one.
python3 "$root/tests/chart/crd_descriptions.py" "$CHART_DIR"/crds/etcd-warden.io_*.yaml ||
    fail "CRD fields without a description"
sed '/^ *prefix:$/{n;/description: >-/{N;d}}' "$CHART_DIR/crds/etcd-warden.io_backupentries.yaml" \
    >"$work/undescribed.yaml"
must_fail "a CRD field without a description" ".spec.prefix has no description" \
    python3 "$root/tests/chart/crd_descriptions.py" "$work/undescribed.yaml"
echo "PASS chart_render"
