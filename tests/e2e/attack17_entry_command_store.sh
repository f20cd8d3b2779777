#!/usr/bin/env bash
# A deleted Etcd's entry deletes the backups another backup sidecar still writes, when that
# sidecar's store is given in its container's `command` (the kubelet runs command + args, and
# etcdbrctl parses both) rather than in `args`/`env`. On kube-sim with warden-webhook,
# warden-controller, s3rver and the deletion Jobs run (job_exec).
# docs/backup-entries.md (Deletion blocked): no deletion Job starts while "any other backup
# sidecar of the cluster may write the prefix: a StatefulSet (its pod template) or a pod (its
# own spec) of any namespace ... that runs a container named backup-restore whose store, read as
# above, overlaps the prefix, or whose store cannot be read or claimed (fail closed ...)"; only
# "a sidecar that names no store at all (none of the store args and no STORAGE_CONTAINER)
# writes nothing". A sidecar whose command names the store does name one.
#   C1. a bare pod w/writer-1 (Running) whose backup-restore has
#       command: [/etcdbrctl, server, --storage-provider=S3, --store-prefix=a1--etcd-main,
#                 --store-container=etcd-bucket], no args, no env.
#   C2. a bare pod w/writer-2 (Running) whose backup-restore runs the same through a shell:
#       command: [sh, -c, "exec /etcdbrctl server ... --store-prefix=a2--etcd-main ..."].
#   C3. a StatefulSet w/writer-3 (kube-sim runs no pods) whose template's backup-restore is C1's
#       on a3--etcd-main.
#   C4. a bare pod w/writer-4 (Running): the store in command, env STORAGE_CONTAINER, no args
#       (an arg missing: "cannot be read", must hold).
#   C5. a bare pod w/writer-5 in phase Pending (scheduled, its containers starting) whose
#       backup-restore is etcd-druid's args form on a5--etcd-main.
#   C6. a bare pod w/writer-6 (Running, args form, a5's shape on a6--etcd-main) being deleted:
#       a finalizer holds it with its deletionTimestamp set; its containers run until the
#       kubelet stops them (its grace period) and the finalizer goes.
#   C7. a bare pod w/writer-7 (Running): the store in command (C1's), args [--server-port=8080]
#       (none of the store args), no env.
#   C8. a bare pod w/writer-8 (Running): command [sh, -c, "exec /etcdbrctl server
#       --storage-provider=S3 --store-prefix=a8--etcd-main --store-container=etcd-bucket"],
#       args [sidecar] ($0 of the shell), no env.
#   C9. a bare pod w/writer-9 (Running) whose backup-restore is a native sidecar: an init
#       container with restartPolicy: Always (it runs for the pod's life), etcd-druid's args on
#       a9--etcd-main; its main container is busybox.
#   A0. control: a0/etcd-main deleted while nothing writes a0--etcd-main: its snapshot deleted.
# Oracle: s3rver's listing under each prefix; where the real sidecar ($WARDEN_ETCDBRCTL, when
# given) says it writes when run with C1's command: its snapstoreConfig.
set -uo pipefail
export SNAP_BUCKET=etcd-bucket # druid_etcd's container
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ksim_on_exit snap_cleanups

# The real sidecar, run with the command of C1, writes container etcd-bucket, prefix <p>/v2.
if [ -x "${WARDEN_ETCDBRCTL:-}" ]; then
    # it prints its config at start and runs on: the first line read ends it (a bound, scaled)
    cfg=$(snap_sidecar_config server --storage-provider=S3 --store-prefix=a1--etcd-main \
        --store-container=etcd-bucket)
    grep -q 'container: etcd-bucket\\n.*prefix: a1--etcd-main/v2' <<<"$cfg" ||
        ksim_fail "the real sidecar with C1's command does not write etcd-bucket/a1--etcd-main: $cfg"
    echo "oracle: the real sidecar with C1's command: $(grep -o 'snapstoreConfig:[^"]*' <<<"$cfg" | cut -c1-160)"
fi

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_s3_bucket 1h
ctl_jobs_serve etcd-warden 600

