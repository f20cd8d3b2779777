#!/usr/bin/env bash
# etcd's data and write-ahead log taken from where they are through the Etcd's ConfigMap, against
# the webhook registered as the chart registers it (issue 30). The seventh attack's fix refuses a
# ConfigMap <etcd>-config of a live Etcd whose etcd.conf.yaml puts data-dir off the members'
# claims. Two ways were left, each losing a live cluster's data at the members' next start (a pod
# deleted, a node drained) with every byte still on the claims:
#   M1. data-dir moved to another directory of the claim: etcd-druid's ConfigMap keeps the data in
#       /var/etcd/data/new.etcd (internal/component/configmap/etcdconfig.go); a data-dir of
#       /var/etcd/data/other is on the claim, and etcd starts on that empty directory: a single
#       member starts a new, empty cluster.
#   M2. the ConfigMap re-created (deleted, then created by the tenant) with such a data-dir.
#   M3. wal-dir set off the claim: etcd reads its log from <data-dir>/member/wal unless wal-dir
#       says otherwise; the next start finds no log there.
#   M4. wal-dir set to another directory of the claim: the same, on the claim.
# Alice is a tenant with edit rights and component protection disabled on her Etcds (etcd-a with
# 3 members, etcd-b with 1, as Gardener's etcd-events).
# Oracle: what kube-sim stores: ConfigMap E-config of live Etcd E (no deletionTimestamp) whose
# etcd.conf.yaml names another data directory or another WAL directory (wal-dir, unset:
# <data-dir>/member/wal; paths compared by components) than the configuration etcd-druid wrote.
# Fails (HOLE) while the hole exists.
# Control: etcd-druid's own writes of its ConfigMap in the shape it generates (sigs.k8s.io/yaml,
# keys sorted): an UPDATE changing the quota and the snapshot count, and the ConfigMap deleted and
# created again, are admitted.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

druid_etcd shoot etcd-a
druid_etcd shoot etcd-b --replicas 1
for e in etcd-a etcd-b; do
    wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        wh_fail "alice cannot disable protection of $e"
done
wh_caught_up # the caches see the objects

# etcd-druid writes its shape into both ConfigMaps (as its reconcile does on an upgrade)
for e in etcd-a:3 etcd-b:1; do
    out=$(kc_druid -n shoot patch configmap "${e%%:*}-config" --type merge \
        -p "$(jq -n --arg c "$(druid_conf "${e%%:*}" "${e##*:}" 8589934592 10000)" '{data: {"etcd.conf.yaml": $c}}')" 2>&1) ||
        wh_fail "control: etcd-druid's own ConfigMap ${e%%:*}-config in its shape is refused: $out"
done
echo "ok: control: etcd-druid writes its ConfigMaps in the shape it generates"

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
# "data-dir wal" of ConfigMap E-config as etcd reads them (keys ignoring case; the WAL
# <data-dir>/member/wal without wal-dir; paths by their components), "absent" without it
dirs() {
    { kc -n shoot get configmap "$1-config" -o json 2>/dev/null || echo '{}'; } |
        python3 -c '
import json, posixpath, sys, yaml
cm = json.load(sys.stdin)
if not cm:
    print("absent"); sys.exit(0)
try:
    c = yaml.safe_load((cm.get("data") or {}).get("etcd.conf.yaml", "")) or {}
except yaml.YAMLError:
    c = {}
c = {str(k).lower(): v for k, v in c.items()} if isinstance(c, dict) else {}
d = c.get("data-dir") or ""
w = c.get("wal-dir") or (d + "/member/wal")
n = lambda p: posixpath.normpath("/" + p.strip("/")) if p.startswith("/") else "rel:" + p
print(n(d), n(w))'
}
live() { # Etcd E not being deleted
    [ -z "$(kc -n shoot get etcd "$1" -o jsonpath='{.metadata.deletionTimestamp}')" ]
}
declare -A was
for e in etcd-a etcd-b; do
    was[$e]=$(dirs $e)
    [ "${was[$e]}" = "/var/etcd/data/new.etcd /var/etcd/data/new.etcd/member/wal" ] ||
        wh_fail "etcd's directories of $e are not etcd-druid's: ${was[$e]}"
