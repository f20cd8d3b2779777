#!/usr/bin/env bash
# A namespace whose BackupEntry was made in the second the namespace was created is refused its
# own Local backups. docs/backup-entries.md (Local stores): an Etcd's BackupEntry "made after
# the namespace was created counts too" for a restore's Local source, and "the namespace's own
# Etcd of that name may be created on it again"; (Reattach) warden-webhook refuses a reattach
# only when "the namespace's metadata.creationTimestamp is later than the entry's". Creation
# times have whole seconds: `kubectl apply` of a namespace with its Secret and Etcd, and
# warden-controller's entry a moment later, commonly share one.
#   No BackupBucket. warden-controller running. Namespace teamN created at the start of a
#   second, with its Secret (hostPath /var/lib/lb) and Etcd etcd-a at bkt/teamN/etcd at once;
#   its entry is made in the same second (a new namespace is tried until it is: creation times
#   are read back, never assumed). etcd-a is deleted (the entry stays, PendingDeletion); then
#   teamN's EtcdRestore from its directory (a dry run), and etcd-a created again there.
# Control: namespace ctl, whose entry is made more than a second after the namespace: the same
# restore and Etcd are admitted.
# Oracle: admission. Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
etcd() { local_etcd "$1" "$2" bkt "$3" etcd-backup; } # ns name prefix
restore() { # ns name source-prefix
    kc apply --dry-run=server -f - <<EOF2
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $2, namespace: $1}
spec:
  source: {store: {provider: Local, container: bkt, prefix: $3, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-$2, store: {provider: Local, container: obkt, prefix: $1/$2, secretRef: {name: etcd-backup}}}
EOF2
}
# namespace, Secret and Etcd in one kubectl apply
bundle() { # ns
    kc apply -f - >/dev/null <<EOF2
apiVersion: v1
kind: Namespace
metadata: {name: $1}
---
apiVersion: v1
kind: Secret
metadata: {name: etcd-backup, namespace: $1}
stringData: {hostPath: /var/lib/lb}
---
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-a, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: bkt, prefix: $1/etcd, secretRef: {name: etcd-backup}}}
EOF2
}
entry_json() { # ns
    kc get backupentries -o json | jq -c --arg ns "$1" '[.items[] | select(.spec.etcd.namespace == $ns and .spec.etcd.name == "etcd-a")] | first // empty'
}
has_entry() { [ -n "$(entry_json "$1")" ]; }
released() { [ "$(entry_json "$1" | jq -r '.spec.etcdDeletedAt // empty')" != "" ]; }
ns_created() { kc get namespace "$1" -o jsonpath='{.metadata.creationTimestamp}'; }
entry_created() { entry_json "$1" | jq -r '.metadata.creationTimestamp'; }
forget_leases() {
    kc get leases -A -o json |
        jq -r '.items[] | select(.metadata.name | startswith("etcd-warden-claims-")) | "\(.metadata.namespace) \(.metadata.name)"' |
        while read -r ns name; do kc -n "$ns" delete lease "$name" >/dev/null; done
}
# the clock has passed the second $1 (RFC 3339, UTC) names
past_second() { [[ "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$1" ]]; }
at_second_start() { python3 -c 'import time; time.sleep(1.02 - time.time() % 1)'; }

mkdir -p "$NODE/var/lib/lb/bkt" "$NODE/var/lib/lb/obkt"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
wh_register_backups
ctl_start

# the control: the entry made well after the namespace
kc create namespace ctl >/dev/null
kc -n ctl create secret generic etcd-backup --from-literal=hostPath=/var/lib/lb >/dev/null
ksim_wait 5 past_second "$(ns_created ctl)" || ctl_fail "the clock never passed ctl's creation"
out=$(etcd ctl etcd-a ctl/etcd 2>&1) || ctl_fail "ctl/etcd-a refused: $out"
ksim_wait 30 has_entry ctl || ctl_fail "no entry for ctl/etcd-a"
# the case: a namespace and its entry of one second
same=""
for i in 1 2 3 4 5 6 7 8; do
    at_second_start
    bundle "team$i"
    ksim_wait 30 has_entry "team$i" || ctl_fail "no entry for team$i/etcd-a"
    if [ "$(ns_created "team$i")" = "$(entry_created "team$i")" ]; then same=team$i; break; fi
    echo "note: team$i created $(ns_created "team$i"), its entry $(entry_created "team$i"): another try"
done
[ -n "$same" ] || ctl_fail "no namespace whose entry was made in its creation's second in 8 tries"
ok "namespace $same created $(ns_created "$same"), its entry $(entry_created "$same")"
for ns in ctl "$same"; do
    mkdir -p "$NODE/var/lib/lb/bkt/$ns/etcd/v2"
    snap_fixture "$NODE/var/lib/lb/bkt/$ns/etcd/v2/Full-00000000-00000100-$(($(date +%s) - 60)).gz" 4096 Full.gz
    kc -n "$ns" delete etcd etcd-a --wait=false >/dev/null
    ksim_wait 60 released "$ns" || ctl_fail "$ns/etcd-a's entry not released: $(entry_json "$ns")"
done
forget_leases
# the webhook's caches follow the deletions: each request until it is admitted (a refused one
# changes nothing), a refusal that lasts is still there at the deadline
ksim_wait 30 restore ctl r ctl/etcd || true
out=$(restore ctl r ctl/etcd 2>&1) || ctl_fail "control: ctl's own restore from its directory refused: $out"
ksim_wait 30 etcd ctl etcd-a ctl/etcd || true
out=$(etcd ctl etcd-a ctl/etcd 2>&1) || ctl_fail "control: ctl's etcd-a created again on its directory refused: $out"
ksim_wait 30 restore "$same" r "$same/etcd" || true
ksim_wait 30 etcd "$same" etcd-a "$same/etcd" || true
ok "control: ctl's own restore from its directory admitted, its etcd-a created again"
holes=0
if out=$(restore "$same" r "$same/etcd" 2>&1); then ok "$same's own restore admitted"
else
    echo "HOLE: $same's own restore from its directory /var/lib/lb/bkt/$same/etcd refused (its entry was made in the second its namespace was created): ${out:0:400}"
    holes=$((holes + 1))
fi
if out=$(etcd "$same" etcd-a "$same/etcd" 2>&1); then ok "$same's etcd-a created again"
else
    echo "HOLE: $same's etcd-a created again on its own directory refused: ${out:0:400}"
    holes=$((holes + 1))
fi
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a namespace refused its own Local backups for an entry made in its creation's second"; exit 1; }
echo "attack11_same_second_owner: ok"
