#!/usr/bin/env bash
# prefix_random.py's end judged on replayed records (tests/support/prefix_random_end.py): a
# deletion Job run started before the end that deletes while the end's check reads is
# attributed to its entry once over, not reported as a deletion outside every Job run; the same
# deletions with no run, or by another Etcd's entry, are still violations.
set -u
here=$(dirname "$0")/../support
fail=0
for c in in-flight no-run wrong-owner; do
    python3 -B "$here/prefix_random_end.py" "$c" || { echo "FAIL: case $c"; fail=1; }
done
[ "$fail" = 0 ] && echo "prefix_random_end: ok"
exit "$fail"
