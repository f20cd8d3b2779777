#!/usr/bin/env bash
# warden-webhook made unreachable by idle connections from whoever reaches its port, on kube-sim
# with warden-webhook registered as the chart registers it (failurePolicy Fail). Issue 30, item
# 7: "The webhook can be knocked over by anyone who reaches it ... with failurePolicy: Fail that
# refuses every Etcd and component change cluster-wide". docs/protection.md's flags:
# --webhook-server-max-connections (1000), --webhook-server-max-connections-per-ip (256),
# --webhook-server-idle-timeout (30s). Four addresses holding 250 TCP connections each, none of
# which ever sends a byte, take every connection the server admits; kube-apiserver's calls find
# no room and every request the webhooks cover is refused, ConfigMaps of every namespace
# included. The attacker needs no credentials and no TLS; re-opening what the idle timeout
# closes keeps it so. (The chart's NetworkPolicy, admitting only the API server, is the
# defence where it is enforced; this is the attacker it does not stop.)
#   F1. mallory holds 1250 idle TCP connections to the webhook's port from 127.0.0.2..6;
#       meanwhile alice creates a ConfigMap in namespace apps (no Etcd there) and Gardener
#       patches an Etcd's annotation.
#   F0. control: the same requests before the flood and after it is released are admitted.
#       (FLOOD_IPS=1, 250 connections from one address, holds: the per-address cap works; it
#       is the total, --webhook-server-max-connections, that a few addresses use up.)
# Oracle: what kube-sim stores: the ConfigMap and the annotation, within 15 s of the request.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v python3 >/dev/null || ksim_fail "python3 is not installed"
ctl_stage
druid_etcd shoot etcd-main
kc create namespace apps >/dev/null || ctl_fail "cannot create namespace apps"
sleep 1 # the webhook's caches
FLOOD_PID=""
stop_flood() { [ -z "$FLOOD_PID" ] || { kill "$FLOOD_PID" 2>/dev/null; wait "$FLOOD_PID" 2>/dev/null; FLOOD_PID=""; }; }
ksim_on_exit stop_flood
attempt() { # TAG: a ConfigMap and an Etcd annotation; prints "ok" or what was refused
    local out1 out2
    out1=$(timeout 15 kubectl --kubeconfig "$KUBECONFIG" --request-timeout=14s -n apps create configmap "probe-$1" --from-literal=a=b 2>&1)
    out2=$(timeout 15 kubectl --kubeconfig "$KUBECONFIG" --request-timeout=14s -n shoot annotate etcd etcd-main "example.com/probe=$1" --overwrite 2>&1)
    if [ -n "$(kc -n apps get configmap "probe-$1" -o name 2>/dev/null)" ] &&
        [ "$(kc -n shoot get etcd etcd-main -o jsonpath='{.metadata.annotations.example\.com/probe}')" = "$1" ]; then
        echo ok
    else echo "configmap: $(tr '\n' ' ' <<<"$out1" | head -c 200) / etcd: $(tr '\n' ' ' <<<"$out2" | head -c 200)"; fi
}
got=$(attempt before)
[ "$got" = ok ] || ctl_fail "control: before the flood: $got"
echo "ok: control: before the flood a ConfigMap and an Etcd annotation are admitted"

python3 - "$WH_PORT" "$CTL_DIR/flood.ready" "${FLOOD_IPS:-5}" <<'PY' &
import socket, sys, time
port, ready = int(sys.argv[1]), sys.argv[2]
held = []
for src in [f"127.0.0.{i + 2}" for i in range(int(sys.argv[3]))]:
    for _ in range(250):
        s = socket.socket()
        s.settimeout(2)
        try:
            s.bind((src, 0))
            s.connect(("127.0.0.1", port))
            held.append(s)
        except OSError:
            s.close()
open(ready, "w").write(str(len(held)))
time.sleep(60)
PY
FLOOD_PID=$!
ksim_wait 20 test -s "$CTL_DIR/flood.ready" || ctl_fail "the flood did not start"
echo "F1: mallory holds $(cat "$CTL_DIR/flood.ready") idle connections to the webhook's port"
sleep 1
got=$(attempt during)
stop_flood
sleep 1
after=$(attempt after)
[ "$after" = ok ] || ctl_fail "control: after the flood: $after"
echo "ok: control: after the flood is released a ConfigMap and an Etcd annotation are admitted"
if [ "$got" != ok ]; then
    echo "HOLE: F1: with 1250 idle connections of an unauthenticated client open on warden-webhook's port, kube-apiserver's requests are refused: $got"
    echo "FAIL: 1 hole(s): the webhook knocked over by idle connections"
    exit 1
fi
echo "held: F1: admitted during the flood"
echo "attack12_conn_flood: ok"
