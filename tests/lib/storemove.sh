# shellcheck shell=bash
# The set-up of the e2e scripts in which a live Etcd's store is moved while its members may still
# write the old one (tests/e2e/attack14_move_unreconciled.sh, attack16_move_arg_expansion.sh,
# attack16_move_command_prefix.sh, attack16_move_store_container.sh). Sourcing it sources
# snapshot.sh and controller.sh with SNAP_BUCKET=etcd-bucket (druid_etcd's container), needs jq
# and runs snap_cleanups on exit; skipped (77) without etcdbrctl (WARDEN_ETCDBRCTL):
#
#   storemove_stage [M1STORE]
#                     # s3rver, warden-webhook and warden-controller (--backup-entries
#                     # --etcd-backups), bucket etcd-bucket (grace 1h), deletion Jobs run;
#                     # m0/etcd-main and m1/etcd-main, 3 members each rolled onto the template's
#                     # sidecar on prefix NS--etcd-main, seen, entry OLD[NS], a full snapshot
#                     # FULL[NS] there; alice (namespace edit rights) moves each Etcd's
#                     # spec.backup.store: m0's prefix to moved/m0-etcd-main, m1's to the JSON
#                     # object M1STORE (default {"prefix":"moved/m1-etcd-main"}); etcd-druid
#                     # reconciles m0's move (template m0 moved/m0-etcd-main, roll m0)
#   storemove_alice_template WHAT JQ TEMPLATE-ARGS...
#                     # m1 self-service: alice disables component protection, etcd-druid builds
#                     # template m1 TEMPLATE-ARGS..., then alice replaces the sidecar container by
#                     # it with the jq filter JQ applied (WHAT names it when refused: "held: M1:
#                     # alice's template with WHAT refused"); the pods roll
#   storemove_pending NS
#                     # NS's old entry OLD[NS] is PendingDeletion (the test fails otherwise)
#   storemove_held REGEX
#                     # m1's old entry is held (its first condition's message matches the
#                     # grep -E REGEX) or deleted within 60 s
#   storemove_gone NS [AFTER]
#                     # NS's old entry OLD[NS] is deleted within 90 s (AFTER, say "after the
#                     # reconcile", names the step in the failure)
#   storemove_m0_first REGEX
#                     # the grace is cut to 2s: m0's old entry is deleted, m1's held (REGEX as
#                     # for storemove_held) or deleted; holes=0; the control: FULL[m0] deleted
#                     # with m0's entry (ok: control: M0: ...)
#   storemove_judge WRITES OLDSTORE HOW
#                     # prints HOLE (and counts it in holes) when FULL[m1] is gone from s3rver's
#                     # listing while m1's members write WRITES, the old store OLDSTORE (HOW, in
#                     # parentheses, tells how they do), else held
#   storemove_back AFTER TEMPLATE-ARGS...
#                     # etcd-druid builds template m1 TEMPLATE-ARGS..., the pods roll; m1's old
#                     # entry is deleted within 90 s, and FULL[m1] with it (AFTER names the step)
#   storemove_real_verdict HOW FAILURE
#                     # the rest of a script whose m1 template the real sidecar is asked about:
#                     # m0's real sidecar writes moved/m0-etcd-main (the control), both old
#                     # entries pending, the grace cut to 2s, m1's entry held or gone, then
#                     # storemove_judge on real_prefix m1 (HOW: how the sidecar gets there);
#                     # storemove_back to etcd-druid's template; m0's old entry and FULL[m0]
#                     # deleted; warden-controller stopped; with a hole, FAIL: N hole(s): FAILURE
#                     # and exit 1
#   sidecar_prefix NS # the --store-prefix= of the template's backup-restore container's args
#   real_prefix NS    # the prefix the real sidecar ($WARDEN_ETCDBRCTL) writes when run with
#                     # the stored template's command + args, $(NAME) expanded from its env as
#                     # the kubelet does
#   template NS PREFIX [CONTAINER]
#                     # etcd-druid builds its sidecar for that store (container default
#                     # etcd-bucket) into the template, with no command
#   roll NS           # the StatefulSet controller rolls the members onto the template

export SNAP_BUCKET=etcd-bucket
# shellcheck source=snapshot.sh
. "$(dirname "${BASH_SOURCE[0]}")/snapshot.sh"
# shellcheck source=controller.sh
. "$(dirname "${BASH_SOURCE[0]}")/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
snap_need_etcdbrctl # the oracle: where the real sidecar writes
ksim_on_exit snap_cleanups

