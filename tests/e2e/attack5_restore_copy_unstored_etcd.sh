#!/usr/bin/env bash
# The restore's copy Job has the gap attack5_copy_unstored_etcd shows for an EtcdBackup's
# unless its claim goes through the claim Lease: warden-controller checks the target "from the
# API server" before it creates the copy Job, and an Etcd warden-webhook admitted (its claim
# recorded in the store's claim Lease) while another validating webhook still holds it is not
# there. Here the restore reaches the controller without a record of its own (the backups
# webhook is not registered: warden-webhook records Etcd claims only; with it, the restore's
# admission meets the Etcd's record). Namespace other applies an Etcd on restored--x: admitted
# by warden-webhook, held by a second webhook. Namespace shoot applies EtcdRestore r from a
# store into restored--x, which the controller (running) plans the copy of. Wanted: the copy
# refused (Failed, no Job) because the target's claim, taken in the Lease before the Job,
# meets other's admitted record; before, the copy Job wrote shoot's snapshot where other's
# Etcd, stored once released, restores it at its first start.
# Oracle: what kube-sim stores (the copy Job, the restore's phase, other's Etcd).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/holdhook.sh"
ksim_on_exit snap_cleanups
NS=shoot
P=restored--x

job_args() { kc -n "$NS" get job r--restore -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null || true; }
phase() { jp "$NS" etcdrestore/r '{.status.phase}'; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace "$NS" >/dev/null
kc create namespace other >/dev/null
for n in "$NS" other; do
    kc -n "$n" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
done

# The second validating webhook: it holds an Etcd CREATE of namespace other until
# $HOLD/release exists (28 s at most: the API server gives up after timeoutSeconds, 30), and allows everything.
HOLD=$SNAP_WORK/hold
holdhook_start "$HOLD" other
touch "$HOLD/armed"

# the controller first (nothing to do yet): only the restore's planning falls within the hold
ctl_start

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
    ctl_fail "other's Etcd on $P answered before being held: $(cat "$HOLD/apply.out")"
fi
[ -e "$HOLD/held" ] && recorded || ctl_fail "other's Etcd was not admitted and held within 120 s (held: $(ls "$HOLD"); kubectl: $(cat "$HOLD/apply.out" 2>/dev/null); hold log: $(cat "$HOLD/log"))"
held_at=$SECONDS
ok "other's Etcd on $P admitted by warden-webhook (claim recorded) and held by the second webhook"

kc apply -f - >/dev/null <<EOF || ctl_fail "the restore refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: $NS}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-back, store: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}}
EOF
ok "shoot's EtcdRestore r into $P stored (no webhook checks restores here)"

decided() { [ -n "$(job_args)" ] || [ "$(phase)" = Failed ]; }
while ! decided && [ $((SECONDS - held_at)) -lt 26 ]; do sleep 0.1; done
args=$(job_args)
ph=$(phase)
stored=$(kc -n other get etcd etcd-x -o name 2>/dev/null || true)
[ -z "$stored" ] || ctl_fail "other's Etcd was stored while held: the script's premise failed"
touch "$HOLD/release"
reap_child "$APPLY_PID" 20 none || true
if [ -n "$args" ]; then
    ctl_fail "HOLE: shoot's EtcdRestore r made its copy Job into $P while namespace other's Etcd etcd-x on $P was admitted (its claim in the Lease) and not stored yet; Job args: $args"
fi
[ "$ph" = Failed ] || ctl_fail "inconclusive: within the hold r made no copy Job and did not fail (phase $ph)"
err=$(jp "$NS" etcdrestore/r '{.status.error}')
grep -q 'overlaps a prefix claimed from another namespace' <<<"$err" || ctl_fail "r failed for another reason: $err"
ok "r refused while other's admitted Etcd was held: ${err:0:200}"
ctl_stop
echo "attack5_restore_copy_unstored_etcd: ok"
