#!/usr/bin/env bash
# The README's playground as a test: tests/playground.sh on this build (under ctest it
# installs and builds nothing), in a session of its own, started in the background; once it
# prints its "export KUBECONFIG=" line (90 s at most), kubectl lists the two example Etcds
# through it; both programs' printed metrics and health addresses answer; every kubectl
# example of docs/backups-and-restores.md and docs/backup-entries.md runs there as the page
# shows it (only the playground's own names substituted) and succeeds, the backup and the
# restore completing; `tests/playground.sh down` stops it (60 s at most), and nothing of its
# session may outlive it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${WARDEN_BINARY_DIR:-}" ] || { echo "FAIL: WARDEN_BINARY_DIR is not set (run under ctest)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/playground-e2e.XXXXXX")
export PLAYGROUND_STATE=$work/state
out=$work/out
pid=""
fail() {
    echo "FAIL: $*" >&2
    echo "--- playground output" >&2
    cat "$out" >&2 || true
    exit 1
}
cleanup() {
    local p
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        sleep 2
    fi
    if [ -n "$pid" ]; then
        for p in $(ps -o pid= -s "$pid" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# made here, before the background job opens it: the first look below may come first
: >"$out"
setsid bash "$here/../playground.sh" >"$out" 2>&1 &
pid=$!
kubeconfig=""
for ((i = 0; i < 900; i++)); do
    kubeconfig=$(sed -n 's/^ *export KUBECONFIG=//p' "$out")
    [ -z "$kubeconfig" ] || break
    kill -0 "$pid" 2>/dev/null || fail "the playground exited before it was up"
    sleep 0.1
done
[ -n "$kubeconfig" ] || fail "no export KUBECONFIG= line within 90s"
grep -q 'tests/playground.sh down' "$out" || fail "it does not say how to stop it"

etcds=$(KUBECONFIG=$kubeconfig kubectl get etcd -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {end}') ||
    fail "kubectl get etcd -A failed"
[ "$etcds" = "shoot/etcd-events shoot/etcd-main " ] || fail "kubectl get etcd -A: \"$etcds\""
echo "ok: kubectl get etcd -A through the printed KUBECONFIG: $etcds"

# Both programs' metrics and health ports, as printed.
for prog in warden-webhook warden-controller; do
    m=$(sed -n "s|^ *$prog *metrics \([^ ]*\) .*|\1|p" "$out")
    h=$(sed -n "s|^ *$prog .* health \([^ ]*\) .*|\1|p" "$out")
    [ -n "$m" ] && [ -n "$h" ] || fail "no metrics or health address printed for $prog"
    curl -sf "$m" | grep '^# TYPE ' >/dev/null || fail "$prog's printed metrics address $m serves no metrics"
    curl -sf "$h" >/dev/null || fail "$prog's printed health address $h is not ready"
    echo "ok: $prog's printed metrics ($m) and health ($h) addresses answer"
done

# Every kubectl example of docs/backups-and-restores.md and docs/backup-entries.md, as the
# pages show them (tests/support/doc_kubectl.py reads them from the pages), with only the
# names the playground has otherwise (its bucket, its Secrets, its endpoint, the backup the
# restore takes, the entry's hash): each succeeds, a `get` prints the columns the page shows,
# an `explain` prints what the page shows, the backup and the restore complete. Left out: the examples the pages show refused, and
# the BackupEntry of an Etcd "etcd" the playground does not have (PrefixConflict), and the entry
# of a deleted Etcd in a store no BackupBucket owns (the playground's bucket owns its store).
s3=$(sed -n 's/^The playground is up: .*s3rver (bucket [^ ]* at \([^)]*\)).*/\1/p' "$out")
[ -n "$s3" ] || fail "no s3rver address printed"
export KUBECONFIG=$kubeconfig
kwait() { # seconds, command...: until it succeeds
    local deadline=$((SECONDS + $1 * ${WARDEN_WAIT_SCALE:-3}))
    shift
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.5
    done
}
entry_of() { kubectl get backupentries -o jsonpath="{range .items[?(@.spec.etcd.name==\"$1\")]}{.metadata.name}{end}"; }
has_entry() { [ -n "$(entry_of "$1")" ]; }
phase_is() { [ "$(kubectl -n shoot get "$1" "$2" -o jsonpath='{.status.phase}')" = "$3" ]; }
kwait 30 has_entry etcd-events || fail "no BackupEntry of etcd-events"
events_entry=$(entry_of etcd-events)
run_doc() { # page, substitutions...
    local page=$1 n=0 line argv stdin header got
    shift
    while IFS= read -r ex; do
        line=$(jq -r .line <<<"$ex")
        case $line in *"shoot--etcd--17e963c6a6dbe93c"* | *"shoot--etcd-main--f8f5ed938f4444bd"*) continue ;; esac
        mapfile -t argv < <(jq -r '.argv[]' <<<"$ex")
        stdin=$(jq -r '.stdin // empty' <<<"$ex")
        header=$(jq -r '.header // empty' <<<"$ex")
        if ! got=$("${argv[@]}" <<<"$stdin" 2>&1); then
            fail "$page: $line failed: $got"
        fi
        if [ -n "$header" ] && [ "$(head -1 <<<"$got" | tr -s ' ')" != "$(tr -s ' ' <<<"$header")" ]; then
            fail "$page: $line prints the columns \"$(head -1 <<<"$got")\", the page shows \"$header\""
        fi
        case $line in
        *" explain "*) # what the page shows is what kubectl prints (spacing aside)
            [ "$(tr -s ' \n' ' ' <<<"$got" | sed 's/ *$//')" = "$(jq -r .output <<<"$ex" | tr -s ' \n' ' ' | sed 's/ *$//')" ] ||
                fail "$page: $line prints: $got" ;;
        esac
        case $stdin in
        *"kind: EtcdBackup"$'\n'*)
            name=$(sed -n 's/^metadata: {name: \([^}]*\)}/\1/p' <<<"$stdin")
            kwait 60 phase_is etcdbackup "$name" Completed ||
                fail "$page: EtcdBackup $name: $(kubectl -n shoot get etcdbackup "$name" -o jsonpath='{.status}')" ;;
        *"kind: EtcdRestore"*)
            name=$(sed -n 's/^metadata: {name: \([^}]*\)}/\1/p' <<<"$stdin")
            kwait 60 phase_is etcdrestore "$name" Completed ||
                fail "$page: EtcdRestore $name: $(kubectl -n shoot get etcdrestore "$name" -o jsonpath='{.status}')" ;;
        esac
        echo "ok: $page: $line"
        n=$((n + 1))
    done < <(python3 "$here/../support/doc_kubectl.py" "$here/../../docs/$page" "$@")
    [ "$n" -ge 4 ] || fail "$page: only $n kubectl examples found"
}
run_doc backups-and-restores.md etcd-offsite-eu-central-1=etcd-bucket \
    offsite-credentials=etcd-backup "https://s3.eu-central-1.example.net=$s3" \
    "prefix: shoot--etcd-main=prefix: offsite--etcd-main" \
    etcd-main-offsite-29395080=etcd-main-before-upgrade "container: etcd-backups=container: etcd-bucket"
run_doc backup-entries.md etcd-backups-eu-west-1=etcd-bucket backup-eu-west-1=etcd-bucket \
    "shoot--etcd-events--4bcc81d460771185=$events_entry"
kill -0 "$pid" 2>/dev/null || fail "the playground did not stay up"

bash "$here/../playground.sh" down || fail "tests/playground.sh down failed"
kill -0 "$pid" 2>/dev/null && fail "the playground still runs after down"
status=0
wait "$pid" || status=$?
[ "$status" = 0 ] || fail "the playground exited with $status"
sleep 0.5
left=$(ps -o pid=,stat=,args= -s "$pid" | awk '$2 !~ /^Z/' || true) # zombies are gone already
if [ -n "$left" ]; then
    echo "$left" >&2
    fail "the playground left processes behind"
fi
[ ! -e "$PLAYGROUND_STATE/pid" ] || fail "the pid file is left behind"
[ ! -e "$(dirname "$kubeconfig")" ] || fail "kube-sim's data directory is left behind"
echo "ok: stopped by tests/playground.sh down, nothing left behind"
bash "$here/../playground.sh" down | grep -q "no playground is running" ||
    fail "down with no playground running"
echo "PASS playground"
