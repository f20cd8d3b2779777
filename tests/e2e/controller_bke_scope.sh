#!/usr/bin/env bash
# BackupBucket spec.prefixScope Namespace in warden-controller (docs/backup-entries.md,
# "Prefixes partitioned by namespace"): an Etcd whose prefix is another namespace's part (one
# admitted before the setting: here the webhook does not check prefixes) gets no BackupEntry,
# a Warning event NotAuthorised naming the rule, so the bucket's credentials never delete in
# another namespace's part on its behalf; an Etcd in its own part (Gardener's
# <namespace>--<uid>/etcd-main) gets one. Oracle: the BackupEntries kube-sim stores.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

etcd_event() { ctl_events "$1" "$2" | grep -q "^Warning $3"; } # ns name pattern

ctl_stage
ctl_backup_secret etcd-warden creds
ctl_namespace shoot--p--n evil
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: etcd-bucket
  secretRef: {namespace: etcd-warden, name: creds}
  deletionGracePeriod: 1h
  prefixScope: Namespace
EOF
ctl_start
ctl_store_etcd evil squat S3 etcd-bucket shoot--p--n--0c5a/etcd-events
ctl_store_etcd shoot--p--n etcd-main S3 etcd-bucket shoot--p--n--0c5a/etcd-main
ksim_wait 30 ctl_has_entry shoot--p--n etcd-main || ctl_fail "no entry for shoot--p--n/etcd-main"
ksim_wait 30 etcd_event evil squat "NotAuthorised: prefix \"shoot--p--n--0c5a/etcd-events\" is not namespace evil's" ||
    ctl_fail "no NotAuthorised event for evil/squat: $(ctl_events evil squat)"
ctl_has_entry evil squat && ctl_fail "evil/squat got an entry in shoot--p--n's part"
ok "an Etcd in another namespace's part gets no entry; one in its own part does"
echo "controller_bke_scope: ok"
