#!/usr/bin/env bash
# backup-double, the etcd-backup-restore stand-in of the controller tests, with curl:
# the sidecar's routes and codes (§4.1 of etcd-druid.md), etcd's revisions and writes, the
# admin routes (injected answers for K requests or until changed, delay, hold and release,
# request log),
# HTTPS with a certificate directory, exit 0 on SIGTERM.
set -euo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v curl >/dev/null || ksim_fail "curl is not installed"

dir=$(mktemp -d "${TMPDIR:-/tmp}/backup-double.XXXXXX")
ksim_on_exit "rm -rf '$dir'"
ip=127.77.$((RANDOM % 200 + 20)).$((RANDOM % 200 + 20))

druid_double_start "$ip" 8080
url=$DRUID_DOUBLE_URL
code() { # method path -> HTTP code
    curl -s -o /dev/null -w '%{http_code}' -X "$1" "$url$2"
}
body() { # method path -> body
    curl -sf -X "$1" "$url$2"
}
field() { # JSON key -> value of a flat snapshot document on stdin (no commas in values)
    local v
    v=$(grep -o "\"$1\":[^,}]*") || return 1
    echo "${v#*:}"
}
expect() { # what, want, got
    [ "$2" = "$3" ] || ksim_fail "$1: want $2, got $3"
    echo "ok: $1"
}

expect "healthz" '{"health":true}' "$(body GET /healthz)"
expect "latest before any snapshot" '{"fullSnapshot":null,"deltaSnapshots":null}' \
    "$(body GET /snapshot/latest)"

full=$(body POST '/snapshot/full?final=true')
expect "full kind" '"Full"' "$(field kind <<<"$full")"
expect "full isFinal" 'true' "$(field isFinal <<<"$full")"
expect "full startRevision" '0' "$(field startRevision <<<"$full")"
r1=$(field lastRevision <<<"$full")
[ "$r1" -gt 0 ] || ksim_fail "full lastRevision $r1"
grep -qE '^"Full-00000000-[0-9]{8}-[0-9]+\.gz\.final"$' <<<"$(field snapName <<<"$full")" ||
    ksim_fail "snapName: $full"
for k in createdOn immutabilityExpriyTime versionID snapDir prefix compressionSuffix isChunk; do
    field "$k" <<<"$full" >/dev/null || ksim_fail "no $k in $full"
done
echo "ok: Snapshot document fields"

delta=$(body GET /snapshot/delta)
expect "delta kind" '"Incr"' "$(field kind <<<"$delta")"
expect "delta starts after the full" "$((r1 + 1))" "$(field startRevision <<<"$delta")"
r2=$(field lastRevision <<<"$delta")
[ "$r2" -gt "$r1" ] || ksim_fail "delta revision $r2 not above $r1"
full2=$(body POST /snapshot/full)
expect "plain full is not final" 'false' "$(field isFinal <<<"$full2")"
r3=$(field lastRevision <<<"$full2")
[ "$r3" -gt "$r2" ] || ksim_fail "revision $r3 not above $r2"
echo "ok: revisions increase ($r1 < $r2 < $r3)"
expect "latest is the last full" "$r3" \
    "$(body GET /snapshot/latest | grep -o '"fullSnapshot":{[^}]*}' | field lastRevision)"

expect "unparsable final" 400 "$(code POST '/snapshot/full?final=maybe')"
expect "unknown path" 404 "$(code GET /nope)"
expect "admin needs POST" 405 "$(code GET '/admin/reply?code=500')"
expect "admin code checked" 400 "$(code POST '/admin/reply?code=abc')"

# Two failures, then normal answers again.
expect "inject 500 x2" 200 "$(code POST '/admin/reply?code=500&count=2')"
expect "1st injected" 500 "$(code POST '/snapshot/full?final=true')"
expect "2nd injected" 500 "$(code POST /snapshot/delta)"
expect "then normal" 200 "$(code POST '/snapshot/full?final=true')"
# Until changed.
body POST '/admin/reply?code=503&count=0' >/dev/null
for i in 1 2 3; do expect "until changed ($i)" 503 "$(code POST /snapshot/full)"; done
body POST '/admin/reply?code=200' >/dev/null
expect "reset" 200 "$(code POST /snapshot/full)"

body POST '/admin/delay?ms=400' >/dev/null
start=$(date +%s%N)
expect "delayed" 200 "$(code POST /snapshot/full)"
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -ge 380 ] || ksim_fail "the delay was $took ms"
echo "ok: delay ($took ms)"
body POST '/admin/delay?ms=0' >/dev/null

log=$(body GET /admin/requests)
n=$(grep -c '' <<<"$log")
expect "one line per snapshot request" 12 "$n"
expect "final=true requests" 3 "$(grep '"path":"/snapshot/full"' <<<"$log" | grep -c '"query":{"final":"true"}')"
expect "failed requests logged with their code" 5 \
    "$(grep -cE '"code":50[03]' <<<"$log")"
grep -q '"code":400,"lastRevision":null' <<<"$log" || ksim_fail "400 not logged: $log"

