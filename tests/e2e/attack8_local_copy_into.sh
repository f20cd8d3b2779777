#!/usr/bin/env bash
# An EtcdBackup's copy written into another namespace's live Local directory. A Local claim is
# the directory hostPath/container/prefix, hostPath from the claim's own backup Secret
# (docs/backup-entries.md, Local stores: the webhook reads it "fresh from the API server
# whenever it decides a Local claim", and warden-controller "reads the hostPaths again whenever
# a step that writes or deletes compares claims (... an EtcdBackup copy ...)"). An EtcdBackup's
# destination is compared, at admission and again before its copy Job, as etcd-druid's default
# hostPath would place it, never by the hostPath of its own Secret (spec.destination.secretRef),
# which the copy Job mounts.
#   1. Namespace shoot: Etcd etcd-a, Local, container bkt, prefix shoot--a/etcd, hostPath
#      /var/lib/lb: its sidecar writes /var/lib/lb/bkt/shoot--a/etcd. (Reference: namespace
#      other's EtcdBackup spelled bkt + shoot--a/etcd is refused.)
#   2. Namespace other: EtcdBackup b of its own Etcd etcd-o (whose store holds a full snapshot),
#      destination Local, container shoot--a, prefix etcd, Secret dest with hostPath
#      /var/lib/lb/bkt: the directory /var/lib/lb/bkt/shoot--a/etcd, etcd-a's. Its task
#      Succeeded (as etcd-druid writes it).
# b is admitted and Completed: its copy Job writes other's full snapshot into etcd-a's
# directory, the newest full snapshot there; etcd-a's next restore (a member's empty data
# directory, a wake, a restore drill) brings up namespace other's cluster, and other's data sits
# in shoot's backups. Wanted: a copy's destination compared by the directory its Secret's
# hostPath makes, at admission and before the copy Job (as an Etcd's is).
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

mkdir -p "$DIR/v2" "$NODE/var/lib/evil/obkt/other/etcd/v2"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other etcd-backup /var/lib/evil
local_host_path other dest /var/lib/lb/bkt
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
cp "$SNAP_WORK/full" "$DIR/v2/Full-00000000-00000100-1700000000.gz" # etcd-a's sidecar
theirs=Full-00000000-00000700-$(($(date +%s) - 5)).gz
cp "$SNAP_WORK/full" "$NODE/var/lib/evil/obkt/other/etcd/v2/$theirs" # etcd-o's sidecar

deadline=$((SECONDS + 135)) # past the 120 s a claim Lease record of etcd-a's admission counts
until out=$(backup b dest shoot--a etcd 2>&1) || [ $SECONDS -ge $deadline ]; do sleep 5; done
if ! kc -n other get etcdbackup b >/dev/null 2>&1; then
    ok "other's EtcdBackup into /var/lib/lb/bkt + shoot--a + etcd is refused at admission: ${out:0:240}"
    ctl_stop
    echo "attack8_local_copy_into: ok"
    exit 0
fi
ok "other's EtcdBackup b admitted: container shoot--a, prefix etcd, hostPath /var/lib/lb/bkt"
ksim_wait 30 druid_succeeds || ctl_fail "b: no EtcdOpsTask: $(kc -n other get etcdbackup b -o jsonpath='{.status}')"
ksim_wait 120 over || ctl_fail "b did not end: $(kc -n other get etcdbackup b -o jsonpath='{.status}')"
left=$(files)
if grep -qF "$theirs" <<<"$left" && [ "$(jp shoot etcd/etcd-a '{.spec.backup.store.prefix}')" = shoot--a/etcd ]; then
    ctl_fail "HOLE: namespace other's EtcdBackup b (destination Local container shoot--a, prefix etcd, its Secret's hostPath /var/lib/lb/bkt) was admitted and its copy Job wrote other's full snapshot $theirs into /var/lib/lb/bkt/shoot--a/etcd, the directory of shoot's live Etcd etcd-a: the newest full snapshot there, which etcd-a's next restore brings up (b: $(bstatus phase) $(bstatus error); files there: $left)"
fi
ok "nothing of other's written into etcd-a's directory (b: $(bstatus phase): $(bstatus error); files: $left)"
ctl_stop
echo "attack8_local_copy_into: ok"
