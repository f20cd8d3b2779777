#!/usr/bin/env bash
# A deleted EtcdRestore's cleanup deletes another namespace's live Local snapshots. A Local
# claim is the directory hostPath/container/prefix, hostPath from a Secret the tenant may change
# at any time (docs/backup-entries.md, Local stores). "Deleting a restore"
# (docs/backups-and-restores.md): when nothing else owns an overlapping prefix of the target
# store, a Job <restore>--cleanup runs delete-snapshots on the target store and prefix "with
# the target's Secret", deleting what was written there from status.copyStartedAt (the
# restore's creation) to status.completionTime. The owner check compares the target as
# etcd-druid's default hostPath would place it; the Job mounts the hostPath the target Secret
# says when the Job is made.
#   1. Namespace shoot: Etcd etcd-a, Local, container bkt, prefix shoot--a/etcd, hostPath
#      /var/lib/lb: its sidecar writes /var/lib/lb/bkt/shoot--a/etcd.
#   2. Namespace other: EtcdRestore r from its own Local store into the target Local, container
#      shoot--a, prefix etcd, Secret tgt with hostPath /var/lib/evil (/var/lib/evil/shoot--a/etcd,
#      another directory): admitted; its copy Job is made (and held: a large source copies for
#      up to the Job's 2 h deadline).
#   3. etcd-a's sidecar uploads a full snapshot.
#   4. other sets hostPath /var/lib/lb/bkt in its Secret tgt and deletes r.
# r's copy Job is stopped, r is Failed ("deleted while Copying"), and its cleanup Job mounts
# /var/lib/lb/bkt/shoot--a and deletes what etcd got while r lived: etcd-a's newest snapshot,
# etcd-a alive. Wanted: the cleanup deletes in the directory the copy Job mounted, or compares
# the target by the directory its Secret makes now (an owner there keeps it: CopyKept).
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

mkdir -p "$DIR/v2" "$NODE/var/lib/evil/shoot--a" "$NODE/var/lib/evil/obkt/other/src/v2"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other src /var/lib/evil
local_host_path other tgt /var/lib/evil
wh_register_backups
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
cp "$SNAP_WORK/full" "$DIR/v2/Full-00000000-00000100-1700000000.gz" # etcd-a's sidecar, long ago
touch -d @1700000000 "$DIR/v2/Full-00000000-00000100-1700000000.gz"
cp "$SNAP_WORK/full" "$NODE/var/lib/evil/obkt/other/src/v2/Full-00000000-00000050-1700000000.gz"

deadline=$((SECONDS + 240)) # a claim Lease record of etcd-a's admission counts for 120 s
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
    echo "attack8_local_cleanup_moved: ok"
    exit 0
fi
copying() { kc -n other get job r--restore >/dev/null 2>&1 && [ "$(rphase)" = Copying ]; }
ksim_wait 30 copying || ctl_fail "r is not copying: $(kc -n other get etcdrestore r -o jsonpath='{.status}')"
ok "other's EtcdRestore r (target Local shoot--a/etcd, hostPath /var/lib/evil) is Copying, its Job held"

sleep 1 # file times have seconds
new=Full-00000000-00000900-$(date +%s).gz
cp "$SNAP_WORK/full" "$DIR/v2/$new" # etcd-a's sidecar uploads its newest snapshot
ok "etcd-a's sidecar wrote v2/$new"

local_host_path other tgt /var/lib/lb/bkt
kc -n other delete etcdrestore r --wait=false >/dev/null
ctl_jobs_serve other # the cleanup Job runs
gone() { ! kc -n other get etcdrestore r >/dev/null 2>&1; }
ksim_wait 90 gone || ok "r's deletion holds: $(kc -n other get etcdrestore r -o jsonpath='{.status}')"
left=$(files)
if ! grep -qF "$new" <<<"$left" && [ "$(jp shoot etcd/etcd-a '{.spec.backup.store.prefix}')" = shoot--a/etcd ]; then
    ctl_fail "HOLE: namespace other's EtcdRestore r (target Local container shoot--a, prefix etcd, hostPath /var/lib/evil when admitted and copied) was deleted after other set its target Secret's hostPath to /var/lib/lb/bkt: its cleanup Job deleted $new, the newest snapshot of shoot's live Etcd etcd-a in /var/lib/lb/bkt/shoot--a/etcd (left: ${left:-nothing}; events: $(kc -n other get events --field-selector involvedObject.name=r -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' | tail -3 | tr '\n' ' '))"
fi
ok "etcd-a's snapshots stay (left: $left)"
ctl_stop
echo "attack8_local_cleanup_moved: ok"
