#!/usr/bin/env bash
# etcd's data directory moved through ConfigMap <etcd>-config in shapes the rule may not read,
# against the webhook registered as the chart registers it (issue 30). docs/protection.md ("etcd's
# data directory stays on the claims"): a CREATE or UPDATE of ConfigMap <E>-config of a live
# Etcd E is refused "unless its etcd.conf.yaml, in data, is one YAML mapping that sets data-dir
# once and wal-dir at most once (keys compared ignoring case, as etcd reads them; no merge key
# <<)" and keeps them where they are. etcd reads the file with sigs.k8s.io/yaml (the first YAML
# document, converted to JSON, keys matched ignoring case); the kubelet projects every key of
# data and binaryData into the volume.
#   B1. etcd.conf.yaml moved from data to binaryData, with data-dir /var/etcd/data/other.
#   B2. a second YAML document after etcd-druid's (the first is what etcd reads: unchanged),
#       then an UPDATE that swaps the two documents.
#   B3. data-dir written as an explicit complex key (? data-dir) with /var/etcd/data/other.
# Alice is a tenant with edit rights and component protection disabled on her Etcds.
# Oracle: what kube-sim stores: the etcd.conf.yaml the members read (the key etcd.conf.yaml of
# data, else of binaryData; its first YAML document) names a data-dir other than
# /var/etcd/data/new.etcd for live Etcd E. Fails (HOLE) while the hole exists.
# Control: etcd-druid's own UPDATE of its ConfigMap (quota, snapshot count) is admitted.
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
druid_etcd shoot etcd-c
for e in etcd-a etcd-b etcd-c; do
    wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        wh_fail "alice cannot disable protection of $e"
done
wh_caught_up # the caches see the objects

# etcd-druid writes its shape into both ConfigMaps (as its reconcile does on an upgrade)
for e in etcd-a:3 etcd-b:1 etcd-c:3; do
    out=$(kc_druid -n shoot patch configmap "${e%%:*}-config" --type merge \
        -p "$(jq -n --arg c "$(druid_conf "${e%%:*}" "${e##*:}" 8589934592 10000)" '{data: {"etcd.conf.yaml": $c}}')" 2>&1) ||
        wh_fail "control: etcd-druid's own ConfigMap ${e%%:*}-config in its shape is refused: $out"
done
echo "ok: control: etcd-druid writes its ConfigMaps in the shape it generates"

holes=0
# data-dir the members read from ConfigMap E-config
read_dir() {
    kc -n shoot get configmap "$1-config" -o json | python3 -c '
import base64, json, sys, yaml
cm = json.load(sys.stdin)
t = (cm.get("data") or {}).get("etcd.conf.yaml")
if t is None:
    b = (cm.get("binaryData") or {}).get("etcd.conf.yaml")
    t = base64.b64decode(b).decode() if b else ""
try:
    c = next(yaml.safe_load_all(t), None) or {}
except yaml.YAMLError:
    c = {}
print({str(k).lower(): v for k, v in c.items()}.get("data-dir", "none") if isinstance(c, dict) else "none")'
}
judge() { # CASE E WHAT OUT
    local got
    got=$(read_dir "$2")
    [ -z "$(kc -n shoot get etcd "$2" -o jsonpath='{.metadata.deletionTimestamp}')" ] || wh_fail "$1: Etcd $2 is not live"
    if [ "$got" != /var/etcd/data/new.etcd ]; then
        echo "HOLE: $1: $3: ConfigMap $2-config stored; its members read data-dir $got (was /var/etcd/data/new.etcd): each member's next start runs etcd on an empty directory"
        holes=$((holes + 1))
    else echo "held: $1: $(tr '\n' ' ' <<<"$4" | head -c 300)"; fi
}
conf() { druid_conf "$1" "$2" 8589934592 10000; }
for e in etcd-a etcd-b etcd-c; do
    [ "$(read_dir $e)" = /var/etcd/data/new.etcd ] || wh_fail "etcd-druid's $e-config does not read new.etcd: $(read_dir $e)"
done

# ---- B1: etcd.conf.yaml in binaryData
bad=$(conf etcd-a 3 | sed 's|^data-dir: .*|data-dir: /var/etcd/data/other|' | base64 -w0)
out=$(wh_as alice patch configmap etcd-a-config --type json -p "[{\"op\": \"remove\", \"path\": \"/data/etcd.conf.yaml\"}, {\"op\": \"add\", \"path\": \"/binaryData\", \"value\": {\"etcd.conf.yaml\": \"$bad\"}}]" 2>&1)
judge B1 etcd-a "alice moved etcd.conf.yaml of etcd-a-config from data to binaryData with data-dir /var/etcd/data/other" "$out"

# ---- B2: a second document, then the documents swapped
good=$(conf etcd-b 1)
other=$(sed 's|^data-dir: .*|data-dir: /var/etcd/data/other|' <<<"$good")
out=$(wh_as alice patch configmap etcd-b-config --type merge \
    -p "$(jq -n --arg c "$good"$'\n---\n'"$other" '{data: {"etcd.conf.yaml": $c}}')" 2>&1)
out+=$(wh_as alice patch configmap etcd-b-config --type merge \
    -p "$(jq -n --arg c "$other"$'\n---\n'"$good" '{data: {"etcd.conf.yaml": $c}}')" 2>&1)
judge B2 etcd-b "alice appended a second YAML document with data-dir /var/etcd/data/other to etcd-b-config, then swapped the two" "$out"

# ---- B3: an explicit complex key
out=$(wh_as alice patch configmap etcd-c-config --type merge \
    -p "$(jq -n --arg c "$(conf etcd-c 3 | sed 's|^data-dir: .*|? data-dir\n: /var/etcd/data/other|')" '{data: {"etcd.conf.yaml": $c}}')" 2>&1)
judge B3 etcd-c "alice wrote data-dir of etcd-c-config as an explicit key (? data-dir) with /var/etcd/data/other" "$out"

# ---- control: etcd-druid's own UPDATE (the Etcd's quota and snapshot count changed)
out=$(kc_druid -n shoot patch configmap etcd-c-config --type merge \
    -p "$(jq -n --arg c "$(druid_conf etcd-c 3 17179869184 75000)" '{data: {"etcd.conf.yaml": $c}}')" 2>&1) ||
    wh_fail "control: etcd-druid's UPDATE of its ConfigMap etcd-c-config is refused: $out"
[ "$(kc -n shoot get configmap etcd-c-config -o jsonpath='{.data.etcd\.conf\.yaml}' | grep -c '^snapshot-count: 75000$')" = 1 ] ||
    wh_fail "control: etcd-druid's UPDATE of etcd-c-config is not stored"
echo "ok: control: etcd-druid's UPDATE of its ConfigMap (quota, snapshot count) is admitted"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): etcd's data directory moved through a shape of etcd-config the rule does not read"; exit 1; }
echo "attack10_config_shapes: ok"
