#!/usr/bin/env bash
# Builds both images from Dockerfile.webhook and Dockerfile.controller as they are, with
# podman (tests/lib/podman.sh: no Docker engine, no registry, the base image made from
# Debian's archive), and holds them to their size budgets: the images carry the binaries
# and what they load, nothing else. The other image_* tests run what this builds.
#   IMG_WEBHOOK_MAX, IMG_CONTROLLER_MAX   the budgets in bytes (20 MB, 30 MB)
set -euo pipefail
. "$(dirname "$0")/../lib/podman.sh"
wh_max=${IMG_WEBHOOK_MAX:-20000000}
ct_max=${IMG_CONTROLLER_MAX:-30000000}
t0=$SECONDS
img_setup
t=$SECONDS
img_base
echo "ok: base image $IMG_BASE ($((SECONDS - t)) s)"
for kind in webhook controller; do
    t=$SECONDS
    img_build "$kind"
    echo "ok: podman build -f Dockerfile.$kind ($((SECONDS - t)) s)"
done
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
wh=$(img_size "$IMG_WEBHOOK")
ct=$(img_size "$IMG_CONTROLLER")
[ "$wh" -le "$wh_max" ] || img_fail "the webhook image is $(mb "$wh"), more than $(mb "$wh_max")"
echo "ok: webhook image $(mb "$wh") (at most $(mb "$wh_max"))"
[ "$ct" -le "$ct_max" ] || img_fail "the controller image is $(mb "$ct"), more than $(mb "$ct_max")"
echo "ok: controller image $(mb "$ct") (at most $(mb "$ct_max"))"
echo "PASS images built in $((SECONDS - t0)) s"
