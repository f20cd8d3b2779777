#!/usr/bin/env bash
# A restore's cleanup is skipped for an "owner" that owns nothing there, and its copy is then
# handed to another tenant. The controller takes an in-flight EtcdRestore whose
# spec.target.store names no provider (the documented default: the template's) as standing in
# the way of its whole container. Namespace shoot restores its etcd-main's snapshot into
# restored--shoot (EtcdRestore r1, target provider S3). While r1's copy runs, namespace other
# applies EtcdRestore r2 into other--restored of the same container, its target without a
# provider (its template's store is S3): admitted, in flight (no Job of other runs: its copy
# held). r1's copy writes shoot's snapshot into restored--shoot; at Creating r1 fails ("claimed
# while the copy ran": r2's target counts as the whole container). To free the prefix shoot
# deletes r1 as documented ("etcd-warden deletes what the copy wrote, then the restore goes");
# but r2 again counts as "something else now owns an overlapping prefix": event CopyKept, which
# names other's restore and its prefix to shoot, the copy is left and r1 goes, and with it the
# claim. Once r2 is over, nothing claims restored--shoot: namespace other's Etcd there is
# admitted and its sidecar restores shoot's cluster. Wanted: a copy is kept only for an owner
# whose claim really overlaps the target (r2's target is resolved as warden-webhook admitted
# it), or it keeps the prefix claimed for its namespace; and the event names no other
# namespace's object. Oracle: s3rver's listing and the Etcd kube-sim stores.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
T=restored--shoot

creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
restore() { # ns name source-prefix target-etcd target-prefix target-provider-field
    kc apply -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $2, namespace: $1}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: $3, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: $5, secretRef: {name: etcd-backup}}}
  target: {etcdName: $4, store: {$6container: $SNAP_BUCKET, prefix: $5, secretRef: {name: etcd-backup}}}
EOF
}
rphase() { jp "$1" "etcdrestore/$2" '{.status.phase}' 2>/dev/null; }
copying() { kc -n "$1" get job "$2--restore" >/dev/null 2>&1 && [ "$(rphase "$1" "$2")" = Copying ]; }
gone() { ! kc -n "$1" get "$2" >/dev/null 2>&1; }
listing() { snap_s3 ls "$T/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other
creds shoot
creds other
wh_register_backups
ctl_start
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/full"
snap_s3 put "other--src/v2/$snap" "$SNAP_WORK/full"

restore shoot r1 shoot--etcd-main etcd-back "$T" "provider: S3, " >/dev/null || ctl_fail "r1 refused"
ksim_wait 30 copying shoot r1 || ctl_fail "r1 not copying: $(kc -n shoot get etcdrestore r1 -o jsonpath='{.status}')"
out=$(restore other r2 other--src etcd-o other--restored "" 2>&1) || ctl_fail "r2 refused: $out"
ksim_wait 30 copying other r2 || ctl_fail "r2 not copying: $(kc -n other get etcdrestore r2 -o jsonpath='{.status}')"
ok "shoot's r1 (target $T, provider S3) and other's r2 (target other--restored, no provider) both in flight"

ctl_jobs_serve shoot
over() { p=$(rphase shoot r1); [ "$p" = Completed ] || [ "$p" = Failed ]; }
ksim_wait 90 over || ctl_fail "r1 did not end: $(kc -n shoot get etcdrestore r1 -o jsonpath='{.status}')"
grep -qF "$T/v2/$snap" <<<"$(listing)" || ctl_fail "r1 wrote no copy into $T: $(listing)"
if [ "$(rphase shoot r1)" = Completed ]; then
    ok "r1 Completed: other's restore r2 was not taken for an owner of $T"
    ctl_stop
    echo "attack7_cleanup_kept: ok"
    exit 0
fi
ok "r1 Failed: $(jp shoot etcdrestore/r1 '{.status.error}'); $T holds $(listing)"

kc -n shoot delete etcdrestore r1 --wait=false >/dev/null
ksim_wait 90 gone shoot etcdrestore/r1 ||
    ctl_fail "r1 not gone: $(kc -n shoot get etcdrestore r1 -o jsonpath='{.status}')"
kept=$(ctl_events shoot r1 | grep -E 'CopyKept|CleanupStarted|CopyDeleted' | tr '\n' ' ')
ok "r1 deleted; its events: ${kept:-none}; $T holds: $(listing)"

kc -n other delete etcdrestore r2 --wait=false >/dev/null
ksim_wait 60 gone other job/r2--restore || ctl_fail "r2's copy Job not deleted"
ctl_jobs_serve other
ksim_wait 90 gone other etcdrestore/r2 ||
    ctl_fail "r2 not gone: $(kc -n other get etcdrestore r2 -o jsonpath='{.status}')"
ok "other's r2 deleted (it never wrote)"

admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" "$T" 2>&1); }
if ! ksim_wait 60 admitted; then
    ok "namespace other's Etcd on $T stays refused: ${out:0:240}"
    ctl_stop
    echo "attack7_cleanup_kept: ok"
    exit 0
fi
left=$(listing)
if grep -qF "$T/v2/$snap" <<<"$left" && [ "$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')" = "$T" ]; then
    ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on $T, which still holds shoot's snapshot $snap copied there by shoot's EtcdRestore r1: r1's deletion kept the copy for other's in-flight restore r2 (whose target other--restored has no provider and does not overlap $T; r1's events: ${kept:-none}) and the claim ended with r1; other's sidecar restores shoot's cluster at its first start (listing: $left)"
fi
ok "other's Etcd on $T admitted once nothing of shoot's is left there (listing: ${left:-empty})"
ctl_stop
echo "attack7_cleanup_kept: ok"