sidecar_prefix() {
    kc -n "$1" get statefulset etcd-main -o json | jq -r '.spec.template.spec.containers[]
        | select(.name == "backup-restore") | .args | map(select(startswith("--store-prefix=")))[0]
        | ltrimstr("--store-prefix=")'
}

real_prefix() {
    local -a argv
    mapfile -t argv < <(kc -n "$1" get statefulset etcd-main -o json | jq -r '.spec.template.spec.containers[]
        | select(.name == "backup-restore")
        | ((.env // []) | map(select(.value != null) | {key: .name, value: .value}) | from_entries) as $e
        | ((.command // ["/etcdbrctl"]) + (.args // []))[1:][]
        | gsub("\\$\\((?<n>[A-Za-z_][A-Za-z0-9_.-]*)\\)"; if $e[.n] != null then $e[.n] else "$(" + .n + ")" end)')
    STORAGE_CONTAINER=etcd-bucket snap_sidecar_config "${argv[@]}" |
        sed -n 's/.*\\n  prefix: \([^\\]*\)\/v2\\n.*/\1/p'
}

template() {
    local c
    c=$(kc -n "$1" get statefulset etcd-main -o json | jq -c --arg p "$2" --arg k "${3:-etcd-bucket}" '.spec.template.spec.containers[1]
        | .args = ["server", "--server-port=8080", "--storage-provider=S3", "--store-prefix=\($p)"]
        | .env = [{name: "STORAGE_CONTAINER", value: $k}] | del(.command)')
    kc_druid -n "$1" patch statefulset etcd-main --type json \
        -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/1\",\"value\":$c}]" >/dev/null ||
        ctl_fail "$1: etcd-druid cannot build its sidecar's store into the template"
}

roll() {
    kc -n "$1" delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$1: cannot roll the pods"
    ksim_wait 10 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $1 get pods -o name)\" ]" || ctl_fail "$1: the pods did not go"
    druid_pods "$1" etcd-main 3
}

storemove_stage() {
    local m1store=${1:-'{"prefix":"moved/m1-etcd-main"}'} ns mv out
    snap_s3_start
    CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
    ctl_s3_bucket_secret
    ctl_s3_bucket 1h
    ctl_jobs_serve etcd-warden 600
    declare -gA FULL OLD
    for ns in m0 m1; do
        druid_etcd $ns etcd-main
        ctl_backup_secret $ns ||
            ctl_fail "cannot create the backup Secret in $ns"
        template $ns $ns--etcd-main
        roll $ns
    done
    ctl_start
    for ns in m0 m1; do
        ksim_wait 30 ctl_has_entry $ns etcd-main || ctl_fail "no BackupEntry for $ns/etcd-main"
        ctl_members_seen $ns etcd-main
        OLD[$ns]=$(ctl_entry_of $ns etcd-main)
    done
    sleep 1 # the sidecar uploads after the members were seen (object times have seconds)
    snap_fixture "$SNAP_WORK/full" 4096 Full.gz
    for ns in m0 m1; do
        FULL[$ns]=$ns--etcd-main/v2/Full-00000000-00000100-$(date +%s).gz
        snap_s3 put "${FULL[$ns]}" "$SNAP_WORK/full" >/dev/null || ctl_fail "cannot upload ${FULL[$ns]}"
        snap_s3 ls "$ns--etcd-main/" | grep -qF "${FULL[$ns]}" || ctl_fail "$ns: ${FULL[$ns]} not listed"
    done
    sleep 1 # the move a second later: what lands in its own second may be another writer's
    for ns in m0 m1; do
        mv="{\"prefix\":\"moved/$ns-etcd-main\"}"
        [ $ns = m1 ] && mv=$m1store
        out=$(WH_AS_NS=$ns wh_as alice patch etcd etcd-main --type merge \
            -p "{\"spec\":{\"backup\":{\"store\":$mv}}}" 2>&1) ||
            ctl_fail "$ns: alice cannot move the store: $out"
    done
    template m0 moved/m0-etcd-main # etcd-druid reconciles m0's move
    roll m0
}

storemove_alice_template() {
    local what=$1 filter=$2 c out
    shift 2
    out=$(WH_AS_NS=m1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= 2>&1) ||
        ctl_fail "m1: alice cannot disable component protection: $out"
    template m1 "$@"
    c=$(kc -n m1 get statefulset etcd-main -o json | jq -c ".spec.template.spec.containers[1] | $filter")
    out=$(WH_AS_NS=m1 wh_as alice patch statefulset etcd-main --type json \
        -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/1\",\"value\":$c}]" 2>&1) ||
        echo "held: M1: alice's template with $what refused: $out"
    roll m1
}

storemove_pending() {
    ksim_wait 30 ctl_entry_phase_is "${OLD[$1]}" PendingDeletion || ctl_fail "$1: ${OLD[$1]} not pending: $(ctl_entry_phase "${OLD[$1]}")"
}

storemove_held() {
    local STOREMOVE_HELD=$1
    held() { kc get backupentry "$1" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null | grep -Eq "$STOREMOVE_HELD"; }
    # m1: its deletion Job is held while the members' template writes the old prefix (or the
    # entry went, and the script's listing says whether its Job deleted the live cluster's snapshot)
    held_or_gone() { held "$1" || ksim_gone backupentry "$1"; }
    ksim_wait 60 held_or_gone "${OLD[m1]}" ||
        ctl_fail "m1: the old entry ${OLD[m1]} neither held nor deleted: $(kc get backupentry "${OLD[m1]}" -o jsonpath='{.status}')"
}

storemove_gone() {
    ksim_wait 90 ksim_gone backupentry "${OLD[$1]}" ||
        ctl_fail "$1: ${2:+$2 }the old entry ${OLD[$1]} was not deleted: $(kc get backupentry "${OLD[$1]}" -o jsonpath='{.status}')"
}

storemove_judge() {
    local left
    left=$(snap_s3 ls "m1--etcd-main/" | tr '\n' ' ')
    if ! grep -qF "${FULL[m1]}" <<<"$left" && [ "$1" = "$2" ]; then
        echo "HOLE: M1: the deletion Job of entry ${OLD[m1]} deleted ${FULL[m1]}, the full snapshot of live Etcd m1/etcd-main, whose members' template still backs up into $1 ($3): the live cluster's backups deleted under it (left: ${left:-nothing})"
        holes=$((holes + 1))
    else echo "held: M1: left under m1--etcd-main/: ${left:-nothing}; the template writes $1; entry ${OLD[m1]}: $(kc get backupentry "${OLD[m1]}" -o jsonpath='{.status.conditions[0].message}')"; fi
}

storemove_back() {
    local after=$1
    shift
    template m1 "$@"
    roll m1
    storemove_gone m1 "$after"
    snap_s3 ls "m1--etcd-main/" | grep -qF "${FULL[m1]}" &&
        ctl_fail "m1: after the reconcile the old prefix's snapshot was not deleted"
    return 0
}

storemove_real_verdict() {
    local ns
    [ "$(real_prefix m0)" = moved/m0-etcd-main ] || ctl_fail "control: the real sidecar of m0's template writes '$(real_prefix m0)'"
    echo "m1: the real sidecar of the stored template writes prefix '$(real_prefix m1)'; the template's args say $(sidecar_prefix m1)"
    for ns in m0 m1; do
        storemove_pending $ns
        echo "$ns: spec prefix moved/$ns-etcd-main; the template's args say $(sidecar_prefix $ns), the real sidecar writes $(real_prefix $ns); old entry ${OLD[$ns]} pending"
    done
    ctl_s3_bucket 2s
    storemove_held 'still write|postponed|blocked'
    holes=0
    storemove_judge "$(real_prefix m1)" m1--etcd-main \
        "$1; spec and args say $(kc -n m1 get etcd etcd-main -o jsonpath='{.spec.backup.store.prefix}')"
    # once etcd-druid's template is back and the pods roll, the held entry's Job runs
    storemove_back "after etcd-druid's template" moved/m1-etcd-main
    [ "$holes" = 0 ] && echo "ok: M1: after etcd-druid's template came back, the old prefix's entry and snapshot deleted"
    # the control M0: a move etcd-druid reconciled; its old entry is deleted once no sidecar in
    # the cluster may write there (m1's template, whose store could not be read, held every
    # deletion meanwhile)
    storemove_gone m0
    snap_s3 ls "m0--etcd-main/" | grep -qF "${FULL[m0]}" &&
        ctl_fail "control: M0: the old prefix's snapshot was not deleted after the move"
    echo "ok: control: M0: a move etcd-druid reconciled: the old prefix's snapshot deleted with its entry"
    ctl_stop
    [ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): $2"; exit 1; }
}

storemove_m0_first() {
    local left
    ctl_s3_bucket 2s
    storemove_gone m0
    storemove_held "$1"
    holes=0
    left=$(snap_s3 ls "m0--etcd-main/" | tr '\n' ' ')
    grep -qF "${FULL[m0]}" <<<"$left" && ctl_fail "control: M0: the old prefix's snapshot was not deleted after the move (left: $left)"
    echo "ok: control: M0: a move etcd-druid reconciled: the old prefix's snapshot deleted with its entry"
}
