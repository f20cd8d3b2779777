#!/usr/bin/env bash
# A tenant's own StatefulSet keeps every spelling the local-volume guard reads (volume
# local-backup /var/lib/lb/bkt mounted at /home/nonroot/bkt, STORAGE_CONTAINER=bkt, args
# --storage-provider=Local --store-prefix=shoot/etcd-a) and still lands its backup sidecar in
# another namespace's part of a partitioned Local BackupBucket, because the sidecar takes its
# store from more than those spellings. Issue 29 ("one store as the sidecar sees it"),
# docs/protection.md ("A Local backup directory is mounted only where the Etcd may claim it"):
# "So the directory judged is the one the template **really** gives the sidecar, the node's
# directory path.Clean(<volume path> + "/" + <the template's --store-prefix>)"; an UPDATE that
# changes what the sidecar reads is "judged for everyone ... whether or not component
# protection is disabled (the rule protects other tenants)".
#   BackupBucket local (Local, container bkt, hostPath /var/lib/lb, prefixScope Namespace)
#   selecting shoot and victim. victim: Etcd etcd-v at bkt/victim/etcd-v. shoot: Etcd etcd-a at
#   bkt/shoot/etcd-a, its StatefulSet as etcd-druid builds it. alice (shoot's editor) disables
#   component protection of etcd-a (self-service), then updates shoot's StatefulSet:
#   W1. container backup-restore gets a command: [/etcdbrctl, server, --storage-provider=Local,
#       --store-prefix=victim/etcd-v, --]; args unchanged. The container runs command + args;
#       pflag stops at "--", so etcd-druid's args are positional (ignored by cobra's server)
#       and the sidecar's prefix is victim/etcd-v: victim's Etcd's own directory, which its
#       garbage collection empties.
#   W2. args += --store-container=bkt/victim: etcdbrctl's flag wins over STORAGE_CONTAINER, so
#       the sidecar writes <home>/bkt/victim/shoot/etcd-a, in victim's part.
#   W3. env HOME=/home/nonroot/bkt/victim: the Local store is <$HOME>/<container>/<prefix>, so
#       the sidecar writes /var/lib/lb/bkt/victim/bkt/shoot/etcd-a on the node.
#   W4. --store-prefix=shoot/$(BR_PART) with env BR_PART=../victim/etcd-v: the kubelet expands
#       $(NAME) in args from the container's env (a literal the guard judges in shoot's part),
#       the sidecar gets shoot/../victim/etcd-v and cleans it to victim's Etcd's directory.
#   C.  control: a local-backup path in victim's part refused, --store-prefix=victim/etcd-v
#       refused, and etcd-druid's StatefulSet admitted.
# Oracle: the real sidecar ($WARDEN_ETCDBRCTL, Debian's etcd), run as the container kube-sim
# stores would run it: its command (else the image's entrypoint /etcdbrctl) + args ($(NAME)
# expanded from its env as the kubelet does), with
# `server` swapped for `snapshot` (the same store flags; snapshot flags for the test's etcd
# inserted after the subcommand, so the template's own later flags win), its env, HOME
# /home/nonroot unless the env sets it, and /home/nonroot/bkt bound to the node directory
# /var/lib/lb/bkt (local-backup). What it writes under the node's victim/ part, and whether
# victim's full snapshot survives LimitBased garbage collection, is the truth.
# Fails (HOLE) while an update that lands the sidecar in another namespace's part is admitted.
set -uo pipefail
. "$(dirname "$0")/../lib/localsidecar.sh"

localsidecar_stage

