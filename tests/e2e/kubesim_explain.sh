#!/usr/bin/env bash
# `kubectl explain` works against kube-sim as against kube-apiserver: kube-sim
# publishes /openapi/v3 with a hashed serverRelativeURL per group version and,
# per group version, the schemas of its kinds built from the CRDs installed.
# Real kubectl explains the project's CRDs (charts/) and etcd-druid's Etcd
# (DRUID_CRD_DIR, else the chart's copy): every field's description in the CRD
# file is what kubectl prints, `--recursive` lists every field, an unknown
# field is refused. A changed CRD changes its document's hash, so kubectl's
# HTTP cache never serves an outdated schema; an outdated hash is redirected
# to the current one. Built-in kinds say that only their standard fields are
# published.
set -euo pipefail
. "$(dirname "$0")/../lib/kubesim.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
src=$(cd "$(dirname "$0")/../.." && pwd)
crds=$src/charts/etcd-warden/crds
etcd_crd=$crds/druid.gardener.cloud_etcds.yaml
[ -n "${DRUID_CRD_DIR:-}" ] && etcd_crd=$DRUID_CRD_DIR/druid.gardener.cloud_etcds.yaml
ok() { echo "ok: $*"; }
expect() { # what, wanted substring, output
    case "$3" in *"$2"*) ok "$1" ;; *) ksim_fail "$1: wanted '$2' in: $3" ;; esac
}
flat() { tr -s ' \n\t' ' ' <<<"$1"; }
kubesim_start
work=$KSIM_DIR/work
mkdir -p "$work"

for f in "$crds"/etcd-warden.io_*.yaml; do kc apply -f "$f" >/dev/null; done
kc apply -f "$etcd_crd" >/dev/null
ksim_wait 10 kc get etcds,etcdbackups,backupentries

# Every direct child of FIELD of KIND: kubectl prints its name and the CRD file's description.
check_fields() { # file kind resource field
    local file=$1 kind=$2 res=$3 field=$4 out name desc n=0
    out=$(kc explain "$res${field:+.$field}")
    expect "explain $res${field:+.$field} names the kind" "KIND:       $kind" "$out"
    out=$(flat "$out")
    while IFS=$'\t' read -r name desc; do
        case "$out" in *" $name <"*) ;; *) ksim_fail "explain $res.$field lacks field $name: $out" ;; esac
        if [ -n "$desc" ]; then
            case "$out" in *"$desc"*) ;; *) ksim_fail "explain $res.$field: $name's description '$desc' not in: $out" ;; esac
        fi
        n=$((n + 1))
    done < <(python3 "$src/tests/support/crd_explain.py" "$file" "$kind" "$field")
    [ "$n" -gt 0 ] || ksim_fail "no fields under $res.$field in $file"
    ok "explain $res${field:+.$field}: $n fields with the CRD's descriptions"
}
check_fields "$crds/etcd-warden.io_etcdbackups.yaml" EtcdBackup etcdbackups spec
check_fields "$crds/etcd-warden.io_etcdbackups.yaml" EtcdBackup etcdbackups status
check_fields "$crds/etcd-warden.io_etcdbackups.yaml" EtcdBackup etcdbackups spec.destination
check_fields "$crds/etcd-warden.io_backupentries.yaml" BackupEntry backupentries spec
check_fields "$crds/etcd-warden.io_backupentries.yaml" BackupEntry backupentries spec.etcd
check_fields "$crds/etcd-warden.io_backupbuckets.yaml" BackupBucket backupbuckets spec
check_fields "$crds/etcd-warden.io_etcdbackupschedules.yaml" EtcdBackupSchedule etcdbackupschedules spec
check_fields "$crds/etcd-warden.io_etcdrestores.yaml" EtcdRestore etcdrestores spec
check_fields "$etcd_crd" Etcd etcd spec.backup
check_fields "$etcd_crd" Etcd etcd spec.backup.store

# The kind's own description, and the standard fields kube-apiserver adds.
out=$(kc explain backupentries)
expect "explain backupentries: its group" "GROUP:      etcd-warden.io" "$out"
want=$(python3 -c 'import sys,yaml; d=yaml.safe_load(open(sys.argv[1])); print(" ".join(d["spec"]["versions"][0]["schema"]["openAPIV3Schema"].get("description","").split()[:8]))' "$crds/etcd-warden.io_backupentries.yaml")
[ -n "$want" ] || ksim_fail "the BackupEntry CRD has no description"
expect "explain backupentries: the kind's description" "$want" "$(flat "$out")"
expect "explain backupentries: metadata is ObjectMeta" "metadata	<ObjectMeta>" "$out"
out=$(kc explain etcdbackups.metadata.ownerReferences)
expect "explain through ObjectMeta's reference" "uid	<string> -required-" "$out"

