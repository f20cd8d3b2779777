#!/usr/bin/env bash
# Break glass values whose expiry is written in RFC 3339 forms other than the docs' example, on
# kube-sim with warden-webhook and backup-double. Issue 30: "where a legitimate user ... is
# wrongly refused". docs/toggles.md: break glass is
# "etcd-warden.io/allow-scale-down-without-snapshot: <RFC 3339 expiry> <reason>"; "a value
# without one, a past one or a blank reason is refused" (and one more than 24h ahead).
# RFC 3339 (section 5.6) allows a numeric offset (+01:00), fractional seconds and, per its note,
# lower-case t and z. Lower case is not tried: Go's time.Parse(time.RFC3339), what Kubernetes
# tools write and read, refuses it too, and the refusal shows the accepted form.
# `date --rfc-3339=seconds` prints a space for the T, which is not the grammar's.
#   F1. the operator of Etcd f1/etcd-main (its backups lost) sets break glass with an expiry an
#       hour ahead in each form.
#   F0. control: the docs' form (date -u +%Y-%m-%dT%H:%M:%SZ) is accepted.
# Oracle: what kube-sim stores: the annotation set as given (or refused at admission).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/glass.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
druid_etcd f1 etcd-main
wh_caught_up
K=etcd-warden.io/allow-scale-down-without-snapshot
try() { # VALUE: set by the operator (admin); status 0 when stored as given
    local out
    out=$(kc -n f1 annotate --overwrite etcd etcd-main "$K=$1" 2>&1) || { echo "$out"; return 1; }
    [ "$(kc -n f1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}')" = "$1" ]
}
now=$(date +%s)
z=$(date -u -d "@$((now + 3600))" +%Y-%m-%dT%H:%M:%SZ)
out=$(try "$z bucket lost") || ctl_fail "control: F0: the docs' form \"$z bucket lost\" refused: $out"
echo "ok: control: F0: \"$z bucket lost\" accepted"
holes=0
for v in "$(TZ=Europe/Berlin date -d "@$((now + 3600))" +%Y-%m-%dT%H:%M:%S%:z)" \
    "$(date -u -d "@$((now + 3600))" +%Y-%m-%dT%H:%M:%S.250Z)" \
    "$(date -u -d "@$((now + 3600))" +%Y-%m-%dT%H:%M:%S+00:00)"; do
    if out=$(try "$v bucket lost"); then echo "held: F1: \"$v bucket lost\" accepted"
    else
        echo "HOLE: F1: the RFC 3339 expiry \"$v\" (an hour ahead) is refused as break glass: $(tr '\n' ' ' <<<"$out" | head -c 300)"
        holes=$((holes + 1))
    fi
done
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): RFC 3339 expiries refused as break glass"; exit 1; }
echo "attack14_glass_rfc3339: ok"
