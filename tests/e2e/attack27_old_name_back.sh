#!/usr/bin/env bash
# docs/backup-entries.md, "Upgrading": "Entries made then keep their names: an entry is looked up
# under its claim's 16-digit name, then under the 8-digit one, and one of either name that is the
# claim is its entry"; T1/T2: "warden-webhook, when it admits an UPDATE that changes anything of
# an Etcd's spec.backup.store ..., writes its time into the entries of the earlier and the new
# prefix that record this Etcd, as spec.etcdStoreChangedAt ... The deletion window ends no later".
# shoot/etcd-a's entry was made by an earlier release, under its claim's 8-digit name (planted
# before warden-controller starts, as an upgrade finds it); the controller adopts it (members
# seen). Then the move away and back of attack26_move_paused_back: warden-controller paused,
# etcd-a moved to shoot--away, the cluster on another seed writes into shoot--etcd-a, etcd-a
# moved back, the controller resumes. etcd-a is later deleted; past the grace period the entry's
# deletion must keep what the other seed wrote while etcd-a was away. Oracle: s3rver's listing.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
OLD=$P--$(printf 'Object|%s|\n%s' "$SNAP_BUCKET" "$P" | sha256sum | cut -c1-8)
kc apply -f - >/dev/null <<YAML || ctl_fail "cannot plant the earlier release's entry $OLD"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupEntry
metadata: {name: $OLD, labels: {app.kubernetes.io/managed-by: etcd-warden}}
spec:
  bucketName: s3
  prefix: "$P"
  store: {provider: S3, container: $SNAP_BUCKET, endpointOverride: ""}
  etcd: {namespace: shoot, name: etcd-a, uid: "$(jp shoot etcd/etcd-a '{.metadata.uid}')"}
  claimedAt: "$(jp shoot etcd/etcd-a '{.metadata.creationTimestamp}')"
YAML
ctl_start
rel_written
E=$REL_E
[ "$E" = "$OLD" ] || echo "note: the entry of etcd-a is $E, not the earlier release's $OLD"
echo "entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.spec.etcd.name} {end}')"
rel_away_back kc '{"prefix":"shoot--away"}' '{"prefix":"'"$P"'"}' "while etcd-a was away"
rel_judge "$REL_X" "by the cluster on another seed while etcd-a was moved away (away and back while warden-controller was paused; its entry of an earlier release's 8-digit name)"
echo "attack27_old_name_back: ok"
