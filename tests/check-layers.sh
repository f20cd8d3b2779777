#!/usr/bin/env bash
# Include layering (tests/layers.rules: which folder may include which, and the folders
# whose modules must not include each other in a cycle), over every tracked .c/.h file
# outside third_party/. Prints each forbidden include and each cycle; exits 1 on any.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
here=$(cd "$(dirname "$0")" && pwd)
cd "$root"
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' |
                     grep -v '/third_party/' || true)
exists=()
for f in "${files[@]}"; do
    [ -f "$f" ] && exists+=("$f")
done
exec python3 "$here/support/layers.py" --root . --rules "$here/layers.rules" "${exists[@]}"
