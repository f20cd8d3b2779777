#!/usr/bin/env bash
# cronjob_exec (tests/lib/snapshot.sh) runs the container of an
# ExtendFullSnapshotImmutabilityTask's CronJob as the kubelet would: the
# CronJob below is shaped as the controller builds it (command
# "warden-snapshot extend-snapshot-immutability", the Etcd's store as flags,
# STORAGE_CONTAINER and AWS_APPLICATION_CREDENTIALS pointing at the mounted
# backup Secret as etcd-druid's backup sidecar has them). Against s3rver it
# must copy the final full snapshot; a Secret given as a Secret object works
# too, and a CronJob running another program is refused. On Local, the bucket
# directory is a hostPath volume (etcd-druid's layout: the Secret's hostPath +
# "/<container>" on the node, mounted at /home/nonroot/<container>, HOME set):
# cronjob_exec links it into the pod's root and the run copies inside the
# node's directory; a missing host directory stops the pod as the kubelet does.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
snap_history s3_put

secrets=$SNAP_WORK/secrets
mkdir -p "$secrets"
cp -r "$AWS_APPLICATION_CREDENTIALS" "$secrets/etcd-backup-aws"
unset AWS_APPLICATION_CREDENTIALS

cronjob() { # $1 = program of the command, $2 = gc-from
    cat <<JSON
{"apiVersion":"batch/v1","kind":"CronJob",
 "metadata":{"name":"etcd-main-extend-immutability","namespace":"shoot--dev--main"},
 "spec":{"schedule":"0 */24 * * *","concurrencyPolicy":"Forbid",
  "jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure",
   "containers":[{"name":"extend-snapshot-immutability","image":"etcd-warden/controller:dev",
     "command":["$1","extend-snapshot-immutability"],
     "args":["--storage-provider=S3","--store-prefix=$SNAP_PREFIX",
             "--store-container=\$(STORAGE_CONTAINER)","--gc-from-timestamp=$2"],
     "env":[{"name":"STORAGE_CONTAINER","value":"$SNAP_BUCKET"},
            {"name":"AWS_APPLICATION_CREDENTIALS","value":"/var/etcd-backup"}],
     "volumeMounts":[{"name":"etcd-backup","mountPath":"/var/etcd-backup/"}]}],
   "volumes":[{"name":"etcd-backup","secret":{"secretName":"etcd-backup-aws"}}]}}}}}}
JSON
}

cronjob /usr/local/bin/warden-snapshot "$SNAP_GC_FROM" >"$SNAP_WORK/cj.json"
day1=$((1700000000 + SNAP_DAY))
WARDEN_SNAPSHOT_NOW=$day1 cronjob_exec "$SNAP_WORK/cj.json" "$secrets" 2>"$SNAP_WORK/cj.log" ||
    { cat "$SNAP_WORK/cj.log"; snap_fail "the CronJob's command failed"; }
snap_s3 get "$SNAP_PREFIX/v2/Full-00000000-00002300-$day1.gz.final" | cmp -s - "$SNAP_FINAL_FILE" ||
    snap_fail "the CronJob did not copy the final snapshot"
grep -q -- '--store-container=etcd-backups' "$SNAP_WORK/cj.log" || snap_fail "\$(STORAGE_CONTAINER) not expanded"

# The Secret as a Secret object (as kubectl get secret -o json prints it).
rm -rf "$secrets/etcd-backup-aws.d"
mv "$secrets/etcd-backup-aws" "$secrets/etcd-backup-aws.d"
python3 - "$secrets/etcd-backup-aws.d" >"$secrets/etcd-backup-aws.json" <<'PY'
import base64, json, os, sys
d = sys.argv[1]
print(json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "etcd-backup-aws"},
                  "data": {f: base64.b64encode(open(os.path.join(d, f), "rb").read()).decode()
                           for f in os.listdir(d)}}))
PY
rm -rf "$secrets/etcd-backup-aws.d"
day2=$((day1 + SNAP_DAY))
WARDEN_SNAPSHOT_NOW=$day2 cronjob_exec "$SNAP_WORK/cj.json" "$secrets" 2>"$SNAP_WORK/cj.log" ||
    { cat "$SNAP_WORK/cj.log"; snap_fail "the CronJob's command failed with a Secret object"; }
snap_s3 ls "$SNAP_PREFIX/" | snap_has -- "-$day2.gz.final" || snap_fail "day 2 copy missing"
if snap_s3 ls "$SNAP_PREFIX/" | snap_has -- "-$day1.gz.final"; then snap_fail "day 1 copy not collected"; fi

