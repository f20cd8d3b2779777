# A throw-away Ceph RADOS Gateway (S3 with Object Lock, versions, tagging, CopyObject,
# UploadPartCopy) from Debian's own packages, for the tests: one ceph-mon, one ceph-osd on
# the in-memory object store (memstore), no ceph-mgr, radosgw's beast frontend on a free
# loopback port; no systemd. Source after tests/lib/snapshot.sh:
#
#   rgw_start        # exports RGW_URL, RGW_ACCESS, RGW_SECRET; state under $SNAP_WORK/ceph
#   rgw_s3 ARGS...   # curl with SigV4 against $RGW_URL (plus -sS --fail-with-body)
#   rgw_stop         # radosgw, osd, mon: TERM, then KILL after 10 s; also at exit
#
# Needs radosgw, ceph-mon, ceph-osd, ceph-common (tests/run-all.sh installs them).
# RGW_MEMSTORE_BYTES: the OSD's in-memory store (768 MiB; it holds about twice the data).
# Every wait is bounded; a daemon that ignores TERM is killed.

RGW_ACCESS=wardenaccesskey
RGW_SECRET=wardensecretkey
_rgw_pids=()

_rgw_say() { echo "ceph-rgw: $*" >&2; }

_rgw_until() { # seconds, command...: retry every 0.2 s until it succeeds or time runs out
    local end=$((SECONDS + $1)); shift
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $end ] || return 1
        sleep 0.2
    done
}

_rgw_daemon() { # name, program, args...: started in its own session, pid recorded
    local name=$1; shift
    setsid nice -n 10 "$@" </dev/null >>"$RGW_STATE/log/$name.out" 2>&1 &
    _rgw_pids+=("$!:$1")
}

