#!/usr/bin/env bash
# The immutability CronJobs as the controller writes them, run from the controller image:
# warden-webhook and warden-controller from their images (tests/lib/podman-warden-*.sh)
# hibernate two Etcds with bucket immutability, one on S3 (s3rver) and one on Local; each
# CronJob is read back with kubectl and its container run with podman exactly as written
# (command, args, environment, Secret and hostPath volumes, securityContext:
# tests/lib/podman-cronjob.sh). Each run must copy the final full snapshot under the day's
# name, the content unchanged, and touch nothing else.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SNAP_BUCKET=etcd-bucket
. "$here/../lib/snapshot.sh"
. "$here/../lib/controller.sh" # its exit trap replaces snapshot.sh's: run those cleanups from it
ksim_on_exit snap_cleanups
. "$here/../lib/podman.sh"
. "$here/../lib/podman-cronjob.sh"
img_setup
img_need
ksim_on_exit img_cleanup
export WARDEN_WEBHOOK=$here/../lib/podman-warden-webhook.sh
export WARDEN_CONTROLLER=$here/../lib/podman-warden-controller.sh

ctl_stage
druid_etcd shoot etcd-main --bucket
druid_double_for shoot etcd-main
druid_etcd shoot etcd-local --bucket
kc -n shoot patch etcd etcd-local --type merge \
    -p '{"spec":{"backup":{"store":{"provider":"Local","container":"local-bucket","secretRef":null}}}}' >/dev/null
druid_double_for shoot etcd-local
ctl_start --immutability-task-image "$IMG_CONTROLLER"

started=$(date +%s)
for e in etcd-main etcd-local; do # retried: the controller may be writing the Etcd at the same time (409)
    ksim_wait 10 kc -n shoot annotate --overwrite etcd "$e" etcd-warden.io/hibernate=true >/dev/null ||
        ctl_fail "cannot annotate $e"
done
for e in etcd-main etcd-local; do
    ctl_wait_phase shoot "$e" Hibernated 40
    ksim_wait 15 kc -n shoot get cronjob "$e-extend-immutability" >/dev/null || ctl_fail "no CronJob for $e"
    kc -n shoot get cronjob "$e-extend-immutability" -o json >"$CTL_DIR/cj-$e.json"
done
ok "both Etcds hibernated, their CronJobs written"
expect "the CronJobs run the controller image" "$IMG_CONTROLLER $IMG_CONTROLLER" \
    "$(jp shoot cronjobs '{.items[*].spec.jobTemplate.spec.template.spec.containers[0].image}')"

# The final full snapshot copied under a name of the run's second, identical; nothing else new.
# check_copy WHAT LS-COMMAND GET-COMMAND
check_copy() {
    local what=$1 ls=$2 get=$3 copies
    copies=$($ls "$SNAP_PREFIX/" | grep -E "^$SNAP_PREFIX/v2/Full-00000000-00002300-[0-9]+\.gz\.final$" |
        grep -v -x "$SNAP_FINAL" || true)
    [ "$(wc -w <<<"$copies")" = 1 ] || ctl_fail "$what: copies of the final snapshot: '$copies'"
    local ts=${copies##*-}
    ts=${ts%.gz.final}
    [ "$ts" -ge "$started" ] && [ "$ts" -le "$(date +%s)" ] || ctl_fail "$what: copy named for $ts"
    $get "$copies" | cmp -s - "$SNAP_FINAL_FILE" || ctl_fail "$what: the copy differs from the final snapshot"
    { cut -d' ' -f1 "$SNAP_WORK/seeded"; echo "$copies"; } | sort >"$SNAP_WORK/want"
    $ls "$SNAP_PREFIX" | sort >"$SNAP_WORK/have"
    diff "$SNAP_WORK/want" "$SNAP_WORK/have" >&2 || ctl_fail "$what: unexpected objects"
    ok "$what: the CronJob's command from the controller image copied the final snapshot, nothing else changed"
}
kc -n shoot get secrets -o json >"$CTL_DIR/secrets.json"

# ---- S3 on s3rver: the store Secret etcd-backup holds the emulator's credentials
snap_s3_start
SNAP_PREFIX=shoot--etcd-main
s3_put() { snap_s3 put "$1" "$2"; }
snap_history s3_put
kc -n shoot create secret generic etcd-backup --from-file="$AWS_APPLICATION_CREDENTIALS" \
    --dry-run=client -o yaml | kc apply -f - >/dev/null
kc -n shoot get secrets -o json >"$CTL_DIR/secrets.json"
img_cronjob_run "$CTL_DIR/cj-etcd-main.json" "$CTL_DIR/secrets.json" "$CTL_DIR/node" \
    2>"$CTL_DIR/cj-s3.log" || { cat "$CTL_DIR/cj-s3.log" >&2; ctl_fail "the S3 CronJob failed"; }
grep -q -- "--store-container=etcd-bucket" "$CTL_DIR/cj-s3.log" || ctl_fail "S3: not the CronJob's arguments"
s3_ls() { snap_s3 ls "$1"; }
s3_get() { snap_s3 get "$1"; }
check_copy S3 s3_ls s3_get

# ---- Local: the hostPath bucket on the node, made writable for the job's user beforehand
bucket=$CTL_DIR/node/etc/gardener/local-backupbuckets/local-bucket
SNAP_PREFIX=shoot--etcd-local
mkdir -p "$bucket"
local_put() { mkdir -p "$bucket/$(dirname "$1")" && cp "$2" "$bucket/$1"; }
snap_history local_put
chown -R "$IMG_UID:$IMG_UID" "$bucket"
img_cronjob_run "$CTL_DIR/cj-etcd-local.json" "$CTL_DIR/secrets.json" "$CTL_DIR/node" \
    2>"$CTL_DIR/cj-local.log" || { cat "$CTL_DIR/cj-local.log" >&2; ctl_fail "the Local CronJob failed"; }
local_ls() { # keys starting with $1
    (cd "$bucket" && find . -type f ! -path './.warden-snapshot-tmp/*') | sed 's|^\./||' | grep -F "$1" || true
}
local_get() { cat "$bucket/$1"; }
check_copy Local local_ls local_get
ctl_stop
echo "PASS"
