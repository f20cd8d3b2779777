#!/usr/bin/env bash
# etcd's data directory moved off the members' claims through its ConfigMap, against the webhook
# registered as the chart registers it. Issue 30: a member's volume is never deleted or
# detached while it runs, whoever asks, break glass aside; the guard binds a tenant of an Etcd
# with component protection disabled too. The sixth attack closed the pod template's ways of
# taking etcd's data directory (/var/etcd/data/new.etcd) off the claim: an unmount, an emptyDir
# mounted over it. Where etcd keeps its data is not the template's to say, though: etcd-druid
# writes data-dir into the Etcd's ConfigMap <etcd>-config (etcd.conf.yaml,
# internal/component/configmap/etcdconfig.go), the backup sidecar serves that file to etcd
# (etcd-wrapper's GET /config: data-dir passed on as written, pkg/server/httpAPI.go serveConfig
# at v0.43.0), while the sidecar itself checks and restores its own --data-dir argument. A
# ConfigMap is a component: with protection disabled a tenant may change or replace it, and
# nothing routes its change to the data-directory rules. The next start of each member (a pod
# deleted: pods are routed nowhere; a node drain) runs etcd on an empty directory outside the
# claim: a single member starts a new, empty cluster, and the claim's data is read by nothing.
#   K1. protection disabled: alice patches ConfigMap etcd-a-config (Etcd etcd-a, 3 members):
#       data-dir /var/etcd/scratch/new.etcd (on no volume: the container's own writable layer).
#   K2. protection disabled: alice deletes ConfigMap etcd-b-config (Etcd etcd-b, 1 member, as
#       Gardener's etcd-events) and creates her own of that name with data-dir /tmp/new.etcd.
# Oracle: what kube-sim stores: ConfigMap etcd-X-config whose etcd.conf.yaml has data-dir at or
# below no path where the StatefulSet's etcd container mounts a volumeClaimTemplate's volume,
# the Etcd live (no deletionTimestamp, no hibernation asked). Fails (HOLE) while the hole
# exists.
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

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
# "on <claim volume>" when etcd's data-dir (ConfigMap E-config) lies at or below a path where
# container etcd of StatefulSet E mounts a volumeClaimTemplate's volume, "absent -" without
# the ConfigMap (etcd does not start), else "off <data-dir>"
where() {
    { kc -n shoot get configmap "$1-config" -o json 2>/dev/null || echo '{}'; } >"$WH_DIR/cm.json"
    kc -n shoot get statefulset "$1" -o json >"$WH_DIR/sts.json" || wh_fail "cannot read StatefulSet $1"
    python3 - "$WH_DIR/cm.json" "$WH_DIR/sts.json" <<'PY'
import json, posixpath, sys, yaml
cm, sts = (json.load(open(p)) for p in sys.argv[1:3])
try:
    d = (yaml.safe_load((cm.get("data") or {}).get("etcd.conf.yaml", "")) or {}).get("data-dir")
except yaml.YAMLError:
    d = None
if not cm:
    print("absent -"); sys.exit(0)
vct = {t["metadata"]["name"] for t in sts["spec"].get("volumeClaimTemplates", [])}
for c in sts["spec"]["template"]["spec"]["containers"]:
    if c["name"] != "etcd":
        continue
    for m in c.get("volumeMounts", []):
        p = posixpath.normpath(m["mountPath"])
        if d and m["name"] in vct and not m.get("subPath") and \
                (posixpath.normpath(d) == p or posixpath.normpath(d).startswith(p + "/")):
            print("on", m["name"]); sys.exit(0)
print("off", d)
PY
}
live() { # Etcd E not being deleted, no hibernation asked
    [ "$(kc -n shoot get etcd "$1" -o jsonpath='{.metadata.deletionTimestamp}/{.metadata.annotations.etcd-warden\.io/hibernate}')" = / ]
}
judge() { # CASE E WHAT OUT
    local got
    got=$(where "$2")
    live "$2" || wh_fail "$1: Etcd $2 is not live"
    if [ "${got%% *}" = off ]; then
        hole "$1: $3: ConfigMap $2-config stored with etcd's data-dir ${got#off } (on no claim of StatefulSet $2) for live Etcd $2: each member's next start runs etcd on an empty data directory, off the data on its claim (no snapshot, no break glass)"
    else held "$1: refused (data-dir $got): $(tr '\n' ' ' <<<"$4" | head -c 400)"; fi
}
conf() { # E DATA-DIR: etcd-druid's etcd.conf.yaml of E with that data-dir
    kc -n shoot get configmap "$1-config" -o jsonpath='{.data.etcd\.conf\.yaml}' |
        sed "s|^data-dir: .*|data-dir: $2|"
}
for e in etcd-a etcd-b; do
    [ "$(where $e)" = "on $e" ] || wh_fail "etcd's data-dir of $e is not on its claim: $(where $e)"
done

# ---- control: the sixth attack's fix, an emptyDir over etcd's data directory in the template
out=$(wh_as alice patch statefulset etcd-a --type json -p '[
  {"op":"add","path":"/spec/template/spec/volumes","value":[{"name":"scratch","emptyDir":{}}]},
  {"op":"add","path":"/spec/template/spec/containers/0/volumeMounts/-","value":{"name":"scratch","mountPath":"/var/etcd/data/new.etcd"}}]' 2>&1) &&
    wh_fail "control: an emptyDir over /var/etcd/data/new.etcd is admitted (the sixth attack's fix is not there)"
echo "ok: control: an emptyDir mounted over etcd's data directory is refused"

# ---- K1: data-dir patched in the ConfigMap
out=$(wh_as alice patch configmap etcd-a-config --type merge \
    -p "$(jq -n --arg c "$(conf etcd-a /var/etcd/scratch/new.etcd)" '{data: {"etcd.conf.yaml": $c}}')" 2>&1)
judge K1 etcd-a "alice (protection disabled) patched etcd.conf.yaml of ConfigMap etcd-a-config to data-dir /var/etcd/scratch/new.etcd" "$out"

# ---- K2: the ConfigMap replaced
c=$(conf etcd-b /tmp/new.etcd)
out=$(wh_as alice delete configmap etcd-b-config 2>&1)
out+=$(wh_as alice create configmap etcd-b-config --from-literal=etcd.conf.yaml="$c" 2>&1)
judge K2 etcd-b "alice (protection disabled) deleted ConfigMap etcd-b-config and created her own with data-dir /tmp/new.etcd" "$out"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): etcd's data directory moved off the members' claims"; exit 1; }
echo "attack7_config_datadir: ok"
