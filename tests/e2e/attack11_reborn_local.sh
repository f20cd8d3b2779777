#!/usr/bin/env bash
# A namespace deleted and created again takes over the Local directories its predecessor's
# Etcds left behind. Issue 29: no backup is handed to another tenant. docs/backup-entries.md
# (Local stores): "A namespace deleted and created again is another owner: a BackupEntry made
# before the namespace was created ... grants the new namespace nothing and is in the way of its
# Etcds there, as warden-webhook already refuses an Etcd reattaching to such an entry";
# (Reattach) "warden-webhook refuses an Etcd that would reattach to an entry made before its
# namespace was created ... so the old cluster's backups are never restored into the new
# namespace's cluster".
#   No BackupBucket. Namespace shoot, warden-controller running:
#   D. Etcd etcd-d at bkt/shoot--d/etcd (Secret etcd-backup at /var/lib/lb) is deleted: its
#      directory keeps an entry of no bucket.
#   M. Etcd etcd-m at bkt/shoot--m/etcd (Secret etcd-backup-m at /var/lib/lb) moves by its
#      Secret to /var/lib/lb2, then is deleted: both directories keep entries.
#   Namespace shoot is deleted and created again (another owner), with the same Secrets; the
#   claim Leases are deleted (as their records lapse after PCLAIM_TTL_S). The new shoot tries
#   an EtcdRestore from each directory left behind (a dry run) and the Etcds etcd-d, etcd-m on
#   their old directories.
# Control: before the namespace goes, shoot's own restores from both directories are admitted;
# namespace other's are refused.
# Oracle: admission, and the entries' spec.etcd.uid (reattached to the new Etcd). Fails (HOLE)
# while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
etcd() { local_etcd "$1" "$2" bkt "$3" "${4:-etcd-backup}" ${5:+"$5"}; } # ns name prefix secret [kubectl flag]
restore() { # ns name source-prefix
    kc apply --dry-run=server -f - <<EOF2
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $2, namespace: $1}
spec:
  source: {store: {provider: Local, container: bkt, prefix: $3, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-$2, store: {provider: Local, container: obkt, prefix: $1/$2, secretRef: {name: etcd-backup}}}
EOF2
}
# an entry for shoot's Etcd $2 of directory $3/bkt/$1 exists (the Etcd deleted when $4 is "deleted")
entry_is() {
    kc get backupentries -o json | jq -e --arg p "$1" --arg e "$2" --arg h "$3" --arg d "${4:-}" '[.items[] | select(.spec.prefix == $p
        and .spec.etcd.namespace == "shoot" and .spec.etcd.name == $e and .spec.bucketName == ""
        and .metadata.annotations["etcd-warden.io/local-host-path"] == $h
        and ($d == "" or .spec.etcdDeletedAt != null))] | length > 0' >/dev/null
}
entry_uids() { kc get backupentries -o json | jq -r '[.items[] | .spec.etcd.uid] | join(" ")'; }
forget_leases() {
    kc get leases -A -o json |
        jq -r '.items[] | select(.metadata.name | startswith("etcd-warden-claims-")) | "\(.metadata.namespace) \(.metadata.name)"' |
        while read -r ns name; do kc -n "$ns" delete lease "$name" >/dev/null; done
}
entries() { kc get backupentries -o json | jq -c '[.items[] | {n: .metadata.name, p: .spec.prefix, e: .spec.etcd.name, u: .spec.etcd.uid, h: .metadata.annotations["etcd-warden.io/local-host-path"], d: .spec.etcdDeletedAt, c: .metadata.creationTimestamp}]'; }
# the clock has passed the second $1 (RFC 3339, UTC) names
past_second() { [[ "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$1" ]]; }
# the control: shoot's own restores from its directories left behind admitted, other's refused
control() {
    local d
    for d in shoot--d/etcd shoot--m/etcd; do
        restore shoot "r${d:7:1}" "$d" >/dev/null 2>&1 || return 1
        ! restore other "r${d:7:1}" "$d" >/dev/null 2>&1 || return 1
    done
}
# the re-created namespace's restores and Etcds (dry runs) on the earlier one's directories refused
held() {
    local d
    for d in shoot--d/etcd shoot--m/etcd; do
        ! restore shoot "r${d:7:1}" "$d" >/dev/null 2>&1 || return 1
        ! etcd shoot "etcd-${d:7:1}" "$d" etcd-backup --dry-run=server >/dev/null 2>&1 || return 1
    done
}
# an entry the earlier namespace's Etcds left is attached to an Etcd of the new namespace
reattached() {
    local u
    for u in $(kc -n shoot get etcd -o jsonpath='{.items[*].metadata.uid}' 2>/dev/null); do
        if ! grep -qw "$u" <<<"$old_uids" && grep -qw "$u" <<<"$(entry_uids)"; then return 0; fi
    done
    return 1
}
secrets() {
    local_host_path shoot etcd-backup /var/lib/lb
    local_host_path shoot etcd-backup-m /var/lib/lb
}

