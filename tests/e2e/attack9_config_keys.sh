#!/usr/bin/env bash
# etcd's other keys that fork or lose a live cluster's data, set through the Etcd's ConfigMap,
# against the webhook registered as the chart registers it (issue 30). The ninth attack's fix keeps
# data-dir and wal-dir of ConfigMap <etcd>-config where the data is; the backup sidecar serves the
# rest of etcd.conf.yaml to etcd as written too, and these keys lose data at the members' next
# start (a pod deleted, a node drained, a rolling update):
#   N1. force-new-cluster: true: each member restarts as a one-member cluster of its own; the
#       members diverge and the writes a member did not have are gone from it.
#   N2. unsafe-no-fsync: true: etcd acknowledges writes it has not put on disk; a node's crash
#       loses them.
#   N3. initial-cluster-token changed: a member the sidecar restores from a backup (its data gone)
#       is restored into another cluster than its peers'.
#   N4. Initial-Cluster-State: existing and name changed (keys in other case: etcd decodes its YAML
#       as JSON, which matches keys ignoring case).
#   N5. the ConfigMap re-created (deleted, then created by the tenant) with Force-New-Cluster: True.
#   N6. force-new-cluster spelled with a long s (U+017F): Go's encoding/json matches keys by
#       Unicode simple folding, which folds it to s.
#   N7. the ConfigMap re-created with a member-name-prefix the Etcd's spec.memberNamePrefix is not.
# Alice is a tenant with edit rights and component protection disabled on her Etcds (etcd-a with
# 3 members, etcd-b with 1, as Gardener's etcd-events).
# Oracle: what kube-sim stores: ConfigMap E-config of live Etcd E (no deletionTimestamp) whose
# etcd.conf.yaml (keys ignoring case, Unicode folding as Go's encoding/json) sets force-new-cluster or unsafe-no-fsync to anything but
# false, or another name, initial-cluster-token or initial-cluster-state than etcd-druid wrote.
# Fails (HOLE) while the hole exists.
# Control: etcd-druid's own writes of its ConfigMap in the shape it generates (sigs.k8s.io/yaml,
# keys sorted): a scale-up from 1 to 3 members (initial-cluster and the advertised URLs grow), an
# UPDATE changing the quota and the snapshot count, and the ConfigMap deleted and created again,
# are admitted.
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

druid_patch() { # E REPLICAS QUOTA SNAPSHOTS: etcd-druid's UPDATE of ConfigMap E-config
    kc_druid -n shoot patch configmap "$1-config" --type merge \
        -p "$(jq -n --arg c "$(druid_conf "$@")" '{data: {"etcd.conf.yaml": $c}}')" 2>&1
}
# etcd-druid writes its shape into both ConfigMaps (as its reconcile does on an upgrade)
for e in etcd-a:3 etcd-b:1; do
    out=$(druid_patch "${e%%:*}" "${e##*:}" 8589934592 10000) ||
        wh_fail "control: etcd-druid's own ConfigMap ${e%%:*}-config in its shape is refused: $out"
done
echo "ok: control: etcd-druid writes its ConfigMaps in the shape it generates"

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
# "name token state force fsync" of ConfigMap E-config as etcd reads them (keys ignoring case,
# absent: etcd's defaults; the flags "on" unless absent, null or false), "absent" without it
keys() {
    { kc -n shoot get configmap "$1-config" -o json 2>/dev/null || echo '{}'; } |
        python3 -c '
import json, sys, yaml
cm = json.load(sys.stdin)
if not cm:
    print("absent"); sys.exit(0)
try:
    c = yaml.safe_load((cm.get("data") or {}).get("etcd.conf.yaml", "")) or {}
except yaml.YAMLError:
    c = {}
c = {str(k).casefold(): v for k, v in c.items()} if isinstance(c, dict) else {}
flag = lambda k: "off" if c.get(k) in (None, False) else "on"
print(c.get("name") or "default", c.get("initial-cluster-token") or "etcd-cluster",
      c.get("initial-cluster-state") or "new", flag("force-new-cluster"), flag("unsafe-no-fsync"))'
}
live() { # Etcd E not being deleted
    [ -z "$(kc -n shoot get etcd "$1" -o jsonpath='{.metadata.deletionTimestamp}')" ]
}
DRUIDS="etcd-config etcd-cluster new off off"
for e in etcd-a etcd-b; do
    [ "$(keys $e)" = "$DRUIDS" ] || wh_fail "etcd's keys of $e are not etcd-druid's: $(keys $e)"
done
judge() { # CASE E WHAT OUT
    local got
    got=$(keys "$2")
    live "$2" || wh_fail "$1: Etcd $2 is not live"
    if [ "$got" != absent ] && [ "$got" != "$DRUIDS" ]; then
        hole "$1: $3: ConfigMap $2-config stored with name, token, state, force-new-cluster, unsafe-no-fsync \"$got\" (etcd-druid's: \"$DRUIDS\") for live Etcd $2: its members' next start forks or loses the cluster's data"
    else held "$1: refused (stored: $got): $(tr '\n' ' ' <<<"$4" | head -c 400)"; fi
}
conf() { # E REPLICAS SED: etcd-druid's etcd.conf.yaml of E edited by SED
    druid_conf "$1" "$2" 8589934592 10000 | sed "$3"
}
patch_conf() { # E TEXT: alice sets etcd.conf.yaml of E-config to TEXT
    wh_as alice patch configmap "$1-config" --type merge \
        -p "$(jq -n --arg c "$2" '{data: {"etcd.conf.yaml": $c}}')" 2>&1
}

