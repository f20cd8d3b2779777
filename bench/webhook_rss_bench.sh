#!/usr/bin/env bash
# warden-webhook memory under hostile reviews (issue 30): 8 concurrent maximal requests -
# bodies as large as the server takes (--webhook-server-max-request-bytes, default 3 MiB,
# kube-apiserver's own request limit), shaped so that what each decision parses is as large
# as possible (an Etcd review whose spec is one array of small numbers, a StatefulSet review
# whose labels are a map of short keys, a mutating review with thousands of ownerReferences,
# and one 8 MiB body past the cap) - sent ROUNDS times, every review in flight at once. It
# prints the webhook's RSS idle and its peak (VmHWM) after the rounds, and the target:
# peak RSS <= 64 MiB. Not a test: it asserts nothing (exit 0 whatever the figure).
#
#   bench/webhook_rss_bench.sh [BUILD_DIR]     (default build/release, built if missing)
#
# Environment: BENCH_CONCURRENCY (8), BENCH_ROUNDS (5), BENCH_BODY (bytes per body; default
# the server's limit, 3145728), BENCH_FLAGS (extra warden-webhook flags, e.g.
# --webhook-server-max-request-bytes=8388608 with BENCH_BODY=8388608 for the old limit),
# WARDEN_WEBHOOK / KUBE_SIM (binaries, default from BUILD_DIR).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build/release}
conc=${BENCH_CONCURRENCY:-8}
rounds=${BENCH_ROUNDS:-5}
body=${BENCH_BODY:-3145728}

if [ -z "${WARDEN_WEBHOOK:-}" ] && [ ! -x "$build/webhook/warden-webhook" ]; then
    echo "== building $build (Release)"
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$build" -j2 --target warden-webhook kube-sim >/dev/null
fi
export WARDEN_WEBHOOK=${WARDEN_WEBHOOK:-$build/webhook/warden-webhook}
export KUBE_SIM=${KUBE_SIM:-$build/tests/kube-sim/kube-sim}
for t in curl kubectl python3; do
    command -v "$t" >/dev/null || { echo "bench: $t is not installed"; exit 1; }
done
# shellcheck source=../tests/lib/webhook.sh
. "$src/tests/lib/webhook.sh"
kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

wh_init
work=$WH_DIR
wh_certs
kubesim_start
wh_etcd_crd
wh_etcd bench etcd-main
# shellcheck disable=SC2086
wh_start --reconciler-service-account system:serviceaccount:etcd-druid:etcd-druid \
    --webhook-server-tls-server-cert-dir "$work/certs" ${BENCH_FLAGS:-}
sleep 1
idle=$(kb "$WH_PID" VmRSS)

# The bodies: python writes each at exactly $body bytes (the padding is inside what the
# decision reads, so the selective decoder has to parse it).
python3 - "$work" "$body" <<'PY'
import json, sys
work, size = sys.argv[1], int(sys.argv[2])
def review(kind, group, resource, op, obj, old):
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group": group, "version": "v1", "kind": kind},
                        "resource": {"group": group, "version": "v1", "resource": resource},
                        "name": "etcd-main", "namespace": "bench", "operation": op,
                        "userInfo": {"username": "alice"}, "object": obj, "oldObject": old}}
def fill(doc, pad_path, unit, start):
    text = json.dumps(doc, separators=(",", ":"))
    marker = json.dumps(start, separators=(",", ":"))
    head, tail = text.split(marker, 1)
    room = size - len(head) - len(tail)
    inner = marker[1:-1]
    n = max(0, (room - 2) // len(unit))
    out = head + marker[0] + (unit * n).rstrip(",") + marker[-1] + tail
    return out + " " * max(0, size - len(out))
etcd = {"metadata": {"name": "etcd-main", "namespace": "bench"}, "spec": {"pad": ["PAD"]}}
open(f"{work}/etcd.json", "w").write(
    fill(review("Etcd", "druid.gardener.cloud", "etcds", "UPDATE", etcd, {"metadata": {"name": "etcd-main"}}),
         None, "0,", ["PAD"]))
sts = {"metadata": {"name": "etcd-main", "namespace": "bench", "labels": {"PAD": ""}}, "spec": {"replicas": 3}}
labels = "".join(f'"{i:x}":"",' for i in range(1 << 20))
doc = json.dumps(review("StatefulSet", "apps", "statefulsets", "UPDATE", sts, {"metadata": {}}), separators=(",", ":"))
head, tail = doc.split('{"PAD":""}', 1)
room = size - len(head) - len(tail) - 2
out = head + "{" + labels[:room].rsplit(",", 1)[0].rsplit(",", 1)[0] + "}" + tail
open(f"{work}/sts.json", "w").write(out + " " * max(0, size - len(out)))
refs = {"metadata": {"name": "etcd-main-config", "namespace": "bench",
                     "labels": {"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-main"},
                     "ownerReferences": ["PAD"]}}
open(f"{work}/mutate.json", "w").write(
    fill(review("ConfigMap", "", "configmaps", "CREATE", refs, None), None, '{"a":0},', ["PAD"]))
open(f"{work}/huge.json", "w").write(" " * (8 << 20))
PY
hooks=(etcd:/webhooks/etcd sts:/webhooks/etcdcomponents mutate:/webhooks/etcd-mutate etcd:/webhooks/etcd
    sts:/webhooks/etcdcomponents mutate:/webhooks/etcd-mutate etcd:/webhooks/etcd huge:/webhooks/etcd)
# What each body gets (once, alone): the parse budget's answer, the body limit's.
for h in etcd:/webhooks/etcd sts:/webhooks/etcdcomponents mutate:/webhooks/etcd-mutate huge:/webhooks/etcd; do
    printf '%-7s %s\n' "${h%%:*}" "$(curl -sk -H 'Content-Type: application/json' \
        --data-binary @"$work/${h%%:*}.json" "https://127.0.0.1:$WH_PORT${h#*:}" |
        grep -o '"message":"[^"]*' | head -1 | cut -c 12-130)"
done
codes=$work/codes
: >"$codes"
t0=$(date +%s.%N)
for ((r = 0; r < rounds; r++)); do
    pids=()
    for ((i = 0; i < conc; i++)); do
        h=${hooks[i % ${#hooks[@]}]}
        curl -sk -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
            --data-binary @"$work/${h%%:*}.json" "https://127.0.0.1:$WH_PORT${h#*:}" >>"$codes" &
        pids+=($!)
    done
    wait "${pids[@]}" || true
    kill -0 "$WH_PID" 2>/dev/null || { echo "bench: warden-webhook died (round $r)"; tail -5 "$WH_LOG"; exit 0; }
done
t1=$(date +%s.%N)
peak=$(kb "$WH_PID" VmHWM)
now=$(kb "$WH_PID" VmRSS)
printf 'bodies: %d bytes (and one 8 MiB past the cap per round), %d in flight, %d rounds, %.1f s\n' \
    "$body" "$conc" "$rounds" "$(echo "$t1 - $t0" | bc)"
echo "answers (HTTP status: count): $(sort "$codes" | uniq -c | awk '{printf "%s: %s  ", $2, $1}')"
printf 'RSS idle %d KiB, peak (VmHWM) %d KiB = %.1f MiB, after %d KiB\n' "$idle" "$peak" \
    "$(echo "$peak / 1024" | bc -l)" "$now"
if [ "$peak" -le $((64 * 1024)) ]; then
    echo "target: peak RSS <= 64 MiB under $conc concurrent maximal requests: met"
else
    echo "target: peak RSS <= 64 MiB under $conc concurrent maximal requests: MISSED"
fi
wh_stop