out=$(update '(.spec.template.spec.containers[] | select(.name == "backup-restore") | .args) |=
    map(if startswith("--store-prefix=") then "--store-prefix=victim/etcd-v" else . end)') &&
    ctl_fail "control: alice's --store-prefix=victim/etcd-v admitted"
ok "control: --store-prefix=victim/etcd-v refused: $(tr '\n' ' ' <<<"$out" | head -c 160)"

holes=0
# The oracle: the real sidecar as the container would run it
have_sidecar=0
if [ -n "${WARDEN_ETCDBRCTL:-}" ] && [ -x "$WARDEN_ETCDBRCTL" ] && command -v etcd >/dev/null && command -v etcdctl >/dev/null; then
    have_sidecar=1
    NODE=$SNAP_WORK/node
    BKT=$NODE/var/lib/lb/bkt
    VICTIM_FULL=$BKT/victim/etcd-v/v2/Full-00000000-00000001-1700000000
    mkdir -p "$SNAP_WORK/home" "$SNAP_WORK/br" "$BKT"
    snap_etcd_start a
    snap_etcdctl "$SNAP_ETCD_URL" put /registry/a/1 one >/dev/null
fi
# run_sidecar TAG STSJSON: prints what the sidecar did to victim's part of the node directory;
# sets VICTIM_LOST (1 when victim's full snapshot is gone) and VICTIM_NEW (files it wrote there)
run_sidecar() {
    local tag=$1 js=$2 mnt hp home c cmd k v br deadline
    local -a argv envs
    rm -rf "$BKT" "$SNAP_WORK/home" && mkdir -p "$(dirname "$VICTIM_FULL")" "$BKT/shoot" "$SNAP_WORK/home"
    echo victim >"$VICTIM_FULL"
    c=$(jq -c '.spec.template.spec.containers[] | select(.name == "backup-restore")' "$js")
    mnt=$(jq -r '.volumeMounts[] | select(.name == "local-backup") | .mountPath' <<<"$c")
    hp=$(jq -r '.spec.template.spec.volumes[] | select(.name == "local-backup") | .hostPath.path' "$js")
    [ "$hp" = /var/lib/lb/bkt ] || ctl_fail "$tag: local-backup is $hp, not the bucket's directory"
    case $mnt in /home/nonroot/?*) ;; *) ctl_fail "$tag: local-backup mounted at $mnt, not below the sidecar's home" ;; esac
    mkdir -p "$(dirname "$SNAP_WORK/home/${mnt#/home/nonroot/}")"
    ln -s "$BKT" "$SNAP_WORK/home/${mnt#/home/nonroot/}"
    # command (else the image's entrypoint) + args, the binary dropped; server -> snapshot
    # the kubelet expands $(NAME) in command and args from the container's env
    mapfile -t cmd < <(jq -r '((.env // []) | map(select(.value != null) | {key: .name, value: .value}) | from_entries) as $e
        | ((.command // ["/etcdbrctl"]) + (.args // []))[1:][]
        | gsub("\\$\\((?<n>[A-Za-z_][A-Za-z0-9_.-]*)\\)"; if $e[.n] != null then $e[.n] else "$(" + .n + ")" end)' <<<"$c")
    [ "${cmd[0]}" = server ] || ctl_fail "$tag: the container does not run etcdbrctl server: ${cmd[*]}"
    argv=(snapshot --endpoints "$SNAP_ETCD_URL" --schedule '0 0 1 1 *' --delta-snapshot-period 0
        --garbage-collection-policy LimitBased --max-backups 1 --garbage-collection-period 2s
        --snapstore-temp-directory "$SNAP_WORK/br")
    local dd=0 a
    for a in "${cmd[@]:1}"; do
        [ "$a" = -- ] && dd=1
        # server-only flags before "--" (snapshot does not know them)
        if [ $dd = 0 ]; then case $a in --server-port=*) continue ;; esac; fi
        argv+=("$a")
    done
    envs=("HOME=$SNAP_WORK/home")
    while IFS=$'\t' read -r k v; do
        case $k in HOME) v=$SNAP_WORK/home${v#/home/nonroot} ;; esac
        envs+=("$k=$v")
    done < <(jq -r '(.env // [])[] | select(.value != null) | [.name, .value] | @tsv' <<<"$c")
    (cd "$SNAP_WORK/br" && exec env "${envs[@]}" "$WARDEN_ETCDBRCTL" "${argv[@]}") >"$SNAP_WORK/br-$tag.log" 2>&1 &
    br=$!
    snap_on_exit "snap_kill $br"
    deadline=$((SECONDS + 40))
    until find -L "$SNAP_WORK/home" -name 'Full-*' ! -name '*1700000000' 2>/dev/null | grep -q .; do
        [ $SECONDS -lt $deadline ] || break
        kill -0 $br 2>/dev/null || break
        sleep 0.3
    done
    sleep 7 # three garbage collections
    snap_kill "$br"
    VICTIM_LOST=0
    [ -e "$VICTIM_FULL" ] || VICTIM_LOST=1
    VICTIM_NEW=$(cd "$BKT/victim" && find . -type f ! -path ./etcd-v/v2/Full-00000000-00000001-1700000000 | sort | tr '\n' ' ')
    WROTE=$(cd "$BKT" && find . -type f -name 'Full-*' ! -name '*1700000000' | sort | tr '\n' ' ')
}
judge() { # tag what
    local out=$3
    if [ -n "$out" ]; then
        echo "held: $1: $2 refused: $(tr '\n' ' ' <<<"$out" | head -c 240)"
        return
    fi
    kc -n shoot get sts etcd-a -o json >"$CTL_DIR/$1.json"
    if [ $have_sidecar = 0 ]; then
        echo "HOLE: $1: alice's update of shoot/etcd-a ($2) admitted (no etcdbrctl to show where it writes)"
        holes=$((holes + 1)); return
    fi
    run_sidecar "$1" "$CTL_DIR/$1.json"
    if [ $VICTIM_LOST = 1 ] || [ -n "$VICTIM_NEW" ]; then
        echo "HOLE: $1: alice's update of shoot/etcd-a ($2) admitted; the real sidecar run as the stored template runs it $( [ $VICTIM_LOST = 1 ] && echo "deleted victim's full snapshot /var/lib/lb/bkt/victim/etcd-v/v2/Full-00000000-00000001-1700000000 and ")wrote in namespace victim's part of BackupBucket local: ${VICTIM_NEW:-nothing new} (it wrote the full snapshot(s) $WROTE)"
        holes=$((holes + 1))
    else
        echo "held: $1: $2 admitted, but the real sidecar writes only $WROTE"
    fi
}
if [ $have_sidecar = 1 ]; then
    kc -n shoot get sts etcd-a -o json >"$CTL_DIR/base.json"
    run_sidecar C "$CTL_DIR/base.json"
    [ $VICTIM_LOST = 0 ] && [ -z "$VICTIM_NEW" ] && [ -n "$WROTE" ] ||
        ctl_fail "control: the real sidecar with etcd-druid's template lost=$VICTIM_LOST wrote=$WROTE victim-new=$VICTIM_NEW ($(tail -3 "$SNAP_WORK/br-C.log" | tr '\n' ' ' | head -c 300))"
    ok "control: the real sidecar with etcd-druid's template writes $WROTE and leaves victim's part alone"
fi

out=$(update '(.spec.template.spec.containers[] | select(.name == "backup-restore")) += {command: ["/etcdbrctl", "server", "--storage-provider=Local", "--store-prefix=victim/etcd-v", "--"]}') && out=""
judge W1 'command [/etcdbrctl server --storage-provider=Local --store-prefix=victim/etcd-v --], args unchanged' "$out"
restore_base
out=$(update '(.spec.template.spec.containers[] | select(.name == "backup-restore") | .args) += ["--store-container=bkt/victim"]') && out=""
judge W2 'args += --store-container=bkt/victim' "$out"
restore_base
out=$(update '(.spec.template.spec.containers[] | select(.name == "backup-restore") | .env) += [{name: "HOME", value: "/home/nonroot/bkt/victim"}]') && out=""
judge W3 'env HOME=/home/nonroot/bkt/victim' "$out"
restore_base
out=$(update '(.spec.template.spec.containers[] | select(.name == "backup-restore")) |= (.args |= map(if startswith("--store-prefix=") then "--store-prefix=shoot/$(BR_PART)" else . end)
    | .env += [{name: "BR_PART", value: "../victim/etcd-v"}])') && out=""
judge W4 '--store-prefix=shoot/$(BR_PART), env BR_PART=../victim/etcd-v (the kubelet expands $(NAME) in args)' "$out"
restore_base
[ "$(sidecar_dir)" = /var/lib/lb/bkt/shoot/etcd-a ] || ctl_fail "etcd-a's template not back: $(sidecar_dir)"
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): a StatefulSet update keeping the spellings the guard reads lands the backup sidecar in another namespace's part of a partitioned Local bucket"
    exit 1
fi
echo "attack16_local_sidecar_spellings: ok"
