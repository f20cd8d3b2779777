#!/usr/bin/env bash
# Claims are atomic at admission: an admitted Etcd's claim is recorded in its store's claim
# Lease and "keeps its prefix from other owners" until it is stored (docs/backup-entries.md,
# "Claims at admission"), since the API server stores an object only once every validating
# webhook has answered (they run in parallel; another one may take its time). An EtcdBackup's
# copy is an owner too, but it claims its destination only when the controller makes the copy
# Job, after a check "from the API server". Namespace shoot applies EtcdBackup b of its
# etcd-main with destination copies--x (nothing claims it: admitted). Namespace other applies an
# Etcd on copies--x: warden-webhook admits it and records the claim (b has not written
# anything), and a second validating webhook (a stand-in for any policy webhook) holds the
# request. The controller runs b: the snapshot (held at the sidecar double until other's Etcd
# is held, so every step of b after it falls inside the hold however loaded the machine is),
# then its check from the API server, where other's Etcd is not stored yet, then the copy Job
# writing copies--x. The
# second webhook answers and other's Etcd is stored on copies--x: two owners of one prefix; the
# copy writes shoot's full snapshot (its cluster's data, Secrets included) under other's Etcd,
# whose sidecar restores it at its first start. Wanted: the copy's last check also counts the
# claims admitted and not stored yet (the Lease), or the copy is refused some other way.
# Oracle: what kube-sim stores (the copy Job's arguments, other's Etcd) and s3rver's listing.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/holdhook.sh"
ksim_on_exit snap_cleanups
NS=shoot
P=copies--x

status() { jp "$NS" "etcdbackup/b" "{.status.$1}"; }
job_args() { kc -n "$NS" get job b--copy -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null || true; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc create namespace other >/dev/null
for n in "$NS" other; do
    kc -n "$n" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
done
druid_double_for "$NS" etcd-main
wh_register_backups

# The second validating webhook: it holds an Etcd CREATE of namespace other until
# $HOLD/release exists (28 s at most: the API server gives up after timeoutSeconds, 30), and
# allows everything.
HOLD=$SNAP_WORK/hold
holdhook_start "$HOLD" other
touch "$HOLD/armed"

ctl_start
druid_double_admin hold
kc apply -f - >/dev/null <<EOF || ctl_fail "EtcdBackup b refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: $NS}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}
EOF
ok "shoot's EtcdBackup b (destination $P, nothing written yet) admitted"
held_snapshot() { [ "$(druid_double_held)" -ge 1 ] 2>/dev/null; }
ksim_wait 60 held_snapshot || ctl_fail "b's snapshot request did not reach the sidecar double within 60 s"
ok "b's snapshot request is held at the sidecar double"

(rc=0; kc apply -f - >"$HOLD/apply.out" 2>&1 <<EOF || rc=$?; echo $rc >"$HOLD/apply.rc") &
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-x, namespace: other}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}}
EOF
APPLY_PID=$!
recorded() { holdhook_recorded "$P"; }
over() { [ -s "$HOLD/apply.rc" ]; }
deadline=$((SECONDS + 120))
until { [ -e "$HOLD/held" ] && recorded; } || over || [ $SECONDS -ge $deadline ]; do sleep 0.1; done
if over; then
    ok "other's Etcd on $P answered before being held: $(cat "$HOLD/apply.out")"
    grep -q created "$HOLD/apply.out" && ctl_fail "other's Etcd was stored before the hold: the script's premise failed"
    ctl_fail "other's Etcd on $P refused by warden-webhook (nothing written there yet): $(cat "$HOLD/apply.out")"
fi
[ -e "$HOLD/held" ] && recorded || ctl_fail "other's Etcd was not admitted and held within 120 s (held: $(ls "$HOLD"); kubectl: $(cat "$HOLD/apply.out" 2>/dev/null); hold log: $(cat "$HOLD/log"))"
held_at=$SECONDS
ok "other's Etcd on $P admitted by warden-webhook (claim recorded) and held by the second webhook"

druid_double_admin release
decided() { [ -n "$(job_args)" ] || [ "$(status phase)" = Failed ]; }
while ! decided && [ $((SECONDS - held_at)) -lt 26 ]; do sleep 0.1; done
args=$(job_args)
phase=$(status phase)
stored=$(kc -n other get etcd etcd-x -o name 2>/dev/null || true)
[ -z "$stored" ] || ctl_fail "other's Etcd was stored while held: the script's premise failed"
touch "$HOLD/release"
reap_child "$APPLY_PID" 20 none || true
if [ -z "$args" ] && [ "$phase" = Failed ]; then
    ok "b refused while other's admitted Etcd was held: $(status error | cut -c1-200)"
    ctl_stop
    echo "attack5_copy_unstored_etcd: ok"
    exit 0
fi
[ -n "$args" ] || ctl_fail "inconclusive: within the hold b made no copy Job and did not fail (phase $phase)"
grep -q -- "--to-store-prefix=$P\"" <<<"$args" || ctl_fail "the copy Job writes elsewhere: $args"
stored=$(jp other etcd/etcd-x '{.spec.backup.store.prefix}' 2>/dev/null || true)
[ "$stored" = "$P" ] || ctl_fail "other's Etcd was not stored after the hold: $(cat "$HOLD/apply.out")"
# the copy runs: the snapshot's bytes put where the sidecar writes them first
snap=$(tr ',' '\n' <<<"$args" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
snap_s3 put "$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')/v2/$snap" "$SNAP_WORK/snap"
ctl_jobs_serve "$NS"
done_() { case $(status phase) in Completed | Failed) true ;; *) false ;; esac; }
ksim_wait 60 done_ || true
left=$(snap_s3 ls "$P/" | tr '\n' ' ')
ctl_fail "HOLE: shoot's EtcdBackup b made its copy Job into $P while namespace other's Etcd etcd-x on $P was admitted (its claim in the Lease) and not stored yet; other's Etcd is now stored on $P beside b's copy (b $(status phase), destination $(status destination); listing of $P: ${left:-empty})"
