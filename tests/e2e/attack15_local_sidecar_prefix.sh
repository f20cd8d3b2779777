#!/usr/bin/env bash
# A tenant's own StatefulSet, its local-backup volume unchanged, points its backup sidecar at
# another namespace's part of a Local BackupBucket partitioned by namespace, on kube-sim with
# warden-webhook (--backup-entries --local-volume-guard, the StatefulSets routed to it as
# ctl_stage registers etcd-druid's webhooks). Issue 29 ("one store as the sidecar sees it"),
# this round's item 5. docs/protection.md ("A Local backup directory is mounted only where the
# Etcd may claim it"): etcd-druid builds volume local-backup "<hostPath>/<container>" and "the
# sidecar writes, lists and garbage-collects <home>/<container>/<prefix>"; the guard judges
# path.Clean(<volume path> + "/" + spec.backup.store.prefix). docs/backup-entries.md
# (Deletion blocked): the sidecars write "where the StatefulSet's pod template tells them
# (--storage-provider=, --store-prefix= and the env STORAGE_CONTAINER, and for a Local store the
# hostPath volume local-backup)". In Gardener's layout (one hostPath, a container per bucket, a
# prefix per namespace) every tenant's local-backup is the bucket's whole directory
# /var/lib/lb/bkt; only the sidecar's --store-prefix keeps it in its part. "An UPDATE keeping
# the path it mounted is not judged here", and with protection disabled (self-service) "the pod
# template may change in any way".
#   BackupBucket local (Local, container bkt, hostPath /var/lib/lb, prefixScope Namespace)
#   selecting shoot and victim. victim: Etcd etcd-v at bkt/victim/etcd-v. shoot: Etcd etcd-a at
#   bkt/shoot/etcd-a, its StatefulSet as etcd-druid builds it (local-backup /var/lib/lb/bkt,
#   --store-prefix=shoot/etcd-a, STORAGE_CONTAINER=bkt). alice (shoot's editor) disables
#   component protection of etcd-a, then updates shoot's StatefulSet:
#   V1. --store-prefix=victim/etcd-v (volume unchanged): the sidecar writes and garbage-collects
#       /var/lib/lb/bkt/victim/etcd-v, victim's Etcd's directory.
#   V2. a second hostPath volume (not named local-backup) on /var/lib/lb/bkt/victim mounted at
#       the sidecar's /home/nonroot/bkt/shoot (args unchanged): the sidecar's
#       <home>/bkt/shoot/etcd-a is /var/lib/lb/bkt/victim/etcd-a on the node, victim's part.
#   V3. the local-backup mount with subPath victim (volume path unchanged): the sidecar's
#       <home>/bkt/shoot/etcd-a is /var/lib/lb/bkt/victim/shoot/etcd-a, victim's part.
#   C.  control: alice's update of local-backup's path to /var/lib/lb/bkt/victim refused (the
#       documented guard), and etcd-druid's StatefulSet of shoot's Etcd admitted.
# Oracle: the StatefulSet kube-sim stores after each update, read as the sidecar reads it: the
# node directory its Local store writes is path.Clean(<hostPath of the volume mounted at or
# above <home>/<STORAGE_CONTAINER>> + <rest of the mount> + "/" + --store-prefix). For V1, the
# real sidecar too ($WARDEN_ETCDBRCTL with Debian's etcd, when both are there): run with the
# stored template's store args and environment, its home's <container> on the node directory
# local-backup mounts, and LimitBased garbage collection (spec.backup.garbageCollectionPolicy,
# the tenant's), it deletes victim's full snapshot, which the node directory held before; with
# etcd-druid's args (control) it leaves it.
# Fails (HOLE) while a tenant's update that lands the sidecar in another namespace's part is
# admitted.
set -uo pipefail
. "$(dirname "$0")/../lib/localsidecar.sh"

localsidecar_stage

