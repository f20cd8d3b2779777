#!/usr/bin/env bash
# Runs an end-to-end script of tests/e2e with warden-webhook and warden-controller started
# from their images (tests/lib/podman-warden-*.sh) instead of the build tree: the kubectl
# flows then exercise the images as the chart runs them (user 65532, read-only root, no
# capabilities), kube-sim, backup-double and kubectl staying on the host. Containers left by
# a killed run are removed at exit.
#   tests/e2e/image_e2e.sh webhook_kubectl
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/podman.sh"
name=${1:?usage: image_e2e.sh SCRIPT (a tests/e2e script name)}
[ -f "$here/$name.sh" ] || img_fail "no tests/e2e/$name.sh"
img_setup
img_need
trap img_cleanup EXIT
export WARDEN_WEBHOOK=$here/../lib/podman-warden-webhook.sh
export WARDEN_CONTROLLER=$here/../lib/podman-warden-controller.sh
bash "$here/$name.sh"
