#!/usr/bin/env bash
# A live cluster's backups deleted by the BackupEntry of the prefix its sidecars still write,
# because the members' pod template names that prefix through $(NAME), which the kubelet
# expands in a container's args from its env and the deletion hold reads literally. On kube-sim
# with warden-webhook, warden-controller, s3rver and the deletion Jobs run (job_exec). Issue 29
# ("A move is not a deletion"; "one store as the sidecar sees it"; "fail closed").
# docs/backup-entries.md (Deletion blocked): the deletion does not start while the Etcd's
# StatefulSet "names in its template a store overlapping the entry's prefix, or a template whose
# store cannot be read (...: fail closed ...)"; docs/protection.md: with component protection
# disabled "the pod template may change in any way".
#   M1. Etcd m1/etcd-main (bucket etcd-bucket; members running, seen; a full snapshot under
#       m1--etcd-main). alice (namespace edit rights) disables component protection, moves
#       spec.backup.store.prefix to moved/m1-etcd-main; the template's sidecar gets
#       --store-prefix=$(BR_PREFIX) with env BR_PREFIX=m1--etcd-main (the old prefix kept in a
#       variable); the pods roll. The operator's bucket has a short grace period (2s here): the
#       old entry's Job runs.
#   M0. control: m0/etcd-main, the same move, etcd-druid's template only: its old prefix's
#       snapshot is deleted, as documented.
# Oracle: where the real sidecar says it writes ($WARDEN_ETCDBRCTL run with the stored
# template's command + args, $(NAME) expanded from its env as the kubelet does, prints its
# snapstoreConfig prefix) and s3rver's listing; what kube-sim stores.
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

