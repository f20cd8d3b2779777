#!/usr/bin/env bash
# A deleted Etcd's entry deletes the backups another backup sidecar still writes: a StatefulSet
# or pod that is not the entry's Etcd's (another Etcd's, one with no owner and no labels) runs a
# container backup-restore on the entry's prefix, or on a store etcd-warden cannot read. On
# kube-sim with warden-webhook, warden-controller, s3rver and the deletion Jobs run (job_exec).
# Issue 29: "No entry is released and no prefix deleted while any live Etcd's claim ... overlaps
# it"; "fail closed ... in every destructive decision".
# docs/backup-entries.md (Deletion blocked): the controller does not start a deletion Job while
# "any StatefulSet or pod of the cluster ... runs a backup sidecar (a container named
# backup-restore) whose store overlaps the prefix, or whose store cannot be read".
#   W1. a bare pod w/writer-1 (no owner, no labels, Running) whose backup-restore writes prefix
#       a1--etcd-main of container etcd-bucket; Etcd a1/etcd-main is deleted as usual.
#   W2. a StatefulSet w/writer-2 (no owner, no labels; kube-sim runs no pods) whose template's
#       backup-restore writes a2--etcd-main/sub (inside a2--etcd-main); Etcd a2/etcd-main deleted.
#   W3. another Etcd's StatefulSet: b/etcd-main's template (etcd-druid not reconciled after a
#       move of b's spec.backup.store away) writes a3--etcd-main; Etcd a3/etcd-main deleted.
#   W4. after the control: a bare pod w/writer-4 whose backup-restore names a provider etcd-warden
#       does not know (its store unknown, fail closed); Etcd a4/etcd-main deleted.
#   A0. control: a0/etcd-main deleted while nothing writes a0--etcd-main (W1-W3 write elsewhere,
#       a finished pod w/done writes it): its entry's Job deletes its snapshot.
# Oracle: s3rver's listing under each prefix, and what kube-sim stores (the writers' args).
set -uo pipefail
export SNAP_BUCKET=etcd-bucket # druid_etcd's container
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ksim_on_exit snap_cleanups

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_s3_bucket 1h
ctl_jobs_serve etcd-warden 600

# sidecar PROVIDER PREFIX: a backup-restore container as etcd-druid renders it
sidecar() {
    printf '{"name":"backup-restore","image":"etcdbrctl","args":["server","--storage-provider=%s","--store-prefix=%s"],"env":[{"name":"STORAGE_CONTAINER","value":"etcd-bucket"}]}' "$1" "$2"
}
bare_pod() { # NS NAME PROVIDER PREFIX PHASE
    kc -n "$1" create -f - >/dev/null <<JSON || ctl_fail "cannot create pod $1/$2"
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2"},
 "spec":{"containers":[{"name":"main","image":"busybox"},$(sidecar "$3" "$4")]}}
JSON
    kc -n "$1" patch pod "$2" --subresource=status --type merge -p "{\"status\":{\"phase\":\"$5\"}}" >/dev/null ||
        ctl_fail "cannot set the phase of pod $1/$2"
}
bare_sts() { # NS NAME PREFIX
    kc -n "$1" create -f - >/dev/null <<JSON || ctl_fail "cannot create StatefulSet $1/$2"
{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"$2"},
 "spec":{"replicas":1,"serviceName":"$2","selector":{"matchLabels":{"app":"$2"}},
  "template":{"metadata":{"labels":{"app":"$2"}},
   "spec":{"containers":[{"name":"main","image":"busybox"},$(sidecar S3 "$3")]}}}}