done
judge() { # CASE E WHAT OUT
    local got
    got=$(dirs "$2")
    live "$2" || wh_fail "$1: Etcd $2 is not live"
    if [ "$got" != absent ] && [ "$got" != "${was[$2]}" ]; then
        hole "$1: $3: ConfigMap $2-config stored with etcd's data-dir and WAL at $got (etcd-druid's: ${was[$2]}) for live Etcd $2: each member's next start runs etcd on an empty directory while its data stays on the claim"
    else held "$1: refused (stored: $got): $(tr '\n' ' ' <<<"$4" | head -c 400)"; fi
}
conf() { # E REPLICAS SED: etcd-druid's etcd.conf.yaml of E edited by SED
    druid_conf "$1" "$2" 8589934592 10000 | sed "$3"
}
patch_conf() { # E TEXT: alice sets etcd.conf.yaml of E-config to TEXT
    wh_as alice patch configmap "$1-config" --type merge \
        -p "$(jq -n --arg c "$2" '{data: {"etcd.conf.yaml": $c}}')" 2>&1
}

# ---- M1: data-dir elsewhere on the claim
out=$(patch_conf etcd-a "$(conf etcd-a 3 's|^data-dir: .*|data-dir: /var/etcd/data/other|')")
judge M1 etcd-a "alice patched etcd.conf.yaml of ConfigMap etcd-a-config to data-dir /var/etcd/data/other (on the claim, not where the data is)" "$out"

# ---- M2: the ConfigMap re-created with data-dir elsewhere on the claim
c=$(conf etcd-b 1 's|^data-dir: .*|data-dir: /var/etcd/data/other|')
out=$(wh_as alice delete configmap etcd-b-config 2>&1)
out+=$(wh_as alice create configmap etcd-b-config --from-literal=etcd.conf.yaml="$c" 2>&1)
judge M2 etcd-b "alice deleted ConfigMap etcd-b-config and created her own with data-dir /var/etcd/data/other" "$out"
if [ "$(dirs etcd-b)" = absent ]; then # etcd-druid re-creates its ConfigMap (its shape, its labels)
    kc_druid -n shoot create -f - >/dev/null <<EOF || wh_fail "control: etcd-druid cannot re-create ConfigMap etcd-b-config"
apiVersion: v1
kind: ConfigMap
metadata:
  name: etcd-b-config
  labels: $(_druid_labels etcd-b etcd-config etcd-b-config)
  ownerReferences: [{apiVersion: druid.gardener.cloud/v1alpha1, kind: Etcd, name: etcd-b, uid: $(kc -n shoot get etcd etcd-b -o jsonpath='{.metadata.uid}'), controller: true, blockOwnerDeletion: true}]
data:
  etcd.conf.yaml: |
$(druid_conf etcd-b 1 8589934592 10000 | sed 's/^/    /')
EOF
    echo "ok: control: etcd-druid re-creates its ConfigMap etcd-b-config"
fi

# ---- M3: wal-dir off the claim
out=$(patch_conf etcd-a "$(conf etcd-a 3 '$a wal-dir: /var/etcd/wal')")
judge M3 etcd-a "alice patched etcd.conf.yaml of ConfigMap etcd-a-config to wal-dir /var/etcd/wal (off the claim)" "$out"

# ---- M4: wal-dir elsewhere on the claim
out=$(patch_conf etcd-a "$(conf etcd-a 3 '$a Wal-Dir: /var/etcd/data/wal')")
judge M4 etcd-a "alice patched etcd.conf.yaml of ConfigMap etcd-a-config to Wal-Dir /var/etcd/data/wal (on the claim, not where the log is)" "$out"

# ---- control: etcd-druid's own UPDATE (the Etcd's quota and snapshot count changed)
out=$(kc_druid -n shoot patch configmap etcd-a-config --type merge \
    -p "$(jq -n --arg c "$(druid_conf etcd-a 3 17179869184 75000)" '{data: {"etcd.conf.yaml": $c}}')" 2>&1) ||
    wh_fail "control: etcd-druid's UPDATE of its ConfigMap etcd-a-config is refused: $out"
[ "$(kc -n shoot get configmap etcd-a-config -o jsonpath='{.data.etcd\.conf\.yaml}' | grep -c '^snapshot-count: 75000$')" = 1 ] ||
    wh_fail "control: etcd-druid's UPDATE of etcd-a-config is not stored"
echo "ok: control: etcd-druid's UPDATE of its ConfigMap (quota, snapshot count) is admitted"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): etcd's data or WAL directory moved from where the data is"; exit 1; }
echo "attack9_config_dirs: ok"