mkdir -p "$NODE/var/lib/lb/bkt" "$NODE/var/lib/lb2/bkt" "$NODE/var/lib/lb/obkt"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
secrets
local_host_path other etcd-backup /var/lib/lb
wh_register_backups
ctl_start

out=$(etcd shoot etcd-d shoot--d/etcd 2>&1) || ctl_fail "shoot/etcd-d refused: $out"
out=$(etcd shoot etcd-m shoot--m/etcd etcd-backup-m 2>&1) || ctl_fail "shoot/etcd-m refused: $out"
ksim_wait 60 entry_is shoot--d/etcd etcd-d /var/lib/lb || ctl_fail "no entry for etcd-d: $(entries)"
ksim_wait 60 entry_is shoot--m/etcd etcd-m /var/lib/lb || ctl_fail "no entry for etcd-m: $(entries)"
for d in shoot--d/etcd shoot--m/etcd; do # the sidecars' snapshots
    mkdir -p "$NODE/var/lib/lb/bkt/$d/v2"
    snap_fixture "$NODE/var/lib/lb/bkt/$d/v2/Full-00000000-00000100-$(($(date +%s) - 60)).gz" 4096 Full.gz
done
local_host_path shoot etcd-backup-m /var/lib/lb2 # etcd-m moves by its Secret
ksim_wait 150 entry_is shoot--m/etcd etcd-m /var/lib/lb2 || ctl_fail "no entry for etcd-m's new directory: $(entries)"
kc -n shoot delete etcd etcd-d etcd-m --wait=false >/dev/null
ksim_wait 30 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get etcd etcd-d etcd-m 2>/dev/null | grep -q etcd" ||
    ctl_fail "the Etcds are not deleted"
ksim_wait 60 entry_is shoot--d/etcd etcd-d /var/lib/lb deleted || ctl_fail "etcd-d's entry not released: $(entries)"
ksim_wait 60 entry_is shoot--m/etcd etcd-m /var/lib/lb2 deleted || ctl_fail "etcd-m's entry not released: $(entries)"
forget_leases
# the webhook's caches follow the deletions
if ! ksim_wait 30 control; then
    for d in shoot--d/etcd shoot--m/etcd; do
        out=$(restore shoot "r${d:7:1}" "$d" 2>&1) || ctl_fail "control: shoot's own restore from /var/lib/lb/bkt/$d refused: $out"
        if out=$(restore other "r${d:7:1}" "$d" 2>&1); then ctl_fail "control: other's restore from /var/lib/lb/bkt/$d admitted: $out"; fi
    done
fi
ok "control: shoot's own restores from its directories left behind admitted, other's refused"
old_uids=$(entry_uids)
ok "entries: $(entries)"

kc delete namespace shoot --wait=false >/dev/null
ksim_wait 30 ksim_gone namespace shoot || ctl_fail "namespace shoot stays"
# creation times have seconds: the new namespace is created after the entries, visibly
latest=$(kc get backupentries -o json | jq -r '[.items[].metadata.creationTimestamp] | max')
ksim_wait 5 past_second "$latest" || ctl_fail "the clock never passed $latest"
kc create namespace shoot >/dev/null
created=$(kc get namespace shoot -o jsonpath='{.metadata.creationTimestamp}')
[[ "$created" > "$latest" ]] || ctl_fail "namespace shoot created at $created, not after the entries ($latest)"
secrets
forget_leases
ksim_wait 30 held || true # the webhook's caches; a hole is still there at the deadline

holes=0
for d in shoot--d/etcd shoot--m/etcd; do
    if out=$(restore shoot "r${d:7:1}" "$d" 2>&1); then
        echo "HOLE: the namespace shoot created again may restore from /var/lib/lb/bkt/$d, left behind by the earlier namespace shoot's Etcd: $out"
        holes=$((holes + 1))
    else echo "held: restore from /var/lib/lb/bkt/$d refused: ${out:0:220}"; fi
done
for e in etcd-d:shoot--d/etcd etcd-m:shoot--m/etcd; do
    if out=$(etcd shoot "${e%%:*}" "${e#*:}" 2>&1); then
        echo "HOLE: the namespace shoot created again has its Etcd ${e%%:*} admitted on /var/lib/lb/bkt/${e#*:}, the earlier namespace's directory (its sidecar restores the old cluster's snapshots at its first start): $out"
        holes=$((holes + 1))
    else echo "held: Etcd ${e%%:*} on /var/lib/lb/bkt/${e#*:} refused: ${out:0:220}"; fi
done
# warden-controller's pass over an Etcd of the new namespace, if one was admitted: the entries
# are looked at every minute and on every Etcd event
if [ -n "$(kc -n shoot get etcd -o name 2>/dev/null)" ] && ksim_wait 90 reattached; then
    echo "HOLE: an entry of the earlier namespace shoot reattached to the new namespace's Etcd: $(entries)"
    holes=$((holes + 1))
fi
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a re-created namespace takes the earlier namespace's Local directories"; exit 1; }
echo "attack11_reborn_local: ok"
