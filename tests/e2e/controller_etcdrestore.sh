#!/usr/bin/env bash
# EtcdRestores driven with kubectl against kube-sim and s3rver; tests/support/job_exec.py
# stands for the kubelet and the Job controller and runs the copy Jobs. Snapshots of an Etcd
# in its prefix (three fulls, deltas after each):
#   - a restore from the store with a pointInTime: Completed; the target prefix holds exactly
#     the full and deltas etcd-backup-restore would restore at that time
#     (GetLatestFullSnapshotAndDeltaSnapList over the snapshots not newer than it), listed in
#     the status; the new Etcd exists on the target prefix with the source's spec, labelled
#     with the restore; the copy Job is gone; the source Etcd and prefix are untouched;
#   - without a point in time: the latest full and its deltas; into another provider (the
#     target store's provider and Secret given: S3 to Azurite's ABS), byte for byte;
#   - a restore from a Completed EtcdBackup (written with kubectl): exactly its snapshot;
#   - refused, with the reason in `kubectl get erst -o wide`: a target Etcd that exists, a
#     target prefix another Etcd uses; a target prefix that holds snapshots already: the
#     copy Job fails (--require-empty-destination), nothing is written, no Etcd.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
# kubesim.sh's EXIT trap is the one left: it runs snapshot.sh's clean-ups (emulators, work dir).
ksim_on_exit snap_cleanups

etcd() { # name prefix: an Etcd of namespace shoot with an S3 store
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply Etcd $1"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $1, namespace: shoot, labels: {team: blue}}
spec:
  replicas: 3
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380, quota: 8Gi}
  backup: {port: 8080, store: {provider: aws, container: $SNAP_BUCKET, prefix: "$2", secretRef: {name: etcd-backup}}}
EOF
}
restore() { # name target-etcd target-prefix source (YAML flow mapping)
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply EtcdRestore $1"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $1, namespace: shoot}
spec:
  source: $4
  target: {etcdName: $2, store: {container: $SNAP_BUCKET, prefix: "$3"}}
EOF
}
phase() { jp shoot "etcdrestore $1" '{.status.phase}'; }
terminal() { case $(phase "$1") in Completed | Failed) return 0 ;; *) return 1 ;; esac; }
settle() { # name want: wait (bounded) for a terminal phase, then want it
    ksim_wait 60 terminal "$1" ||
        ctl_fail "$1 is $(phase "$1"): $(jp shoot "etcdrestore $1" '{.status}'); jobs: $(tail -5 "$SNAP_WORK/job_exec.log")"
    [ "$(phase "$1")" = "$2" ] || ctl_fail "$1: want $2, got $(phase "$1"): $(jp shoot "etcdrestore $1" '{.status.error}')"
}
keys() { snap_s3 ls "$1/" | sed "s|^$1/||" | sort; }
abs_keys() { snap_abs ls "$1/" | sed "s|^$1/||" | sort; }
seed() { for k in "$@"; do snap_s3 put "$k" "$SNAP_WORK/obj"; done; }
has_event() { ctl_events shoot "$1" | grep -q "$2"; }

snap_fixture "$SNAP_WORK/obj" 4096 Full.gz
snap_s3_start
snap_abs_start
ctl_stage
kc create namespace shoot >/dev/null
kc -n shoot create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
kc -n shoot create secret generic abs --from-file="$SNAP_WORK/azure" >/dev/null
etcd etcd-main shoot--etcd-main
etcd etcd-events shoot--etcd-events
src=shoot--etcd-main/v2
seed "$src/Full-00000000-00000100-1700000000.gz" "$src/Incr-00000101-00000200-1700000100.gz" \
    "$src/Full-00000000-00000300-1700000200.gz" "$src/Incr-00000301-00000400-1700000300.gz" \
    "$src/Incr-00000401-00000500-1700000400.gz" "$src/Full-00000000-00000600-1700000500.gz" \
    "$src/Incr-00000601-00000700-1700000600.gz"
seed shoot--dirty/v2/Full-00000000-00000050-1600000000.gz
src_before=$(keys shoot--etcd-main)

ctl_jobs_serve shoot
ctl_start

# A point in time between the second full's first and second delta: that full and its first
# delta, nothing older or newer.
pit=$(date -u -d @1700000350 +%Y-%m-%dT%H:%M:%SZ)
restore pit etcd-pit shoot--etcd-pit "{store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}, pointInTime: \"$pit\", etcdName: etcd-main}"
settle pit Completed
expect "target prefix at $pit" "v2/Full-00000000-00000300-1700000200.gz
v2/Incr-00000301-00000400-1700000300.gz" "$(keys shoot--etcd-pit)"
expect "status.snapshots" "Full-00000000-00000300-1700000200.gz/Full Incr-00000301-00000400-1700000300.gz/Incr" \
    "$(jp shoot 'etcdrestore pit' '{range .status.snapshots[*]}{.name}/{.kind} {end}' | sed 's/ $//')"
expect "status.etcdName" etcd-pit "$(jp shoot 'etcdrestore pit' '{.status.etcdName}')"
expect "new Etcd's store" "aws $SNAP_BUCKET shoot--etcd-pit etcd-backup" \
    "$(jp shoot 'etcd etcd-pit' '{.spec.backup.store.provider} {.spec.backup.store.container} {.spec.backup.store.prefix} {.spec.backup.store.secretRef.name}')"
expect "new Etcd's spec from the live source" "3 8Gi blue pit" \
    "$(jp shoot 'etcd etcd-pit' '{.spec.replicas} {.spec.etcd.quota} {.metadata.labels.team} {.metadata.labels.etcd-warden\.io/restored-from}')"