cmd_sidecar() { # PREFIX: the store in command only
    printf '{"name":"backup-restore","image":"etcdbrctl","command":["/etcdbrctl","server","--storage-provider=S3","--store-prefix=%s","--store-container=etcd-bucket"]}' "$1"
}
sh_sidecar() { # PREFIX: the store in a shell's command line
    printf '{"name":"backup-restore","image":"etcdbrctl","command":["sh","-c","exec /etcdbrctl server --storage-provider=S3 --store-prefix=%s --store-container=etcd-bucket"]}' "$1"
}
env_sidecar() { # PREFIX: the store in command, the container in env
    printf '{"name":"backup-restore","image":"etcdbrctl","command":["/etcdbrctl","server","--storage-provider=S3","--store-prefix=%s"],"env":[{"name":"STORAGE_CONTAINER","value":"etcd-bucket"}]}' "$1"
}
cmd_port_sidecar() { # PREFIX: the store in command, a port in args
    printf '{"name":"backup-restore","image":"etcdbrctl","command":["/etcdbrctl","server","--storage-provider=S3","--store-prefix=%s","--store-container=etcd-bucket"],"args":["--server-port=8080"]}' "$1"
}
sh_arg_sidecar() { # PREFIX: the store in a shell's command line, an arg for the shell
    printf '{"name":"backup-restore","image":"etcdbrctl","command":["sh","-c","exec /etcdbrctl server --storage-provider=S3 --store-prefix=%s --store-container=etcd-bucket"],"args":["sidecar"]}' "$1"
}
args_sidecar() { # PREFIX: etcd-druid's rendering
    printf '{"name":"backup-restore","image":"etcdbrctl","args":["server","--server-port=8080","--storage-provider=S3","--store-prefix=%s"],"env":[{"name":"STORAGE_CONTAINER","value":"etcd-bucket"}]}' "$1"
}
bare_pod() { # NS NAME CONTAINER-JSON PHASE (FIN=finalizer)
    local fin=""
    [ -z "${FIN:-}" ] || fin=",\"finalizers\":[\"$FIN\"]"
    kc -n "$1" create -f - >/dev/null <<JSON || ctl_fail "cannot create pod $1/$2"
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2"$fin},
 "spec":{"containers":[{"name":"main","image":"busybox"},$3]}}
JSON
    kc -n "$1" patch pod "$2" --subresource=status --type merge -p "{\"status\":{\"phase\":\"$4\"}}" >/dev/null ||
        ctl_fail "cannot set the phase of pod $1/$2"
}
native_pod() { # NS NAME PREFIX: backup-restore as an init container with restartPolicy Always
    local c
    c=$(args_sidecar "$3" | jq -c '. + {restartPolicy: "Always"}')
    kc -n "$1" create -f - >/dev/null <<JSON || ctl_fail "cannot create pod $1/$2"
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2"},
 "spec":{"initContainers":[$c],"containers":[{"name":"main","image":"busybox"}]}}
JSON
    kc -n "$1" patch pod "$2" --subresource=status --type merge -p '{"status":{"phase":"Running"}}' >/dev/null ||
        ctl_fail "cannot set the phase of pod $1/$2"
}
bare_sts() { # NS NAME CONTAINER-JSON
    kc -n "$1" create -f - >/dev/null <<JSON || ctl_fail "cannot create StatefulSet $1/$2"
{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"$2"},
 "spec":{"replicas":1,"serviceName":"$2","selector":{"matchLabels":{"app":"$2"}},
  "template":{"metadata":{"labels":{"app":"$2"}},
   "spec":{"containers":[{"name":"main","image":"busybox"},$3]}}}}
JSON
}

NSS="a0 a1 a2 a3 a4 a5 a6 a7 a8 a9"
declare -A FULL ENTRY
for ns in $NSS; do
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

# control first: a sidecar whose store cannot be read holds every deletion, so the writers
# come after it
kc -n a0 delete etcd etcd-main --wait=false >/dev/null || ctl_fail "a0: cannot delete the Etcd"
ksim_wait 30 ctl_entry_phase_is "${ENTRY[a0]}" PendingDeletion || ctl_fail "a0: ${ENTRY[a0]} not pending: $(ctl_entry_phase "${ENTRY[a0]}")"
ctl_s3_bucket 2s
ksim_wait 90 ksim_gone backupentry "${ENTRY[a0]}" ||
    ctl_fail "control: a0: the entry ${ENTRY[a0]} was not deleted: $(kc get backupentry "${ENTRY[a0]}" -o jsonpath='{.status}')"
left0=$(snap_s3 ls "a0--etcd-main/" | tr '\n' ' ')
grep -qF "${FULL[a0]}" <<<"$left0" && ctl_fail "control: A0: the deleted Etcd's snapshot was not deleted (left: $left0)"
echo "ok: control: A0: nothing runs on a0--etcd-main: its snapshot deleted with its entry"

declare -A WHO=([a1]="bare pod w/writer-1 (store in command: [/etcdbrctl, server, --storage-provider=S3, --store-prefix=a1--etcd-main, --store-container=etcd-bucket])"
    [a2]="bare pod w/writer-2 (store in command: [sh, -c, 'exec /etcdbrctl server ... --store-prefix=a2--etcd-main ...'])"
    [a3]="StatefulSet w/writer-3 (its template: store in command)"
    [a4]="bare pod w/writer-4 (store in command, STORAGE_CONTAINER in env, no args)"
    [a5]="bare pod w/writer-5 (phase Pending, etcd-druid's args)"
    [a6]="bare pod w/writer-6 (Running, terminating: deletionTimestamp set, a finalizer holds it)"
    [a7]="bare pod w/writer-7 (store in command, args [--server-port=8080])"
    [a8]="bare pod w/writer-8 (store in a shell command line, args [sidecar])"
    [a9]="bare pod w/writer-9 (backup-restore a native sidecar: init container, restartPolicy Always)")
