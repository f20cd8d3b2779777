#!/usr/bin/env bash
# Installs the object-store emulators the warden-snapshot tests run against,
# from the npm registry, pinned, into a project-local directory (never
# globally): build/npm/node_modules/.bin/{s3rver,azurite-blob}.
#   tests/install-emulators.sh [DIR]      (default: <repo>/build/npm)
# Needs node and npm (Debian 12: apt-get install nodejs npm); works with no
# prior npm state (its cache goes under DIR too).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/npm}
S3RVER_VERSION=3.7.1
AZURITE_VERSION=3.33.0   # the last line that still runs on Debian 12's Node 18
mkdir -p "$dir"
have() {
    [ -f "$dir/node_modules/$1/package.json" ] &&
        grep -q "\"version\": \"$2\"" "$dir/node_modules/$1/package.json"
}
if have s3rver "$S3RVER_VERSION" && have azurite "$AZURITE_VERSION"; then
    exit 0
fi
[ -f "$dir/package.json" ] || echo '{"name":"warden-test-emulators","private":true}' > "$dir/package.json"
echo "== npm install s3rver@$S3RVER_VERSION azurite@$AZURITE_VERSION into $dir"
npm install --prefix "$dir" --cache "$dir/.npm-cache" --no-audit --no-fund --no-save \
    --loglevel=error "s3rver@$S3RVER_VERSION" "azurite@$AZURITE_VERSION" >/dev/null
have s3rver "$S3RVER_VERSION" && have azurite "$AZURITE_VERSION"
