#!/usr/bin/env bash
# cronjob_exec (tests/lib/snapshot.sh) runs the container of an
# ExtendFullSnapshotImmutabilityTask's CronJob as the kubelet would: the
# CronJob below is shaped as the controller builds it (command
# "warden-snapshot extend-snapshot-immutability", the Etcd's store as flags,
# STORAGE_CONTAINER and AWS_APPLICATION_CREDENTIALS pointing at the mounted
# backup Secret as etcd-druid's backup sidecar has them). Against s3rver it
# must copy the final full snapshot; a Secret given as a Secret object works
# too, and a CronJob running another program is refused.
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
echo "snapshot_cronjob: ok"
