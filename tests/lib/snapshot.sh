# Helpers for the warden-snapshot end-to-end scripts (tests/e2e/snapshot_*.sh)
# and the benchmark. Source this file:
#
#   . "$(dirname "$0")/../lib/snapshot.sh"
#   snap_s3_start                      # s3rver on a loopback port, bucket $SNAP_BUCKET
#   snap_s3 put KEY FILE | get KEY | tag KEY K=V | ls PREFIX | rm KEY
#   snap_s3_bucket NAME                # another bucket in that s3rver
#   snap_abs_start                     # azurite on a loopback port, container $SNAP_BUCKET
#   snap_abs put KEY FILE | get KEY | tag KEY K=V | ls PREFIX | rm KEY
#   snap_run ARGS...                   # warden-snapshot with the store's environment
#   snap_check_prefixes STATUS [ARGS...]
#                                      # check-prefixes ARGS (default: S3, $SNAP_BUCKET) must
#                                      # exit STATUS; its report in $SNAP_WORK/check.out
#   snap_fixture FILE BYTES [NAME]     # random etcd snapshot stand-in, SHA-256 at its end
#   snap_sidecar_config ARGS...        # the store config etcdbrctl ARGS prints as it starts
#   cronjob_exec CRONJOB_JSON SECRET_DIR
#   snap_fail "message"                # print and exit 1
#   snap_on_exit "command"             # run at exit (LIFO)
#
# snap_s3_start exports SNAP_S3_URL, SNAP_S3_PID, SNAP_S3_DIR (HTTPS with
# $SNAP_S3_TLS_DIR/{tls.crt,tls.key,ca.crt} when that is set) and writes the
# credentials as etcd-backup-restore reads them (a directory, one file per
# field) to $SNAP_WORK/aws, exporting AWS_APPLICATION_CREDENTIALS.
# snap_abs_start does the same for Azurite (SNAP_ABS_URL, SNAP_ABS_PID,
# $SNAP_WORK/azure, AZURE_APPLICATION_CREDENTIALS). The emulators come from
# tests/install-emulators.sh (build/npm); SNAP_NPM_DIR overrides.
#
# cronjob_exec runs a batch/v1 CronJob's first container as the kubelet
# would, on this machine: every Secret volume is materialised from
# SECRET_DIR/<secretName>/ (a directory of files) or SECRET_DIR/<secretName>.json
# (a Secret object, data base64) under a temporary root; env values,
# secretKeyRefs and $(VAR) references are resolved; mount paths in env values
# and arguments are mapped to the materialised directories; the command
# (whose program must be warden-snapshot, wherever the image keeps it) runs
# as $WARDEN_SNAPSHOT with command + args exactly as written. Returns its
# exit status.

# shellcheck source=reap.sh
. "$(dirname "${BASH_SOURCE[0]}")/reap.sh"
# shellcheck source=ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