rgw_stop() {
    local i pid prog end
    for ((i = ${#_rgw_pids[@]} - 1; i >= 0; i--)); do
        pid=${_rgw_pids[i]%%:*} prog=${_rgw_pids[i]#*:}
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(basename "$prog" | cut -c1-15)" ] || continue
        kill -TERM "$pid" 2>/dev/null || true
        end=$((SECONDS + 10))
        while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do
            wait "$pid" 2>/dev/null && break
            sleep 0.05
        done
        if kill -0 "$pid" 2>/dev/null; then
            _rgw_say "$prog ($pid) ignored TERM for 10 s: KILL"
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    _rgw_pids=()
}

rgw_start() {
    local b
    for b in ceph-mon ceph-osd radosgw ceph ceph-authtool monmaptool radosgw-admin; do
        command -v "$b" >/dev/null 2>&1 || PATH=/usr/sbin:/usr/bin:$PATH
        command -v "$b" >/dev/null 2>&1 || snap_fail "$b is not installed (tests/run-all.sh installs Ceph)"
    done
    RGW_STATE=$SNAP_WORK/ceph
    local mon_port rgw_port fsid
    mon_port=$(snap_free_port)
    rgw_port=$(snap_free_port)
    fsid=$(cat /proc/sys/kernel/random/uuid)
    mkdir -p "$RGW_STATE"/{mon.a,osd.0,rgw,log,run,crash}
    snap_on_exit rgw_stop
    local S=$RGW_STATE
    cat >"$S/ceph.conf" <<CONF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$mon_port]
mon initial members = a
public addr = 127.0.0.1
public network = 127.0.0.0/8
ms bind msgr1 = false
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
mon warn on insecure global id reclaim allowed = false
run dir = $S/run
crash dir = $S/crash
log file = $S/log/\$name.log
admin socket = $S/run/\$name.asok
pid file = $S/run/\$name.pid
mon cluster log file = $S/log/cluster.log
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
; a shared /tmp may be fuller than the default free-space thresholds
mon data avail warn = 2
mon data avail crit = 1
; commit maps every 0.1 s: the monitor is ready in seconds
paxos propose interval = 0.1
paxos min wait = 0.01
[mon]
keyring = $S/keyring
mon data = $S/mon.\$id
[osd]
osd data = $S/osd.\$id
keyring = $S/osd.\$id/keyring
osd objectstore = memstore
memstore device bytes = ${RGW_MEMSTORE_BYTES:-805306368}
osd op num shards = 1
osd op num threads per shard = 2
osd max scrubs = 0
osd check max object name len on startup = false
[client]
keyring = $S/keyring
log file = $S/log/\$name.\$pid.log
admin socket = $S/run/\$name.\$pid.asok
[client.rgw.a]
keyring = $S/rgw/keyring
rgw data = $S/rgw
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw crypt require ssl = false
rgw thread pool size = 16
rgw dns name = localhost
rgw enable apis = s3, admin
rgw gc obj min wait = 30
rgw gc processor period = 30
log file = $S/log/rgw.log
admin socket = $S/run/rgw.asok
CONF
    local C=(-c "$S/ceph.conf") t0=$SECONDS
    ceph-authtool --create-keyring "$S/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
    ceph-authtool "$S/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
        --cap mgr 'allow *' >/dev/null
    monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$S/monmap" >/dev/null
    ceph-mon "${C[@]}" --mkfs -i a --monmap "$S/monmap" --keyring "$S/keyring" >>"$S/log/mkfs.out" 2>&1 ||
        snap_fail "ceph-mon --mkfs failed"
    _rgw_daemon mon ceph-mon "${C[@]}" -f -i a
    _rgw_until 120 timeout 5 ceph "${C[@]}" --connect-timeout 2 mon stat ||
        { tail -5 "$S/log/mon.out" >&2; snap_fail "ceph-mon did not start"; }

    local uuid key id
    uuid=$(cat /proc/sys/kernel/random/uuid)
    key=$(ceph-authtool --gen-print-key)
    id=$(echo "{\"cephx_secret\": \"$key\"}" | timeout 20 ceph "${C[@]}" osd new "$uuid" -i -)
    [ "$id" = 0 ] || snap_fail "ceph osd new answered '$id'"
    ceph-authtool --create-keyring "$S/osd.0/keyring" -n osd.0 --add-key "$key" >/dev/null
    timeout 60 ceph-osd "${C[@]}" -i 0 --mkfs --osd-uuid "$uuid" >>"$S/log/mkfs.out" 2>&1 ||
        snap_fail "ceph-osd --mkfs failed"
    _rgw_daemon osd ceph-osd "${C[@]}" -f -i 0
    # RGW's pools up front (created lazily, each first use stalls about a second)
    { for b in .rgw.root default.rgw.log default.rgw.control default.rgw.meta \
               default.rgw.buckets.index default.rgw.buckets.data default.rgw.buckets.non-ec; do
          echo "osd pool create $b"; echo "osd pool application enable $b rgw"; done
      echo "auth get-or-create client.rgw.a mon 'allow rw' osd 'allow rwx'"; } |
        timeout 60 ceph "${C[@]}" >/dev/null 2>&1 || snap_fail "creating RGW's pools failed"
    timeout 20 ceph "${C[@]}" auth get client.rgw.a -o "$S/rgw/keyring" 2>/dev/null ||
        snap_fail "no key for radosgw"
    _rgw_osd_up() { timeout 5 ceph "${C[@]}" osd stat -f json 2>/dev/null | grep -q '"num_up_osds":1'; }
    _rgw_until 180 _rgw_osd_up || { tail -5 "$S/log/osd.out" >&2; snap_fail "ceph-osd did not come up"; }

    _rgw_daemon rgw radosgw "${C[@]}" -f -n client.rgw.a
    _rgw_until 180 curl -s -o /dev/null "http://127.0.0.1:$rgw_port/" ||
        { tail -5 "$S/log/rgw.out" >&2; snap_fail "radosgw did not answer"; }
    timeout 60 radosgw-admin "${C[@]}" user create --uid=warden --display-name=warden \
        --access-key="$RGW_ACCESS" --secret-key="$RGW_SECRET" >/dev/null 2>>"$S/log/mkfs.out" ||
        snap_fail "radosgw-admin user create failed"
    RGW_URL=http://127.0.0.1:$rgw_port
    export RGW_URL RGW_ACCESS RGW_SECRET
    # up when it serves S3 writes: a bucket made and removed (on a loaded machine radosgw
    # answers 405 to a bucket PUT for a while after it first answers)
    _rgw_probe() {
        rgw_s3 -X PUT "$RGW_URL/warden-ready-probe" -o /dev/null &&
            rgw_s3 -X DELETE "$RGW_URL/warden-ready-probe" -o /dev/null
    }
    _rgw_until 120 _rgw_probe ||
        { tail -5 "$S/log/rgw.out" >&2; snap_fail "radosgw does not create buckets"; }
    _rgw_say "up in $((SECONDS - t0)) s at $RGW_URL"
}

# curl against radosgw with SigV4 (path-style: $RGW_URL/<bucket>/<key>).
rgw_s3() {
    curl -sS --fail-with-body --max-time 60 --aws-sigv4 aws:amz:us-east-1:s3 \
        -u "$RGW_ACCESS:$RGW_SECRET" -H x-amz-content-sha256:UNSIGNED-PAYLOAD "$@"
}

# etcd-backup-restore's S3 credentials directory for radosgw (path-style, us-east-1) in
# $SNAP_WORK/aws, exported as AWS_APPLICATION_CREDENTIALS.
rgw_aws_credentials() {
    local d=$SNAP_WORK/aws
    mkdir -p "$d"
    printf '%s' "$RGW_ACCESS" >"$d/accessKeyID"
    printf '%s' "$RGW_SECRET" >"$d/secretAccessKey"
    printf 'us-east-1' >"$d/region"
    printf 'true' >"$d/s3ForcePathStyle"
    export AWS_APPLICATION_CREDENTIALS=$d
}