# ---- N1: force-new-cluster
out=$(patch_conf etcd-a "$(conf etcd-a 3 '$a force-new-cluster: true')")
judge N1 etcd-a "alice patched etcd.conf.yaml of ConfigMap etcd-a-config to force-new-cluster: true" "$out"

# ---- N2: unsafe-no-fsync
out=$(patch_conf etcd-b "$(conf etcd-b 1 '$a unsafe-no-fsync: true')")
judge N2 etcd-b "alice patched etcd.conf.yaml of ConfigMap etcd-b-config to unsafe-no-fsync: true" "$out"

# ---- N3: another cluster token
out=$(patch_conf etcd-a "$(conf etcd-a 3 's|^initial-cluster-token: .*|initial-cluster-token: alices-cluster|')")
judge N3 etcd-a "alice patched etcd.conf.yaml of ConfigMap etcd-a-config to initial-cluster-token: alices-cluster" "$out"

# ---- N4: the state and the name, keys in other case
out=$(patch_conf etcd-a "$(conf etcd-a 3 's|^initial-cluster-state: .*|Initial-Cluster-State: existing|')")
judge N4 etcd-a "alice patched etcd.conf.yaml of ConfigMap etcd-a-config to Initial-Cluster-State: existing" "$out"
out=$(patch_conf etcd-a "$(conf etcd-a 3 's|^name: .*|NAME: etcd-a-0|')")
judge N4 etcd-a "alice patched etcd.conf.yaml of ConfigMap etcd-a-config to NAME: etcd-a-0" "$out"

# ---- N5: the ConfigMap re-created with force-new-cluster
c=$(conf etcd-b 1 '$a Force-New-Cluster: True')
out=$(wh_as alice delete configmap etcd-b-config 2>&1)
out+=$(wh_as alice create configmap etcd-b-config --from-literal=etcd.conf.yaml="$c" 2>&1)
judge N5 etcd-b "alice deleted ConfigMap etcd-b-config and created her own with Force-New-Cluster: True" "$out"
recreate_b() { # etcd-druid re-creates its ConfigMap etcd-b-config (its shape, its labels)
    [ "$(keys etcd-b)" = absent ] || return 0
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
}
recreate_b

# ---- N6: force-new-cluster with a long s
out=$(patch_conf etcd-a "$(conf etcd-a 3 "\$a force-new-clu$(printf '\xc5\xbf')ter: true")")
judge N6 etcd-a "alice patched etcd.conf.yaml of ConfigMap etcd-a-config to force-new-clu\\u017fter: true" "$out"

# ---- N7: the ConfigMap re-created with a member-name-prefix the Etcd does not have (etcd-druid
# writes the Etcd's spec.memberNamePrefix, immutable; the sidecar names the members with it)
c=$(conf etcd-b 1 '$a member-name-prefix: alice')
out=$(wh_as alice delete configmap etcd-b-config 2>&1)
out+=$(wh_as alice create configmap etcd-b-config --from-literal=etcd.conf.yaml="$c" 2>&1)
if kc -n shoot get configmap etcd-b-config -o jsonpath='{.data.etcd\.conf\.yaml}' 2>/dev/null |
    grep -q '^member-name-prefix: alice'; then
    hole "N7: alice deleted ConfigMap etcd-b-config and created her own with member-name-prefix: alice, which Etcd etcd-b (no spec.memberNamePrefix) does not have: the sidecar would name its members otherwise than the cluster knows them"
else held "N7: refused: $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi
recreate_b

# ---- control: etcd-druid's scale-up of etcd-b from 1 to 3 members (initial-cluster grows)
out=$(druid_patch etcd-b 3 8589934592 10000) ||
    wh_fail "control: etcd-druid's scale-up UPDATE of its ConfigMap etcd-b-config is refused: $out"
[ "$(kc -n shoot get configmap etcd-b-config -o jsonpath='{.data.etcd\.conf\.yaml}' | grep -c '^initial-cluster: etcd-b-0=.*,etcd-b-2=')" = 1 ] ||
    wh_fail "control: etcd-druid's scale-up of etcd-b-config is not stored"
echo "ok: control: etcd-druid's scale-up of its ConfigMap (initial-cluster of 3 members) is admitted"

# ---- control: etcd-druid's own UPDATE (the Etcd's quota and snapshot count changed)
out=$(druid_patch etcd-a 3 17179869184 75000) ||
    wh_fail "control: etcd-druid's UPDATE of its ConfigMap etcd-a-config is refused: $out"
[ "$(kc -n shoot get configmap etcd-a-config -o jsonpath='{.data.etcd\.conf\.yaml}' | grep -c '^snapshot-count: 75000$')" = 1 ] ||
    wh_fail "control: etcd-druid's UPDATE of etcd-a-config is not stored"
echo "ok: control: etcd-druid's UPDATE of its ConfigMap (quota, snapshot count) is admitted"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): etcd's configuration of a live Etcd forks or loses its data"; exit 1; }
echo "attack9_config_keys: ok"
