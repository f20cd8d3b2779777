# shellcheck shell=bash
# Helpers of the e2e scripts in which a hibernated Etcd's final snapshot lies elsewhere than the
# store it names (tests/e2e/attack14_sleep_store_lag.sh, attack15_sleep_local_hostpath.sh).
# Source after controller.sh:
#
#   stored_rev URL         # (printed) the last revision backup-double at URL stored (code 200)
#   last_write URL         # (printed) the revision of the last write backup-double acknowledged
#   gone NS PVC            # true when PVC is deleted or being deleted
#   sleep_claims NS        # member claims etcd-main-etcd-main-{0,1,2} of NS, as etcd-druid's
#                          # StatefulSet makes them
#   sleep_double NS        # backup-double for NS/etcd-main (its URL in URL[NS]), 5 writes
#                          # acknowledged
#   sleep_hibernated NS WHERE
#                          # NS/etcd-main Hibernated (within 60 s) at 0 replicas; SNAP_AT[NS]
#                          # is what `WHERE NS` prints (where the sidecars wrote the final
#                          # snapshot); its pods deleted; every acknowledged write (LAST_WRITE)
#                          # is in the final snapshot (STORED_REV)
#   sleep_free_claims NS   # alice deletes the 3 member claims of NS: CLAIMS_OUT is kubectl's
#                          # answer, CLAIMS_GONE how many are gone or deleting

declare -A URL SNAP_AT

stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}

sleep_claims() {
    local i
    for i in 0 1 2; do
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n "$1" create -f - >/dev/null || ctl_fail "cannot create the member claims of $1"
}

sleep_double() {
    druid_double_for "$1" etcd-main
    URL[$1]=$DRUID_DOUBLE_URL
    curl -sf -X POST "${URL[$1]}/admin/write?n=5" >/dev/null || ctl_fail "$1: the double takes no writes"
}

sleep_hibernated() {
    local ns=$1
    ctl_wait_phase "$ns" etcd-main Hibernated 60
    [ "$(kc -n "$ns" get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "$ns: Hibernated, StatefulSet not at 0"
    SNAP_AT[$ns]=$("$2" "$ns")
    kc -n "$ns" delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot delete the pods"
    LAST_WRITE=$(last_write "${URL[$ns]}") STORED_REV=$(stored_rev "${URL[$ns]}")
    [ "${STORED_REV:-0}" -ge "${LAST_WRITE:-1}" ] ||
        ctl_fail "$ns: hibernated with write $LAST_WRITE acknowledged and the store at ${STORED_REV:-nothing}"
}

sleep_free_claims() {
    local i
    CLAIMS_OUT=$(WH_AS_NS=$1 wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
    CLAIMS_GONE=0
    for i in 0 1 2; do gone "$1" etcd-main-etcd-main-$i && CLAIMS_GONE=$((CLAIMS_GONE + 1)); done
    return 0
}
