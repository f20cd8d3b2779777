#!/usr/bin/env bash
# README.md stays true: each "<!-- help:BINARY -->" block is exactly that binary's
# --help (for every binary this build has), every repository path it names exists,
# and it refers to nothing outside the repository.
#   tests/e2e/readme.sh            check
#   tests/e2e/readme.sh --update   rewrite the help blocks from the built binaries
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../lib/chart.sh"
readme=$root/README.md
fail() { echo "FAIL: $*" >&2; exit 1; }

bin_of() {
    case "$1" in
    warden-webhook) chart_bin_webhook ;;
    warden-controller) chart_controller_ready && chart_bin_controller ;;
    warden-snapshot) chart_bin_snapshot ;;
    *) return 1 ;;
    esac
}

# The text between the markers of BINARY's block (without the fences).
block() {
    awk -v b="<!-- help:$1 -->" '$0 == b {on = 1; next} on && /^<!-- end help -->/ {exit}
        on && !/^```$/ {print}' "$readme"
}

names=$(sed -n 's/^<!-- help:\([a-z-]*\) -->$/\1/p' "$readme")
[ -n "$names" ] || fail "README.md has no help blocks"
if [ "${1:-}" = --update ]; then
    for n in $names; do
        b=$(bin_of "$n") || { echo "skip $n: not built"; continue; }
        "$b" --help >"$readme.help" 2>&1
        awk -v b="<!-- help:$n -->" -v f="$readme.help" '
            $0 == b {print; print "```"; while ((getline l < f) > 0) print l; print "```"; skip = 1; next}
            skip && /^<!-- end help -->/ {skip = 0}
            !skip {print}' "$readme" >"$readme.new"
        mv "$readme.new" "$readme"
        rm -f "$readme.help"
        echo "updated $n"
    done
    exit 0
fi

checked=0
for n in $names; do
    b=$(bin_of "$n") || { echo "note: $n is not built here; its help block is not checked"; continue; }
    diff <(block "$n") <("$b" --help 2>&1) >/dev/null ||
        { diff <(block "$n") <("$b" --help 2>&1) || true; fail "the $n block is not its --help (tests/e2e/readme.sh --update)"; }
    checked=$((checked + 1))
done
[ $checked -gt 0 ] || fail "no help block checked"

# No placeholder left.
if grep -nE '^(HELP|METRICS|PHASES)[A-Z-]*$' "$readme"; then fail "README.md has a placeholder left"; fi
# Nothing outside the repository.
if grep -nE '\.\./|/work/|shared/reference|DESIGN\.md' "$readme"; then
    fail "README.md refers to something outside the repository"
fi
# Every repository path it names in backticks exists.
missing=0
while read -r p; do
    p=${p%%:*}
    compgen -G "$root/$p" >/dev/null || { echo "missing: $p" >&2; missing=1; }
done < <(grep -oE '`(common|webhook|controller|tests|bench|charts|certs|docker|\.ci)/[A-Za-z0-9_./*-]*`|`Dockerfile\.[a-z]+`' "$readme" |
    tr -d '`' | sed 's/\.\.\.$//' | sort -u)
[ $missing = 0 ] || fail "README.md names paths that do not exist"
echo "PASS readme ($checked help blocks)"
