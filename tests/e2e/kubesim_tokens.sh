#!/usr/bin/env bash
# --token-file users: kubectl authenticates with their tokens, unknown tokens get 401, and
# the admin kubeconfig works; SIGTERM stops kube-sim cleanly.
set -euo pipefail
. "$(dirname "$0")/../lib/kubesim.sh"
tokens=$(mktemp)
ksim_on_exit "rm -f $tokens"
cat >"$tokens" <<'T'
druid-token,system:serviceaccount:druid:etcd-druid,uid-1
alice-token,alice,uid-2,"devs,ops"
T
kubesim_start --token-file "$tokens"

[ "$(kc_as druid-token get ns default -o jsonpath='{.metadata.name}')" = default ] \
    || ksim_fail "a token-file user cannot read"
kc_as alice-token create configmap from-alice --from-literal=a=b >/dev/null
who=$(kc_as druid-token auth whoami)
case "$who" in
    *"system:serviceaccount:druid:etcd-druid"*"system:serviceaccounts:druid"*) ;;
    *) ksim_fail "auth whoami: $who" ;;
esac
[ "$(kc_as alice-token auth can-i delete statefulsets)" = yes ] || ksim_fail "auth can-i"

out=$(kc_as wrong-token get ns 2>&1 || true)
case "$out" in
    *"You must be logged in to the server"*|*Unauthorized*) ;;
    *) ksim_fail "an unknown token was accepted: $out" ;;
esac
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$KSIM_DIR/ca.crt" "$KSIM_URL/api/v1/namespaces")
[ "$code" = 401 ] || ksim_fail "anonymous request got $code"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$KSIM_DIR/ca.crt" "$KSIM_URL/healthz")
[ "$code" = 200 ] || ksim_fail "/healthz got $code"

# SIGTERM: the process exits 0 promptly
st=0
reap_child "$KSIM_PID" 10 || st=$?
[ "$REAP_KILLED" = 0 ] || ksim_fail "kube-sim ignored SIGTERM"
[ "$st" -eq 0 ] || ksim_fail "kube-sim exited with $st"
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$KSIM_DIR/kube-sim.log"; then
    cat "$KSIM_DIR/kube-sim.log" >&2
    ksim_fail "sanitizer report"
fi
rm -rf "$KSIM_DIR"
KSIM_PID=""
echo "kubesim_tokens: ok"