JSON
}
writes() { # KIND NS NAME: the prefix its backup-restore's args give
    local path=.spec.containers
    [ "$1" = pod ] || path=.spec.template.spec.containers
    kc -n "$2" get "$1" "$3" -o json 2>/dev/null | jq -r "$path[] | select(.name == \"backup-restore\")
        | .args | map(select(startswith(\"--store-prefix=\")))[0] | ltrimstr(\"--store-prefix=\")"
}
template() { # NS PREFIX: etcd-druid's sidecar of b, not reconciled since its Etcd moved
    local c
    c=$(kc -n "$1" get statefulset etcd-main -o json | jq -c --arg p "$2" '.spec.template.spec.containers[1]
        | .args = ["server", "--server-port=8080", "--storage-provider=S3", "--store-prefix=\($p)"]
        | .env = [{name: "STORAGE_CONTAINER", value: "etcd-bucket"}]')
    kc_druid -n "$1" patch statefulset etcd-main --type json \
        -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/1\",\"value\":$c}]" >/dev/null ||
        ctl_fail "$1: etcd-druid cannot build its sidecar's store into the template"
}

NSS="a0 a1 a2 a3 a4"
declare -A FULL ENTRY
for ns in $NSS b; do
    druid_etcd $ns etcd-main
    ctl_backup_secret $ns ||
        ctl_fail "cannot create the backup Secret in $ns"
done
kc create namespace w >/dev/null || ctl_fail "cannot create namespace w"
ctl_start
for ns in $NSS; do
    ksim_wait 30 ctl_has_entry $ns etcd-main || ctl_fail "no BackupEntry for $ns/etcd-main"
    ctl_members_seen $ns etcd-main
    ENTRY[$ns]=$(ctl_entry_of $ns etcd-main)
done
sleep 1 # the sidecar uploads after the members were seen (object times have seconds)
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
for ns in $NSS; do
    FULL[$ns]=$ns--etcd-main/v2/Full-00000000-00000100-$(date +%s).gz
    snap_s3 put "${FULL[$ns]}" "$SNAP_WORK/full" >/dev/null || ctl_fail "cannot upload ${FULL[$ns]}"
    snap_s3 ls "$ns--etcd-main/" | grep -qF "${FULL[$ns]}" || ctl_fail "$ns: ${FULL[$ns]} not listed"
done

bare_pod w writer-1 S3 a1--etcd-main Running
bare_pod w done S3 a0--etcd-main Succeeded
bare_sts w writer-2 a2--etcd-main/sub
template b a3--etcd-main
[ "$(writes pod w writer-1)" = a1--etcd-main ] && [ "$(writes statefulset w writer-2)" = a2--etcd-main/sub ] &&
    [ "$(writes statefulset b etcd-main)" = a3--etcd-main ] ||
    ctl_fail "the writers are not as set: $(writes pod w writer-1) $(writes statefulset w writer-2) $(writes statefulset b etcd-main)"

for ns in a0 a1 a2 a3; do
    kc -n $ns delete etcd etcd-main --wait=false >/dev/null || ctl_fail "$ns: cannot delete the Etcd"
done
for ns in a0 a1 a2 a3; do
    ksim_wait 30 ctl_entry_phase_is "${ENTRY[$ns]}" PendingDeletion || ctl_fail "$ns: ${ENTRY[$ns]} not pending: $(ctl_entry_phase "${ENTRY[$ns]}")"
done
ctl_s3_bucket 2s
ksim_wait 90 ksim_gone backupentry "${ENTRY[a0]}" ||
    ctl_fail "control: a0: the entry ${ENTRY[a0]} was not deleted: $(kc get backupentry "${ENTRY[a0]}" -o jsonpath='{.status}')"
left0=$(snap_s3 ls "a0--etcd-main/" | tr '\n' ' ')
grep -qF "${FULL[a0]}" <<<"$left0" && ctl_fail "control: A0: the deleted Etcd's snapshot was not deleted (left: $left0)"
echo "ok: control: A0: nothing runs on a0--etcd-main (a finished pod wrote it): its snapshot deleted with its entry"

held() { kc get backupentry "$1" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null | grep -Eq 'postponed|blocked'; }
held_or_gone() { held "$1" || ksim_gone backupentry "$1"; }
for ns in a1 a2 a3; do
    ksim_wait 60 held_or_gone "${ENTRY[$ns]}" ||
        ctl_fail "$ns: the entry ${ENTRY[$ns]} neither held nor deleted: $(kc get backupentry "${ENTRY[$ns]}" -o jsonpath='{.status}')"
done

bare_pod w writer-4 awss a4--etcd-main Running
kc -n a4 delete etcd etcd-main --wait=false >/dev/null || ctl_fail "a4: cannot delete the Etcd"
ksim_wait 60 held_or_gone "${ENTRY[a4]}" ||
    ctl_fail "a4: the entry ${ENTRY[a4]} neither held nor deleted: $(kc get backupentry "${ENTRY[a4]}" -o jsonpath='{.status}')"

declare -A WHO=([a1]="bare pod w/writer-1" [a2]="StatefulSet w/writer-2 (no owner, no labels; its template)"
    [a3]="Etcd b/etcd-main's StatefulSet (its template not reconciled)" [a4]="bare pod w/writer-4 (provider awss: store unknown)")
holes=0
for ns in a1 a2 a3 a4; do
    left=$(snap_s3 ls "$ns--etcd-main/" | tr '\n' ' ')
    if ! grep -qF "${FULL[$ns]}" <<<"$left"; then
        echo "HOLE: ${ns^^}: the deletion Job of entry ${ENTRY[$ns]} deleted ${FULL[$ns]} while ${WHO[$ns]} runs a backup sidecar writing there (left: ${left:-nothing})"
        holes=$((holes + 1))
    else
        echo "held: ${ns^^}: left under $ns--etcd-main/: $left; entry ${ENTRY[$ns]}: $(kc get backupentry "${ENTRY[$ns]}" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null)"
    fi
done
ctl_stop
if [ "$holes" -gt 0 ]; then
    echo "FAIL: $holes hole(s): an entry is deleted while a backup sidecar that is not its Etcd's writes its prefix"
    exit 1
fi
echo "attack16_entry_other_writer: ok"
