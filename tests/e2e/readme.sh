#!/usr/bin/env bash
# README.md and the pages under docs/ stay true: each "<!-- help:BINARY -->" block is exactly
# that binary's --help (for every binary this build has), and each of warden-webhook,
# warden-controller, warden-snapshot and kubectl-warden has exactly one such block across
# all the pages;
# every repository path they name exists, every relative link leads to a file of the
# repository (and an anchor of it to one of its headings), every docs page starts with its
# title and a link back to README.md and is linked from README.md, and nothing refers to
# anything outside the repository.
#   tests/e2e/readme.sh            check
#   tests/e2e/readme.sh --update   rewrite the help blocks from the built binaries, in
#                                  whichever page holds them
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../lib/chart.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

# The pages, as paths relative to the repository.
pages=(README.md)
for f in "$root"/docs/*.md; do
    [ -e "$f" ] && pages+=("docs/${f##*/}")
done
binaries=(warden-webhook warden-controller warden-snapshot kubectl-warden)

bin_of() {
    case "$1" in
    warden-webhook) chart_bin_webhook ;;
    warden-controller) chart_controller_ready && chart_bin_controller ;;
    warden-snapshot) chart_bin_snapshot ;;
    kubectl-warden) _chart_find WARDEN_KUBECTL_WARDEN controller/kubectl-warden/kubectl-warden ;;
    *) return 1 ;;
    esac
}

# The pages holding a "<!-- help:NAME -->" line, one a line.
pages_of() {
    local p
    for p in "${pages[@]}"; do
        grep -qxF "<!-- help:$1 -->" "$root/$p" && echo "$p"
    done
    return 0
}

# The text between the markers of BINARY's block in PAGE (without the fences).
block() {
    awk -v b="<!-- help:$1 -->" '$0 == b {on = 1; next} on && /^<!-- end help -->/ {exit}
        on && !/^```$/ {print}' "$root/$2"
}

# Every block is closed, and names a binary this script knows.
for p in "${pages[@]}"; do
    awk -v p="$p" '/^<!-- help:/ {if (open) {print p ": a help block opens inside another"; bad = 1}; open = 1; next}
        /^<!-- end help -->/ {if (!open) {print p ": an end of help without a help block"; bad = 1}; open = 0}
        END {if (open) {print p ": a help block is not closed"; bad = 1}; exit bad}' "$root/$p" >&2 ||
        fail "$p: help block markers do not pair"
done
names=$(cat "${pages[@]/#/$root/}" | sed -n 's/^<!-- help:\([a-z-]*\) -->$/\1/p' | sort -u)
[ -n "$names" ] || fail "no page has a help block"
for n in $names; do
    case " ${binaries[*]} " in *" $n "*) ;; *) fail "help block of an unknown binary: $n" ;; esac
done
# Each binary's block exactly once across all the pages.
for n in "${binaries[@]}"; do
    c=$(cat "${pages[@]/#/$root/}" | grep -cxF "<!-- help:$n -->" || true)
    [ "$c" = 1 ] || fail "the help block of $n is in the pages $c times, not once ($(pages_of "$n" | tr '\n' ' '))"
done

if [ "${1:-}" = --update ]; then
    for n in "${binaries[@]}"; do
        b=$(bin_of "$n") || { echo "skip $n: not built"; continue; }
        p=$(pages_of "$n")
        f=$root/$p
        "$b" --help >"$f.help" 2>&1
        awk -v b="<!-- help:$n -->" -v h="$f.help" '
            $0 == b {print; print "```"; while ((getline l < h) > 0) print l; print "```"; skip = 1; next}
            skip && /^<!-- end help -->/ {skip = 0}
            !skip {print}' "$f" >"$f.new"
        mv "$f.new" "$f"
        rm -f "$f.help"
        echo "updated $n in $p"
    done
    exit 0
fi

checked=0
for n in "${binaries[@]}"; do
    b=$(bin_of "$n") || { echo "note: $n is not built here; its help block is not checked"; continue; }
    p=$(pages_of "$n")
    diff <(block "$n" "$p") <("$b" --help 2>&1) >/dev/null ||
        { diff <(block "$n" "$p") <("$b" --help 2>&1) || true; fail "the $n block of $p is not its --help (tests/e2e/readme.sh --update)"; }
    checked=$((checked + 1))
done
[ $checked -gt 0 ] || fail "no help block checked"

# The anchors of a page: its headings as GitHub makes them (lower case, punctuation dropped,
# spaces as dashes), outside fenced blocks.
anchors() {
    awk '/^```/ {fence = !fence; next} !fence && /^#+ / {sub(/^#+ /, ""); print}' "$1" |
        tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}

