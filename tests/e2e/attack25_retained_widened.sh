#!/usr/bin/env bash
# docs/backups-and-restores.md, Retain: a retained copy's entry has "the copy's write window"
# and "past its bucket's deletionGracePeriod a deletion Job deletes what the copy wrote, and
# nothing else"; "An entry of the name that is already the namespace's and Etcd's (an earlier
# retained copy in the same prefix) is widened to cover this copy's window when the two windows
# overlap"; apart, "its window becomes one of the entry's spec.earlierWindows, deleted with the
# entry, the gap kept".
# Namespace shoot takes two Retain EtcdBackups of etcd-main (the bucket's credentials) into one
# prefix copies--s, a minute's schedule history: b1 completes; then another seed's cluster writes
# into copies--s; then b2 completes. Both are deleted; past the grace period the entry must
# delete b1's and b2's copies and keep the other seed's object written between the two copies.
# Oracle: s3rver's listing of copies--s.
set -euo pipefail
. "$(dirname "$0")/../lib/retained.sh"
D=copies--s
ret_stage

ret_backup b1 "$D"
sleep 2
theirs=$D/v2/Full-00000000-00000500-1800000000.gz
snap_fixture "$SNAP_WORK/theirs" 4096 Full.gz
snap_s3 put "$theirs" "$SNAP_WORK/theirs"
ok "the other seed wrote $theirs after b1's copy"
sleep 2
ret_backup b2 "$D"
before=$(ret_listing $D)
ok "$D holds $(echo $before)"

kc -n "$NS" delete etcdbackup b1 --timeout=60s >/dev/null || ctl_fail "b1 not deleted"
e=$(ret_entry_of $D)
[ -n "$e" ] || ctl_fail "no entry keeps b1's retained copy"
ok "after b1: entry $e spec $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-500)"
kc -n "$NS" delete etcdbackup b2 --timeout=60s >/dev/null || ctl_fail "b2 not deleted"
ok "after b2: entry $e spec $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-500)"
ctl_s3_bucket 2s
ksim_wait 90 ctl_entry_settled "$e" || echo "entry $e not settled: $(kc get backupentry "$e" -o jsonpath='{.status}' | cut -c1-300)"
echo "events of $e: $(ctl_events default "$e" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(ret_listing $D)
echo "left under $D: $(echo $left)"
ctl_stop
if ! grep -qF "$theirs" <<<"$left"; then
    echo "HOLE: the entry of shoot's retained copies b1 and b2 (one prefix $D) deleted $theirs, written by another seed's cluster between the two copies (left: ${left:-nothing})"
    exit 1
fi
echo "held: $theirs stays"
# b2's window lies apart from b1's: one of the entry's earlier windows, deleted with it
[ "$(echo $left)" = "$theirs" ] || ctl_fail "the copies stay besides $theirs: $(echo $left)"
ok "b1's and b2's copies deleted, the time between kept"
echo "attack25_retained_widened: ok"
