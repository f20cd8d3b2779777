#!/usr/bin/env bash
# warden-webhook from its image (tests/lib/podman.sh, img_exec): WARDEN_WEBHOOK for the
# end-to-end scripts run by tests/e2e/image_e2e.sh.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/podman.sh"
img_exec "$IMG_WEBHOOK" "$@"
