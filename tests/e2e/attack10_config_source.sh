#!/usr/bin/env bash
# etcd's configuration read from somewhere the webhook does not judge, against the webhook
# registered as the chart registers it (issue 30). The rules judge key etcd.conf.yaml of ConfigMap
# <E>-config, which etcd-druid's StatefulSet mounts (volume etcd-config-file, items etcd.conf.yaml)
# at /var/etcd/config/ in container backup-restore; the sidecar reads
# /var/etcd/config/etcd.conf.yaml (ETCD_CONF unset) and serves it to etcd-wrapper in container
# etcd, which reads no file of its own (druid's statefulset builder: args start-etcd
# --backup-restore-host-port=<E>-local:<port>; no --config-file). Left open:
#   S1. the configuration not mounted at all: alice removes the mount from container
#       backup-restore, and the sidecar reads whatever its image ships at that path.
#   S2. container etcd given a file of its own: etcd's --config-file at the judged path, served by
#       alice's ConfigMap mounted above it, at /var/etcd (items: config/etcd.conf.yaml).
#   S3. container etcd given the image's file: --config-file=/etc/etcd/etcd.conf.yaml.
#   S4. the sidecar given a configuration file etcd-druid never passes (etcdbrctl --config-file).
# Alice is a tenant with edit rights and component protection disabled on her Etcd.
# Oracle: what kube-sim stores: the StatefulSet of live Etcd etcd-a in the shape the case wrote.
# Fails (HOLE) while the hole exists.
# Controls: etcd-druid's own StatefulSet written again is admitted, and container etcd naming the
# judged file /var/etcd/config/etcd.conf.yaml, with ConfigMap etcd-a-config mounted there as
# the sidecar mounts it, is admitted.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

druid_etcd shoot etcd-a
wh_as alice annotate etcd etcd-a druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    wh_fail "alice cannot disable protection of etcd-a"
kc -n shoot create configmap alice-conf --from-literal=etcd.conf.yaml='data-dir: /var/etcd/data/other' >/dev/null ||
    wh_fail "cannot create ConfigMap alice-conf"
sleep 2 # the caches see the objects

sts() { kc -n shoot get statefulset etcd-a -o json; }
# ---- control: etcd-druid writes its StatefulSet again (a template annotation)
out=$(kc_druid -n shoot patch statefulset etcd-a --type merge \
    -p '{"spec":{"template":{"metadata":{"annotations":{"checksum/etcd-configmap":"1"}}}}}' 2>&1) ||
    wh_fail "control: etcd-druid's own StatefulSet refused: $out"
echo "ok: control: etcd-druid's StatefulSet, its configuration mounted in backup-restore, is admitted"

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $1: $(tr '\n' ' ' <<<"$2" | head -c 300)"; }

# ---- S1: the configuration's mount removed from the sidecar
out=$(wh_as alice patch statefulset etcd-a --type json \
    -p '[{"op": "remove", "path": "/spec/template/spec/containers/1/volumeMounts/1"}]' 2>&1)
if [ "$(sts | jq '[.spec.template.spec.containers[] | select(.name == "backup-restore") |
        .volumeMounts[]? | select(.mountPath | rtrimstr("/") == "/var/etcd/config")] | length')" = 0 ]; then
    hole "S1: container backup-restore of live Etcd etcd-a mounts nothing at /var/etcd/config: the sidecar hands etcd whatever its image ships at /var/etcd/config/etcd.conf.yaml"
else held S1 "$out"; fi

ownconf() { # the --config-file container etcd of etcd-a names, "" for none
    sts | jq -r '[.spec.template.spec.containers[] | select(.name == "etcd") |
        ((.command // []) + (.args // []))[] | select(startswith("--config-file="))][0] // "" | sub("^--config-file="; "")'
}
# ---- S2: etcd's own --config-file, served by alice's ConfigMap mounted above it
out=$(wh_as alice patch statefulset etcd-a --type json -p '[
  {"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "up", "configMap": {"name": "alice-conf", "items": [{"key": "etcd.conf.yaml", "path": "config/etcd.conf.yaml"}]}}},
  {"op": "add", "path": "/spec/template/spec/containers/0/args", "value": ["--config-file=/var/etcd/config/etcd.conf.yaml"]},
  {"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts/-", "value": {"name": "up", "mountPath": "/var/etcd"}}]' 2>&1)
if [ "$(ownconf)" = /var/etcd/config/etcd.conf.yaml ] &&
    [ "$(sts | jq '[.spec.template.spec.containers[0].volumeMounts[] | select(.mountPath == "/var/etcd")] | length')" != 0 ]; then
    hole "S2: container etcd of live Etcd etcd-a reads --config-file=/var/etcd/config/etcd.conf.yaml from alice's ConfigMap alice-conf mounted at /var/etcd (data-dir /var/etcd/data/other)"
else held S2 "$out"; fi

# ---- S3: etcd's own --config-file, the image's
out=$(wh_as alice patch statefulset etcd-a --type json -p '[
  {"op": "add", "path": "/spec/template/spec/containers/0/args", "value": ["--config-file=/etc/etcd/etcd.conf.yaml"]}]' 2>&1)
if [ "$(ownconf)" = /etc/etcd/etcd.conf.yaml ]; then
    hole "S3: container etcd of live Etcd etcd-a reads the configuration its image ships at /etc/etcd/etcd.conf.yaml"
else held S3 "$out"; fi

# ---- S4: the sidecar given a configuration file of etcdbrctl's own
out=$(wh_as alice patch statefulset etcd-a --type json -p '[
  {"op": "add", "path": "/spec/template/spec/containers/1/args/-", "value": "--config-file=/var/etcd/data/br.yaml"}]' 2>&1)
if sts | jq -e '[.spec.template.spec.containers[1].args[]? | select(startswith("--config-file"))] | length > 0' >/dev/null; then
    hole "S4: container backup-restore of live Etcd etcd-a runs with --config-file=/var/etcd/data/br.yaml, a configuration nothing judges"
else held S4 "$out"; fi

# ---- control: container etcd names the judged file, mounted as the sidecar mounts it
if [ "$holes" = 0 ]; then
    out=$(wh_as alice patch statefulset etcd-a --type json -p '[
      {"op": "add", "path": "/spec/template/spec/containers/0/args", "value": ["start-etcd", "--config-file=/var/etcd/config/etcd.conf.yaml"]},
      {"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts/-", "value": {"name": "etcd-config-file", "mountPath": "/var/etcd/config/"}}]' 2>&1) ||
        wh_fail "control: container etcd reading the judged file, mounted as the sidecar mounts it, refused: $out"
    [ "$(ownconf)" = /var/etcd/config/etcd.conf.yaml ] || wh_fail "control: the admitted change is not stored"
    echo "ok: control: container etcd reading the judged file from ConfigMap etcd-a-config is admitted"
fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): etcd's configuration read from where the webhook does not judge"; exit 1; }
echo "attack10_config_source: ok"
