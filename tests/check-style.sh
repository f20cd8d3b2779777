#!/usr/bin/env bash
# House rules clang-format cannot enforce:
# no // comments, no banned functions, no struct typedefs, files of reasonable size.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
files=$(git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -v '/third_party/' || true)
bad=0
for f in $files; do
    [ -f "$f" ] || continue
    # Strip string literals before looking, so "http://" does not count as a comment.
    stripped=$(sed -E 's/"([^"\\]|\\.)*"/""/g' "$f")
    if echo "$stripped" | grep -nE '(^|[^:*/])//' >/dev/null; then
        echo "$f: // comment (use /* */)"; bad=1
    fi
    if echo "$stripped" | grep -nE '\b(sprintf|vsprintf|strcpy|strcat|strtok|atoi|atol|gets|strerror|localtime|gmtime|cJSON_GetErrorPtr)\s*\(' >/dev/null; then
        echo "$f: banned function:"; echo "$stripped" | grep -nE '\b(sprintf|vsprintf|strcpy|strcat|strtok|atoi|atol|gets|strerror|localtime|gmtime|cJSON_GetErrorPtr)\s*\(' | head -3; bad=1
    fi
    if echo "$stripped" | grep -nE '^\s*typedef\s+struct' >/dev/null; then
        echo "$f: struct typedef"; bad=1
    fi
    lines=$(wc -l < "$f")
    if [ "$lines" -gt 900 ]; then
        echo "$f: $lines lines (split the module; aim for about 600)"; bad=1
    fi
done
[ $bad -eq 0 ] && echo "style: $(echo "$files" | wc -l) files clean"
exit $bad
