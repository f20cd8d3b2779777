#!/usr/bin/env bash
# A live cluster's backups deleted by the BackupEntry of the store its sidecars still write,
# because the members' pod template names the old container with etcdbrctl's --store-container,
# which the sidecar obeys over the env STORAGE_CONTAINER and the deletion hold does not read. On
# kube-sim with warden-webhook, warden-controller, s3rver and the deletion Jobs run (job_exec).
# Issue 29 ("A move is not a deletion"; "one store as the sidecar sees it"; "fail closed").
# docs/backup-entries.md (Deletion blocked): the deletion does not start while the Etcd's
# StatefulSet "names in its template a store overlapping the entry's prefix, or a template whose
# store cannot be read (... an arg or the env missing or given twice ...: fail closed ...)";
# docs/protection.md: with component protection disabled "the pod template may change in any
# way". etcdbrctl (v0.28.4) takes the container from --store-container and reads
# STORAGE_CONTAINER only when the flag is empty.
#   M1. Etcd m1/etcd-main (bucket etcd-bucket; members running, seen; a full snapshot under
#       m1--etcd-main). alice (namespace edit rights) disables component protection, moves
#       spec.backup.store.container to other-bucket (prefix unchanged); the template has
#       etcd-druid's env STORAGE_CONTAINER=other-bucket and args, plus --store-container=etcd-bucket
#       (a flag kept from before); the pods roll. The operator's bucket has a short grace
#       period (2s here): the old entry's Job runs.
#   M0. control: m0/etcd-main moves its prefix with etcd-druid's template only: its old
#       prefix's snapshot is deleted, as documented.
# Oracle: where the real sidecar says it writes ($WARDEN_ETCDBRCTL run with the stored
# template's command + args and env prints its snapstoreConfig container, else the env's) and
# s3rver's listing; what kube-sim stores.
set -uo pipefail
. "$(dirname "$0")/../lib/storemove.sh"
real_container() { # the container the real sidecar writes: its flag, else STORAGE_CONTAINER
    local -a argv
    local js c
    js=$(kc -n "$1" get statefulset etcd-main -o json | jq -c '.spec.template.spec.containers[] | select(.name == "backup-restore")')
    mapfile -t argv < <(jq -r '((.command // ["/etcdbrctl"]) + (.args // []))[1:][]' <<<"$js")
    c=$(snap_sidecar_config "${argv[@]}" | sed -n 's/.*\\n  container: \([^\\]*\)\\n.*/\1/p')
    case $c in '""' | '') jq -r '(.env // [])[] | select(.name == "STORAGE_CONTAINER") | .value' <<<"$js" ;; *) echo "$c" ;; esac
}

storemove_stage '{"container":"other-bucket"}' # etcd-druid reconciles m0's move
# m1: self-service: protection disabled, etcd-druid's template for the new container, and the
# flag --store-container=etcd-bucket kept in its args
storemove_alice_template --store-container '.args += ["--store-container=etcd-bucket"]' m1--etcd-main other-bucket
[ "$(real_container m0)/$(real_prefix m0)" = etcd-bucket/moved/m0-etcd-main ] || ctl_fail "control: the real sidecar of m0's template writes '$(real_container m0)/$(real_prefix m0)'"
echo "m1: the real sidecar of the stored template writes container '$(real_container m1)' prefix '$(real_prefix m1)'; the template's env says $(kc -n m1 get statefulset etcd-main -o json | jq -r '.spec.template.spec.containers[1].env[0].value')"
for ns in m0 m1; do
    storemove_pending $ns
    echo "$ns: spec store $(kc -n $ns get etcd etcd-main -o jsonpath="{.spec.backup.store.container}/{.spec.backup.store.prefix}"); the real sidecar writes $(real_container $ns)/$(real_prefix $ns); old entry ${OLD[$ns]} pending"
done
storemove_m0_first 'still write|postponed|blocked'
storemove_judge "$(real_container m1)/$(real_prefix m1)" etcd-bucket/m1--etcd-main \
    "the real sidecar run with the stored template's args writes there; spec and env say container $(kc -n m1 get etcd etcd-main -o jsonpath='{.spec.backup.store.container}')"
if [ "$holes" = 0 ]; then
    # once etcd-druid's template (no --store-container) is back and the pods roll, the held entry's Job runs
    storemove_back "after etcd-druid's template" m1--etcd-main other-bucket
    echo "ok: M1: after etcd-druid's template came back, the old prefix's entry and snapshot deleted"
fi
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a live cluster's backups deleted while its members' template writes the old container through --store-container"; exit 1; }
echo "attack16_move_store_container: ok"
