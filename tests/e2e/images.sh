#!/usr/bin/env bash
# The images without a Docker engine: each Dockerfile is read for what it builds and
# stages (a Debian bookworm build stage, a scratch runtime, a non-root USER, an
# exec-form ENTRYPOINT), its tests/lib/stage-rootfs.sh command is run on this build's
# binaries, and the staged tree must hold no shell, resolve every library each
# binary loads from inside itself (the staged dynamic loader, --inhibit-cache), and
# start every binary with --help from the tree alone: chroot as UID 65532 when run
# as root (not for sanitizer builds, which need /proc), else through the staged
# loader. A binary another branch has not built yet is reported and skipped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bdir=${WARDEN_BINARY_DIR:-}
if [ -z "$bdir" ]; then
    for c in "$root"/build/debug "$root"/build/*; do
        [ -x "$c/webhook/warden-webhook" ] && { bdir=$c; break; }
    done
fi
[ -n "$bdir" ] || { echo "FAIL: no build directory with warden-webhook" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/images.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for df in "$root"/Dockerfile.webhook "$root"/Dockerfile.controller; do
    name=$(basename "$df")
    text=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$df")
    grep -qE '^FROM debian:(bookworm|12)[^ ]* AS build' <<<"$text" || fail "$name: no Debian bookworm build stage"
    [ "$(grep '^FROM ' <<<"$text" | tail -1)" = "FROM scratch" ] || fail "$name: the runtime stage is not scratch"
    grep -qE '^USER 65532(:65532)?$' <<<"$text" || fail "$name: not USER 65532"
    entry=$(sed -n 's/^ENTRYPOINT \["\([^"]*\)"\]$/\1/p' <<<"$text")
    [ -n "$entry" ] || fail "$name: no exec-form ENTRYPOINT"
    stage=$(grep -o 'tests/lib/stage-rootfs.sh /rootfs .*' <<<"$text" | sed 's/ *&&.*//') ||
        fail "$name: does not stage with tests/lib/stage-rootfs.sh"
    read -r -a targets <<<"$(grep -o -- '--target [a-z -]*' <<<"$text" | sed 's/--target //' | tr -s ' ')"
    bins=()
    for p in ${stage#tests/lib/stage-rootfs.sh /rootfs }; do
        local_path=$bdir/${p#/build/}
        b=$(basename "$p")
        printf '%s\n' "${targets[@]}" | grep -qx "$b" || fail "$name: stages $b, which it does not build"
        if [ -x "$local_path" ]; then
            bins+=("$local_path")
        else
            echo "note: $name: $b is not built in $bdir yet; not staged"
        fi
    done
    [ ${#bins[@]} -gt 0 ] || fail "$name: nothing to stage"
    [ -x "$bdir/${entry#/usr/local/bin/}" ] || [ -x "$(dirname "${bins[0]}")/$(basename "$entry")" ] ||
        fail "$name: the ENTRYPOINT $entry is not a staged binary"

    tree=$work/${name#Dockerfile.}
    "$root/tests/lib/stage-rootfs.sh" "$tree" "${bins[@]}" >"$work/stage.log" || { cat "$work/stage.log"; fail "$name: staging"; }
    [ -x "$tree$entry" ] || fail "$name: $entry missing from the staged tree"
    for sh in bin/sh bin/bash usr/bin/sh usr/bin/bash bin/dash usr/bin/dash; do
        [ ! -e "$tree/$sh" ] || fail "$name: the tree holds a shell ($sh)"
    done
    loader=$(find "$tree" -name 'ld-linux*.so*' -type f | head -1)
    [ -n "$loader" ] || fail "$name: no dynamic loader staged"
    libpath=$(find "$tree" -name '*.so*' -type f -printf '%h\n' | sort -u | paste -sd:)
    for b in "${bins[@]}"; do
        sb=$tree/usr/local/bin/$(basename "$b")
        list=$("$loader" --inhibit-cache --library-path "$libpath" --list "$sb") ||
            fail "$name: the staged loader cannot load $(basename "$b")"
        outside=$(grep '=>' <<<"$list" | grep -v "=> $tree/" || true)
        [ -z "$outside" ] || fail "$name: $(basename "$b") loads libraries from outside the tree: $outside"
        nlib=$(grep -c '=>' <<<"$list")
        if [ "$(id -u)" = 0 ] && ! grep -q libasan <<<"$list"; then
            how="chroot as 65532"
            out=$(chroot --userspec=65532:65532 "$tree" "/usr/local/bin/$(basename "$b")" --help 2>&1) ||
                fail "$name: $(basename "$b") --help in the chroot: $out"
        else
            how="the staged loader"
            out=$("$loader" --inhibit-cache --library-path "$libpath" "$sb" --help 2>&1) ||
                fail "$name: $(basename "$b") --help through the staged loader: $out"
        fi
        grep -qi 'usage' <<<"$out" || fail "$name: $(basename "$b") --help printed no usage: $out"
        echo "ok $name: $(basename "$b"): $nlib libraries, all from the tree; --help through $how"
    done
    echo "ok $name: $(tail -1 "$work/stage.log" | sed "s|$work/||")"
done
echo "PASS images"
