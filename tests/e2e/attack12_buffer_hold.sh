#!/usr/bin/env bash
# warden-webhook's shared body buffer held by one address, on kube-sim with warden-webhook
# registered as the chart registers it (failurePolicy Fail). Issue 30, item 7 (the webhook
# knocked over by anyone who reaches it) and its limits: docs/protection.md's flags
# --webhook-server-max-request-bytes (3 MiB, 413 above), --webhook-server-max-buffered-bytes
# ("bytes of review bodies held by all connections at once (503 above)", 64 MiB),
# --webhook-server-max-connections-per-ip (256), --webhook-server-request-timeout (10s).
# The per-address cap does not bound the buffer: 24 connections from one address, each sending
# a body just under the request limit and withholding its last bytes, hold the whole budget,
# and kube-apiserver's reviews meanwhile are answered 503: every request the webhooks cover is
# refused. Re-sent within the request timeout, it stays so. No credentials needed (without
# --client-ca, the chart's default).
#   H1. mallory, from 127.0.0.2 only, opens 24 TLS connections to the webhook and on each posts
#       a review of 3145000 bytes, sending all but the last 1000; meanwhile alice creates a
#       ConfigMap in namespace apps (no Etcd there) and Gardener annotates an Etcd.
#   H0. control: the same requests before mallory starts and after she stops are admitted.
# Oracle: what kube-sim stores: the ConfigMap and the annotation.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v python3 >/dev/null || ksim_fail "python3 is not installed"
ctl_stage
druid_etcd shoot etcd-main
kc create namespace apps >/dev/null || ctl_fail "cannot create namespace apps"
wh_caught_up # the webhook's caches
HOLD_PID=""
stop_hold() { [ -z "$HOLD_PID" ] || { kill "$HOLD_PID" 2>/dev/null; wait "$HOLD_PID" 2>/dev/null; HOLD_PID=""; }; }
ksim_on_exit stop_hold
attempt() { # TAG: a ConfigMap and an Etcd annotation; prints "ok" or what was refused
    local out1 out2
    out1=$(timeout 8 kubectl --kubeconfig "$KUBECONFIG" --request-timeout=7s -n apps create configmap "probe-$1" --from-literal=a=b 2>&1)
    out2=$(timeout 8 kubectl --kubeconfig "$KUBECONFIG" --request-timeout=7s -n shoot annotate etcd etcd-main "example.com/probe=$1" --overwrite 2>&1)
    if [ -n "$(kc -n apps get configmap "probe-$1" -o name 2>/dev/null)" ] &&
        [ "$(kc -n shoot get etcd etcd-main -o jsonpath='{.metadata.annotations.example\.com/probe}')" = "$1" ]; then
        echo ok
    else echo "configmap: $(tr '\n' ' ' <<<"$out1" | head -c 250) / etcd: $(tr '\n' ' ' <<<"$out2" | head -c 250)"; fi
}
got=$(attempt before)
[ "$got" = ok ] || ctl_fail "control: before: $got"
echo "ok: control: before mallory a ConfigMap and an Etcd annotation are admitted"

python3 - "$WH_PORT" "$CTL_DIR/hold.ready" <<'PY' &
import socket, ssl, sys, time
port, ready = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
size, held = 3145000, []
chunk = b" " * 65536
for _ in range(24):
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
        s = ctx.wrap_socket(raw, server_hostname="warden-webhook")
        s.sendall(b"POST /webhooks/etcdcomponents HTTP/1.1\r\nHost: warden-webhook\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % size)
        left = size - 1000
        while left > 0:
            n = min(left, len(chunk))
            s.sendall(chunk[:n])
            left -= n
        held.append(s)
    except OSError as e:
        print("connection refused by the server:", e, file=sys.stderr)
open(ready, "w").write(str(len(held)))
time.sleep(30)
PY
HOLD_PID=$!
ksim_wait 20 test -s "$CTL_DIR/hold.ready" || ctl_fail "mallory did not start"
echo "H1: mallory holds $(cat "$CTL_DIR/hold.ready") connections from 127.0.0.2, each with 3145000 - 1000 bytes of a review sent"
got=$(attempt during)
stop_hold
sleep 1
after=$(attempt after)
[ "$after" = ok ] || ctl_fail "control: after: $after"
echo "ok: control: after mallory stops a ConfigMap and an Etcd annotation are admitted"
grep -o '"msg":"[^"]*buffer[^"]*"' "$WH_LOG" | sort | uniq -c | head -3
if [ "$got" != ok ]; then
    echo "HOLE: H1: with 24 connections from one address holding unfinished 3 MB reviews, kube-apiserver's requests are refused: $got"
    echo "FAIL: 1 hole(s): the webhook's body buffer held by one address"
    exit 1
fi
echo "held: H1: admitted while mallory holds her connections"
echo "attack12_buffer_hold: ok"
