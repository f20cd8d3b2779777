#!/usr/bin/env bash
# "A BackupEntry's deletion waits while an EtcdRestore reads from its prefix" holds only for a
# restore the API server has stored. Etcd shoot/etcd-main (prefix shoot--etcd-main, its full
# snapshot written, its entry made) is deleted by mistake; within the grace period shoot
# applies EtcdRestore r from that prefix to bring it back: warden-webhook admits it (records its
# target in the claim Lease; its source is recorded nowhere), and a second validating webhook
# (a stand-in for any policy webhook) holds the request. The grace period ends meanwhile (the
# operator shortens it): warden-controller reads the restores from the API server only, where r
# is not stored yet, marks the entry Deleting, and its deletion Job deletes the snapshots. The
# second webhook answers and r is stored with nothing left to read: the cluster the owner set
# out to restore within the grace period is gone.
# Wanted: a deletion counts the restores admitted and not stored yet (e.g. the source recorded
# in the claim Lease with the target), as a copy counts the admitted Etcds.
# Oracle: s3rver's listing; kube-sim's record of the restore and of the entry.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/holdhook.sh"
ksim_on_exit snap_cleanups
P=shoot--etcd-main

entry_of() {
    kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name} {.spec.etcd.namespace}/{.spec.etcd.name}{"\n"}{end}' |
        awk '$2 == "shoot/etcd-main" { print $1 }'
}
has_entry() { [ -n "$(entry_of)" ]; }
ephase() { kc get backupentry "$e" -o jsonpath='{.status.phase}' 2>/dev/null; }
listing() { snap_s3 ls "$P/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot
ctl_s3_bucket 1h
wh_register_backups
ctl_jobs_serve etcd-warden

# The second validating webhook: once $HOLD/armed exists it holds an EtcdRestore CREATE of
# namespace shoot until $HOLD/release exists (28 s at most); it allows everything.
HOLD=$SNAP_WORK/hold
holdhook_start "$HOLD" shoot etcd-warden.io etcdrestores
ctl_start
ctl_store_etcd shoot etcd-main S3 "$SNAP_BUCKET" "$P"
# its members run (kube-sim runs no pods): what it writes is provably its own, so its
# deletion Job deletes it (controller/entries/bkeseen.h)
ctl_members shoot etcd-main
ksim_wait 20 has_entry || ctl_fail "no entry for shoot/etcd-main"
ctl_members_seen shoot etcd-main
e=$(entry_of)
sleep 1 # its sidecar writes after the claim began (object times have seconds)
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "$P/v2/$snap" "$SNAP_WORK/full"
kc -n shoot delete etcd etcd-main >/dev/null
pending() { [ "$(ephase)" = PendingDeletion ]; }
ksim_wait 30 pending || ctl_fail "$e not pending: $(kc get backupentry "$e" -o jsonpath='{.status}')"
ok "shoot/etcd-main deleted: entry $e PendingDeletion, $P holds $(listing)"

touch "$HOLD/armed"
(rc=0; kc apply -f - >"$HOLD/apply.out" 2>&1 <<EOF || rc=$?; echo $rc >"$HOLD/apply.rc") &
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: shoot}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-main, store: {provider: S3, container: $SNAP_BUCKET, prefix: restored--shoot, secretRef: {name: etcd-backup}}}
EOF
APPLY_PID=$!
recorded() {
    kc get leases -A -o json | jq -e '[.items[] | select(.metadata.name | startswith("etcd-warden-claims-"))
        | .metadata.annotations["etcd-warden.io/claims"] // "[]" | fromjson | .[] | select(tostring | contains("restored--shoot"))] | length > 0' >/dev/null
}
answered() { [ -s "$HOLD/apply.rc" ]; }
deadline=$((SECONDS + $(ksim_secs 20)))
until { [ -e "$HOLD/held" ] && recorded; } || answered || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
answered && ctl_fail "shoot's EtcdRestore answered before being held: $(cat "$HOLD/apply.out" "$HOLD/apply.rc")"
[ -e "$HOLD/held" ] && recorded ||
    ctl_fail "the EtcdRestore was not admitted and held within $(ksim_secs 20) s (held: $([ -e "$HOLD/held" ] && echo yes || echo no); kubectl: $(cat "$HOLD/apply.out" 2>/dev/null))"
held_at=$SECONDS
ok "shoot applies EtcdRestore r from $P within the grace period: admitted by warden-webhook (its target recorded), held by the second webhook"

ctl_s3_bucket 2s
decided() {
    [ "$(ephase)" = Deleting ] || ! kc get backupentry "$e" >/dev/null 2>&1 ||
        [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}' 2>/dev/null)" ]
}
while ! decided && [ $((SECONDS - held_at)) -lt 20 ]; do sleep 0.1; done
decision=$(ephase || true)
[ -n "$(kc -n shoot get etcdrestore r -o name 2>/dev/null || true)" ] &&
    ctl_fail "the EtcdRestore was stored while held: the script's premise failed"
touch "$HOLD/release"
reap_child "$APPLY_PID" 20 none || true
decided || ctl_fail "inconclusive: within the hold the grace period's end decided nothing for $e ($(kc get backupentry "$e" -o jsonpath='{.status}'))"
ok "decided while the restore was held: entry ${decision:-gone}"
stored() { kc -n shoot get etcdrestore r >/dev/null 2>&1; }
ksim_wait 20 stored || ctl_fail "the EtcdRestore was not stored: $(cat "$HOLD/apply.out")"
settled() {
    ! kc get backupentry "$e" >/dev/null 2>&1 ||
        [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.lastError}{.status.conditions[?(@.type=="PrefixConflict")].message}')" ]
}
ksim_wait 90 settled || ctl_fail "$e did not settle: $(kc get backupentry "$e" -o jsonpath='{.status}')"
left=$(listing)
if ! grep -qF "$P/v2/$snap" <<<"$left"; then
    ctl_fail "HOLE: EtcdRestore shoot/r, applied within the grace period of entry $e to bring back the deleted etcd-main from $P (admitted by warden-webhook), did not hold back the deletion: the entry went ${decision:-away} while the restore's CREATE was held by another webhook, and its deletion Job deleted $P/v2/$snap; the restore has nothing to read (r: $(jp shoot etcdrestore/r '{.status.phase} {.status.error}' 2>/dev/null); listing: ${left:-nothing})"
fi
ok "the snapshots the restore reads are kept (entry $(ephase || echo gone); $left)"
ctl_stop
echo "attack7_restore_unstored_source: ok"
