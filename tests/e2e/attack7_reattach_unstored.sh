#!/usr/bin/env bash
# An Etcd created again within its entry's grace period "reattaches to its entry ... and its
# snapshots are where it left them" (docs/backup-entries.md). warden-webhook admits that CREATE
# (its own namespace and name in its current prefix, the entry PendingDeletion) and records
# its claim in the store's Lease; the API server stores it only once every validating webhook
# has answered. Etcd shoot/etcd-main (prefix shoot--etcd-main, its full snapshot written, its
# entry made) is deleted by mistake; shoot applies it again: admitted by warden-webhook, held
# by a second validating webhook (a stand-in for any policy webhook). The grace period ends
# meanwhile (the operator shortens it): warden-controller checks the claims from the API server
# only, where the Etcd is not stored yet, marks the entry Deleting and its deletion Job deletes
# the snapshots. The second webhook answers, the Etcd is stored, and its sidecar finds nothing
# to restore: the cluster the owner brought back within the grace period comes up empty.
# Wanted: a deletion counts the claims admitted and not stored yet (the Lease), as a copy does.
# Oracle: s3rver's listing; kube-sim's record of the re-created Etcd and of the entry.
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
ctl_jobs_serve etcd-warden

# The second validating webhook: once $HOLD/armed exists it holds an Etcd CREATE of namespace
# shoot until $HOLD/release exists (25 s at most); it allows everything.
HOLD=$SNAP_WORK/hold
holdhook_start "$HOLD" shoot
ctl_start
ctl_store_etcd shoot etcd-main S3 "$SNAP_BUCKET" "$P"
ksim_wait 20 has_entry || ctl_fail "no entry for shoot/etcd-main"
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
# ctl_store_etcd exits on a refusal (ctl_fail): in a subshell of its own, so that its status is
# still recorded (else the wait below would wait out its 120 s for an answer already given)
(rc=0; (ctl_store_etcd shoot etcd-main S3 "$SNAP_BUCKET" "$P") >"$HOLD/apply.out" 2>&1 || rc=$?
    echo $rc >"$HOLD/apply.rc") &
APPLY_PID=$!
recorded() { holdhook_recorded "$P"; }
answered() { [ -s "$HOLD/apply.rc" ]; }
deadline=$((SECONDS + 120))
until { [ -e "$HOLD/held" ] && recorded; } || answered || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
answered && ctl_fail "shoot's re-created etcd-main answered before being held: $(cat "$HOLD/apply.out" "$HOLD/apply.rc")"
[ -e "$HOLD/held" ] && recorded ||
    ctl_fail "the re-created etcd-main was not admitted and held within 120 s (held: $([ -e "$HOLD/held" ] && echo yes || echo no); hold log: $(cat "$HOLD/log"); kubectl: $(cat "$HOLD/apply.out" 2>/dev/null); leases: $(kc get leases -A -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.annotations.etcd-warden\.io/claims}{" "}{end}'))"
held_at=$SECONDS
ok "shoot applies etcd-main again: admitted by warden-webhook (claim recorded), held by the second webhook"

ctl_s3_bucket 2s
decided() {
    [ "$(ephase)" = Deleting ] || ! kc get backupentry "$e" >/dev/null 2>&1 ||
        [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}' 2>/dev/null)" ] ||
        kc get backupentry "$e" -o jsonpath='{.status.message}' 2>/dev/null | grep -q "its backups are kept"
}
while ! decided && [ $((SECONDS - held_at)) -lt 20 ]; do sleep 0.1; done
was_decided=0
decided && was_decided=1
decision=$(ephase || true)
[ -n "$(kc -n shoot get etcd etcd-main -o name 2>/dev/null || true)" ] &&
    ctl_fail "the re-created etcd-main was stored while held: the script's premise failed"
touch "$HOLD/release"
reap_child "$APPLY_PID" 20 none || true
[ "$was_decided" = 1 ] || ctl_fail "inconclusive: within the hold the grace period's end decided nothing for $e ($(kc get backupentry "$e" -o jsonpath='{.status}'))"
ok "decided while the Etcd was held: entry ${decision:-gone}"
stored() { [ "$(jp shoot etcd/etcd-main '{.spec.backup.store.prefix}' 2>/dev/null)" = "$P" ]; }
ksim_wait 20 stored || ctl_fail "the re-created etcd-main was not stored: $(cat "$HOLD/apply.out")"
settled() { ! kc get backupentry "$e" >/dev/null 2>&1 || [ "$(ephase)" = Active ] || [ -n "$(kc get backupentry "$e" -o jsonpath='{.status.lastError}')" ]; }
ksim_wait 90 settled || ctl_fail "$e did not settle: $(kc get backupentry "$e" -o jsonpath='{.status}')"
left=$(listing)
if ! grep -qF "$P/v2/$snap" <<<"$left"; then
    ctl_fail "HOLE: shoot/etcd-main, applied again within its entry's grace period (admitted by warden-webhook, its claim in the Lease), lost its snapshots: the entry $e went ${decision:-away} while the Etcd's CREATE was held by another webhook, and its deletion Job deleted $P/v2/$snap; the re-created cluster finds nothing to restore (entry now: $(ephase || echo gone); listing: ${left:-nothing})"
fi
ok "the snapshots the re-created etcd-main came back for are kept (entry $(ephase || echo gone); $left)"
ctl_stop
echo "attack7_reattach_unstored: ok"
