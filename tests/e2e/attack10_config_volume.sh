#!/usr/bin/env bash
# etcd's data directory moved without touching ConfigMap <etcd>-config: the StatefulSet's
# configuration volume pointed elsewhere, against the webhook registered as the chart registers
# it (issue 30). docs/protection.md ("etcd's data directory stays on the claims"): "etcd-druid
# writes data-dir: /var/etcd/data/new.etcd ... into its etcd.conf.yaml ..., and the backup
# sidecar hands that file to etcd as written. ... a data-dir or wal-dir naming another directory
# makes each member's next start ... run etcd on an empty directory", and a CREATE or UPDATE of
# ConfigMap <E>-config that moves them is refused "for everyone, etcd-druid and an Etcd with
# component protection disabled included". The file the sidecar hands to etcd is the one its
# pod mounts: etcd-druid's StatefulSet mounts volume etcd-config-file (ConfigMap <E>-config, key
# etcd.conf.yaml at path etcd.conf.yaml) at /var/etcd/config/ in container backup-restore.
# Alice is a tenant with edit rights and component protection disabled on her Etcds (the very
# case the rule names).
#   V1. alice creates ConfigMap etcd-a-moved (her own name, not <E>-config) with etcd-druid's
#       configuration but data-dir /var/etcd/data/other, and points the StatefulSet's volume
#       etcd-config-file at it.
#   V2. alice adds a key moved.yaml to ConfigMap etcd-b-config (etcd.conf.yaml untouched) with
#       data-dir /var/etcd/data/other, and maps that key to path etcd.conf.yaml in the
#       StatefulSet's volume etcd-config-file.
#   V3. alice moves the mount of volume etcd-config-file elsewhere in container backup-restore and
#       mounts her own ConfigMap etcd-c-moved (data-dir /var/etcd/data/other) at /var/etcd/config/.
# Oracle: what kube-sim stores: the etcd.conf.yaml that container backup-restore of live Etcd E's
# StatefulSet would read at /var/etcd/config/etcd.conf.yaml (the volume mounted there, its
# ConfigMap, the key mapped to that path) names a data-dir other than etcd-druid's
# /var/etcd/data/new.etcd. Each member's next start (the rolling update the change itself
# starts) runs etcd on an empty directory while its data stays in new.etcd on the claim.
# Fails (HOLE) while the hole exists.
# Control: etcd-druid's UPDATE that mounts its configuration volume as it builds it is admitted;
# alice's UPDATE of etcd-a-config moving data-dir is refused (the ConfigMap rule is in force).
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

druid_etcd shoot etcd-a
druid_etcd shoot etcd-b
druid_etcd shoot etcd-c
for e in etcd-a etcd-b etcd-c; do
    wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        wh_fail "alice cannot disable protection of $e"
done
wh_caught_up # the caches see the objects

