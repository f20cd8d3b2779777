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
. "$(dirname "$0")/../lib/storemove.sh"
storemove_stage # etcd-druid reconciles m0's move
# m1: self-service: protection disabled, the template's sidecar on $(BR_PREFIX), the old prefix
storemove_alice_template '--store-prefix=$(BR_PREFIX)' '.args |= map(if startswith("--store-prefix=") then "--store-prefix=$(BR_PREFIX)" else . end)
    | .env += [{name: "BR_PREFIX", value: "m1--etcd-main"}]' moved/m1-etcd-main
storemove_real_verdict "the real sidecar run with the stored template's args, \$(BR_PREFIX) expanded, writes there" \
    "a live cluster's backups deleted while its members' template writes the prefix through \$(NAME) in its args"
echo "attack16_move_arg_expansion: ok"
