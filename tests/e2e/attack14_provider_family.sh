#!/usr/bin/env bash
# Two Etcds of two namespaces on one container and prefix, their providers spelled by two of
# the names etcd-druid accepts for one backup store client, on kube-sim with warden-webhook
# (--backup-entries --etcd-backups). Issue 29: "one store as the sidecar sees it"; "never a
# false apart". etcd-druid's validation accepts aws, S3, stackit, azure, ABS, alicloud, OSS,
# openstack, Swift, gcp, GCS, dell, ECS, openshift, OCS, Local, local (shared/reference
# etcd-druid.md §2), and maps stackit to S3 (an S3 store), dell to ECS and openshift to OCS;
# etcd-backup-restore's ECS and OCS stores are S3 clients whose endpoint comes from the Secret.
# docs/backup-entries.md: stores "compare by provider and container, not endpoint".
#   P1. for each pair (A, B): Etcd one/e-N on provider A, container etcd-bucket, prefix pN;
#       then Etcd two/e-N on provider B, the same container and prefix: refused (overlap),
#       or refused as an unknown provider (fail closed), never admitted.
#   P0. control: the second Etcd on another prefix is admitted for each admitted provider.
# Oracle: what kube-sim stores: two live Etcds of two namespaces on one container and prefix,
# of providers that etcd-backup-restore serves with one client family.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

edoc() { # NS NAME PROVIDER PREFIX
    jq -n --arg ns "$1" --arg n "$2" --arg pr "$3" --arg p "$4" '{apiVersion: "druid.gardener.cloud/v1alpha1", kind: "Etcd",
        metadata: {name: $n, namespace: $ns}, spec: {replicas: 1, labels: {app: "etcd-statefulset"},
        etcd: {clientPort: 2379, serverPort: 2380},
        backup: {port: 8080, store: {provider: $pr, container: "etcd-bucket", prefix: $p, secretRef: {name: "etcd-backup"}}}}}'
}
create() { edoc "$@" | kc create -f - 2>&1; }
stored() { [ -n "$(kc -n "$1" get etcd "$2" -o name 2>/dev/null)" ]; }

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace one two
wh_caught_up
holes=0 n=0
for pair in aws:stackit S3:stackit aws:dell aws:ECS aws:OCS aws:openshift ECS:OCS dell:openshift azure:ABS gcp:GCS openstack:Swift alicloud:OSS Local:local; do
    a=${pair%%:*} b=${pair##*:}
    n=$((n + 1))
    out=$(create one e-$n "$a" p$n/etcd)
    stored one e-$n || { echo "held: P1: provider $a refused on its own: $(tr '\n' ' ' <<<"$out" | head -c 200)"; continue; }
    wh_caught_up
    out=$(create two e-$n "$b" p$n/etcd)
    if stored two e-$n; then
        echo "HOLE: P1: Etcds one/e-$n (provider $a) and two/e-$n (provider $b) both admitted on container etcd-bucket, prefix p$n/etcd: one store client family, two clusters, one prefix"
        holes=$((holes + 1))
    else
        echo "held: P1: $a then $b on one prefix: $(tr '\n' ' ' <<<"$out" | grep -o 'overlaps[^:]*\|unknown provider[^(]*\|denied the request: [^:]*' | head -1)"
        out=$(create two f-$n "$b" q$n/etcd)
        stored two f-$n && echo "ok: control: P0: $b on another prefix admitted" ||
            echo "held: P0: provider $b refused on another prefix too: $(tr '\n' ' ' <<<"$out" | head -c 200)"
    fi
done
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): one store's prefix claimed twice through provider spellings"; exit 1; }
echo "attack14_provider_family: ok"
