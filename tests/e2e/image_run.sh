#!/usr/bin/env bash
# What the images are, run from them (not from the build tree): USER 65532 and no shell in
# either; each binary's --help (warden-snapshot found by name, as the CronJobs call it);
# warden-webhook and warden-controller started as the chart starts them (read-only root,
# every capability dropped, no privilege escalation) against kube-sim on the host: each
# becomes ready, runs as uid 65532 without capabilities on a read-only root, and exits 0 on
# SIGTERM.
set -euo pipefail
. "$(dirname "$0")/../lib/podman.sh"
. "$(dirname "$0")/../lib/kubesim.sh"
img_setup
img_need
ksim_on_exit img_cleanup
root=$(cd "$(dirname "$0")/../.." && pwd)

for img in "$IMG_WEBHOOK" "$IMG_CONTROLLER"; do
    user=$(podman image inspect "$img" --format '{{.Config.User}}')
    [ "$user" = "$IMG_UID:$IMG_UID" ] || img_fail "$img: USER is '$user'"
    for sh in /bin/sh /bin/bash /usr/bin/sh /bin/dash /bin/busybox; do
        if out=$(img_run --network=none --entrypoint "$sh" "$img" -c true 2>&1); then
            img_fail "$img: $sh ran"
        fi
        grep -qiE 'no such file|not found' <<<"$out" || img_fail "$img: $sh did not fail for want of a shell: $out"
    done
    echo "ok: $img: USER $user, no shell"
done

help() { # name, podman run arguments
    local name=$1 out
    shift
    out=$(img_run --network=none "$@" --help 2>&1) || img_fail "$name --help: $out"
    grep -qi usage <<<"$out" || img_fail "$name --help printed no usage: $out"
    echo "ok: $name --help from its image"
}
help warden-webhook "$IMG_WEBHOOK"
help warden-controller "$IMG_CONTROLLER"
help warden-snapshot --entrypoint warden-snapshot "$IMG_CONTROLLER"

# ---- both servers, as the chart runs them, against kube-sim on the host
work=$(mktemp -d "${TMPDIR:-/tmp}/image-run.XXXXXX")
ksim_on_exit "rm -rf '$work'"
wh_port=$(free_port "$work/ports")
kubesim_start --service-alias "warden-webhook.etcd-warden=127.0.0.1:$wh_port" || img_fail "kube-sim did not start"
kc apply -f "$root/charts/etcd-warden/crds/" >/dev/null
mkdir -p "$work/mnt"
"$root/certs/gen-certs.sh" -o "$work/mnt/certs" -n etcd-warden -s warden-webhook >/dev/null
cp "$KUBECONFIG" "$work/mnt/kubeconfig"
chown -R "$IMG_UID:$IMG_UID" "$work/mnt"

# start NAME IMAGE PROBE-PORT ARGS...: detached, no --user (the image's own); waits for /readyz
start() {
    local name=$1 img=$2 port=$3 deadline=$((SECONDS + 30))
    shift 3
    podman run -d --name "warden-test-$IMG_RUN_ID-$name" --label "etcd-warden.test=$IMG_RUN_ID" \
        --network=host "${IMG_SECURE[@]}" -v "$work/mnt:/etc/warden:ro" "$img" \
        --kubeconfig /etc/warden/kubeconfig --metrics-bind-address 0 \
        --health-probe-bind-address "127.0.0.1:$port" "$@" >/dev/null
    until curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; do
        if [ $SECONDS -ge $deadline ]; then
            podman logs "warden-test-$IMG_RUN_ID-$name" >&2 || true
            img_fail "$name not ready after 30 s"
        fi
        sleep 0.1
    done
    echo "ok: $name from its image is ready against kube-sim"
}
# as the chart runs it: uid and gid 65532, no capability at all, no new privileges, / read-only
check_process() {
    local name=$1 pid st
    pid=$(podman inspect "warden-test-$IMG_RUN_ID-$name" --format '{{.State.Pid}}')
    st=/proc/$pid/status
    [ "$(awk '/^Uid:/ {print $2 $3 $4 $5}' "$st")" = 65532655326553265532 ] || img_fail "$name: $(grep ^Uid: "$st")"
    [ "$(awk '/^Gid:/ {print $2}' "$st")" = 65532 ] || img_fail "$name: $(grep ^Gid: "$st")"
    for c in CapInh CapPrm CapEff CapBnd CapAmb; do
        [ "$(awk -v c="$c:" '$1 == c {print $2}' "$st")" = 0000000000000000 ] || img_fail "$name: $(grep "^$c:" "$st")"
    done
    [ "$(awk '/^NoNewPrivs:/ {print $2}' "$st")" = 1 ] || img_fail "$name: privileges may be escalated"
    awk '$5 == "/" { split($6, o, ","); print o[1] }' "/proc/$pid/mountinfo" | grep -qx ro ||
        img_fail "$name: the root file system is writable"
    echo "ok: $name runs as 65532:65532, no capabilities, no new privileges, read-only root"
}
stop() {
    local name=warden-test-$IMG_RUN_ID-$1 rc
    podman stop -t 20 "$name" >/dev/null
    rc=$(podman inspect "$name" --format '{{.State.ExitCode}}')
    [ "$rc" = 0 ] || { podman logs "$name" >&2; img_fail "$1 exited $rc on SIGTERM"; }
    podman rm "$name" >/dev/null
    echo "ok: $1 exits 0 on SIGTERM"
}

start webhook "$IMG_WEBHOOK" "$(free_port "$work/ports")" --webhook-server-port "$wh_port" \
    --webhook-server-bind-address 127.0.0.1 --webhook-server-tls-server-cert-dir /etc/warden/certs \
    --reconciler-service-account system:serviceaccount:etcd-druid:etcd-druid
check_process webhook
# TLS through the Service's name, as kube-sim calls it: a verified handshake (22: an HTTP error after it)
rc=0
curl -sf -o /dev/null --cacert "$work/mnt/certs/ca.crt" --resolve "warden-webhook.etcd-warden.svc:$wh_port:127.0.0.1" \
    "https://warden-webhook.etcd-warden.svc:$wh_port/" || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 22 ] || img_fail "TLS to the webhook from its image: curl exit $rc"
echo "ok: the webhook serves TLS for warden-webhook.etcd-warden.svc"
stop webhook

kc create namespace etcd-warden >/dev/null
start controller "$IMG_CONTROLLER" "$(free_port "$work/ports")" --leader-election-namespace etcd-warden
check_process controller
stop controller
echo "PASS"
