#!/usr/bin/env bash
# kube-sim benchmark: create 10k ConfigMaps while a watch follows them, then list and read
# them, and report requests per second and RSS. Not a test: it prints figures.
#
#   bench/kubesim_bench.sh [BUILD_DIR]     (default build/release, built if missing)
#
# Figures:
#   - GET /version with wrk (16 connections, keep-alive): the HTTPS + authentication floor
#     of kube-sim on this machine, the in-run reference the other rates are compared with;
#   - 10k creates (POST, curl --parallel, 16 at a time, keep-alive): creates/s and the
#     ratio to the reference;
#   - the watch opened before the creates: how long after the last create its 10k ADDED
#     events had all arrived;
#   - GET of one object with wrk, LIST of all 10k (one request, and in pages of 500);
#   - RSS of kube-sim before and after (VmRSS).
#
# Environment: BENCH_OBJECTS (default 10000), BENCH_SECONDS (per wrk run, default 5),
# KUBE_SIM (binary, default from BUILD_DIR).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build/release}
nobj=${BENCH_OBJECTS:-10000}
secs=${BENCH_SECONDS:-5}

if [ -z "${KUBE_SIM:-}" ] && [ ! -x "$build/tests/kube-sim/kube-sim" ]; then
    echo "== building $build (Release)"
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$build" -j2 --target kube-sim >/dev/null
fi
export KUBE_SIM=${KUBE_SIM:-$build/tests/kube-sim/kube-sim}
for t in wrk curl; do
    command -v "$t" >/dev/null || { echo "bench: $t is not installed"; exit 1; }
done
# shellcheck source=../tests/lib/kubesim.sh
. "$src/tests/lib/kubesim.sh"

die() { echo "bench: $*" >&2; exit 1; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
now() { date +%s.%N; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

kubesim_start --max-objects $((nobj + 1000)) --watch-history $((nobj * 2)) --statefulset-delay 0 ||
    die "kube-sim did not start"
work=$KSIM_DIR/bench
mkdir -p "$work"
ksim_pid=$KSIM_PID
url=$KSIM_URL
ca=$KSIM_DIR/ca.crt
auth="Authorization: Bearer $KSIM_TOKEN"
rss0=$(rss_kb "$ksim_pid")
curl -sf --cacert "$ca" -H "$auth" -H 'Content-Type: application/json' -X POST \
    -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}' \
    "$url/api/v1/namespaces" >/dev/null || die "cannot create the namespace"

echo "== kube-sim $url, $(nproc) cores, $nobj objects"

# ---- reference: the cheapest authenticated request
ref=$(wrk -t2 -c16 -d"${secs}s" -H "$auth" "$url/version" | awk '/^Requests\/sec/ {print $2}')
printf "GET /version (reference)        %8.0f req/s\n" "$ref"

# ---- a watch from the current state, counting what arrives
rv=$(curl -sf --cacert "$ca" -H "$auth" "$url/api/v1/namespaces/bench/configmaps?limit=1" |
    grep -o '"resourceVersion":"[0-9]*"' | head -1 | tr -dc 0-9)
curl -sfN --cacert "$ca" -H "$auth" \
    "$url/api/v1/namespaces/bench/configmaps?watch=1&resourceVersion=$rv&timeoutSeconds=600" \
    >"$work/watch.out" &
ksim_on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null || true"

# ---- creates: one curl, 16 requests in flight, connections reused. In a curl config every
# request after "next" needs its own options.
{
    for i in $(seq 1 "$nobj"); do
        printf 'url = "%s/api/v1/namespaces/bench/configmaps"\nrequest = "POST"\n' "$url"
        printf 'cacert = "%s"\nheader = "%s"\nheader = "Content-Type: application/json"\n' "$ca" "$auth"
        printf 'write-out = "%%{http_code}\\n"\noutput = "/dev/null"\n'
        printf 'data = "{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"ConfigMap\\",\\"metadata\\":{\\"name\\":\\"cm-%d\\",\\"labels\\":{\\"bench\\":\\"yes\\"}},\\"data\\":{\\"key\\":\\"value-%d\\"}}"\n' "$i" "$i"
        [ "$i" = "$nobj" ] || printf 'next\n'
    done
} >"$work/creates.cfg"
t0=$(now)
curl -s --no-progress-meter --parallel --parallel-max 16 --config "$work/creates.cfg" >"$work/codes"
t1=$(now)
created=$(grep -c '^201$' "$work/codes" || true)
[ "$created" = "$nobj" ] || die "only $created of $nobj creates succeeded: $(sort "$work/codes" | uniq -c)"
cps=$(rate "$nobj" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
printf "POST (create), 16 in flight      %8s req/s   %s x reference\n" "$cps" "$(ratio "$cps" "$ref")"

# ---- the watch catches up
for _ in $(seq 600); do
    [ "$(grep -c '"type":"ADDED"' "$work/watch.out" || true)" -ge "$nobj" ] && break
    sleep 0.05
done
t2=$(now)
seen=$(grep -c '"type":"ADDED"' "$work/watch.out" || true)
printf "watch: %s of %s ADDED events, all in %.2f s after the last create\n" "$seen" "$nobj" \
    "$(awk -v a="$t1" -v b="$t2" 'BEGIN {print b - a}')"

# ---- reads
get=$(wrk -t2 -c16 -d"${secs}s" -H "$auth" "$url/api/v1/namespaces/bench/configmaps/cm-1" |
    awk '/^Requests\/sec/ {print $2}')
printf "GET one object                   %8.0f req/s   %s x reference\n" "$get" "$(ratio "$get" "$ref")"
t0=$(now)
n=$(curl -sf --cacert "$ca" -H "$auth" "$url/api/v1/namespaces/bench/configmaps" | grep -o '"name":"cm-' | wc -l)
t1=$(now)
printf "LIST %s objects in one request   %.3f s\n" "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
t0=$(now)
pages=0
cont=""
while :; do
    page=$(curl -sf --cacert "$ca" -H "$auth" --get --data-urlencode "limit=500" \
        ${cont:+--data-urlencode "continue=$cont"} "$url/api/v1/namespaces/bench/configmaps")
    pages=$((pages + 1))
    cont=$(printf '%s' "$page" | { grep -o '"continue":"[^"]*"' || true; } | head -1 | cut -d'"' -f4)
    [ -n "$cont" ] || break
done
t1=$(now)
printf "LIST in pages of 500: %s pages  %.3f s\n" "$pages" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"

rss1=$(rss_kb "$ksim_pid")
printf "RSS: %s MiB idle, %s MiB with %s objects (%s KiB per object, history included)\n" \
    "$((rss0 / 1024))" "$((rss1 / 1024))" "$nobj" "$(((rss1 - rss0) / nobj))"