# etcd-druid's StatefulSet mounts its configuration as its builder does (the stage's does):
# etcd-druid's UPDATE writing that volume again is admitted
for e in etcd-a etcd-b etcd-c; do
    out=$(kc_druid -n shoot patch statefulset $e --type json -p "[
      {\"op\": \"replace\", \"path\": \"/spec/template/spec/volumes\", \"value\": [{\"name\": \"etcd-config-file\",
        \"configMap\": {\"name\": \"$e-config\", \"defaultMode\": 420, \"items\": [{\"key\": \"etcd.conf.yaml\", \"path\": \"etcd.conf.yaml\"}]}}]},
      {\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/1/volumeMounts/1\",
        \"value\": {\"name\": \"etcd-config-file\", \"mountPath\": \"/var/etcd/config/\"}}]" 2>&1) ||
        wh_fail "control: etcd-druid's StatefulSet $e with its configuration volume refused: $out"
done
echo "ok: control: etcd-druid mounts the configuration volume etcd-config-file as it builds it"

moved() { # etcd-druid's etcd.conf.yaml of E with data-dir /var/etcd/data/other
    kc -n shoot get configmap "$1-config" -o jsonpath='{.data.etcd\.conf\.yaml}' |
        sed 's|^data-dir: .*|data-dir: /var/etcd/data/other|'
}
# data-dir of the etcd.conf.yaml container backup-restore of StatefulSet E reads at
# /var/etcd/config/etcd.conf.yaml, "none" when nothing is mounted there
read_dir() {
    local sts cm key
    sts=$(kc -n shoot get statefulset "$1" -o json) || wh_fail "StatefulSet $1 is not found"
    cm=$(jq -r '.spec.template.spec as $p | ($p.containers[] | select(.name == "backup-restore") |
        .volumeMounts[]? | select(.mountPath | rtrimstr("/") == "/var/etcd/config") | .name) as $v |
        $p.volumes[]? | select(.name == $v) | .configMap.name // empty' <<<"$sts" | head -1)
    [ -n "$cm" ] || { echo none; return; }
    key=$(jq -r '.spec.template.spec.volumes[]? | select(.configMap.name == "'"$cm"'") |
        (.configMap.items // [{key: "etcd.conf.yaml", path: "etcd.conf.yaml"}])[] |
        select(.path == "etcd.conf.yaml") | .key' <<<"$sts" | head -1)
    kc -n shoot get configmap "$cm" -o json 2>/dev/null | jq -r --arg k "$key" '.data[$k] // ""' |
        python3 -c '
import sys, yaml
try:
    c = yaml.safe_load(sys.stdin.read()) or {}
except yaml.YAMLError:
    c = {}
print({str(k).lower(): v for k, v in c.items()}.get("data-dir", "none") if isinstance(c, dict) else "none")'
}
for e in etcd-a etcd-b etcd-c; do
    [ "$(read_dir $e)" = /var/etcd/data/new.etcd ] || wh_fail "etcd-druid's StatefulSet $e does not read new.etcd: $(read_dir $e)"
done

# ---- control: the ConfigMap rule refuses alice's move of data-dir in etcd-a-config
out=$(wh_as alice patch configmap etcd-a-config --type merge \
    -p "$(jq -n --arg c "$(moved etcd-a)" '{data: {"etcd.conf.yaml": $c}}')" 2>&1) &&
    wh_fail "control: alice's UPDATE of etcd-a-config to data-dir /var/etcd/data/other admitted"
grep -qF "moves etcd's data-dir" <<<"$out" || wh_fail "control: refused for another reason: $out"
echo "ok: control: alice's UPDATE of etcd-a-config moving data-dir is refused"

holes=0
judge() { # CASE E WHAT OUT
    local got
    got=$(read_dir "$2")
    [ -z "$(kc -n shoot get etcd "$2" -o jsonpath='{.metadata.deletionTimestamp}')" ] || wh_fail "$1: Etcd $2 is not live"
    if [ "$got" != /var/etcd/data/new.etcd ]; then
        echo "HOLE: $1: $3: container backup-restore of live Etcd $2's StatefulSet now reads data-dir $got at /var/etcd/config/etcd.conf.yaml (etcd-druid's: /var/etcd/data/new.etcd): each member's next start runs etcd on an empty directory while its data stays in new.etcd on the claim"
        holes=$((holes + 1))
    else echo "held: $1: $(tr '\n' ' ' <<<"$4" | head -c 400)"; fi
}

# ---- V1: the volume pointed at alice's own ConfigMap
out=$(wh_as alice create configmap etcd-a-moved --from-literal=etcd.conf.yaml="$(moved etcd-a)" 2>&1)
out+=$(wh_as alice patch statefulset etcd-a --type json \
    -p '[{"op": "replace", "path": "/spec/template/spec/volumes/0/configMap/name", "value": "etcd-a-moved"}]' 2>&1)
judge V1 etcd-a "alice created ConfigMap etcd-a-moved (data-dir /var/etcd/data/other) and pointed volume etcd-config-file of StatefulSet etcd-a at it" "$out"

# ---- V2: another key of etcd-b-config mapped to etcd.conf.yaml
out=$(wh_as alice patch configmap etcd-b-config --type merge \
    -p "$(jq -n --arg c "$(moved etcd-b)" '{data: {"moved.yaml": $c}}')" 2>&1)
out+=$(wh_as alice patch statefulset etcd-b --type json \
    -p '[{"op": "replace", "path": "/spec/template/spec/volumes/0/configMap/items/0/key", "value": "moved.yaml"}]' 2>&1)
judge V2 etcd-b "alice added key moved.yaml (data-dir /var/etcd/data/other) to ConfigMap etcd-b-config and mapped it to etcd.conf.yaml in volume etcd-config-file of StatefulSet etcd-b" "$out"

# ---- V3: the configuration mount moved, alice's ConfigMap mounted where the sidecar reads
out=$(wh_as alice create configmap etcd-c-moved --from-literal=etcd.conf.yaml="$(moved etcd-c)" 2>&1)
out+=$(wh_as alice patch statefulset etcd-c --type json -p '[
  {"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "moved", "configMap": {"name": "etcd-c-moved"}}},
  {"op": "replace", "path": "/spec/template/spec/containers/1/volumeMounts/1/mountPath", "value": "/var/etcd/config-old/"},
  {"op": "add", "path": "/spec/template/spec/containers/1/volumeMounts/-", "value": {"name": "moved", "mountPath": "/var/etcd/config/"}}]' 2>&1)
judge V3 etcd-c "alice moved volume etcd-config-file of StatefulSet etcd-c to /var/etcd/config-old/ and mounted her ConfigMap etcd-c-moved (data-dir /var/etcd/data/other) at /var/etcd/config/" "$out"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): etcd's data directory moved through the StatefulSet's configuration volume"; exit 1; }
echo "attack10_config_volume: ok"
