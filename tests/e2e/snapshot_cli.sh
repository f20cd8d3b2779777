#!/usr/bin/env bash
# warden-snapshot's command line, no store needed: warden-snapshot and every command take
# -h/--help (the usage on stdout, nothing on stderr, exit 0), every flag a command's help
# shows is documented in README.md or a page under docs/, every flag a command takes (its
# getopt table in the source) is described by its help or refused by it, and each usage
# error (exit 2) says on its first line what is wrong - an unknown storage provider with the
# valid ones. list of an empty prefix (a Local store) says so on stderr.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
pages=("$SNAP_SRC"/README.md "$SNAP_SRC"/docs/*.md)
commands=(extend-snapshot-immutability list delete-snapshots copy check-prefixes)
# The source file holding each command's getopt_long table.
declare -A source_of=([extend-snapshot-immutability]=snapcli.c [list]=snapcli.c
    [delete-snapshots]=snapdel.c [copy]=snapcopy_cli.c [check-prefixes]=snapcheck_cli.c)

# run ARGS...: RC, OUT (stdout) and ERR (stderr) of warden-snapshot ARGS.
run() {
    set +e
    "$WARDEN_SNAPSHOT" "$@" >"$SNAP_WORK/out" 2>"$SNAP_WORK/err"
    RC=$?
    set -e
    OUT=$(cat "$SNAP_WORK/out")
    ERR=$(cat "$SNAP_WORK/err")
}

# help WHAT ARGS...: exit 0, the usage on stdout, stderr empty.
help() {
    local what=$1
    shift
    run "$@"
    [ "$RC" = 0 ] || snap_fail "$what: exit $RC ($ERR)"
    [ -z "$ERR" ] || snap_fail "$what: wrote to stderr: $ERR"
    case $OUT in "usage: warden-snapshot"*) ;; *) snap_fail "$what: no usage on stdout: $OUT" ;; esac
    echo "ok: $what"
}

# usage_error WHAT TEXT ARGS...: exit 2, TEXT in the first line on stderr.
usage_error() {
    local what=$1 text=$2
    shift 2
    run "$@"
    [ "$RC" = 2 ] || snap_fail "$what: exit $RC, want 2"
    case $(head -1 <<<"$ERR") in *"$text"*) ;; *) snap_fail "$what: first line \"$(head -1 <<<"$ERR")\", want \"$text\"" ;; esac
    grep -q "^usage: warden-snapshot" <<<"$ERR" || snap_fail "$what: no usage after the error"
    echo "ok: $what"
}

for h in --help -h help; do
    help "warden-snapshot $h" "$h"
    for c in "${commands[@]}"; do
        grep -q "^  warden-snapshot $c " <<<"$OUT" || snap_fail "warden-snapshot $h does not list $c"
    done
done
for c in "${commands[@]}"; do
    help "$c --help" "$c" --help
    case $OUT in "usage: warden-snapshot $c "*) ;; *) snap_fail "$c --help is not $c's usage" ;; esac
    help "$c -h" "$c" -h
    # every flag it shows is documented (copy's --from-X and --to-X as "the flags of the
    # other commands with a --from-/--to- prefix": X)
    for f in $(grep -oE -- '--[a-z][a-z-]+' <<<"$OUT" | sort -u); do
        [ "$f" = --help ] && continue
        [ "$c" != copy ] || case $f in --from-store-* | --from-storage-* | --to-store-* | --to-storage-*)
            f=--${f#--*-} ;;
        esac
        grep -qF -- "\`$f" "${pages[@]}" || snap_fail "$c --help shows $f, neither README.md nor docs/ documents it"
    done
    echo "ok: the flags of $c --help are in README.md and docs/"
done
grep -q -- '--latest-full' <<<"$("$WARDEN_SNAPSHOT" copy --help)" || snap_fail "copy --help lacks --latest-full"

# Every flag of a command's getopt table is in its --help, or the command refuses it (list
# shares extend-snapshot-immutability's table and refuses the flags that change something).
for c in "${commands[@]}"; do
    src=$SNAP_SRC/controller/snapshot/${source_of[$c]}
    flags=$(sed -n 's/^ *{ "\([a-z-]*\)", \(required\|no\)_argument,.*/\1 \2/p' "$src")
    [ -n "$flags" ] || snap_fail "no getopt table in $src"
    usage=$("$WARDEN_SNAPSHOT" "$c" --help)
    while read -r f arg; do
        grep -qE -- "--$f( |,|\$)" <<<"$usage" && continue
        store=(--storage-provider S3 --store-container b --store-prefix p)
        if [ "$arg" = required ]; then run "$c" "${store[@]}" "--$f=1"; else run "$c" "${store[@]}" "--$f"; fi
        [ "$RC" = 2 ] && grep -qF -- "--$f" <<<"$(head -1 <<<"$ERR")" ||
            snap_fail "$c takes --$f, which its --help does not describe (exit $RC: $ERR)"
    done <<<"$flags"
    echo "ok: $c --help describes every flag it takes"
done

usage_error "no command" "a command is required"
usage_error "unknown command" 'unknown command "x"' x
usage_error "a flag before the command" 'a command comes before the flags, not "--retention-days"' \
    --retention-days -3
s3=(--storage-provider S3 --store-container b --store-prefix p)
usage_error "negative --retention-days" '--retention-days must be a number of days, 1 to 36500, not "-3"' \
    extend-snapshot-immutability "${s3[@]}" --gc-from-timestamp 1 --retention-days -3
usage_error "--mode" '--mode must be copy, extend-in-place or auto, not "fast"' \
    extend-snapshot-immutability "${s3[@]}" --gc-from-timestamp 1 --mode fast
usage_error "no --gc-from-timestamp" "--gc-from-timestamp is required" \
    extend-snapshot-immutability "${s3[@]}"
usage_error "bad --gc-from-timestamp" '--gc-from-timestamp must be Unix seconds or RFC 3339, not "yesterday"' \
    extend-snapshot-immutability "${s3[@]}" --gc-from-timestamp yesterday
usage_error "unknown flag" "warden-snapshot list: unknown flag --nope" list "${s3[@]}" --nope
usage_error "a flag without its value" "warden-snapshot list: --store-prefix needs a value" \
    list --storage-provider S3 --store-container b --store-prefix
usage_error "a value for a switch" "warden-snapshot delete-snapshots: --dry-run takes no value" \
    delete-snapshots "${s3[@]}" --dry-run=yes
usage_error "an argument left over" 'warden-snapshot list: unexpected argument "extra"' \
    list "${s3[@]}" extra
usage_error "list without a store" "--storage-provider, --store-container" list
usage_error "delete-snapshots without a store" "are required" delete-snapshots
usage_error "copy without its stores" "are required" copy
usage_error "copy: --snapshot and --latest-full" "--snapshot excludes --until and --latest-full" \
    copy --from-storage-provider S3 --from-store-container a --from-store-prefix p \
    --to-storage-provider S3 --to-store-container b --to-store-prefix q --snapshot x --latest-full
for c in list delete-snapshots; do
    usage_error "$c: an unknown provider" \
        "warden-snapshot $c: --storage-provider: unknown storage provider \"nope\"; one of aws, S3," \
        "$c" --storage-provider nope --store-container b --store-prefix p
done
usage_error "extend: an unknown provider" 'unknown storage provider "S4"; one of' \
    extend-snapshot-immutability --storage-provider S4 --store-container b --store-prefix p \
    --gc-from-timestamp 1
usage_error "check-prefixes: an unknown provider" 'unknown storage provider "nope"; one of' \
    check-prefixes --storage-provider nope --store-container b
usage_error "check-prefixes without a store" "--storage-provider and --store-container" check-prefixes
usage_error "copy: an unknown destination provider" \
    'copy: --to-storage-provider: unknown storage provider "s4"; one of' \
    copy --from-storage-provider S3 --from-store-container a --from-store-prefix p \
    --to-storage-provider s4 --to-store-container b --to-store-prefix q
usage_error "a provider not supported yet" "storage provider Swift is not supported yet; one of" \
    list --storage-provider Swift --store-container b --store-prefix p
usage_error "list --dry-run" "list: --dry-run is a flag of extend-snapshot-immutability" \
    list "${s3[@]}" --dry-run
usage_error "list --mode" "list: --mode is a flag of extend-snapshot-immutability" \
    list "${s3[@]}" --mode copy
usage_error "--retention-days in copy mode" "they need --mode extend-in-place or auto" \
    extend-snapshot-immutability "${s3[@]}" --gc-from-timestamp 1 --retention-days 3

# list of an empty prefix: exit 0, nothing on stdout, a line saying so on stderr.
mkdir -p "$SNAP_WORK/empty"
run list --storage-provider Local --store-container "$SNAP_WORK/empty" --store-prefix shoot--etcd
[ "$RC" = 0 ] && [ -z "$OUT" ] || snap_fail "list of an empty prefix: exit $RC, stdout \"$OUT\""
grep -qF "no snapshots under prefix \"shoot--etcd\" in container \"$SNAP_WORK/empty\"" <<<"$ERR" ||
    snap_fail "list of an empty prefix said \"$ERR\""
echo "ok: list of an empty prefix says so on stderr"
echo "snapshot_cli: ok"
