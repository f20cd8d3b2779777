# shellcheck shell=bash
# Etcds re-created from a backup and being restored, on kube-sim with warden-webhook and
# warden-controller: tests/lib/controller.sh sourced, ctl_stage (and ctl_start) done. The
# restoring label and its suspension as the attack scripts judge them.
#
#   restoring_ns NS                  # namespace NS (the scripts' $NS); A runs kubectl there as
#                                    # alice (namespace editor), D as etcd-druid, G as gardenlet
#                                    # (an identity the webhook does not trust)
#   restoring_manifest NAME [with-label]   # Etcd NAME in $NS as a restore re-creates it (the
#                                    # status-backup-exists mark, gardenlet's labels and
#                                    # annotations; with-label: the restoring label in it too)
#   restoring_etcd NAME [with-label] # apply it, wait until it is restoring with progress
#   new_name                         # e=etcd-<next number>
#   labelled NAME | has_progress NAME | ended_event NAME    # the restoring label, its progress
#                                    # annotation, the event RestoreEndedByHand
#   judge TAG NAME OUT               # the restore of NAME must go on: prints "held: TAG", else
#                                    # "HOLE: TAG ..." and counts it in holes
#   ts                               # the time now, RFC 3339 with nanoseconds
#   restoring_recreate NS SPEC MEMBERS HIBERNATE   # below
#   restoring_progress NS            # wait for its restore's progress annotation
#   restoring_sleeper NS             # namespace NS with etcd-main re-created hibernated
#                                    # (hibernate=true, spec.replicas 3), its components restored
#                                    # at 0 replicas, the restore waiting for its status backup

n=0
holes=0

restoring_ns() {
    NS=$1
    kc create namespace "$NS" >/dev/null || ctl_fail "cannot create namespace $NS"
}
A() { WH_AS_NS=$NS wh_as alice "$@"; }
D() { kc_druid -n "$NS" "$@"; }
G() { kc -n "$NS" "$@"; }

restoring_manifest() {
    local lbl=""
    [ "${2:-}" = with-label ] && lbl=', etcd-warden.io/restoring: ""'
    cat <<EOT
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: $1
  namespace: $NS
  labels: {role: main, gardener.cloud/role: controlplane$lbl}
  annotations: {etcd-warden.io/status-backup-exists: "true", gardener.cloud/operation: reconcile,
    gardener.cloud/timestamp: "2026-11-30T20:00:00.000000001Z"}
spec: {replicas: 3, labels: {app: etcd}, etcd: {}, backup: {store: {prefix: $NS--$1, container: bkt, provider: S3}}}
EOT
}

labelled() { kc -n "$NS" get etcd "$1" -o json | jq -e '.metadata.labels | has("etcd-warden.io/restoring")' >/dev/null; }
has_progress() { [ -n "$(jp "$NS" "etcd/$1" '{.metadata.annotations.etcd-warden\.io/restore-progress}')" ]; }
ended_event() { ctl_events "$NS" "$1" | grep -q 'RestoreEndedByHand'; }

restoring_etcd() {
    restoring_manifest "$@" | kc apply -f - >/dev/null || ctl_fail "cannot create $NS/$1"
    ksim_wait 10 wh_is_restoring "$NS" "$1" || ctl_fail "$1 is not restoring"
    ksim_wait 20 has_progress "$1" || ctl_fail "no restore progress on $1"
}

# shellcheck disable=SC2034 # e: the Etcd the calling script acts on next
new_name() { n=$((n + 1)); e=etcd-$n; }
ts() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }

judge() {
    local tag=$1 name=$2 out=$3 why=""
    sleep 1.5 # the controller's turn (bounded: it acts within a second on a change)
    labelled "$name" || why="the restoring label is gone ($(jp "$NS" "etcd/$name" '{.metadata.labels}'))"
    has_progress "$name" || why="$why; restore-progress removed"
    ended_event "$name" && why="$why; event: $(ctl_events "$NS" "$name" | grep RestoreEndedByHand | head -1)"
    if [ -n "$why" ]; then
        echo "HOLE: $tag: the restore of $NS/$name ended: ${why#; }; the request printed: $(tr '\n' ' ' <<<"$out" | head -c 240)"
        holes=$((holes + 1))
    else
        echo "held: $tag: $(tr '\n' ' ' <<<"$out" | head -c 240)"
    fi
}

# Etcd NS/etcd-main re-created from a backup (spec.replicas SPEC; HIBERNATE "true" adds
# etcd-warden.io/hibernate=true), its components restored with MEMBERS replicas, restoring.
#   restoring_recreate NS SPEC MEMBERS HIBERNATE
restoring_recreate() {
    local ns=$1 spec=$2 members=$3 hib="" uid
    [ "$4" = true ] && hib=', etcd-warden.io/hibernate: "true"'
    kc create namespace "$ns" >/dev/null || ctl_fail "cannot create namespace $ns"
    kc apply -f - >/dev/null <<EOT || ctl_fail "cannot re-create $ns/etcd-main"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-main
  namespace: $ns
  labels: {app: etcd-statefulset, role: main}
  annotations: {etcd-warden.io/status-backup-exists: "true"$hib, gardener.cloud/operation: reconcile}
spec:
  replicas: $spec
  labels: {app: etcd-statefulset, role: main}
  etcd: {clientPort: 2379, serverPort: 2380, quota: 8Gi}
  backup: {port: 8080, fullSnapshotSchedule: "0 */24 * * *", store: {container: etcd-bucket, prefix: $ns--etcd-main, provider: S3, secretRef: {name: etcd-backup}}}
EOT
    ksim_wait 10 wh_is_restoring "$ns" etcd-main || ctl_fail "$ns/etcd-main is not restoring"
    uid=$(jp "$ns" etcd/etcd-main '{.metadata.uid}')
    druid_components "$ns" etcd-main "$uid" "$members" | kc -n "$ns" create -f - >/dev/null ||
        ctl_fail "$ns: the components could not be restored"
    [ "$(jp "$ns" sts/etcd-main '{.spec.replicas}')" = "$members" ] ||
        ctl_fail "$ns: the StatefulSet is not at $members"
}

# the restore's progress annotation on NS/etcd-main within 20 s, else ctl_fail
restoring_progress() {
    ksim_wait 20 bash -c "kubectl --kubeconfig '$KUBECONFIG' -n $1 get etcd etcd-main -o jsonpath='{.metadata.annotations}' | grep -q restore-progress" ||
        ctl_fail "$1: no restore progress"
}

restoring_sleeper() {
    restoring_recreate "$1" 3 0 true
    restoring_progress "$1"
}
