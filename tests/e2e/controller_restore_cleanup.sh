#!/usr/bin/env bash
# Deleting an EtcdRestore deletes what its copy wrote into the target prefix, and only that.
# Namespace shoot restores its etcd-main's full snapshot (its cluster's data) twice while the
# copies are held: r into restored--shoot, s into seeded--shoot, where an object was written
# before (bypassing admission: not the restore's). An Etcd of each target's name appears in
# shoot on another prefix, so both fail at Creating with their copies left in the store, and
# the prefixes stay claimed: namespace other's Etcd on restored--shoot is refused. Deleting r:
# its delete Job empties restored--shoot, r goes, and only then is other's Etcd admitted
# there. Deleting s: the object written before the copy survives, the copy does not. Restore t
# into taken--shoot, which already holds a snapshot (written before, bypassing admission),
# fails at its copy (--require-empty-destination); deleting t leaves that snapshot. A restore
# c Completes into completed--shoot; deleting it leaves its Etcd's data untouched.
# Oracle: s3rver's listing of each prefix and kubectl's answers.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
restore() { # name target-etcd target-prefix
    kc apply -f - >/dev/null <<EOF || ctl_fail "the restore $1 refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $1, namespace: shoot}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: $2, store: {provider: S3, container: $SNAP_BUCKET, prefix: $3, secretRef: {name: etcd-backup}}}
EOF
}
phase() { jp shoot "etcdrestore/$1" '{.status.phase}'; }
listing() { snap_s3 ls "$1/" | sort | tr '\n' ' '; }
gone() { ! kc -n shoot get etcdrestore "$1" >/dev/null 2>&1; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other
creds shoot
creds other
wh_register_backups
ctl_start
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/full"
# written before any restore, bypassing admission: not the restore's to delete
echo "an operator's note" >"$SNAP_WORK/note"
snap_s3 put "seeded--shoot/note-from-before.txt" "$SNAP_WORK/note"
older=Full-00000000-00000050-1600000000.gz
snap_fixture "$SNAP_WORK/older" 2048 "$older"
snap_s3 put "taken--shoot/v2/$older" "$SNAP_WORK/older"
sleep 2 # the store's times are whole seconds: the copy starts in a later one

restore r etcd-r restored--shoot
restore s etcd-s seeded--shoot
restore t etcd-t taken--shoot
jobs_there() { kc -n shoot get job r--restore s--restore t--restore >/dev/null 2>&1; }
ksim_wait 30 jobs_there || ctl_fail "no copy Jobs: $(kc -n shoot get etcdrestore -o jsonpath='{.items[*].status}')"
fins=$(jp shoot etcdrestore/r '{.metadata.finalizers}')
grep -qF etcd-warden.io/restore-copy <<<"$fins" || ctl_fail "no finalizer on r with its copy Job: $fins"
ok "the finalizer is on r before its copy runs: $fins"
# while the copies are held: an Etcd of each target's name, on other prefixes
ctl_store_etcd shoot etcd-r S3 "$SNAP_BUCKET" shoot--etcd-r
ctl_store_etcd shoot etcd-s S3 "$SNAP_BUCKET" shoot--etcd-s
ctl_jobs_serve shoot
failed() { [ "$(phase r)" = Failed ] && [ "$(phase s)" = Failed ] && [ "$(phase t)" = Failed ]; }
ksim_wait 90 failed || ctl_fail "the restores did not fail: r $(phase r), s $(phase s), t $(phase t); $(tail -3 "$SNAP_WORK/job_exec.log")"
grep -q 'already holds 1 snapshot' <<<"$(jp shoot etcdrestore/t '{.status.error}')" ||
    ctl_fail "t failed for another reason: $(jp shoot etcdrestore/t '{.status.error}')"
left=$(listing restored--shoot)
grep -qF "restored--shoot/v2/$snap" <<<"$left" || ctl_fail "no copy left in restored--shoot: $left"
left=$(listing seeded--shoot)
grep -qF "seeded--shoot/v2/$snap" <<<"$left" || ctl_fail "no copy left in seeded--shoot: $left"
ok "both failed at Creating, their copies in the store: $(listing restored--shoot)$(listing seeded--shoot)"

if out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" restored--shoot 2>&1); then
    ctl_fail "namespace other's Etcd admitted on restored--shoot while r's copy is there"
fi
ok "namespace other's Etcd on restored--shoot refused while r is stored: ${out:0:160}"

kc -n shoot delete etcdrestore r --wait=false >/dev/null
ksim_wait 90 gone r || ctl_fail "r is not gone: $(kc -n shoot get etcdrestore r -o jsonpath='{.status}'); $(tail -3 "$SNAP_WORK/job_exec.log")"
left=$(listing restored--shoot)
[ -z "$left" ] || ctl_fail "r is gone, restored--shoot still holds: $left"
ok "r deleted: restored--shoot is empty"
admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" restored--shoot 2>&1); }
ksim_wait 60 admitted || ctl_fail "namespace other's Etcd still refused on the emptied prefix: ${out:0:300}"
ok "namespace other's Etcd admitted on restored--shoot once it is empty"

kc -n shoot delete etcdrestore s --wait=false >/dev/null
ksim_wait 90 gone s || ctl_fail "s is not gone: $(kc -n shoot get etcdrestore s -o jsonpath='{.status}')"
expect "seeded--shoot after s: only what was written before its copy" \
    "seeded--shoot/note-from-before.txt " "$(listing seeded--shoot)"
expect "the object written before survives intact" "an operator's note" \
    "$(snap_s3 get seeded--shoot/note-from-before.txt)"

kc -n shoot delete etcdrestore t --wait=false >/dev/null
ksim_wait 90 gone t || ctl_fail "t is not gone: $(kc -n shoot get etcdrestore t -o jsonpath='{.status}')"
expect "taken--shoot after t, whose copy wrote nothing: the snapshot written before it" \
    "taken--shoot/v2/$older " "$(listing taken--shoot)"

restore c etcd-c completed--shoot
completed() { [ "$(phase c)" = Completed ]; }
ksim_wait 90 completed || ctl_fail "c did not complete: $(kc -n shoot get etcdrestore c -o jsonpath='{.status}')"
before=$(listing completed--shoot)
grep -qF "completed--shoot/v2/$snap" <<<"$before" || ctl_fail "no copy in completed--shoot: $before"
kc -n shoot delete etcdrestore c --wait=false >/dev/null
ksim_wait 60 gone c || ctl_fail "c is not gone: $(kc -n shoot get etcdrestore c -o jsonpath='{.metadata}')"
expect "completed--shoot after c is deleted: its Etcd's data untouched" "$before" \
    "$(listing completed--shoot)"
if kc -n shoot get job c--cleanup >/dev/null 2>&1; then
    ctl_fail "a delete Job for a Completed restore"
fi
ok "no delete Job for the Completed restore"
ctl_stop
echo "controller_restore_cleanup: ok"