sidecar_prefix() {
    kc -n "$1" get statefulset etcd-main -o json | jq -r '.spec.template.spec.containers[]
        | select(.name == "backup-restore") | .args | map(select(startswith("--store-prefix=")))[0]
        | ltrimstr("--store-prefix=")'
}
# the prefix the real sidecar writes when run with the stored template's command + args
real_prefix() {
    local -a argv
    mapfile -t argv < <(kc -n "$1" get statefulset etcd-main -o json | jq -r '.spec.template.spec.containers[]
        | select(.name == "backup-restore")
        | ((.env // []) | map(select(.value != null) | {key: .name, value: .value}) | from_entries) as $e
        | ((.command // ["/etcdbrctl"]) + (.args // []))[1:][]
        | gsub("\\$\\((?<n>[A-Za-z_][A-Za-z0-9_.-]*)\\)"; if $e[.n] != null then $e[.n] else "$(" + .n + ")" end)')
    (cd "$SNAP_WORK" && STORAGE_CONTAINER=etcd-bucket timeout 3 "$WARDEN_ETCDBRCTL" "${argv[@]}" 2>&1) |
        sed -n 's/.*\\n  prefix: \([^\\]*\)\/v2\\n.*/\1/p' | head -1
}
template() { # NS PREFIX: etcd-druid builds its sidecar for that store into the template
    local c
    c=$(kc -n "$1" get statefulset etcd-main -o json | jq -c --arg p "$2" '.spec.template.spec.containers[1]
        | .args = ["server", "--server-port=8080", "--storage-provider=S3", "--store-prefix=\($p)"]
        | .env = [{name: "STORAGE_CONTAINER", value: "etcd-bucket"}] | del(.command)')
    kc_druid -n "$1" patch statefulset etcd-main --type json \
        -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/1\",\"value\":$c}]" >/dev/null ||
        ctl_fail "$1: etcd-druid cannot build its sidecar's store into the template"
}
roll() { # NS: the StatefulSet controller rolls the members onto the template
    kc -n "$1" delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$1: cannot roll the pods"
    ksim_wait 10 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $1 get pods -o name)\" ]" || ctl_fail "$1: the pods did not go"
    druid_pods "$1" etcd-main 3
}

declare -A FULL OLD
for ns in m0 m1; do
    druid_etcd $ns etcd-main
    kc -n $ns create secret generic etcd-backup --from-literal=accessKeyID=S3RVER >/dev/null ||
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
    out=$(WH_AS_NS=$ns wh_as alice patch etcd etcd-main --type merge \
        -p "{\"spec\":{\"backup\":{\"store\":{\"prefix\":\"moved/$ns-etcd-main\"}}}}" 2>&1) ||
        ctl_fail "$ns: alice cannot move the store: $out"
done
template m0 moved/m0-etcd-main # etcd-druid reconciles m0's move
roll m0
# m1: self-service: protection disabled, the template's sidecar on $(BR_PREFIX), the old prefix
out=$(WH_AS_NS=m1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= 2>&1) ||
    ctl_fail "m1: alice cannot disable component protection: $out"
template m1 moved/m1-etcd-main
c=$(kc -n m1 get statefulset etcd-main -o json | jq -c '.spec.template.spec.containers[1]
    | .args |= map(if startswith("--store-prefix=") then "--store-prefix=$(BR_PREFIX)" else . end)
    | .env += [{name: "BR_PREFIX", value: "m1--etcd-main"}]')
out=$(WH_AS_NS=m1 wh_as alice patch statefulset etcd-main --type json \
    -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/1\",\"value\":$c}]" 2>&1) ||
    echo "held: M1: alice's template with --store-prefix=\$(BR_PREFIX) refused: $out"
roll m1
[ "$(real_prefix m0)" = moved/m0-etcd-main ] || ctl_fail "control: the real sidecar of m0's template writes '$(real_prefix m0)'"
echo "m1: the real sidecar of the stored template writes prefix '$(real_prefix m1)'; the template's args say $(sidecar_prefix m1)"
for ns in m0 m1; do
    ksim_wait 30 ctl_entry_phase_is "${OLD[$ns]}" PendingDeletion || ctl_fail "$ns: ${OLD[$ns]} not pending: $(ctl_entry_phase "${OLD[$ns]}")"
    echo "$ns: spec prefix moved/$ns-etcd-main; the template's args say $(sidecar_prefix $ns), the real sidecar writes $(real_prefix $ns); old entry ${OLD[$ns]} pending"
done
ctl_s3_bucket 2s
held() { kc get backupentry "$1" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null | grep -Eq 'still write|postponed|blocked'; }
# m1: its deletion Job is held while the members' template writes the old prefix (or the entry
# went, and the listing below says whether its Job deleted the live cluster's snapshot)
held_or_gone() { held "$1" || ksim_gone backupentry "$1"; }
ksim_wait 60 held_or_gone "${OLD[m1]}" ||
    ctl_fail "m1: the old entry ${OLD[m1]} neither held nor deleted: $(kc get backupentry "${OLD[m1]}" -o jsonpath='{.status}')"
holes=0
for ns in m1; do
    left=$(snap_s3 ls "$ns--etcd-main/" | tr '\n' ' ')
    writes=$(real_prefix $ns)
    if ! grep -qF "${FULL[$ns]}" <<<"$left" && [ "$writes" = "$ns--etcd-main" ]; then
        echo "HOLE: M1: the deletion Job of entry ${OLD[$ns]} deleted ${FULL[$ns]}, the full snapshot of live Etcd m1/etcd-main, whose members' template still backs up into $writes (the real sidecar run with the stored template's args, \$(BR_PREFIX) expanded, writes there; spec and args say $(kc -n m1 get etcd etcd-main -o jsonpath='{.spec.backup.store.prefix}')): the live cluster's backups deleted under it (left: ${left:-nothing})"
        holes=$((holes + 1))
    else echo "held: M1: left under $ns--etcd-main/: ${left:-nothing}; the template writes $writes; entry ${OLD[$ns]}: $(kc get backupentry "${OLD[$ns]}" -o jsonpath='{.status.conditions[0].message}')"; fi
done
# once etcd-druid's template (no $(BR_PREFIX)) is back and the pods roll, the held entry's Job runs
template m1 moved/m1-etcd-main
roll m1
ksim_wait 90 ksim_gone backupentry "${OLD[m1]}" ||
    ctl_fail "m1: after etcd-druid's template the old entry ${OLD[m1]} was not deleted: $(kc get backupentry "${OLD[m1]}" -o jsonpath='{.status}')"
snap_s3 ls "m1--etcd-main/" | grep -qF "${FULL[m1]}" &&
    ctl_fail "m1: after the reconcile the old prefix's snapshot was not deleted"
[ "$holes" = 0 ] && echo "ok: M1: after etcd-druid's template came back, the old prefix's entry and snapshot deleted"
# the control M0: a move etcd-druid reconciled; its old entry is deleted once no sidecar in
# the cluster may write there (m1's template, whose store could not be read, held every
# deletion meanwhile)
ksim_wait 90 ksim_gone backupentry "${OLD[m0]}" ||
    ctl_fail "m0: the old entry ${OLD[m0]} was not deleted: $(kc get backupentry "${OLD[m0]}" -o jsonpath='{.status}')"
snap_s3 ls "m0--etcd-main/" | grep -qF "${FULL[m0]}" &&
    ctl_fail "control: M0: the old prefix's snapshot was not deleted after the move"
echo "ok: control: M0: a move etcd-druid reconciled: the old prefix's snapshot deleted with its entry"
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a live cluster's backups deleted while its members' template writes the prefix through \$(NAME) in its args"; exit 1; }
echo "attack16_move_arg_expansion: ok"