expect "source Etcd untouched" shoot--etcd-main "$(jp shoot 'etcd etcd-main' '{.spec.backup.store.prefix}')"
expect "source prefix untouched" "$src_before" "$(keys shoot--etcd-main)"
ksim_wait 20 ksim_gone -n shoot job pit--restore || ctl_fail "the copy Job stays"
ksim_wait 10 has_event pit '^Normal Completed: ' || ctl_fail "no Completed event: $(ctl_events shoot pit)"
ok "store + pointInTime: Completed, the snapshots etcd-backup-restore would pick, a new Etcd"

# Without a point in time: the latest full and its deltas.
restore latest etcd-latest shoot--etcd-latest "{store: {provider: aws, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}, etcdName: etcd-main}"
settle latest Completed
expect "target prefix, latest" "v2/Full-00000000-00000600-1700000500.gz
v2/Incr-00000601-00000700-1700000600.gz" "$(keys shoot--etcd-latest)"
ok "store without pointInTime: the latest full and its deltas"

# Into another provider: the target's provider and Secret given (S3 to ABS).
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply EtcdRestore toabs"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: toabs, namespace: shoot}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}, etcdName: etcd-main}
  target: {etcdName: etcd-abs, store: {provider: ABS, container: $SNAP_BUCKET, prefix: shoot--etcd-abs, secretRef: {name: abs}}}
EOF
settle toabs Completed
expect "ABS target prefix" "v2/Full-00000000-00000600-1700000500.gz
v2/Incr-00000601-00000700-1700000600.gz" "$(abs_keys shoot--etcd-abs)"
snap_abs get shoot--etcd-abs/v2/Full-00000000-00000600-1700000500.gz >"$SNAP_WORK/got"
cmp -s "$SNAP_WORK/obj" "$SNAP_WORK/got" || ctl_fail "the ABS copy differs from the S3 snapshot"
expect "new Etcd's ABS store" "ABS shoot--etcd-abs abs" \
    "$(jp shoot 'etcd etcd-abs' '{.spec.backup.store.provider} {.spec.backup.store.prefix} {.spec.backup.store.secretRef.name}')"
ok "S3 to ABS: the target's provider and Secret, byte for byte"

# From a Completed EtcdBackup (its object and status written as its controller would).
seed offsite/etcd-main/v2/Full-00000000-00000600-1700000500.gz
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply the EtcdBackup"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: nightly, namespace: shoot}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: offsite/etcd-main, secretRef: {name: etcd-backup}}
EOF
kc -n shoot patch etcdbackup nightly --subresource=status --type=merge -p \
    '{"status":{"phase":"Completed","snapshot":{"name":"Full-00000000-00000600-1700000500.gz","kind":"Full"}}}' >/dev/null
restore frombackup etcd-frombackup shoot--etcd-frombackup "{backupName: nightly}"
settle frombackup Completed
expect "target prefix from the backup" "v2/Full-00000000-00000600-1700000500.gz" "$(keys shoot--etcd-frombackup)"
expect "new Etcd from the backup" shoot--etcd-frombackup "$(jp shoot 'etcd etcd-frombackup' '{.spec.backup.store.prefix}')"
ok "from a Completed EtcdBackup: exactly its snapshot"

# Refused: the target exists; the target prefix is another Etcd's.
restore exists etcd-events shoot--somewhere "{store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}, etcdName: etcd-main}"
settle exists Failed
restore inuse etcd-new shoot--etcd-events/restored "{store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}, etcdName: etcd-main}"
settle inuse Failed
# the old example of the docs: a target prefix the source's is the start of
restore sibling etcd-main-restored shoot--etcd-main-restored "{store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}, etcdName: etcd-main}"
settle sibling Failed
table=$(kc -n shoot get erst -o wide)
grep -q '^sibling .*Failed.*overlaps the source prefix "shoot--etcd-main"' <<<"$table" ||
    ctl_fail "kubectl get erst -o wide (sibling): $table"
grep -q '^exists .*Failed.*Etcd shoot/etcd-events exists: a restore creates a new Etcd' <<<"$table" ||
    ctl_fail "kubectl get erst -o wide: $table"
grep -q '^inuse .*Failed.*is in use: it overlaps the prefix "shoot--etcd-events" of Etcd shoot/etcd-events' <<<"$table" ||
    ctl_fail "kubectl get erst -o wide: $table"
ksim_wait 10 has_event inuse '^Warning Refused: ' || ctl_fail "no Refused event: $(ctl_events shoot inuse)"
expect "nothing written for refused restores" "" \
    "$(keys shoot--somewhere)$(keys shoot--etcd-events)$(keys shoot--etcd-main-restored)"
ksim_gone -n shoot etcd etcd-new || ctl_fail "a refused restore created an Etcd"
ok "refused: an existing target Etcd, a prefix in use, a sibling of the source's (kubectl shows why)"

# A target prefix with snapshots already (no Etcd claims it): the copy refuses, writes nothing.
dirty_before=$(keys shoot--dirty)
restore dirty etcd-dirty shoot--dirty "{store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}, etcdName: etcd-main}"
settle dirty Failed
jp shoot 'etcdrestore dirty' '{.status.error}' | snap_has 'already holds 1 snapshot' ||
    ctl_fail "error: $(jp shoot 'etcdrestore dirty' '{.status.error}')"
expect "dirty prefix unchanged" "$dirty_before" "$(keys shoot--dirty)"
ksim_gone -n shoot etcd etcd-dirty || ctl_fail "a failed restore created an Etcd"
ksim_wait 20 ksim_gone -n shoot job dirty--restore || ctl_fail "the failed copy Job stays"
ok "a target prefix holding snapshots: Failed, nothing written"
