#!/usr/bin/env bash
# "The other owner is named only to its own namespace" (docs/backups-and-restores.md,
# destinations; docs/backup-entries.md: to any other namespace a refusal reads "overlaps a
# prefix claimed from another namespace", the operator finds the owner in the controller's
# events about entries and with check-prefixes). warden-controller checks an EtcdBackup's
# destination again before it writes. Namespace shoot applies EtcdBackup b with destination
# probe--x (nothing claims it: admitted; no copy yet, so no claim). Namespace other's Etcd
# etcd-secret-name is then admitted on probe--x/etcd. warden-controller (started now) refuses
# b: what shoot reads in b's status.error and events must not name namespace other or its
# Etcd. Oracle: what kube-sim stores (b's status and the events of namespace shoot).
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other
wh_register_backups
ctl_store_etcd shoot etcd-main S3 etcd-bucket shoot--etcd-main
kc apply -f - >/dev/null <<EOF || ctl_fail "EtcdBackup b refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: shoot}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: etcd-bucket, prefix: probe--x, secretRef: {name: etcd-backup}}
EOF
ctl_store_etcd other etcd-secret-name S3 etcd-bucket probe--x/etcd
ok "shoot's EtcdBackup b (probe--x) and other's Etcd etcd-secret-name (probe--x/etcd) admitted"
ctl_start
failed() { [ "$(jp shoot etcdbackup/b '{.status.phase}')" = Failed ]; }
ksim_wait 30 failed || ctl_fail "b was not refused: $(jp shoot etcdbackup/b '{.status}')"
said="$(jp shoot etcdbackup/b '{.status.error}') $(ctl_events shoot b | tr '\n' ' ')"
ok "b refused: ${said:0:240}"
if grep -qE 'other/|etcd-secret-name|namespace other' <<<"$said"; then
    ctl_fail "HOLE: namespace shoot reads namespace other's Etcd in its EtcdBackup's refusal: $said"
fi
ok "the refusal does not name the other namespace's Etcd"
ctl_stop
echo "attack5_backup_error_names: ok"
