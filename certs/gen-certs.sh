#!/usr/bin/env bash
# Development certificates for warden-webhook, made with the openssl CLI:
# a CA and a serving certificate for the webhook Service, in the layout the
# webhook reads (--webhook-server-tls-server-cert-dir: tls.crt, tls.key) plus
# ca.crt for the webhook configurations' caBundle.
#
#   certs/gen-certs.sh [-o DIR] [-n NAMESPACE] [-s SERVICE] [-d DAYS] [--san NAME]...
#
# Production clusters use the chart's self-provisioned TLS, a provided Secret
# or cert-manager; these files are for development and tests.
set -euo pipefail

out=certs/out
ns=etcd-warden
svc=warden-webhook
days=365
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
    -o) out=$2; shift 2 ;;
    -n) ns=$2; shift 2 ;;
    -s) svc=$2; shift 2 ;;
    -d) days=$2; shift 2 ;;
    --san) extra+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "gen-certs: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$days" in ''|*[!0-9]*) echo "gen-certs: -d wants a number of days, got '$days'" >&2; exit 2 ;; esac

mkdir -p "$out"
umask 077
sans="DNS:$svc,DNS:$svc.$ns,DNS:$svc.$ns.svc,DNS:$svc.$ns.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:::1"
for s in "${extra[@]}"; do
    case "$s" in
    *[!0-9.:]*) sans="$sans,DNS:$s" ;;
    *) sans="$sans,IP:$s" ;;
    esac
done

openssl ecparam -name prime256v1 -genkey -noout -out "$out/ca.key"
openssl req -x509 -new -key "$out/ca.key" -sha256 -days "$days" -subj "/CN=etcd-warden-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$out/ca.crt"
openssl ecparam -name prime256v1 -genkey -noout -out "$out/tls.key"
openssl req -new -key "$out/tls.key" -subj "/CN=$svc.$ns.svc" -out "$out/tls.csr"
cat > "$out/ext.cnf" <<CNF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=$sans
CNF
openssl x509 -req -in "$out/tls.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
    -days "$days" -sha256 -extfile "$out/ext.cnf" -out "$out/tls.crt" 2>/dev/null
rm -f "$out/tls.csr" "$out/ext.cnf" "$out/ca.srl"
openssl verify -CAfile "$out/ca.crt" "$out/tls.crt" >/dev/null
echo "wrote $out/ca.crt $out/ca.key $out/tls.crt $out/tls.key (SANs: $sans)"
echo "caBundle: $(base64 -w0 < "$out/ca.crt" | cut -c1-40)..."
