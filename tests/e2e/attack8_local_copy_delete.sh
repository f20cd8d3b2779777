#!/usr/bin/env bash
# An EtcdBackup's deletion deletes another namespace's live snapshots in a Local store. A Local
# claim is the directory hostPath/container/prefix, hostPath from a Secret the tenant may change
# at any time (docs/backup-entries.md, Local stores: "warden-controller reads the hostPaths again
# whenever a step that writes or deletes compares claims"). An EtcdBackup's deletion compares
# nothing: its delete Job mounts the hostPath the destination Secret says when it is made, and
# with etcd-druid executing the EtcdOpsTasks (no snapshot name in the task's status) a copy that
# has no status.destinationKey deletes "the objects of the destination prefix written in the
# copy's write window", from its copy's start to 2 h later.
#   1. Namespace shoot: Etcd etcd-a, Local, container bkt, prefix shoot--a/etcd, hostPath
#      /var/lib/lb: its sidecar writes /var/lib/lb/bkt/shoot--a/etcd. (Reference: namespace
#      other's EtcdBackup into that directory is refused.)
#   2. Namespace other: EtcdBackup b of its own Etcd etcd-o, deletionPolicy Delete, destination
#      Local, container shoot--a, prefix etcd, Secret dest with hostPath /var/lib/evil:
#      /var/lib/evil/shoot--a/etcd, another directory: admitted. Its task Succeeded (as
#      etcd-druid writes it), its copy Job finds no full snapshot in etcd-o's store: b Failed.
#   3. etcd-a's sidecar uploads a full snapshot (after b's copy start).
#   4. other sets hostPath /var/lib/lb/bkt in its Secret dest and deletes b.
# b's delete Job mounts /var/lib/lb/bkt/shoot--a and deletes what etcd got in b's window:
# etcd-a's newest snapshot, etcd-a alive. Wanted: a copy's deletion deletes in the directory its
# copy Job mounted (recorded when it was made), or compares claims as every deletion does.
# Oracle: the node's directory (job_exec.py mounts hostPath volumes under
# $CRONJOB_EXEC_HOST_ROOT) and the Etcd kube-sim stores. Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
DIR=$NODE/var/lib/lb/bkt/shoot--a/etcd
etcd() { # ns name container prefix
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: $3, prefix: "$4", secretRef: {name: etcd-backup}}}
EOF
}
backup() { # name secret container prefix
    kc apply -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: other}
spec:
  etcdName: etcd-o
  deletionPolicy: Delete
  destination: {provider: Local, container: $3, prefix: $4, secretRef: {name: $2}}
EOF
}
bstatus() { jp other etcdbackup/b "{.status.$1}"; }
over() { p=$(bstatus phase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
druid_succeeds() { # etcd-druid's executor: ondemandsnapshot.go:156
    local t now
    t=$(bstatus opsTaskName)
    [ -n "$t" ] || return 1
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    kc -n other patch etcdopstask "$t" --subresource=status --type merge -p \
        "{\"status\":{\"state\":\"Succeeded\",\"startedAt\":\"$now\",\"lastTransitionTime\":\"$now\",\"lastOperation\":{\"type\":\"Execution\",\"state\":\"Completed\",\"description\":\"Snapshot created successfully\",\"lastTransitionTime\":\"$now\"}}}" \
        >/dev/null 2>&1
}
files() { [ -d "$DIR" ] || return 0; (cd "$DIR" && find . -type f | sort | xargs); }

mkdir -p "$DIR/v2" "$NODE/var/lib/evil/shoot--a" "$NODE/var/lib/evil/obkt/other/etcd"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other etcd-backup /var/lib/evil
local_host_path other dest /var/lib/evil
local_host_path other same-dir /var/lib/lb
wh_register_backups
ctl_jobs_serve other
ctl_start --ops-task-executor=false

out=$(etcd shoot etcd-a bkt shoot--a/etcd 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
out=$(etcd other etcd-o obkt other/etcd 2>&1) || ctl_fail "other/etcd-o refused: $out"
wh_caught_up # the caches
if out=$(backup b0 same-dir bkt shoot--a/etcd 2>&1); then
    ctl_fail "the reference case, other's EtcdBackup into etcd-a's directory (hostPath /var/lib/lb), admitted: $out"
fi
ok "reference: other's EtcdBackup into /var/lib/lb/bkt/shoot--a/etcd is refused"
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
cp "$SNAP_WORK/full" "$DIR/v2/Full-00000000-00000100-1700000000.gz" # etcd-a's sidecar, long ago
touch -d @1700000000 "$DIR/v2/Full-00000000-00000100-1700000000.gz"

# etcd-a's admission is recorded in the Local store's claim Lease for 120 s; a real victim's
# Etcd is older: b is applied until that record is past
deadline=$((SECONDS + 240))
until out=$(backup b dest shoot--a etcd 2>&1) || [ $SECONDS -ge $deadline ]; do sleep 5; done
if ! kc -n other get etcdbackup b >/dev/null 2>&1; then
    ok "other's EtcdBackup into another directory of the same container and prefix stays refused: ${out:0:240}"
    ctl_stop
    echo "attack8_local_copy_delete: ok"
    exit 0
fi
ksim_wait 30 druid_succeeds || ctl_fail "b: no EtcdOpsTask: $(kc -n other get etcdbackup b -o jsonpath='{.status}')"
ksim_wait 120 over || ctl_fail "b did not end: $(kc -n other get etcdbackup b -o jsonpath='{.status}')"
[ "$(bstatus phase)" = Failed ] && [ -n "$(bstatus copyStartedAt)" ] ||
    ctl_fail "b: not Failed after its copy Job: $(kc -n other get etcdbackup b -o jsonpath='{.status}')"
ok "other's EtcdBackup b (destination /var/lib/evil/shoot--a/etcd) Failed after its copy: $(bstatus error)"

sleep 1 # file times have seconds
new=Full-00000000-00000900-$(date +%s).gz
cp "$SNAP_WORK/full" "$DIR/v2/$new" # etcd-a's sidecar uploads its newest snapshot
ok "etcd-a's sidecar wrote v2/$new (files: $(files))"

local_host_path other dest /var/lib/lb/bkt
kc -n other delete etcdbackup b --wait=false >/dev/null
gone() { ! kc -n other get etcdbackup b >/dev/null 2>&1; }
ksim_wait 90 gone || ok "b's deletion holds: $(kc -n other get etcdbackup b -o jsonpath='{.status}')"
left=$(files)
if ! grep -qF "$new" <<<"$left" && [ "$(jp shoot etcd/etcd-a '{.spec.backup.store.prefix}')" = shoot--a/etcd ]; then
    ctl_fail "HOLE: namespace other's EtcdBackup b (destination Local container shoot--a, prefix etcd, hostPath /var/lib/evil when admitted and copied) was deleted after other set its Secret's hostPath to /var/lib/lb/bkt: its delete Job deleted $new, the newest snapshot of shoot's live Etcd etcd-a in /var/lib/lb/bkt/shoot--a/etcd (left: ${left:-nothing}; events: $(kc -n other get events --field-selector involvedObject.name=b -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' | tail -2 | tr '\n' ' '))"
fi
ok "etcd-a's snapshots stay (left: $left)"
ctl_stop
echo "attack8_local_copy_delete: ok"
