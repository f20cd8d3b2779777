#!/usr/bin/env bash
# A namespace claiming another namespace's part of a partitioned bucket by a prefix spelled
# with path components the backup sidecar cleans away, on kube-sim with warden-webhook
# (--backup-entries --etcd-backups). Issue 29: "a tenant cannot claim ... another's prefix, nor
# block other tenants in a partitioned bucket"; "one store as the sidecar sees it".
# docs/backup-entries.md (Prefixes partitioned by namespace): "A claim of a prefix that belongs
# to another namespace (or to none) is refused at admission"; its owner is named by "its first
# segment, followed by /". etcd-backup-restore writes under path.Join(prefix, "v2")
# (SnapstoreConfig.Complete), which cleans "." and ".." components and doubled slashes: the
# prefix evil/../team/etcd-main is written, listed and garbage-collected as
# team/etcd-main/v2/...
#   D1. BackupBucket shared (aws, etcd-bucket, prefixScope Namespace). Namespace evil (alice,
#       edit rights there) creates Etcds whose prefixes start with its own segment and clean to
#       team's part: evil/../team/etcd-main and others. Then team's own Etcd at team/etcd-main.
#   D0. control: evil's Etcd at evil/etcd-main and team's at team/etcd-other are admitted.
# Oracle: what kube-sim stores: an Etcd of namespace evil whose prefix, cleaned as the sidecar
# cleans it, lies in team's part; team's own Etcd refused there.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

edoc() { # NS NAME PREFIX
    jq -n --arg ns "$1" --arg n "$2" --arg p "$3" '{apiVersion: "druid.gardener.cloud/v1alpha1", kind: "Etcd",
        metadata: {name: $n, namespace: $ns}, spec: {replicas: 1, labels: {app: "etcd-statefulset"},
        etcd: {clientPort: 2379, serverPort: 2380},
        backup: {port: 8080, store: {provider: "S3", container: "etcd-bucket", prefix: $p, secretRef: {name: "etcd-backup"}}}}}'
}
create() { edoc "$@" | WH_AS_NS=$1 wh_as alice create -f - 2>&1; }
stored() { [ -n "$(kc -n "$1" get etcd "$2" -o name 2>/dev/null)" ]; }

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace team evil
ctl_backup_secret etcd-warden creds
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket shared"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: etcd-bucket
  secretRef: {namespace: etcd-warden, name: creds}
  deletionGracePeriod: 1h
  prefixScope: Namespace
EOF
ksim_wait 10 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' get backupbucket shared -o jsonpath='{.spec.prefixScope}')\" = Namespace ]" ||
    ctl_fail "BackupBucket shared not stored with prefixScope Namespace"
wh_caught_up

out=$(create evil etcd-own evil/etcd-main); stored evil etcd-own || ctl_fail "control: evil's Etcd at evil/etcd-main refused: $out"
out=$(create team etcd-other team/etcd-other); stored team etcd-other || ctl_fail "control: team's Etcd at team/etcd-other refused: $out"
out=$(create evil etcd-x team/etcd-x); stored evil etcd-x && ctl_fail "evil's Etcd at team/etcd-x admitted: the partition does not hold at all"
echo "ok: control: each namespace claims its own part; evil at team/etcd-x refused"

holes=0 i=0
for p in evil/../team/etcd-main evil/./../team/etcd-main2 evil//../team/etcd-main3 evil/x/../../team/etcd-main4; do
    i=$((i + 1))
    out=$(create evil etcd-d$i "$p")
    if stored evil etcd-d$i; then
        echo "HOLE: D1: namespace evil's Etcd etcd-d$i admitted at prefix \"$p\", which the sidecar writes and garbage-collects as team/${p##*/team/}/v2/... in namespace team's part of partitioned BackupBucket shared"
        holes=$((holes + 1))
    else echo "held: D1: \"$p\" refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"; fi
done
if [ "$holes" -gt 0 ]; then
    wh_caught_up
    out=$(create team etcd-main team/etcd-main)
    if stored team etcd-main; then echo "team's Etcd at team/etcd-main admitted beside evil's claims"
    else
        echo "HOLE: D1: namespace team's own Etcd at team/etcd-main is refused in its own part: $(tr '\n' ' ' <<<"$out" | head -c 300)"
        holes=$((holes + 1))
    fi
fi
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): another namespace's part of a partitioned bucket claimed through .. components"; exit 1; }
echo "attack14_part_dotdot: ok"
