#!/usr/bin/env bash
# warden-controller with the chart's watchNamespace, run with the flags of the rendered
# Deployment: a claim is cluster-wide whatever watchNamespace says, so before a deletion Job
# it lists the Etcds, BackupEntries, EtcdBackups and EtcdRestores of every namespace
# (controller/core/claims). Every request it made (kube-sim's request log) is replayed through
# an RBAC evaluator of the rendered manifests (charttool audit): a request the chart does not
# grant in the scope it is made in (here: a cluster-wide list the chart granted in the watched
# namespace only) fails the test, as the API server would refuse it. The flow: an Etcd of the
# watched namespace on a bucket with a 2 s grace period is deleted; its entry's deletion Job
# is created (the claims were read). Oracle: kube-sim's request log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../lib/controller.sh"
. "$here/../lib/chart.sh"

chart_tool
rendered=$(mktemp -d "${TMPDIR:-/tmp}/chart-rbac.XXXXXX")
ksim_on_exit "rm -rf '$rendered'"
chart_render "$rendered/r.yaml" --set watchNamespace=shoot || ctl_fail "chart render failed"
mapfile -t args < <("$CHARTTOOL" args "$rendered/r.yaml" warden-controller)
ctl_args=()
for a in "${args[@]}"; do # ctl_start chooses the listen addresses and the lease namespace
    case $a in --metrics-bind-address=* | --health-probe-bind-address=*) ;; *) ctl_args+=("$a") ;; esac
done
printf '%s\n' "${ctl_args[@]}" | grep -qx -- '--watch-namespace=shoot' ||
    ctl_fail "the rendered controller does not watch namespace shoot: ${ctl_args[*]}"

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage -v
ctl_namespace shoot other
ctl_backup_secret etcd-warden creds
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: etcd-bucket
  secretRef: {namespace: etcd-warden, name: creds}
  deletionGracePeriod: 2s
EOF
# in its pod warden-controller's namespace is the release's (the service account's), where the
# chart grants it the claim Leases: the kubeconfig says so here
kubectl config set-context --current --namespace=etcd-warden --kubeconfig "$CTL_DIR/controller.kubeconfig" >/dev/null ||
    ctl_fail "cannot set the controller's namespace"
ctl_start "${ctl_args[@]}"
ctl_store_etcd shoot etcd-main S3 etcd-bucket shoot--etcd-main
entry() { kc get backupentries -o jsonpath='{.items[?(@.spec.etcd.name=="etcd-main")].metadata.name}'; }
has_entry() { [ -n "$(entry)" ]; }
ksim_wait 30 has_entry || ctl_fail "no BackupEntry for shoot/etcd-main"
e=$(entry)
kc -n shoot delete etcd etcd-main >/dev/null
job() { kc -n etcd-warden get jobs -o name | grep -q delete; }
ksim_wait 60 job || ctl_fail "no deletion Job for $e: $(kc get backupentry "$e" -o jsonpath='{.status}')"
ok "the deletion Job of $e exists: the claims of every namespace were read"
ctl_stop
grep -q '"path":"/apis/etcd-warden.io/v1alpha1/etcdbackups"' "$KSIM_DIR/kube-sim.log" ||
    ctl_fail "the controller never listed the EtcdBackups of every namespace"
"$CHARTTOOL" audit "$rendered/r.yaml" --log "$KSIM_DIR/kube-sim.log" --src "$root" \
    --process "controller=$CHART_NS/warden-controller:$(chart_controller_dirs),common" ||
    ctl_fail "warden-controller made a request the chart does not grant with watchNamespace"
ok "every request of warden-controller is granted by the chart with watchNamespace"
echo "chart_rbac_claims: ok"
