#!/usr/bin/env bash
# etcd's configuration changed through YAML spellings of a key: double-quoted keys with escapes,
# a double-quoted key folded over two lines, a tagged key (issue 30: etcd's configuration
# cannot be changed to fork or lose the cluster), against the webhook registered as the chart
# registers it. docs/protection.md ("etcd's data directory stays on the claims"): a CREATE or
# UPDATE of ConfigMap <E>-config of a live Etcd is refused unless etcd.conf.yaml "sets data-dir
# once ... (keys compared ignoring case, as etcd reads them ...)", and refused when
# "force-new-cluster is set to anything but false" or "unsafe-no-fsync is set to anything but
# false" ("a key set twice that way ... is refused"). etcd reads the file with
# sigs.k8s.io/yaml: YAML 1.1 scalars (escapes in double-quoted keys resolved, tags applied), a
# key given twice taking the last value, then keys matched ignoring case.
#   Y1. after etcd-druid's keys: "dat\x61-dir": /var/etcd/data/other
#   Y2. after etcd-druid's keys: "force-new-cl\u0075ster": true
#   Y3. after etcd-druid's keys: "unsafe-no-\
#          fsync": true (a folded double-quoted key)
#   Y4. after etcd-druid's keys: !!str data-dir: /var/etcd/data/other
# Alice is a tenant with edit rights and component protection disabled on her Etcds.
# Oracle: what kube-sim stores, read as etcd reads it (PyYAML: the same YAML 1.1 scalars, the last
# of a duplicate key, keys lower-cased): data-dir other than /var/etcd/data/new.etcd, or
# force-new-cluster or unsafe-no-fsync true, in the ConfigMap of a live Etcd.
# Control: etcd-druid's own UPDATE of its ConfigMap is admitted; the same keys spelt plainly are
# refused.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }
python3 -c 'import yaml' 2>/dev/null || { echo "FAIL: python3 with PyYAML is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

ES="etcd-a etcd-b etcd-c etcd-d"
for e in $ES; do
    druid_etcd shoot $e
    wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        wh_fail "alice cannot disable protection of $e"
done
wh_caught_up # the caches see the objects
# etcd-druid's etcd.conf.yaml of Etcd E (tests/lib/druid.sh)
conf() { druid_conf "$1" 3 8589934592 10000; }
for e in $ES; do
    out=$(kc_druid -n shoot patch configmap "$e-config" --type merge \
        -p "$(jq -n --arg c "$(conf $e)" '{data: {"etcd.conf.yaml": $c}}')" 2>&1) ||
        wh_fail "control: etcd-druid's own ConfigMap $e-config in its shape is refused: $out"
done
echo "ok: control: etcd-druid writes its ConfigMaps in the shape it generates"

# what etcd reads from ConfigMap E-config: "data-dir force-new-cluster unsafe-no-fsync"
read_conf() {
    kc -n shoot get configmap "$1-config" -o json | python3 -c '
import json, sys, yaml
t = (json.load(sys.stdin).get("data") or {}).get("etcd.conf.yaml") or ""
try:
    c = next(yaml.safe_load_all(t), None) or {}
except yaml.YAMLError:
    c = {}
c = {str(k).lower(): v for k, v in c.items()} if isinstance(c, dict) else {}
print(c.get("data-dir", "none"), c.get("force-new-cluster") is True, c.get("unsafe-no-fsync") is True)'
}
put() { # E TEXT: alice writes etcd.conf.yaml of E-config
    wh_as alice patch configmap "$1-config" --type merge -p "$(jq -n --arg c "$2" '{data: {"etcd.conf.yaml": $c}}')" 2>&1
}
holes=0
judge() { # CASE E WHAT OUT
    local got
    got=$(read_conf "$2")
    [ -z "$(kc -n shoot get etcd "$2" -o jsonpath='{.metadata.deletionTimestamp}')" ] || wh_fail "$1: Etcd $2 is not live"
    if [ "$got" != "/var/etcd/data/new.etcd False False" ]; then
        echo "HOLE: $1: $3: ConfigMap $2-config stored; etcd reads (data-dir, force-new-cluster, unsafe-no-fsync) = ($got): at the members' next start etcd runs on another directory, forks the cluster or acknowledges unsynced writes"
        holes=$((holes + 1))
    else echo "held: $1: $(tr '\n' ' ' <<<"$4" | head -c 300)"; fi
}

# controls: the plain spellings are refused
for k in "data-dir: /var/etcd/data/other" "force-new-cluster: true" "unsafe-no-fsync: true"; do
    out=$(put etcd-a "$(conf etcd-a | grep -v '^data-dir:')"$'\n'"$([ "${k%%:*}" = data-dir ] || echo 'data-dir: /var/etcd/data/new.etcd')"$'\n'"$k")
    [ "$(read_conf etcd-a)" = "/var/etcd/data/new.etcd False False" ] || wh_fail "control: alice's plain \"$k\" admitted: $out"
done
echo "ok: control: the plain spellings are refused"

out=$(put etcd-a "$(conf etcd-a)"$'\n''"dat\x61-dir": /var/etcd/data/other')
judge Y1 etcd-a 'alice appended "dat\x61-dir": /var/etcd/data/other' "$out"
out=$(put etcd-b "$(conf etcd-b)"$'\n''"force-new-cl\u0075ster": true')
judge Y2 etcd-b 'alice appended "force-new-cl\u0075ster": true' "$out"
out=$(put etcd-c "$(conf etcd-c)"$'\n''"unsafe-no-\'$'\n''  fsync": true')
judge Y3 etcd-c 'alice appended a folded "unsafe-no-\ fsync": true' "$out"
out=$(put etcd-d "$(conf etcd-d)"$'\n''!!str data-dir: /var/etcd/data/other')
judge Y4 etcd-d 'alice appended !!str data-dir: /var/etcd/data/other' "$out"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): etcd's configuration changed through a YAML spelling of a key"; exit 1; }
echo "attack12_config_yaml: ok"