# Revisions are etcd's: writes take the next ones and a final full snapshot holds them; a
# final request with nothing written since answers the same snapshot (etcd-backup-restore
# v0.28 and later) and is logged as skipped; a writer on an established connection goes on
# writing after a snapshot.
w=$(body POST '/admin/write?n=3')
f1=$(body POST '/snapshot/full?final=true')
expect "the final snapshot holds the last write" "$w" "$(field lastRevision <<<"$f1")"
f2=$(body POST '/snapshot/full?final=true')
expect "nothing written: the same final snapshot" "$(field snapName <<<"$f1")" "$(field snapName <<<"$f2")"
body GET /admin/requests | tail -1 | grep -q '"skipped":true' || ksim_fail "the skip is not logged"
expect "writes logged with their revisions" "$((w - 2)) $((w - 1)) $w" \
    "$(body GET /admin/writes | tail -3 | grep -o '"revision":[0-9]*' | cut -d: -f2 | tr '\n' ' ' | sed 's/ $//')"
body POST '/admin/writer?ms=10' >/dev/null
ksim_wait 5 bash -c "[ \"\$(curl -sf '$url/admin/writes' | grep -c '')\" -ge 8 ]" || ksim_fail "the writer did not write"
f3=$(body POST '/snapshot/full?final=true')
ksim_wait 5 bash -c "[ \"\$(curl -sf '$url/admin/writes' | grep -c '')\" -ge 12 ]" || ksim_fail "the writer stopped"
body POST '/admin/writer?ms=0' >/dev/null
last=$(body GET /admin/writes | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2)
[ "$last" -gt "$(field lastRevision <<<"$f3")" ] || ksim_fail "no write after the snapshot: $last"
sleep 0.1
expect "the writer stopped" "$last" "$(body GET /admin/writes | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2)"
echo "ok: revisions, writes, the writer, final snapshots skipped when nothing changed"

# Hold: snapshot requests get no answer until released; /admin/held counts them.
body POST /admin/hold >/dev/null
curl -s -o /dev/null -w '%{http_code}' -X POST "$url/snapshot/full" >"$dir/held.code" &
held=$!
ksim_wait 5 bash -c "[ \"\$(curl -sf '$url/admin/held')\" = 1 ]" || ksim_fail "the request was not held"
kill -0 "$held" 2>/dev/null || ksim_fail "a held request was answered"
expect "admin routes answer while a request is held" 200 "$(code POST /admin/release)"
reap_child "$held" 5 none || ksim_fail "the released request did not end"
expect "the released request answered" 200 "$(cat "$dir/held.code")"
expect "nothing held after the release" 0 "$(body GET /admin/held)"
expect "no hold after the release" 200 "$(code POST /snapshot/full)"
echo "ok: hold and release"

# Upload gate: a snapshot's answer waits until /admin/uploaded names it (the writer's put).
expect "the gate is set" 200 "$(code POST '/admin/upload?gate=true')"
expect "a gate that is not a bool" 400 "$(code POST '/admin/upload?gate=maybe')"
expect "uploaded without a name" 400 "$(code POST '/admin/uploaded')"
curl -s -o "$dir/gated.body" -w '%{http_code}' -X POST "$url/snapshot/full" >"$dir/gated.code" &
gated=$!
gname=""
ksim_wait 5 bash -c "curl -sf '$url/snapshot/latest' | jq -e '.fullSnapshot.snapName' >/dev/null" ||
    ksim_fail "the gated snapshot was not taken"
gname=$(curl -sf "$url/snapshot/latest" | jq -r '.fullSnapshot.snapName')
for _ in 1 2 3 4 5; do # unanswered while nothing is uploaded (its 60 s bound is far)
    kill -0 "$gated" 2>/dev/null || ksim_fail "a gated answer went out before its upload"
    sleep 0.1
done
expect "another name does not open it" 200 "$(code POST '/admin/uploaded?name=Full-0-1-1.gz')"
kill -0 "$gated" 2>/dev/null || ksim_fail "a gated answer went out on another snapshot's upload"
expect "its upload is confirmed" 200 "$(code POST "/admin/uploaded?name=$gname")"
reap_child "$gated" 5 none || ksim_fail "the gated answer did not go out after its upload"
expect "the gated request answered" 200 "$(cat "$dir/gated.code")"
expect "it answers the uploaded snapshot" "$gname" "$(jq -r .snapName "$dir/gated.body")"
expect "the gate is lifted" 200 "$(code POST '/admin/upload?gate=false')"
expect "no gate after it is lifted" 200 "$(code POST /snapshot/full)"
echo "ok: upload gate"

# SIGTERM while an answer is delayed: exit 0 at once.
body POST '/admin/delay?ms=60000' >/dev/null
curl -s -o /dev/null -X POST "$url/snapshot/full" &
held=$!
sleep 0.3
druid_double_stop || ksim_fail "backup-double did not exit 0 on SIGTERM"
reap_child "$held" 5 none || true
echo "ok: exit 0 on SIGTERM with a delayed answer in flight"

# HTTPS from a certificate directory, verified against its CA by name.
"$(dirname "$0")/../../certs/gen-certs.sh" -o "$dir/tls" -n shoot -s etcd-main-client >/dev/null
druid_double_start "$ip" 8443 --tls-dir "$dir/tls"
hdrs=$(curl -sf -D - -o /dev/null --cacert "$dir/tls/ca.crt" \
    --connect-to "etcd-main-client.shoot.svc:8443:$ip:8443" \
    -X POST "https://etcd-main-client.shoot.svc:8443/snapshot/full?final=true")
grep -qi '^strict-transport-security: max-age=31536000' <<<"$hdrs" || ksim_fail "no HSTS: $hdrs"
echo "ok: HTTPS with the Service name verified, sidecar headers"
curl -s -o /dev/null "http://$ip:8443/healthz" && ksim_fail "plain HTTP answered on the TLS port"
druid_double_stop || ksim_fail "backup-double (TLS) did not exit 0"
echo "PASS"