# The relative link targets of a page, outside fenced and indented blocks, one a line.
links() {
    awk '/^```/ {fence = !fence; next} !fence && !/^    / {print}' "$1" |
        grep -oE '\]\([^)[:space:]]+\)' | sed 's/^](//; s/)$//' |
        grep -vE '^[a-z]+:' || true
}

missing=0
for p in "${pages[@]}"; do
    f=$root/$p
    dir=$(dirname "$f")
    # No placeholder left.
    if grep -nE '^(HELP|METRICS|PHASES)[A-Z-]*$' "$f"; then fail "$p has a placeholder left"; fi
    # Every relative link leads into the repository, to a file that exists, and to one of
    # its headings.
    while read -r l; do
        [ -n "$l" ] || continue
        t=${l%%#*}
        a=
        case $l in *'#'*) a=${l#*#} ;; esac
        [ -n "$t" ] && tf=$dir/$t || tf=$f
        rf=$(realpath -m "$tf")
        case $rf in
        "$root" | "$root"/*) ;;
        *) echo "$p: the link $l leads outside the repository" >&2; missing=1; continue ;;
        esac
        [ -e "$rf" ] || { echo "$p: the link $l leads nowhere" >&2; missing=1; continue; }
        if [ -n "$a" ] && ! grep -qxF -- "$a" <<<"$(anchors "$rf")"; then
            echo "$p: the link $l names no heading of ${rf#"$root"/}" >&2
            missing=1
        fi
    done < <(links "$f")
    # Nothing outside the repository (links into it, checked above, aside).
    txt=$(sed -E 's/\]\((\.\.\/)+[^)[:space:]]*\)/](LINK)/g' "$f")
    if grep -nE '\.\./|/work/|shared/reference|DESIGN\.md' <<<"$txt"; then
        fail "$p refers to something outside the repository"
    fi
    # Every repository path it names in backticks exists.
    while read -r rp; do
        rp=${rp%%:*}
        compgen -G "$root/$rp" >/dev/null || { echo "$p: missing: $rp" >&2; missing=1; }
    done < <(grep -oE '`(common|webhook|controller|tests|bench|charts|certs|docker|docs|\.ci)/[A-Za-z0-9_./*-]*`|`Dockerfile\.[a-z]+`' "$f" |
        tr -d '`' | sed 's/\.\.\.$//' | sort -u)
done
[ $missing = 0 ] || fail "the pages name paths or links that do not exist"

# Every docs page starts with its title and a link back to README.md, and README.md links to it.
for p in "${pages[@]}"; do
    [ "$p" = README.md ] && continue
    grep -qE '^# [^ ]' <<<"$(head -1 "$root/$p")" || fail "$p does not start with a title line (# ...)"
    grep -qF '](../README.md)' <<<"$(sed -n '2,5p' "$root/$p")" || fail "$p has no link back to README.md after its title"
    grep -qF "](${p})" "$root/README.md" || grep -qF "](${p}#" "$root/README.md" ||
        fail "README.md does not link to $p"
done
echo "PASS readme (${#pages[@]} pages, $checked help blocks)"
