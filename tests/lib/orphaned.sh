# shellcheck shell=bash
# The set-up of the e2e scripts whose Etcd is deleted while its members run on
# (tests/e2e/attack15_etcd_orphaned_members.sh, attack15_etcd_orphaned_pods.sh). Source after
# snapshot.sh and controller.sh, with SNAP_BUCKET=etcd-bucket and snap_cleanups on exit:
#
#   orphaned_stage  # s3rver, warden-webhook and warden-controller (--backup-entries
#                   # --etcd-backups), bucket s3 (grace 1h), deletion Jobs run; o0/etcd-main and
#                   # o1/etcd-main, 3 members each running the template's sidecar on prefix
#                   # NS--etcd-main, seen, a full snapshot FULL[NS] there, entry ENTRY[NS]; o0's
#                   # Etcd deleted as usual (its StatefulSet collected), o1's by alice with
#                   # --cascade=orphan (its StatefulSet and 3 Running pods left)
#   orphaned_jobs REGEX
#                   # both entries pending, the grace cut to 2s: o0's entry deleted, o1's held
#                   # (its first condition's message matches the grep -E REGEX) or deleted; the
#                   # control: o0's snapshot deleted with its entry
#   sidecar_prefix NS, running NS, template NS PREFIX (helpers of the two)

template() { # NS PREFIX: etcd-druid builds its sidecar for that store into the template
    local c
    c=$(kc -n "$1" get statefulset etcd-main -o json | jq -c --arg p "$2" '.spec.template.spec.containers[1]
        | .args = ["server", "--server-port=8080", "--storage-provider=S3", "--store-prefix=\($p)"]
        | .env = [{name: "STORAGE_CONTAINER", value: "etcd-bucket"}]')
    kc_druid -n "$1" patch statefulset etcd-main --type json \
        -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/1\",\"value\":$c}]" >/dev/null ||
        ctl_fail "$1: etcd-druid cannot build its sidecar's store into the template"
}
sidecar_prefix() {
    kc -n "$1" get statefulset etcd-main -o json 2>/dev/null | jq -r '.spec.template.spec.containers[]
        | select(.name == "backup-restore") | .args | map(select(startswith("--store-prefix=")))[0]
        | ltrimstr("--store-prefix=")'
}
running() { kc -n "$1" get pods -o json | jq '[.items[] | select(.status.phase == "Running")] | length'; }

orphaned_stage() {
    snap_s3_start
    CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
    ctl_s3_bucket_secret
    ctl_s3_bucket 1h
    ctl_jobs_serve etcd-warden 600
    declare -gA FULL ENTRY
    for ns in o0 o1; do
        druid_etcd $ns etcd-main
        ctl_backup_secret $ns ||
            ctl_fail "cannot create the backup Secret in $ns"
        template $ns $ns--etcd-main
        kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot roll the pods"
        ksim_wait 10 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $ns get pods -o name)\" ]" || ctl_fail "$ns: the pods did not go"
        druid_pods $ns etcd-main 3
    done
    ctl_start
    for ns in o0 o1; do
        ksim_wait 30 ctl_has_entry $ns etcd-main || ctl_fail "no BackupEntry for $ns/etcd-main"
        ctl_members_seen $ns etcd-main
        ENTRY[$ns]=$(ctl_entry_of $ns etcd-main)
    done
    sleep 1 # the sidecar uploads after the members were seen (object times have seconds)
    snap_fixture "$SNAP_WORK/full" 4096 Full.gz
    for ns in o0 o1; do
        FULL[$ns]=$ns--etcd-main/v2/Full-00000000-00000100-$(date +%s).gz
        snap_s3 put "${FULL[$ns]}" "$SNAP_WORK/full" >/dev/null || ctl_fail "cannot upload ${FULL[$ns]}"
        snap_s3 ls "$ns--etcd-main/" | grep -qF "${FULL[$ns]}" || ctl_fail "$ns: ${FULL[$ns]} not listed"
    done
    sleep 1 # the deletion a second later: a window ends before its own second
    kc -n o0 delete etcd etcd-main --wait=false >/dev/null || ctl_fail "o0: cannot delete the Etcd"
    out=$(WH_AS_NS=o1 wh_as alice delete etcd etcd-main --cascade=orphan --wait=false 2>&1) ||
        ctl_fail "o1: alice cannot delete the Etcd with --cascade=orphan: $out"
    ksim_wait 30 ksim_gone -n o0 statefulset etcd-main || ctl_fail "o0: the garbage collector left the StatefulSet"
    ksim_wait 30 ksim_gone -n o1 etcd etcd-main || ctl_fail "o1: the Etcd is not gone"
    sleep 2
    [ "$(sidecar_prefix o1)" = o1--etcd-main ] && [ "$(running o1)" = 3 ] ||
        ctl_fail "o1: the orphaned StatefulSet or its pods went (template writes '$(sidecar_prefix o1)', $(running o1) Running)"
}

orphaned_jobs() {
    local ORPHANED_HELD=$1
    for ns in o0 o1; do
        ksim_wait 30 ctl_entry_phase_is "${ENTRY[$ns]}" PendingDeletion || ctl_fail "$ns: ${ENTRY[$ns]} not pending: $(ctl_entry_phase "${ENTRY[$ns]}")"
    done
    ctl_s3_bucket 2s
    ksim_wait 90 ksim_gone backupentry "${ENTRY[o0]}" ||
        ctl_fail "o0: the entry ${ENTRY[o0]} was not deleted: $(kc get backupentry "${ENTRY[o0]}" -o jsonpath='{.status}')"
    held() { kc get backupentry "$1" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null | grep -Eq "$ORPHANED_HELD"; }
    held_or_gone() { held "$1" || ksim_gone backupentry "$1"; }
    ksim_wait 60 held_or_gone "${ENTRY[o1]}" ||
        ctl_fail "o1: the entry ${ENTRY[o1]} neither held nor deleted: $(kc get backupentry "${ENTRY[o1]}" -o jsonpath='{.status}')"
    left0=$(snap_s3 ls "o0--etcd-main/" | tr '\n' ' ')
    grep -qF "${FULL[o0]}" <<<"$left0" && ctl_fail "control: O0: the deleted Etcd's snapshot was not deleted (left: $left0)"
    echo "ok: control: O0: an Etcd deleted with its StatefulSet: its snapshot deleted with its entry"
}