# Another program in the CronJob is refused, not run.
cronjob etcdbrctl "$SNAP_GC_FROM" >"$SNAP_WORK/other.json"
if cronjob_exec "$SNAP_WORK/other.json" "$secrets" 2>"$SNAP_WORK/other.log"; then
    snap_fail "a CronJob running etcdbrctl was run"
fi
grep -q 'not warden-snapshot' "$SNAP_WORK/other.log" || snap_fail "unclear refusal"
# A CronJob whose Secret is missing is refused.
rm "$secrets/etcd-backup-aws.json"
if cronjob_exec "$SNAP_WORK/cj.json" "$secrets" 2>"$SNAP_WORK/missing.log"; then
    snap_fail "ran without its Secret"
fi
grep -q 'Secret etcd-backup-aws not found' "$SNAP_WORK/missing.log" || snap_fail "unclear missing-Secret error"
# ---- Local: the bucket directory as a hostPath volume
node=$SNAP_WORK/node
bucket_dir=$node/var/buckets/bkt
mkdir -p "$bucket_dir"
local_put() { mkdir -p "$(dirname "$bucket_dir/$1")" && cp "$2" "$bucket_dir/$1"; }
snap_history local_put
local_cronjob() { # $1 = host directory of the bucket
    cat <<JSON
{"apiVersion":"batch/v1","kind":"CronJob",
 "metadata":{"name":"etcd-main-extend-immutability","namespace":"shoot--dev--main"},
 "spec":{"schedule":"0 */24 * * *","jobTemplate":{"spec":{"template":{"spec":{
   "containers":[{"name":"extend-snapshot-immutability","image":"etcd-warden/controller:dev",
     "command":["warden-snapshot","extend-snapshot-immutability"],
     "args":["--gc-from-timestamp=$SNAP_GC_FROM","--storage-provider=Local",
             "--store-container=\$(HOME)/\$(STORAGE_CONTAINER)","--store-prefix=$SNAP_PREFIX"],
     "env":[{"name":"STORAGE_CONTAINER","value":"bkt"},{"name":"HOME","value":"/home/nonroot"}],
     "volumeMounts":[{"name":"host-storage","mountPath":"/home/nonroot/bkt"}]}],
   "volumes":[{"name":"host-storage","hostPath":{"path":"$1","type":"Directory"}}]}}}}}}
JSON
}
local_cronjob /var/buckets/bkt >"$SNAP_WORK/local.json"
day3=$((1700000000 + 3 * SNAP_DAY))
if cronjob_exec "$SNAP_WORK/local.json" "$secrets" 2>"$SNAP_WORK/local.log"; then
    snap_fail "a hostPath volume ran without the node's files"
fi
grep -q 'CRONJOB_EXEC_HOST_ROOT' "$SNAP_WORK/local.log" || snap_fail "unclear hostPath error"
CRONJOB_EXEC_HOST_ROOT=$node WARDEN_SNAPSHOT_NOW=$day3 \
    cronjob_exec "$SNAP_WORK/local.json" "$secrets" 2>"$SNAP_WORK/local.log" ||
    { cat "$SNAP_WORK/local.log"; snap_fail "the Local CronJob's command failed"; }
cmp -s "$bucket_dir/$SNAP_PREFIX/v2/Full-00000000-00002300-$day3.gz.final" "$SNAP_FINAL_FILE" ||
    { cat "$SNAP_WORK/local.log"; snap_fail "the Local CronJob did not copy into the node's directory"; }
grep -q -- "--store-container=$SNAP_WORK/pod\.[A-Za-z0-9]*/home/nonroot/bkt" "$SNAP_WORK/local.log" ||
    snap_fail "the mount path was not rewritten into the pod: $(cat "$SNAP_WORK/local.log")"
local_cronjob /var/buckets/missing >"$SNAP_WORK/missing-dir.json"
if CRONJOB_EXEC_HOST_ROOT=$node cronjob_exec "$SNAP_WORK/missing-dir.json" "$secrets" \
    2>"$SNAP_WORK/missing-dir.log"; then
    snap_fail "ran with a missing hostPath directory of type Directory"
fi
grep -q '/var/buckets/missing is not a directory' "$SNAP_WORK/missing-dir.log" ||
    snap_fail "unclear missing hostPath error"
echo "snapshot_cronjob: ok"
