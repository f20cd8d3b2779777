#!/usr/bin/env bash
# A BackupEntry's name cannot be taken by another claim. Entries are named after their claim:
# the prefix made a name, "--", and hex digits of sha256("<store key>\n<prefix>"). With 8 digits
# (32 bits) a tenant, who picks her own bucket and prefix, finds in minutes a claim of hers whose
# entry name is a victim's coming entry's (same readable part: "shoot__etcd.main" reads as
# "shoot--etcd-main"), and her Etcd's entry takes it first. warden-controller then took "an entry
# of that name" for the victim's claim: the victim's Etcd got no entry (a PrefixConflict naming
# the tenant in a bucket's store; nothing at all in a store no bucket owns), so its backups were
# kept by nothing once it was deleted.
#   Bucket "shared" (aws, etcd-bucket); store team-bucket has no bucket. Planted first, as the
#   tenant's winning entries would look (her Etcd mallory/etcd-x, her store mallory-bucket, a
#   prefix that reads alike; 2^32 hashes are not run here): entries named as the victims' claims'
#   8-digit names. Then the victims shoot/etcd-main (shared, shoot--etcd-main) and
#   team/etcd-main (team-bucket, team--etcd-main). shoot/etcd-main is deleted at the end.
# Control: shoot/etcd-events, a normal Etcd of the bucket, gets its entry named after its claim.
# Upgrade: entries made by an earlier release under the 8-digit names of live Etcds
#   (shoot/etcd-old in the bucket, team/etcd-old in team-bucket) stay their entries: no second
#   entry made, never released while the Etcds live.
# Oracle: the BackupEntries and the victims' events. Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

etcd() { ctl_store_etcd "$1" "$2" aws "$3" "$4"; } # ns name container prefix
name_of() { # container prefix digits: the entry name of that claim (prefixes here read as names)
    echo "$2--$(printf 'Object|%s|\n%s' "$1" "$2" | sha256sum | cut -c1-"$3")"
}
entry_json() { kc get backupentry "$1" -o json 2>/dev/null || true; }
entries_of() { # ns name: the names of the entries of Etcd ns/name, sorted
    kc get backupentries -o json |
        jq -r --arg ns "$1" --arg n "$2" '.items[] | select(.spec.etcd.namespace == $ns and .spec.etcd.name == $n) | .metadata.name' | sort
}
has_entry() { [ -n "$(entries_of "$1" "$2")" ]; }
plant() { # name bucket ns etcd uid container prefix
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot plant BackupEntry $1"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupEntry
metadata: {name: $1, labels: {app.kubernetes.io/managed-by: etcd-warden}}
spec:
  bucketName: "$2"
  prefix: "$7"
  store: {provider: S3, container: $6, endpointOverride: ""}
  etcd: {namespace: $3, name: $4, uid: "$5"}
  claimedAt: "2026-01-01T00:00:00Z"
EOF
}
claim_is() { # entry ns name container prefix: the entry is that Etcd's claim
    [ "$(entry_json "$1" | jq -r '"\(.spec.etcd.namespace)/\(.spec.etcd.name) \(.spec.store.container) \(.spec.prefix)"')" = "$2/$3 $4 $5" ]
}

ctl_stage
ctl_namespace shoot team mallory
ctl_backup_secret etcd-warden bucket-credentials
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec: {provider: aws, container: etcd-bucket, secretRef: {namespace: etcd-warden, name: bucket-credentials}, deletionGracePeriod: 1h}
EOF
# the tenant's live Etcd and the entries she won (her claim, the victims' 8-digit names)
etcd mallory etcd-x mallory-bucket shoot__etcd.main
xuid=$(kc -n mallory get etcd etcd-x -o jsonpath='{.metadata.uid}')
won_shoot=$(name_of etcd-bucket shoot--etcd-main 8)
won_team=$(name_of team-bucket team--etcd-main 8)
plant "$won_shoot" "" mallory etcd-x "$xuid" mallory-bucket shoot__etcd.main
plant "$won_team" "" mallory etcd-x "$xuid" mallory-bucket team__etcd.main
# the upgrade: entries an earlier release made for live Etcds, under their 8-digit names
etcd shoot etcd-old etcd-bucket shoot--etcd-old
etcd team etcd-old team-bucket team--etcd-old
old_shoot=$(name_of etcd-bucket shoot--etcd-old 8)
old_team=$(name_of team-bucket team--etcd-old 8)
plant "$old_shoot" shared shoot etcd-old "$(kc -n shoot get etcd etcd-old -o jsonpath='{.metadata.uid}')" etcd-bucket shoot--etcd-old
plant "$old_team" "" team etcd-old "$(kc -n team get etcd etcd-old -o jsonpath='{.metadata.uid}')" team-bucket team--etcd-old
ctl_start