held() { kc get backupentry "$1" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null | grep -E 'postponed|blocked' | grep -qF "$2 "; }
held_or_gone() { held "$1" "$2" || ksim_gone backupentry "$1"; }
holes=0
# One writer at a time (a sidecar whose store cannot be read holds every deletion, and would
# hide the others): the writer, its Etcd deleted, the entry held or gone, the listing judged,
# the writer removed.
for ns in a1 a2 a3 a4 a5 a6 a7 a8 a9; do
    case $ns in
    a1) bare_pod w writer-1 "$(cmd_sidecar a1--etcd-main)" Running
        kc -n w get pod writer-1 -o json | jq -e '.spec.containers[1].command | index("--store-prefix=a1--etcd-main")' >/dev/null ||
            ctl_fail "writer-1 is not stored as set: $(kc -n w get pod writer-1 -o json | jq -c .spec.containers[1])" ;;
    a2) bare_pod w writer-2 "$(sh_sidecar a2--etcd-main)" Running ;;
    a3) bare_sts w writer-3 "$(cmd_sidecar a3--etcd-main)" ;;
    a4) bare_pod w writer-4 "$(env_sidecar a4--etcd-main)" Running ;;
    a5) bare_pod w writer-5 "$(args_sidecar a5--etcd-main)" Pending ;;
    a7) bare_pod w writer-7 "$(cmd_port_sidecar a7--etcd-main)" Running ;;
    a8) bare_pod w writer-8 "$(sh_arg_sidecar a8--etcd-main)" Running ;;
    a9) native_pod w writer-9 a9--etcd-main
        kc -n w get pod writer-9 -o json | jq -e '.spec.initContainers[0] | .name == "backup-restore" and .restartPolicy == "Always"' >/dev/null ||
            ctl_fail "writer-9 is not stored as set: $(kc -n w get pod writer-9 -o json | jq -c .spec)" ;;
    a6) FIN=example.com/keep bare_pod w writer-6 "$(args_sidecar a6--etcd-main)" Running
        kc -n w delete pod writer-6 --wait=false >/dev/null || ctl_fail "cannot delete pod w/writer-6"
        [ -n "$(kc -n w get pod writer-6 -o jsonpath='{.metadata.deletionTimestamp}')" ] ||
            ctl_fail "pod w/writer-6 is not terminating: $(kc -n w get pod writer-6 -o json | jq -c .metadata)" ;;
    esac
    kc -n $ns delete etcd etcd-main --wait=false >/dev/null || ctl_fail "$ns: cannot delete the Etcd"
    # judged once the entry is gone or held for the writer (its own members, which the
    # garbage collector removes after the Etcd, hold it first)
    ksim_wait 60 held_or_gone "${ENTRY[$ns]}" "w/writer-${ns#a}" ||
        ctl_fail "$ns: the entry ${ENTRY[$ns]} neither held for w/writer-${ns#a} nor deleted: $(kc get backupentry "${ENTRY[$ns]}" -o jsonpath='{.status}')"
    left=$(snap_s3 ls "$ns--etcd-main/" | tr '\n' ' ')
    if ! grep -qF "${FULL[$ns]}" <<<"$left"; then
        echo "HOLE: ${ns^^}: the deletion Job of entry ${ENTRY[$ns]} deleted ${FULL[$ns]} while ${WHO[$ns]} runs a backup sidecar writing there (left: ${left:-nothing})"
        holes=$((holes + 1))
    else
        echo "held: ${ns^^}: ${WHO[$ns]}: left under $ns--etcd-main/: $left; entry ${ENTRY[$ns]}: $(kc get backupentry "${ENTRY[$ns]}" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null | cut -c1-220)"
    fi
    case $ns in
    a3) kc -n w delete statefulset writer-3 --wait=false >/dev/null ;;
    a6) kc -n w patch pod writer-6 --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null ;;
    *) kc -n w delete pod "writer-${ns#a}" --wait=false >/dev/null ;;
    esac
    ksim_wait 30 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n w get pod,statefulset -o name | grep -q 'writer-${ns#a}\$'" ||
        ctl_fail "$ns: the writer did not go"
done
ctl_stop
if [ "$holes" -gt 0 ]; then
    echo "FAIL: $holes hole(s): an entry is deleted while a backup sidecar whose store is in its command writes its prefix"
    exit 1
fi
echo "attack17_entry_command_store: ok"
