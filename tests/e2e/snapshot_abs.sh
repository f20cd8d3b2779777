#!/usr/bin/env bash
# warden-snapshot against Azurite (the Azure Blob emulator from npm): list against
# a seeded history with a blob excluded by its index tag, extend over simulated
# days in server mode (Copy Blob), stream mode through Put Block / Put Block List
# and server mode again; credentials as a JSON file; never overwriting.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

snap_abs_start
abs_put() { snap_abs put "$1" "$2"; }
abs_get() { snap_abs get "$1"; }
abs_ls() { snap_abs ls "$1"; }
abs_tag() { snap_abs tag "$1" "$2"; }
abs_putmany() { snap_abs putmany "$1"; }
abs_check() { snap_abs check "$1"; }
STORE_GET=abs_get STORE_LS=abs_ls STORE_TAG=abs_tag STORE_PUTMANY=abs_putmany STORE_CHECK=abs_check
flags=(--storage-provider ABS --store-container "$SNAP_BUCKET")

snap_history abs_put tags
snap_check_list "${flags[@]}"
# 1 MiB blocks: the 3 MiB snapshot goes as 3 blocks in stream mode.
SNAP_MODES="server stream" SNAP_EXTRA_FLAGS="--part-size 1048576" snap_days "${flags[@]}"

cat >"$SNAP_WORK/azure.json" <<JSON
{"storageAccount":"$SNAP_ABS_ACCOUNT","storageKey":"$SNAP_ABS_KEY",
 "domain":"127.0.0.1:$SNAP_ABS_PORT","emulatorEnabled":true}
JSON
AZURE_APPLICATION_CREDENTIALS=/nonexistent AZURE_APPLICATION_CREDENTIALS_JSON=$SNAP_WORK/azure.json \
    snap_run list "${flags[@]}" --store-prefix "$SNAP_PREFIX" | snap_has "^$SNAP_FINAL " ||
    snap_fail "JSON credentials not used"

# A wrong key is refused by the emulator with one clear line.
printf 'd3Jvbmcga2V5' >"$SNAP_WORK/azure/storageKey"
if snap_run list "${flags[@]}" --store-prefix "$SNAP_PREFIX" 2>"$SNAP_WORK/auth.log"; then
    snap_fail "a wrong storage key was accepted"
fi
grep '"level":"error"' "$SNAP_WORK/auth.log" | snap_has 'HTTP 403' || { cat "$SNAP_WORK/auth.log"; snap_fail "unclear auth error"; }
printf '%s' "$SNAP_ABS_KEY" >"$SNAP_WORK/azure/storageKey"

# Never overwrite: the target name is taken by an (excluded) blob.
later=$((1700000000 + 5 * SNAP_DAY))
taken=$SNAP_PREFIX/v2/Full-00000000-00002300-$later.gz.final
echo "someone else's blob" >"$SNAP_WORK/taken"
snap_abs put "$taken" "$SNAP_WORK/taken"
snap_abs tag "$taken" x-etcd-snapshot-exclude=true
for mode in server stream; do
    if WARDEN_SNAPSHOT_NOW=$later snap_run extend-snapshot-immutability "${flags[@]}" \
        --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" --copy-mode $mode \
        2>"$SNAP_WORK/taken.log"; then
        snap_fail "extend ($mode) wrote over an existing blob"
    fi
    grep '"level":"error"' "$SNAP_WORK/taken.log" | snap_has "already exists; not overwriting" ||
        { cat "$SNAP_WORK/taken.log"; snap_fail "no clear 'already exists' error"; }
done
snap_abs get "$taken" | cmp -s - "$SNAP_WORK/taken" || snap_fail "the existing blob was changed"
echo "snapshot_abs: ok"
