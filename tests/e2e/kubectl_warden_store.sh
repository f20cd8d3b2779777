#!/usr/bin/env bash
# kubectl warden verify / check-prefixes, through kubectl: warden-snapshot run against the
# Etcd's own store (s3rver) with the credentials of the Etcd's Secret, read from kube-sim
# (the test's own credentials environment is unset, so only the Secret can open the store):
#  - verify lists the snapshots of the Etcd's prefix with their hashes checked (exit 0), and
#    exits 1 naming the count once one is corrupt (a byte flipped in s3rver);
#  - check-prefixes exits 1 naming the pair once another cluster writes under a prefix the
#    sidecar mixes with the Etcd's, 0 before;
#  - the credentials directory is gone afterwards; a missing Secret or warden-snapshot is
#    a clear error (exit 1).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

bin=${WARDEN_KUBECTL_WARDEN:-}
for c in "$bin" "${WARDEN_BINARY_DIR:-/nonexistent}/controller/kubectl-warden/kubectl-warden" \
         "$SNAP_SRC/build/debug/controller/kubectl-warden/kubectl-warden"; do
    [ -n "$c" ] && [ -x "$c" ] && { bin=$c; break; }
done
[ -x "$bin" ] || snap_fail "kubectl-warden is not built"

snap_s3_start
unset AWS_APPLICATION_CREDENTIALS AWS_APPLICATION_CREDENTIALS_JSON
ctl_stage
plugdir=$CTL_DIR/plugins
mkdir -p "$plugdir" "$CTL_DIR/tmp"
ln -s "$(cd "$(dirname "$bin")" && pwd)/kubectl-warden" "$plugdir/kubectl-warden"
ln -s "$WARDEN_SNAPSHOT" "$plugdir/warden-snapshot"
export PATH=$plugdir:$PATH KUBECONFIG TMPDIR=$CTL_DIR/tmp
out=$CTL_DIR/out
kw_rc() { # the exit status; a sanitizer build's report is kept and fails the script at its end
    local rc=0
    kubectl warden "$@" >"$out" 2>&1 || rc=$?
    if grep -qE 'Sanitizer|runtime error:' "$out"; then cat "$out" >>"$CTL_DIR/sanitizer"; fi
    echo $rc
}
has() { grep -qF -- "$1" "$out" || { cat "$out" >&2; ctl_fail "no \"$1\" in the output of kubectl warden"; }; }

druid_etcd shoot etcd-main
kc -n shoot patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
expect "no Secret: 1" 1 "$(kw_rc -n shoot verify etcd-main)"
has 'etcd-backup'
kc -n shoot create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null

p=shoot--etcd-main
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
snap_s3 put "$p/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/full"
snap_fixture "$SNAP_WORK/full2" 4096 Full.gz
snap_s3 put "$p/v2/Full-00000000-00000200-1700086400.gz" "$SNAP_WORK/full2"
expect "verify" 0 "$(kw_rc -n shoot verify etcd-main)"
has "$p/v2/Full-00000000-00000100-1700000000.gz"
expect "two snapshots, both ok" 2 "$(grep -c ' sha256=ok$' "$out")"
expect "credentials removed" "" "$(ls -A "$CTL_DIR/tmp")"

# a flipped byte in the newest full snapshot
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 1; open(sys.argv[1], "wb").write(b)' "$SNAP_WORK/full2"
snap_s3 put "$p/v2/Full-00000000-00000200-1700086400.gz" "$SNAP_WORK/full2"
expect "verify of a corrupt snapshot: 1" 1 "$(kw_rc -n shoot verify etcd-main)"
has "$p/v2/Full-00000000-00000200-1700086400.gz"
has "error: 1 snapshot(s) of etcd shoot/etcd-main are corrupt"

expect "check-prefixes, one cluster" 0 "$(kw_rc -n shoot check-prefixes etcd-main)"
snap_s3 put "$p-2/v2/Full-00000000-00000050-1700000000.gz" "$SNAP_WORK/full"
expect "check-prefixes, a prefix the sidecar mixes with it: 1" 1 "$(kw_rc -n shoot check-prefixes etcd-main)"
has "$p-2"
expect "credentials removed" "" "$(ls -A "$CTL_DIR/tmp")"

expect "no warden-snapshot: 1" 1 "$(kw_rc -n shoot check-prefixes etcd-main --snapshot-binary /nonexistent/warden-snapshot)"
has "cannot run /nonexistent/warden-snapshot"
expect "an Etcd without a store: 1" 1 "$(druid_etcd shoot etcd-nostore --no-store; kw_rc -n shoot verify etcd-nostore)"
has "has no backup store"
[ ! -s "$CTL_DIR/sanitizer" ] || { cat "$CTL_DIR/sanitizer" >&2; ctl_fail "sanitizer report from kubectl-warden"; }
ok "kubectl warden verify and check-prefixes with the Etcd's Secret"