# --recursive lists every field of the CRD under the path, in kubectl's indented form.
out=$(kc explain etcd.spec.backup --recursive)
fields=$(python3 "$src/tests/support/crd_explain.py" --fields "$etcd_crd" Etcd spec.backup)
n=0
while read -r name; do
    grep -qE "^ +$name	<" <<<"$out" || ksim_fail "explain etcd.spec.backup --recursive lacks $name: $out"
    n=$((n + 1))
done <<<"$fields"
ok "explain etcd.spec.backup --recursive: all $n fields"

# Refusals as kube-apiserver's documents make kubectl say them.
if out=$(kc explain etcdbackups.spec.nosuch 2>&1); then ksim_fail "an unknown field was explained: $out"; fi
expect "an unknown field" 'field "nosuch" does not exist' "$out"
out=$(kc explain statefulsets 2>&1)
expect "a built-in kind says what is published" "publishes its standard fields only" "$(flat "$out")"
out=$(kc explain statefulsets.metadata.name 2>&1)
expect "a built-in kind's metadata" "FIELD: name <string>" "$out"

# The discovery document: a hash per group version, and what a request with it gets.
json() { curl -sS --cacert "$KSIM_DIR/ca.crt" -H "Authorization: Bearer $KSIM_TOKEN" "$@"; }
url_of() { json "$KSIM_URL/openapi/v3" | jq -er --arg gv "$1" '.paths[$gv].serverRelativeURL'; }
u1=$(url_of apis/etcd-warden.io/v1alpha1)
[[ $u1 =~ ^/openapi/v3/apis/etcd-warden.io/v1alpha1\?hash=[0-9A-F]{128}$ ]] || ksim_fail "serverRelativeURL: $u1"
hdr=$(json -D- -o "$work/doc.json" "$KSIM_URL$u1")
expect "a hashed document is immutable" "Cache-Control: public, immutable" "$hdr"
[ "$(sha512sum "$work/doc.json" | cut -c1-128 | tr a-f A-F)" = "${u1##*=}" ] ||
    ksim_fail "the hash is not the SHA-512 of the document"
jq -e '.components.schemas["io.etcd-warden.v1alpha1.EtcdBackup"]["x-kubernetes-group-version-kind"] == [{"group":"etcd-warden.io","kind":"EtcdBackup","version":"v1alpha1"}]' \
    "$work/doc.json" >/dev/null || ksim_fail "EtcdBackup's schema lacks its group-version-kind"
ok "serverRelativeURL carries the SHA-512 of the document"

# A changed CRD: new hash, the old one is redirected, and kubectl (same cache) sees the change.
kc explain etcdbackups.spec.etcdName >/dev/null
python3 - "$crds/etcd-warden.io_etcdbackups.yaml" >"$work/changed.yaml" <<'P'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
d["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["etcdName"]["description"] = "A changed description."
yaml.safe_dump(d, sys.stdout)
P
kc apply -f "$work/changed.yaml" >/dev/null
u2=$(url_of apis/etcd-warden.io/v1alpha1)
[ "$u1" != "$u2" ] || ksim_fail "the hash did not change with the CRD"
hdr=$(json -D- -o /dev/null "$KSIM_URL$u1")
expect "an outdated hash is redirected" "Location: $u2" "$hdr"
expect "with a 301" "HTTP/1.1 301" "$hdr"
ksim_wait 10 bash -c 'kubectl --kubeconfig "$KUBECONFIG" --cache-dir "$KSIM_DIR/kubectl-cache" explain etcdbackups.spec.etcdName | grep -q "A changed description."'
ok "kubectl explains the changed CRD"

# A deleted CRD's group version leaves the index.
for f in "$crds"/etcd-warden.io_*.yaml; do kc delete -f "$f" >/dev/null; done
ksim_wait 10 bash -c '! curl -sS --cacert "$KSIM_DIR/ca.crt" -H "Authorization: Bearer $KSIM_TOKEN" "$KSIM_URL/openapi/v3" | grep -q etcd-warden.io'
code=$(json -o /dev/null -w '%{http_code}' "$KSIM_URL/openapi/v3/apis/etcd-warden.io/v1alpha1")
[ "$code" = 404 ] || ksim_fail "a removed group version answers $code"
ok "a deleted CRD's document is gone"
echo PASS
