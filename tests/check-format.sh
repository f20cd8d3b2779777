#!/usr/bin/env bash
# Fails when a first-party C file differs from what clang-format makes of it.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
files=$(git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -v '/third_party/' || true)
[ -n "$files" ] || { echo "no C files"; exit 0; }
bad=0
for f in $files; do
    [ -f "$f" ] || continue
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then
        echo "not formatted: $f (run: clang-format -i $f)"
        bad=1
    fi
done
[ $bad -eq 0 ] && echo "format: $(echo "$files" | wc -l) files clean"
exit $bad
