#!/usr/bin/env bash
# certs/gen-certs.sh makes a CA and a serving certificate that verify, with the
# Service's DNS names and loopback IPs, and refuses bad arguments.
set -euo pipefail
src=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$src/certs/gen-certs.sh" -o "$dir" -n demo -s hook --san 10.0.0.7 --san extra.example >/dev/null
openssl verify -CAfile "$dir/ca.crt" "$dir/tls.crt" | grep -q ': OK'
sans=$(openssl x509 -in "$dir/tls.crt" -noout -ext subjectAltName)
for want in "DNS:hook.demo.svc" "DNS:hook.demo.svc.cluster.local" "IP Address:127.0.0.1" \
            "IP Address:10.0.0.7" "DNS:extra.example"; do
    echo "$sans" | grep -qF "$want" || { echo "missing SAN $want in: $sans"; exit 1; }
done
openssl x509 -in "$dir/tls.crt" -noout -ext extendedKeyUsage | grep -q 'TLS Web Server Authentication'
[ "$(stat -c %a "$dir/tls.key")" = 600 ] || { echo "tls.key is not 0600"; exit 1; }
if "$src/certs/gen-certs.sh" -o "$dir" --bogus 2>/dev/null; then
    echo "an unknown argument was accepted"; exit 1
fi
echo "certs: ok"