_snap_cleanups=()
snap_on_exit() { _snap_cleanups+=("$1"); }
# Run the snap_on_exit clean-ups, last first, without exiting: for a library sourced later
# whose EXIT trap replaces this one (kubesim.sh's: `ksim_on_exit snap_cleanups`).
snap_cleanups() {
    local i
    for ((i = ${#_snap_cleanups[@]} - 1; i >= 0; i--)); do
        eval "${_snap_cleanups[i]}" || true
    done
}
_snap_run_cleanups() {
    local status=$?
    snap_cleanups
    exit "$status"
}
trap _snap_run_cleanups EXIT

snap_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# snap_fixture FILE BYTES [NAME]: a stand-in for an etcd snapshot as warden-snapshot
# verifies it (tests/support/snap_fixture.py): BYTES random bytes rounded up to whole
# 512-byte sectors, then their SHA-256, compressed as NAME (default FILE) says: .gz gzip,
# .zlib zlib, .Z LZW (before an optional .final), else as it is.
snap_fixture() {
    python3 "$(dirname "${BASH_SOURCE[0]}")/../support/snap_fixture.py" "$@" ||
        { echo "FAIL: snap_fixture $*" >&2; exit 1; }
}

# grep -q that reads all its input, so the writer of a pipe never sees EPIPE (pipefail).
snap_has() { grep "$@" >/dev/null; }

SNAP_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SNAP_NPM_DIR=${SNAP_NPM_DIR:-$SNAP_SRC/build/npm}
SNAP_BUCKET=${SNAP_BUCKET:-etcd-backups}
SNAP_WORK=$(mktemp -d "${TMPDIR:-/tmp}/snap-e2e.XXXXXX")
snap_on_exit 'rm -rf "$SNAP_WORK"'
SNAP_ABS_ACCOUNT=devstoreaccount1
SNAP_ABS_KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

snap_binary() {
    local c
    if [ -n "${WARDEN_SNAPSHOT:-}" ] && [ -x "$WARDEN_SNAPSHOT" ]; then
        echo "$WARDEN_SNAPSHOT"; return 0
    fi
    for c in "${WARDEN_BINARY_DIR:-/nonexistent}/controller/snapshot/warden-snapshot" \
             "$SNAP_SRC"/build/*/controller/snapshot/warden-snapshot; do
        [ -x "$c" ] && { echo "$c"; return 0; }
    done
    echo "warden-snapshot not found (set WARDEN_SNAPSHOT)" >&2
    return 1
}
WARDEN_SNAPSHOT=$(snap_binary) || exit 1
export WARDEN_SNAPSHOT

# A free port (free_port, ports.sh), never one handed out before in this test.
snap_free_port() {
    free_port "$SNAP_WORK/ports"
}

_snap_wait_port() {
    local port=$1 pid=$2 deadline=$((SECONDS + 60))
    while [ $SECONDS -lt $deadline ]; do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

_snap_emulator() {
    local bin=$SNAP_NPM_DIR/node_modules/.bin/$1
    [ -x "$bin" ] || snap_fail "$1 is not installed: run tests/install-emulators.sh"
    echo "$bin"
}

# Kill a process this script started, by pid, and reap it (SIGKILL after 10 s).
snap_kill() {
    reap_child "$1" 10 "${2:-TERM}" || true
}

# s3rver on a loopback port with bucket $SNAP_BUCKET; the data directory survives
# snap_s3_stop so that snap_s3_start can restart on the same data and port.
snap_s3_start() {
    local bin
    bin=$(_snap_emulator s3rver)
    SNAP_S3_DIR=${SNAP_S3_DIR:-$SNAP_WORK/s3rver}
    SNAP_S3_PORT=${SNAP_S3_PORT:-$(snap_free_port)}
    mkdir -p "$SNAP_S3_DIR"
    local tls=() scheme=http
    if [ -n "${SNAP_S3_TLS_DIR:-}" ]; then
        tls=(--cert "$SNAP_S3_TLS_DIR/tls.crt" --key "$SNAP_S3_TLS_DIR/tls.key")
        scheme=https
    fi
    # s3rver's ListObjectsV2 continuation token is DES-encrypted, which OpenSSL 3 (Node 17
    # and later) has only in its legacy provider: without it every truncated listing (more
    # than 1,000 keys, or max-keys) is an HTTP 500.
    NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--openssl-legacy-provider" \
        "$bin" --silent -d "$SNAP_S3_DIR" -a 127.0.0.1 -p "$SNAP_S3_PORT" "${tls[@]}" \
        --configure-bucket "$SNAP_BUCKET" >"$SNAP_WORK/s3rver.log" 2>&1 &
    SNAP_S3_PID=$!
    snap_on_exit "snap_kill $SNAP_S3_PID"
    _snap_wait_port "$SNAP_S3_PORT" "$SNAP_S3_PID" || { cat "$SNAP_WORK/s3rver.log" >&2; snap_fail "s3rver did not start"; }
    SNAP_S3_URL=$scheme://127.0.0.1:$SNAP_S3_PORT
    snap_s3_creds "$SNAP_S3_URL"
    export SNAP_S3_URL SNAP_S3_PID SNAP_S3_PORT SNAP_S3_DIR
}

snap_s3_stop() { snap_kill "$SNAP_S3_PID" "${1:-TERM}"; }

# The credential directory as etcd-druid mounts the Secret (one file per field).
snap_s3_creds() {
    local d=$SNAP_WORK/aws
    mkdir -p "$d"
    printf 'S3RVER' >"$d/accessKeyID"
    printf 'S3RVER' >"$d/secretAccessKey"
    printf 'us-east-1' >"$d/region"
    printf '%s' "$1" >"$d/endpoint"
    printf 'true' >"$d/s3ForcePathStyle"
    export AWS_APPLICATION_CREDENTIALS=$d
    unset AWS_APPLICATION_CREDENTIALS_JSON
}

# Direct S3 calls through curl's own SigV4 (not warden-snapshot's code).
snap_s3() {
    local op=$1 key=${2:-} url=${SNAP_S3_URL}/$SNAP_BUCKET
    local s=(-sS --fail-with-body --aws-sigv4 aws:amz:us-east-1:s3 -u S3RVER:S3RVER
             -H x-amz-content-sha256:UNSIGNED-PAYLOAD)
    [ -n "${SNAP_S3_TLS_DIR:-}" ] && s+=(--cacert "$SNAP_S3_TLS_DIR/ca.crt")
    case $op in
    put) curl "${s[@]}" -T "$3" "$url/$key" -o /dev/null ;;
    get) curl "${s[@]}" "$url/$key" ;;
    rm) curl "${s[@]}" -X DELETE "$url/$key" ;;
    tag) curl "${s[@]}" -X PUT "$url/$key?tagging=" -o /dev/null --data-binary \
             "<Tagging><TagSet><Tag><Key>${3%%=*}</Key><Value>${3#*=}</Value></Tag></TagSet></Tagging>" ;;
    ls) curl "${s[@]}" "$url?list-type=2&prefix=$key" |
            python3 -c 'import sys,xml.etree.ElementTree as E; [print(k.text) for k in E.parse(sys.stdin).iter() if k.tag.endswith("}Key") or k.tag=="Key"]' ;;
    *) snap_fail "snap_s3: unknown op $op" ;;
    esac
}

snap_s3_bucket() {
    curl -sS --fail-with-body --aws-sigv4 aws:amz:us-east-1:s3 -u S3RVER:S3RVER \
        -H x-amz-content-sha256:UNSIGNED-PAYLOAD -X PUT "$SNAP_S3_URL/$1" -o /dev/null ||
        snap_fail "cannot create the bucket $1"
}

snap_abs_start() {
    local bin
    bin=$(_snap_emulator azurite-blob)
    SNAP_ABS_DIR=${SNAP_ABS_DIR:-$SNAP_WORK/azurite}
    SNAP_ABS_PORT=${SNAP_ABS_PORT:-$(snap_free_port)}
    mkdir -p "$SNAP_ABS_DIR"
    "$bin" --blobHost 127.0.0.1 --blobPort "$SNAP_ABS_PORT" --location "$SNAP_ABS_DIR" \
        --silent --skipApiVersionCheck >"$SNAP_WORK/azurite.log" 2>&1 &
    SNAP_ABS_PID=$!
    snap_on_exit "snap_kill $SNAP_ABS_PID"
    _snap_wait_port "$SNAP_ABS_PORT" "$SNAP_ABS_PID" || { cat "$SNAP_WORK/azurite.log" >&2; snap_fail "azurite did not start"; }
    SNAP_ABS_URL=http://127.0.0.1:$SNAP_ABS_PORT
    local d=$SNAP_WORK/azure
    mkdir -p "$d"
    printf '%s' "$SNAP_ABS_ACCOUNT" >"$d/storageAccount"
    printf '%s' "$SNAP_ABS_KEY" >"$d/storageKey"
    printf '127.0.0.1:%s' "$SNAP_ABS_PORT" >"$d/domain"
    printf 'true' >"$d/emulatorEnabled"
    export AZURE_APPLICATION_CREDENTIALS=$d SNAP_ABS_URL SNAP_ABS_PID SNAP_ABS_PORT
    unset AZURE_APPLICATION_CREDENTIALS_JSON
    local i
    for i in 1 2 3 4 5 6 7 8 9 10; do
        snap_abs mkcontainer 2>/dev/null && return 0
        sleep 0.5
    done
    snap_abs mkcontainer
}

# Direct ABS calls through tests/support/abs_client.py (not warden-snapshot's code).
snap_abs() {
    local op=$1; shift
    case $op in
    mkcontainer) python3 "$SNAP_SRC/tests/support/abs_client.py" "$SNAP_ABS_URL" \
                     "$SNAP_ABS_ACCOUNT" "$SNAP_ABS_KEY" mkcontainer "$SNAP_BUCKET" ;;
    *) python3 "$SNAP_SRC/tests/support/abs_client.py" "$SNAP_ABS_URL" "$SNAP_ABS_ACCOUNT" \
           "$SNAP_ABS_KEY" "$op" "$SNAP_BUCKET" "$@" ;;
    esac
}

snap_run() { "$WARDEN_SNAPSHOT" "$@"; }

snap_check_prefixes() {
    local want=$1 rc
    shift
    [ $# -gt 0 ] || set -- --storage-provider S3 --store-container "$SNAP_BUCKET"
    set +e
    snap_run check-prefixes "$@" >"$SNAP_WORK/check.out" 2>&1
    rc=$?
    set -e
    [ $rc -eq "$want" ] || { cat "$SNAP_WORK/check.out"; snap_fail "check-prefixes exited $rc, want $want"; }
}

cronjob_exec() {
    local cj=$1 secrets=$2 root
    root=$(mktemp -d "$SNAP_WORK/pod.XXXXXX")
    python3 "$SNAP_SRC/tests/support/cronjob_exec.py" "$cj" "$secrets" "$root" "$WARDEN_SNAPSHOT"
}

# ---- a realistic backup history and the checks every provider runs ----
#
# snap_history STORE_PUT [TAGS]: seeds, through the function STORE_PUT KEY FILE
# (or STORE_PUTMANY MANIFEST when set, lines "KEY FILE"),
# fulls and deltas in the v1 and v2 layouts, compressed and not, a .final full
# (the one extend must copy), a chunk, foreign objects under the prefix and a
# sibling prefix; with TAGS=tags also a newer full tagged
# x-etcd-snapshot-exclude=true through STORE_TAG KEY K=V (must never be chosen).
# Sets SNAP_PREFIX, SNAP_FINAL (key), SNAP_FINAL_FILE, SNAP_GC_FROM and writes
# the list of seeded keys to $SNAP_WORK/seeded.
SNAP_PREFIX=shoot--dev--main/etcd-main
SNAP_GC_FROM=1700002500
SNAP_DAY=86400

snap_history() {
    local put=$1 tags=${2:-} f k
    local p=$SNAP_PREFIX
    mkdir -p "$SNAP_WORK/seed"
    : >"$SNAP_WORK/seeded"
    SNAP_FINAL=$p/v2/Full-00000000-00002300-1700002000.gz.final
    SNAP_FINAL_FILE=$SNAP_WORK/seed/final
    snap_fixture "$SNAP_FINAL_FILE" "${SNAP_FINAL_SIZE:-3145728}" "$SNAP_FINAL"
    for k in "$p/v1/Backup-1600000000/Full-00000000-00001000-1600000000" \
             "$p/v1/Backup-1600000000/Incr-00001001-00001500-1600000300" \
             "$p/v2/Full-00000000-00002000-1700000000.gz" \
             "$p/v2/Incr-00002001-00002100-1700000300.gz" \
             "$p/v2/Incr-00002101-00002200-1700000600.zlib" \
             "$p/v2/Full-00000000-00002200-1700001000.Z" \
             "$p/v2/Incr-00002201-00002300-1700001300.gz" \
             "$p/v2/Full-00000000-00003000-1700004000/0000000001" \
             "$p/v2/README.txt" "$p/v2/Full-abc-def-1700009999.gz" \
             "$p/other/v2/Full-00000000-00009999-1700009999.gz" \
             "${p}-2/v2/Full-00000000-00005000-1700005000.gz"; do
        f=$SNAP_WORK/seed/$(echo "$k" | tr '/' '_')
        snap_fixture "$f" $((1000 + RANDOM)) "$k"
        echo "$k $f" >>"$SNAP_WORK/seeded"
    done
    echo "$SNAP_FINAL $SNAP_FINAL_FILE" >>"$SNAP_WORK/seeded"
    if [ -n "${STORE_PUTMANY:-}" ]; then
        "$STORE_PUTMANY" "$SNAP_WORK/seeded" || snap_fail "seeding"
    else
        while read -r k f; do
            "$put" "$k" "$f" || snap_fail "seeding $k"
        done <"$SNAP_WORK/seeded"
    fi
    if [ "$tags" = tags ]; then
        SNAP_EXCLUDED=$p/v2/Full-00000000-00002400-1700003000.gz
        f=$SNAP_WORK/seed/excluded
        snap_fixture "$f" 5000 "$SNAP_EXCLUDED"
        "$put" "$SNAP_EXCLUDED" "$f" || snap_fail "seeding $SNAP_EXCLUDED"
        "$STORE_TAG" "$SNAP_EXCLUDED" x-etcd-snapshot-exclude=true || snap_fail "tagging"
        echo "$SNAP_EXCLUDED $f" >>"$SNAP_WORK/seeded"
    fi
}

# `list` against the seed: every snapshot parsed with its fields, nothing foreign.
snap_check_list() {
    local out=$SNAP_WORK/list.out n want=9
    snap_run list "$@" --store-prefix "$SNAP_PREFIX" >"$out" || snap_fail "list failed"
    [ -n "${SNAP_EXCLUDED:-}" ] && want=10
    n=$(wc -l <"$out")
    [ "$n" -eq "$want" ] || { cat "$out"; snap_fail "list printed $n snapshots, seeded $want"; }
    grep -q "^$SNAP_PREFIX/v1/Backup-1600000000/Full-00000000-00001000-1600000000 kind=Full start=0 last=1000 created=2020-09-13T12:26:40Z(1600000000) compression=none final=false chunk=false exclude=false" "$out" || snap_fail "v1 full not listed right"
    grep -q "^$SNAP_FINAL kind=Full start=0 last=2300 .* compression=gz final=true chunk=false exclude=false" "$out" || snap_fail "final full not listed right"
    grep -q "^$SNAP_PREFIX/v2/Incr-00002101-00002200-1700000600.zlib kind=Incr start=2101 last=2200 .* compression=zlib final=false" "$out" || snap_fail "zlib delta not listed right"
    grep -q "^$SNAP_PREFIX/v2/Full-00000000-00002200-1700001000.Z kind=Full .* compression=Z " "$out" || snap_fail ".Z full not listed right"
    grep -q "^$SNAP_PREFIX/v2/Full-00000000-00003000-1700004000/0000000001 kind=Full .* chunk=true " "$out" || snap_fail "chunk not listed right"
    if [ -n "${SNAP_EXCLUDED:-}" ]; then
        grep -q "^$SNAP_EXCLUDED kind=Full .* exclude=true " "$out" || snap_fail "excluded full not flagged"
    fi
    if grep -E 'README|Full-abc|/other/|etcd-main-2/' "$out"; then
        snap_fail "foreign objects listed"
    fi
    # Sorted as etcd-backup-restore sorts: by last revision.
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^last=/) { sub("last=", "", $i); print $i } }' "$out" |
        sort -n -c || snap_fail "list not sorted by last revision"
}

# After extend on day N: the copy of the final full snapshot under day N's name with
# identical content, the previous day's copy collected, every seeded object untouched.
# STORE_GET KEY prints an object, STORE_LS PREFIX lists keys, STORE_CHECK MANIFEST
# (optional) compares many objects at once.
snap_check_day() {
    local now=$1 prev=${2:-} copy k f
    copy=$SNAP_PREFIX/v2/Full-00000000-00002300-$now.gz.final
    "$STORE_GET" "$copy" >"$SNAP_WORK/got" || snap_fail "copy $copy missing"
    cmp -s "$SNAP_WORK/got" "$SNAP_FINAL_FILE" || snap_fail "copy $copy differs from the final snapshot"
    if [ -n "$prev" ]; then
        if "$STORE_LS" "$SNAP_PREFIX/" | snap_has -x "$SNAP_PREFIX/v2/Full-00000000-00002300-$prev.gz.final"; then
            snap_fail "the copy of day $prev was not collected"
        fi
    fi
    if [ -n "${STORE_CHECK:-}" ]; then
        "$STORE_CHECK" "$SNAP_WORK/seeded" || snap_fail "seeded objects changed"
    else
        while read -r k f; do
            "$STORE_GET" "$k" >"$SNAP_WORK/got" || snap_fail "seeded $k is gone"
            cmp -s "$SNAP_WORK/got" "$f" || snap_fail "seeded $k changed"
        done <"$SNAP_WORK/seeded"
    fi
    # Nothing but the seed and today's copy under the store (sibling prefix included).
    "$STORE_LS" "shoot--dev--main/" | sort >"$SNAP_WORK/have"
    { cut -d' ' -f1 "$SNAP_WORK/seeded"; echo "$copy"; } | sort >"$SNAP_WORK/want"
    diff "$SNAP_WORK/want" "$SNAP_WORK/have" >&2 || snap_fail "unexpected objects in the store after day $now"
}

# Runs extend over simulated days with the store flags "$@" and checks each day.
# SNAP_MODES: the --copy-mode of each day (default: server stream server).
snap_days() {
    local day=0 now prev="" mode log
    for mode in ${SNAP_MODES:-server stream server}; do
        day=$((day + 1))
        now=$((1700000000 + day * SNAP_DAY))
        log=$SNAP_WORK/day$day.log
        WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability "$@" \
            --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" \
            --copy-mode "$mode" ${SNAP_EXTRA_FLAGS:-} 2>"$log" || { cat "$log" >&2; snap_fail "extend failed on day $day"; }
        grep -q '"msg":"snapshot immutability extended"' "$log" || { cat "$log" >&2; snap_fail "no success line on day $day"; }
        if grep -q '"level":"error"' "$log"; then cat "$log" >&2; snap_fail "error logged on day $day"; fi
        snap_check_day "$now" "$prev"
        prev=$now
        echo "day $day ($mode): copy verified, earlier copy collected, nothing else touched"
    done
}

# The fault tests: a fault proxy (tests/support/fault_proxy.py) in front of an emulator,
# runs of extend on a simulated day, and what a failed run must leave.
proxy_start() { # upstream, then fault_proxy.py flags; sets PROXY_URL, PROXY_PID
    local up=$1 out deadline=$((SECONDS + 60)) port=""; shift
    # a file of this start's own (mktemp: $RANDOM may repeat an earlier start's name): the
    # background redirection truncates it only once the child runs, so an earlier proxy's
    # "ready" line must never be read for this one
    out=$(mktemp "$SNAP_WORK/proxy.XXXXXX")
    python3 "$SNAP_SRC/tests/support/fault_proxy.py" --upstream "$up" "$@" \
        >"$out" 2>>"$SNAP_WORK/proxy.log" &
    PROXY_PID=$!
    snap_on_exit "snap_kill $PROXY_PID"
    while [ $SECONDS -lt $deadline ]; do
        port=$(awk '$1 == "fault-proxy" && $2 == "ready" {print $3}' "$out" 2>/dev/null)
        [ -n "$port" ] && break
        kill -0 "$PROXY_PID" 2>/dev/null || break
        sleep 0.05
    done
    [ -n "$port" ] || snap_fail "the fault proxy did not start: $(tail -5 "$SNAP_WORK/proxy.log")"
    PROXY_URL=http://127.0.0.1:$port
}
proxy_stop() { snap_kill "$PROXY_PID"; }
s3_via() { printf '%s' "$1" >"$AWS_APPLICATION_CREDENTIALS/endpoint"; }

# extend on day $1 with extra flags; status in RC, log in $SNAP_WORK/run.log
run_day() {
    local now=$((1700000000 + $1 * SNAP_DAY)); shift
    set +e
    WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability --storage-provider S3 \
        --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX" \
        --gc-from-timestamp "$SNAP_GC_FROM" "$@" 2>"$SNAP_WORK/run.log"
    RC=$?
    set -e
}
one_error_line() {
    local n
    n=$(grep -c '"level":"error"' "$SNAP_WORK/run.log" || true)
    [ "$n" -eq 1 ] || { cat "$SNAP_WORK/run.log" >&2; snap_fail "$n error lines, want 1"; }
    grep '"level":"error"' "$SNAP_WORK/run.log" | snap_has "$1" ||
        { cat "$SNAP_WORK/run.log" >&2; snap_fail "error line does not say '$1'"; }
}
no_copy_of_day() {
    if snap_s3 ls "$SNAP_PREFIX/" | snap_has -- "-$((1700000000 + $1 * SNAP_DAY)).gz.final"; then
        snap_fail "a copy of day $1 was left under the prefix"
    fi
}

# ---- Debian's etcd and the real backup sidecar (tests/e2e/sidecar_*.sh) ----
#
#   snap_need_sidecar                  # exit 77 (skip) naming what is missing
#   snap_etcd_start NAME [DIR [PEER]]  # etcd on loopback ports; SNAP_ETCD_URL, SNAP_ETCD_PID
#   snap_etcdctl URL ARGS...           # etcdctl v3, every call bounded
#   snap_etcd_rev URL                  # the current revision
#   snap_etcd_dump URL                 # every key and value, as `etcdctl get "" --prefix`
#   snap_brctl ARGS...                 # $WARDEN_ETCDBRCTL with S3 against s3rver
#   snap_brctl_snapshot NAME URL PREFIX [PROVIDER CONTAINER]
#                                      # its snapshotter in the background (default: S3,
#                                      # s3rver's bucket); SNAP_BR_PID
#   snap_wait_key PREFIX REGEX [SECS]  # until snap_s3 ls PREFIX shows a key matching REGEX
#   snap_brctl_server NAME URL PEER PREFIX PORT [FLAGS...]
#                                      # `etcdbrctl server` beside member NAME; SNAP_BR_PID
#   snap_brctl_restore PREFIX DIR      # `etcdbrctl restore` of PREFIX into DIR/data;
#                                      # SNAP_RESTORE_PEER
#
# WARDEN_ETCDBRCTL is etcd-backup-restore's etcdbrctl (.ci/run sets it where the machine
# has one); snap_need_sidecar skips the test without it or without etcd and etcdctl.

# snap_need_etcdbrctl skips it without etcdbrctl alone (a script that only asks the sidecar
# where it writes).
snap_need_etcdbrctl() {
    if [ -z "${WARDEN_ETCDBRCTL:-}" ] || [ ! -x "$WARDEN_ETCDBRCTL" ]; then
        echo "SKIP: WARDEN_ETCDBRCTL does not name etcd-backup-restore's etcdbrctl"
        exit 77
    fi
}

# The log line in which the real sidecar prints its store config as it starts
# ("snapstoreConfig: ..." with escaped newlines): etcdbrctl run with ARGS in $SNAP_WORK, the
# caller's environment passed on (STORAGE_CONTAINER=... snap_sidecar_config ...). It runs on
# after that line: the first line read ends it (SIGPIPE at its next write); 30 s bound it on a
# machine too busy to print it.
snap_sidecar_config() {
    (cd "$SNAP_WORK" 2>/dev/null || cd /tmp; timeout 30 "$WARDEN_ETCDBRCTL" "$@" 2>&1) |
        grep -m1 'snapstoreConfig:'
}

snap_need_sidecar() {
    snap_need_etcdbrctl
    if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
        echo "SKIP: etcd and etcdctl are not installed (Debian: etcd-server, etcd-client)"
        exit 77
    fi
}

snap_etcdctl() {
    local url=$1
    shift
    ETCDCTL_API=3 timeout 30 etcdctl --endpoints "$url" --dial-timeout 5s --command-timeout 20s "$@"
}

snap_etcd_start() {
    local name=$1 dir=${2:-$SNAP_WORK/etcd-$1/data} peer=${3:-$(snap_free_port)} client
    local deadline=$((SECONDS + 60))
    client=$(snap_free_port)
    mkdir -p "$SNAP_WORK/etcd-$name"
    etcd --name "$name" --data-dir "$dir" \
        --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
        --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
        --initial-cluster "$name=http://127.0.0.1:$peer" >>"$SNAP_WORK/etcd-$name/etcd.log" 2>&1 &
    SNAP_ETCD_PID=$!
    snap_on_exit "snap_kill $SNAP_ETCD_PID"
    SNAP_ETCD_URL=http://127.0.0.1:$client
    until snap_etcdctl "$SNAP_ETCD_URL" endpoint health >/dev/null 2>&1; do
        kill -0 "$SNAP_ETCD_PID" 2>/dev/null && [ $SECONDS -lt $deadline ] ||
            { tail -20 "$SNAP_WORK/etcd-$name/etcd.log" >&2; snap_fail "etcd $name did not start"; }
        sleep 0.2
    done
}

snap_etcd_rev() {
    snap_etcdctl "$1" endpoint status -w json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Status"]["header"]["revision"])'
}

snap_etcd_dump() { snap_etcdctl "$1" get "" --prefix; }

snap_brctl() {
    "$WARDEN_ETCDBRCTL" "$@" --storage-provider S3 --store-container "$SNAP_BUCKET"
}

# The snapshotter of the sidecar: a full snapshot at once, deltas every second, no
# garbage collection, the next scheduled full one far away. Its log: $SNAP_WORK/br-NAME.log.
snap_brctl_snapshot() {
    local name=$1 url=$2 prefix=$3 provider=${4:-S3} container=${5:-$SNAP_BUCKET}
    mkdir -p "$SNAP_WORK/br-$name"
    (cd "$SNAP_WORK/br-$name" &&
        exec "$WARDEN_ETCDBRCTL" snapshot --storage-provider "$provider" --store-container "$container" \
            --store-prefix "$prefix" --endpoints "$url" --schedule '0 0 1 1 *' \
            --delta-snapshot-period 1s --garbage-collection-period 0 \
            --snapstore-temp-directory "$SNAP_WORK/br-$name") >"$SNAP_WORK/br-$name.log" 2>&1 &
    SNAP_BR_PID=$!
    snap_on_exit "snap_kill $SNAP_BR_PID"
}

snap_wait_key() {
    local prefix=$1 re=$2 deadline=$((SECONDS + ${3:-60}))
    until snap_s3 ls "$prefix" | snap_has -E "$re"; do
        [ $SECONDS -lt $deadline ] || snap_fail "no key under $prefix matching $re after ${3:-60}s"
        sleep 0.2
    done
}

# The sidecar as etcd-druid runs it beside member NAME (etcd at URL, its peer port PEER, as
# snap_etcd_start NAME "" PEER starts it): `etcdbrctl server` with its HTTP API on PORT (it
# binds every address, so a Service clusterIP on the loopback reaches it), the snapshots of
# PREFIX in s3rver's bucket, gzip-compressed as etcd-druid configures it, the next
# scheduled full snapshot far away, no garbage collection; FLAGS passed on (later ones win).
# It reads the member's etcd.conf.yaml (ETCD_CONF, written here as etcd-druid's ConfigMap
# holds it) and its pod's name (POD_NAME: NAME). Returns once /healthz answers 200 and the
# initial full snapshot is in the store (within SNAP_BR_START_S seconds, default 60). Log:
# $SNAP_WORK/br-NAME.log; sets SNAP_BR_PID.
snap_brctl_server() {
    local name=$1 url=$2 peer=$3 prefix=$4 port=$5 d=$SNAP_WORK/br-$1 deadline
    shift 5
    mkdir -p "$d"
    cat >"$d/etcd.conf.yaml" <<EOF
name: $name
data-dir: $SNAP_WORK/etcd-$name/data
listen-client-urls: $url
advertise-client-urls: $url
listen-peer-urls: http://127.0.0.1:$peer
initial-advertise-peer-urls: http://127.0.0.1:$peer
initial-cluster: $name=http://127.0.0.1:$peer
initial-cluster-state: new
initial-cluster-token: etcd-cluster
EOF
    (cd "$d" && ETCD_CONF=$d/etcd.conf.yaml POD_NAME=$name POD_NAMESPACE=default \
        exec "$WARDEN_ETCDBRCTL" server --storage-provider S3 --store-container "$SNAP_BUCKET" \
            --store-prefix "$prefix" --endpoints "$url" --server-port "$port" \
            --data-dir "$d/data" --schedule '0 0 1 1 *' --compress-snapshots \
            --garbage-collection-period 0 --snapstore-temp-directory "$d" "$@") \
        >"$SNAP_WORK/br-$name.log" 2>&1 &
    SNAP_BR_PID=$!
    snap_on_exit "snap_kill $SNAP_BR_PID"
    deadline=$((SECONDS + ${SNAP_BR_START_S:-60}))
    until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 &&
        snap_s3 ls "${prefix#/}/" | snap_has -E "/v2/Full-"; do
        kill -0 "$SNAP_BR_PID" 2>/dev/null && [ $SECONDS -lt $deadline ] ||
            { tail -20 "$SNAP_WORK/br-$name.log" >&2; snap_fail "etcdbrctl server of $name did not start"; }
        sleep 0.2
    done
}

# etcdbrctl restore of PREFIX (s3rver's bucket) into DIR/data, as a member named restored
# whose peer port is SNAP_RESTORE_PEER (start etcd on it with
# snap_etcd_start restored DIR/data "$SNAP_RESTORE_PEER"). Fails the script when it fails.
snap_brctl_restore() {
    local prefix=$1 d=$2
    SNAP_RESTORE_PEER=$(snap_free_port)
    mkdir -p "$d"
    (cd "$d" && timeout 120 "$WARDEN_ETCDBRCTL" restore --storage-provider S3 \
        --store-container "$SNAP_BUCKET" --store-prefix "$prefix" --data-dir "$d/data" \
        --name restored --initial-cluster "restored=http://127.0.0.1:$SNAP_RESTORE_PEER" \
        --initial-advertise-peer-urls "http://127.0.0.1:$SNAP_RESTORE_PEER" \
        --snapstore-temp-directory "$d") >"$d.log" 2>&1 ||
        { tail -20 "$d.log" >&2; snap_fail "etcdbrctl restore of $prefix failed"; }
}
