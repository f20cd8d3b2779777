#!/usr/bin/env bash
# Stage the runtime file tree of an image: the given binaries in /usr/local/bin and
# every shared library they load, as the dynamic loader resolves them (ldd), at the
# same paths, plus the CA bundle for TLS to object stores. Nothing else: no shell,
# no package manager. The Dockerfiles RUN this in their build stage and copy the
# tree into an empty (scratch) image; tests/e2e/image_*.sh build and run those images.
#
#   tests/lib/stage-rootfs.sh ROOTFS BINARY...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 ROOTFS BINARY..." >&2; exit 2; }
root=$1
shift
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp"
chmod 1777 "$root/tmp"

copy_path() {
    # copy FILE to ROOTFS/FILE; a symlink chain is kept as links to the final file
    local f=$1 dst
    while :; do
        dst=$root$f
        mkdir -p "$(dirname "$dst")"
        if [ -L "$f" ]; then
            ln -sfn "$(readlink "$f")" "$dst"
            case "$(readlink "$f")" in /*) f=$(readlink "$f") ;; *) f=$(dirname "$f")/$(readlink "$f") ;; esac
            continue
        fi
        cp -f "$f" "$dst"
        return
    done
}

for bin in "$@"; do
    [ -x "$bin" ] || { echo "stage-rootfs: $bin is not an executable" >&2; exit 1; }
    install -m 0755 "$bin" "$root/usr/local/bin/$(basename "$bin")"
    out=$(ldd "$bin") || { echo "stage-rootfs: ldd $bin failed" >&2; exit 1; }
    if grep -q 'not found' <<<"$out"; then
        echo "stage-rootfs: $bin: unresolved libraries:" >&2
        grep 'not found' <<<"$out" >&2
        exit 1
    fi
    # "libx.so.1 => /lib/.../libx.so.1 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
    while read -r lib; do
        copy_path "$lib"
    done < <(sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' <<<"$out")
done
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp -f /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
fi
# Name service: files only; uid 65532 needs no entry, but a passwd makes logs readable.
printf 'root:x:0:0:root:/:/nonexistent\nnonroot:x:65532:65532:nonroot:/:/nonexistent\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
echo "staged $(find "$root" -type f | wc -l) files, $(du -sh "$root" | cut -f1) in $root"