# the control
etcd shoot etcd-events etcd-bucket shoot--etcd-events
ksim_wait 30 has_entry shoot etcd-events || ctl_fail "control: no entry for shoot/etcd-events"
e=$(entries_of shoot etcd-events)
case $e in
"$(name_of etcd-bucket shoot--etcd-events 8)"*) ;;
*) ctl_fail "control: shoot/etcd-events's entry is $e, not named after its claim" ;;
esac
claim_is "$e" shoot etcd-events etcd-bucket shoot--etcd-events || ctl_fail "control: entry $e: $(entry_json "$e")"
ok "control: shoot/etcd-events's entry $e, named after its claim"

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
[ "$e" = "$(name_of etcd-bucket shoot--etcd-events 16)" ] ||
    hole "entry $e is not named with 16 hex digits of its claim's hash: with 8 a tenant finds a claim of hers with that name in 2^32 tries"

# the victims, created after the tenant won their names
etcd shoot etcd-main etcd-bucket shoot--etcd-main
etcd team etcd-main team-bucket team--etcd-main
for v in "shoot etcd-main etcd-bucket shoot--etcd-main" "team etcd-main team-bucket team--etcd-main"; do
    read -r ns name container prefix <<<"$v"
    if ksim_wait 20 has_entry "$ns" "$name"; then
        e=$(entries_of "$ns" "$name")
        claim_is "$e" "$ns" "$name" "$container" "$prefix" || ctl_fail "$ns/$name's entry $e: $(entry_json "$e")"
        ok "$ns/$name has its own entry $e ($container, $prefix)"
    else
        hole "$ns/$name (store $container, prefix $prefix) has no BackupEntry: the tenant's entry of another claim under its name was taken for its claim's"
    fi
done
if ctl_events shoot etcd-main | grep -q mallory; then
    hole "shoot/etcd-main's events name the tenant's Etcd as the owner of its prefix: $(ctl_events shoot etcd-main | head -2)"
fi
claim_is "$won_shoot" mallory etcd-x mallory-bucket shoot__etcd.main || ctl_fail "the tenant's entry changed: $(entry_json "$won_shoot")"
claim_is "$won_team" mallory etcd-x mallory-bucket team__etcd.main || ctl_fail "the tenant's entry changed: $(entry_json "$won_team")"
ok "the tenant's entries are hers, untouched"

# the upgrade rows: one entry each, the earlier release's, Active
sleep 2 # passes enough for a second entry to show (each pass takes milliseconds)
for v in "shoot etcd-old $old_shoot" "team etcd-old $old_team"; do
    read -r ns name old <<<"$v"
    expect "$ns/$name keeps the entry of its 8-digit name, no second one" "$old" "$(entries_of "$ns" "$name")"
    expect "$ns/$name's entry is not released while it lives" "Active " \
        "$(entry_json "$old" | jq -r '"\(.status.phase) \(.spec.etcdDeletedAt // "")"')"
done

# the victim's backups kept once it is deleted: its entry pending, with the bucket's grace period
if [ -n "$(entries_of shoot etcd-main)" ]; then
    e=$(entries_of shoot etcd-main)
    kc -n shoot delete etcd etcd-main --wait=false >/dev/null
    pending() { [ -n "$(entry_json "$e" | jq -r '.spec.etcdDeletedAt // empty')" ]; }
    ksim_wait 30 pending || ctl_fail "shoot/etcd-main deleted, its entry $e not pending: $(entry_json "$e")"
    ok "shoot/etcd-main deleted: its entry $e keeps its backups, PendingDeletion"
fi
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a BackupEntry's name taken by another claim"; exit 1; }
echo "attack13_entry_name_collision: ok"
