#!/usr/bin/env bash
# An Etcd without the bucket's credentials gets no entry (NotAuthorised). Its tenant moves it to
# another prefix: warden-webhook keeps the earlier prefix claimed with an entry of the Etcd's uid
# (webhook/pmove), made without any comparison of credentials. The tenant moves it back: the
# controller reattaches that entry to the same Etcd, sees its member running, and the Etcd's
# deletion would delete what another seed's cluster wrote there meanwhile with the operator's
# Secret. The reattach compares the credentials (controller/entries/bkeheld.h): never held, the
# window is empty. Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
tenant_own_secret etcd-backup
ctl_s3_bucket 15s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
ctl_members tenant etcd-x
ctl_jobs_serve etcd-warden
ctl_start
refused() { ctl_events tenant etcd-x | grep -q '^Warning NotAuthorised: '; }
ksim_wait 20 refused || ctl_fail "no NotAuthorised event on tenant/etcd-x: $(ctl_events tenant etcd-x | tail -3)"
ctl_has_entry tenant etcd-x && ctl_fail "tenant/etcd-x got an entry without the bucket's credentials"
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P-away"
ksim_wait 20 ctl_has_entry tenant etcd-x || ctl_fail "the move left no entry of the earlier prefix"
E=$(ctl_entry_of tenant etcd-x)
echo "moved away: entry $E keeps $TENANT_P ($(ctl_entry_phase "$E"))"
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
ksim_wait 20 ctl_entry_phase_is "$E" Active || ctl_fail "$E not reattached: $(ctl_entry_phase "$E")"
ctl_members_seen tenant etcd-x
echo "moved back: $E $(ctl_entry_phase "$E"), credentialsLostAt $(kc get backupentry "$E" -o jsonpath='{.spec.credentialsLostAt}')"
sleep 1
tenant_others_write
tenant_judge "it never held the bucket's credentials" attack24_move_back
