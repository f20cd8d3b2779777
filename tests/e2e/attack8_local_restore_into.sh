#!/usr/bin/env bash
# An EtcdRestore's copy written into another namespace's live Local directory. A Local claim is
# the directory hostPath/container/prefix, hostPath from the claim's own backup Secret; the
# webhook reads it "fresh from the API server whenever it decides a Local claim" and
# warden-controller "reads the hostPaths again whenever a step that writes or deletes compares
# claims (... a restore)" (docs/backup-entries.md, Local stores). An EtcdRestore's target is
# compared, at admission and before its copy Job, as etcd-druid's default hostPath would place
# it, never by the hostPath of its target Secret, which the copy Job mounts.
#   1. Namespace shoot: Etcd etcd-a, Local, container bkt, prefix shoot--a/etcd, hostPath
#      /var/lib/lb, just created: its sidecar has not uploaded yet, /var/lib/lb/bkt/shoot--a/etcd
#      is empty.
#   2. Namespace other: EtcdRestore r from its own Local store (a full snapshot of its own
#      cluster) into the target Local, container shoot--a, prefix etcd, Secret tgt with
#      hostPath /var/lib/lb/bkt: the directory /var/lib/lb/bkt/shoot--a/etcd, etcd-a's.
# r is admitted and its copy Job writes other's full snapshot into etcd-a's directory: the
# backup-restore sidecar of etcd-a, finding a member without data, restores other's cluster,
# and every later restore of shoot's backups starts from it. Wanted: a restore's target compared
# by the directory its Secret's hostPath makes, at admission and before the copy (as an Etcd's).
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
rphase() { jp other etcdrestore/r '{.status.phase}'; }
files() { [ -d "$DIR" ] || return 0; (cd "$DIR" && find . -type f | sort | xargs); }

mkdir -p "$DIR" "$NODE/var/lib/evil/obkt/other/src/v2"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other src /var/lib/evil
local_host_path other tgt /var/lib/lb/bkt
wh_register_backups
ctl_jobs_serve other
ctl_start

kc apply -f - >/dev/null <<EOF || ctl_fail "shoot/etcd-a refused"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-a, namespace: shoot}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: bkt, prefix: shoot--a/etcd, secretRef: {name: etcd-backup}}}
EOF
# other's own cluster, the restore's source: a restore reads only what its namespace owns
kc apply -f - >/dev/null <<EOF || ctl_fail "other/etcd-o refused"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-o, namespace: other}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: obkt, prefix: other/src, secretRef: {name: src}}}
EOF
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
theirs=Full-00000000-00000050-1700000000.gz
cp "$SNAP_WORK/full" "$NODE/var/lib/evil/obkt/other/src/v2/$theirs" # other's own cluster

deadline=$((SECONDS + 135)) # past the 120 s a claim Lease record of etcd-a's admission counts
until out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: other}
spec:
  source: {store: {provider: Local, container: obkt, prefix: other/src, secretRef: {name: src}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-x, store: {provider: Local, container: shoot--a, prefix: etcd, secretRef: {name: tgt}}}
EOF
) || [ $SECONDS -ge $deadline ]; do sleep 5; done
if ! kc -n other get etcdrestore r >/dev/null 2>&1; then
    ok "other's EtcdRestore into Local shoot--a/etcd stays refused: ${out:0:240}"
    ctl_stop
    echo "attack8_local_restore_into: ok"
    exit 0
fi
over() { p=$(rphase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
copied_or_over() { grep -qF "$theirs" <<<"$(files)" || over; }
ksim_wait 60 copied_or_over || ctl_fail "r neither copied nor ended: $(kc -n other get etcdrestore r -o jsonpath='{.status}')"
left=$(files)
if grep -qF "$theirs" <<<"$left" && [ "$(jp shoot etcd/etcd-a '{.spec.backup.store.prefix}')" = shoot--a/etcd ]; then
    ctl_fail "HOLE: namespace other's EtcdRestore r (target Local container shoot--a, prefix etcd, its Secret's hostPath /var/lib/lb/bkt) was admitted and its copy Job wrote other's full snapshot $theirs into /var/lib/lb/bkt/shoot--a/etcd, the directory of shoot's live Etcd etcd-a, whose sidecar restores it (r: $(rphase) $(jp other etcdrestore/r '{.status.error}'); files there: $left)"
fi
ok "nothing of other's written into etcd-a's directory (r: $(rphase): $(jp other etcdrestore/r '{.status.error}'); files: ${left:-none})"
ctl_stop
echo "attack8_local_restore_into: ok"
