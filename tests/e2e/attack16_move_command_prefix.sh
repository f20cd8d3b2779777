#!/usr/bin/env bash
# A live cluster's backups deleted by the BackupEntry of the prefix its sidecars still write,
# because the members' pod template names that prefix in a spelling the sidecar obeys and the
# deletion hold does not read. On kube-sim with warden-webhook, warden-controller, s3rver and
# the deletion Jobs run (job_exec). Issue 29 ("A move is not a deletion"; "fail closed on what
# is not understood"). docs/backup-entries.md (Deletion blocked): the deletion does not start
# while "its StatefulSet ... names in its template a store overlapping the entry's prefix, or a
# template whose store cannot be read (... an arg or the env missing or given twice ...: fail
# closed ...)", and docs/protection.md: with component protection disabled "the pod template may
# change in any way". The container runs its command followed by its args; etcdbrctl (cobra,
# pflag) stops reading flags at "--", so with
#     command: [/etcdbrctl, server, --storage-provider=S3, --store-prefix=<old>, --]
#     args:    [server, --server-port=8080, --storage-provider=S3, --store-prefix=<new>]
# the sidecar writes <old>; etcd-druid's args are positional and ignored.
#   M1. Etcd m1/etcd-main (bucket etcd-bucket; members running, seen; a full snapshot under
#       m1--etcd-main). alice (namespace edit rights) disables component protection, moves
#       spec.backup.store.prefix to moved/m1-etcd-main, and the template gets etcd-druid's args
#       for the new prefix while its container command keeps the old store (say a wrapper
#       command kept from before); the pods roll onto it. The operator's bucket has a short
#       grace period (2s here): the old entry's Job runs.
#   M0. control: m0/etcd-main, the same move, etcd-druid's template only: its old prefix's
#       snapshot is deleted, as documented.
# Oracle: where the real sidecar says it writes ($WARDEN_ETCDBRCTL run with the stored
# template's command + args prints its snapstoreConfig prefix) and s3rver's listing; what
# kube-sim stores (the template, the Etcd live).
set -uo pipefail
. "$(dirname "$0")/../lib/storemove.sh"
storemove_stage # etcd-druid reconciles m0's move
# m1: self-service: protection disabled, the template gets etcd-druid's args for the new prefix
# and a container command that still runs the sidecar on the old one
storemove_alice_template 'the command' '.command = ["/etcdbrctl", "server", "--storage-provider=S3", "--store-prefix=m1--etcd-main", "--"]' \
    moved/m1-etcd-main
storemove_real_verdict "the real sidecar run with the stored template's command + args writes there" \
    "a live cluster's backups deleted while its members' template writes the prefix in a spelling the sidecar obeys"
echo "attack16_move_command_prefix: ok"