holes=0
judge() { # tag what
    local dir
    dir=$(sidecar_dir)
    case $dir in
    /var/lib/lb/bkt/victim/*)
        echo "HOLE: $1: alice's update of shoot/etcd-a ($2) admitted: the stored template's backup sidecar writes and garbage-collects $dir on the node, namespace victim's part of BackupBucket local"
        holes=$((holes + 1)) ;;
    *) echo "held: $1: $2: the stored template's sidecar writes $dir" ;;
    esac
}
out=$(update '(.spec.template.spec.containers[] | select(.name == "backup-restore") | .args) |=
    map(if startswith("--store-prefix=") then "--store-prefix=victim/etcd-v" else . end)') ||
    echo "V1 refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"
judge V1 "--store-prefix=victim/etcd-v, local-backup unchanged"
kc -n shoot get sts etcd-a -o json >"$CTL_DIR/v1.json"
restore_base
out=$(update '.spec.template.spec.volumes += [{name: "lb2", hostPath: {path: "/var/lib/lb/bkt/victim", type: "DirectoryOrCreate"}}]
    | (.spec.template.spec.containers[] | select(.name == "backup-restore") | .volumeMounts) += [{name: "lb2", mountPath: "/home/nonroot/bkt/shoot"}]') ||
    echo "V2 refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"
judge V2 "hostPath volume lb2 /var/lib/lb/bkt/victim at /home/nonroot/bkt/shoot"
restore_base
out=$(update '(.spec.template.spec.containers[] | select(.name == "backup-restore") | .volumeMounts[] | select(.name == "local-backup")) += {subPath: "victim"}') ||
    echo "V3 refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"
judge V3 "local-backup mounted with subPath victim"
restore_base
[ "$(sidecar_dir)" = /var/lib/lb/bkt/shoot/etcd-a ] || ctl_fail "etcd-a's template not back: $(sidecar_dir)"
# V1 with the real sidecar: what the admitted template does to victim's directory on the node
if [ -n "${WARDEN_ETCDBRCTL:-}" ] && [ -x "$WARDEN_ETCDBRCTL" ] && command -v etcd >/dev/null && command -v etcdctl >/dev/null &&
    jq -e '.spec.template.spec.containers[] | select(.name == "backup-restore") | .args | index("--store-prefix=victim/etcd-v")' "$CTL_DIR/v1.json" >/dev/null; then
    NODE=$SNAP_WORK/node
    VICTIM_FULL=$NODE/var/lib/lb/bkt/victim/etcd-v/v2/Full-00000000-00000001-1700000000
    mkdir -p "$(dirname "$VICTIM_FULL")" "$SNAP_WORK/home" "$SNAP_WORK/br"
    echo victim >"$VICTIM_FULL"
    # the template's mounts: local-backup's hostPath at its mountPath below the sidecar's home
    mnt=$(jq -r '.spec.template.spec.containers[] | select(.name == "backup-restore") | .volumeMounts[] | select(.name == "local-backup") | .mountPath' "$CTL_DIR/v1.json")
    hp=$(jq -r '.spec.template.spec.volumes[] | select(.name == "local-backup") | .hostPath.path' "$CTL_DIR/v1.json")
    [ "${mnt#/home/nonroot/}" != "$mnt" ] || ctl_fail "V1: local-backup is not mounted below the sidecar's home: $mnt"
    ln -s "$NODE$hp" "$SNAP_WORK/home/${mnt#/home/nonroot/}"
    mapfile -t sargs < <(jq -r '.spec.template.spec.containers[] | select(.name == "backup-restore") | .args[]
        | select(startswith("--storage-provider=") or startswith("--store-prefix="))' "$CTL_DIR/v1.json")
    cont=$(jq -r '.spec.template.spec.containers[] | select(.name == "backup-restore") | .env[] | select(.name == "STORAGE_CONTAINER") | .value' "$CTL_DIR/v1.json")
    snap_etcd_start a
    snap_etcdctl "$SNAP_ETCD_URL" put /registry/a/1 one >/dev/null
    # control: the same sidecar with etcd-druid's args (--store-prefix=shoot/etcd-a) leaves
    # victim's directory alone through its full snapshot and three garbage collections
    (cd "$SNAP_WORK/br" && HOME=$SNAP_WORK/home STORAGE_CONTAINER=$cont exec "$WARDEN_ETCDBRCTL" snapshot \
        --storage-provider=Local --store-prefix=shoot/etcd-a \
        --endpoints "$SNAP_ETCD_URL" --schedule '0 0 1 1 *' --delta-snapshot-period 0 \
        --garbage-collection-policy LimitBased --max-backups 1 --garbage-collection-period 2s \
        --snapstore-temp-directory "$SNAP_WORK/br") >"$SNAP_WORK/br0.log" 2>&1 &
    br=$!
    snap_on_exit "snap_kill $br"
    deadline=$((SECONDS + 60))
    until ls "$NODE/var/lib/lb/bkt/shoot/etcd-a/v2/" 2>/dev/null | grep -q '^Full-'; do
        [ $SECONDS -lt $deadline ] || { tail -5 "$SNAP_WORK/br0.log"; ctl_fail "control: the real sidecar wrote no full snapshot of shoot/etcd-a"; }
        sleep 0.2
    done
    sleep 7
    snap_kill "$br"
    [ -e "$VICTIM_FULL" ] || ctl_fail "control: the real sidecar with etcd-druid's args deleted victim's snapshot"
    echo "ok: control: the real sidecar with etcd-druid's args wrote shoot/etcd-a and left victim's snapshot"
    (cd "$SNAP_WORK/br" && HOME=$SNAP_WORK/home STORAGE_CONTAINER=$cont exec "$WARDEN_ETCDBRCTL" snapshot "${sargs[@]}" \
        --endpoints "$SNAP_ETCD_URL" --schedule '0 0 1 1 *' --delta-snapshot-period 0 \
        --garbage-collection-policy LimitBased --max-backups 1 --garbage-collection-period 2s \
        --snapstore-temp-directory "$SNAP_WORK/br") >"$SNAP_WORK/br.log" 2>&1 &
    br=$!
    snap_on_exit "snap_kill $br"
    deadline=$((SECONDS + 60))
    while [ -e "$VICTIM_FULL" ] && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
    snap_kill "$br"
    left=$(cd "$NODE/var/lib/lb/bkt" && find . -type f | sort | tr '\n' ' ')
    if [ ! -e "$VICTIM_FULL" ]; then
        echo "HOLE: V1 (real sidecar): etcdbrctl ${sargs[*]} STORAGE_CONTAINER=$cont, as the admitted template of shoot/etcd-a runs it, deleted victim's full snapshot ${VICTIM_FULL#$NODE} (node directory of BackupBucket local now holds: $left)"
        holes=$((holes + 1))
    else
        echo "V1 (real sidecar): victim's full snapshot still there after 60 s (node directory: $left; sidecar log: $(tail -3 "$SNAP_WORK/br.log" | tr '\n' ' ' | head -c 300))"
    fi
fi
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): a tenant's StatefulSet update lands its backup sidecar in another namespace's part of a partitioned Local bucket"
    exit 1
fi
echo "attack15_local_sidecar_prefix: ok"
