#!/usr/bin/env bash
# Another application's claim taken for an Etcd's because its name ends in "-<etcd>-<n>", on
# kube-sim with warden-webhook registered as the chart registers it. Issue 30: "where a
# legitimate user ... is wrongly refused".
# docs/protection.md ("A live Etcd's claims go with the Etcd or its sleep"): "A claim of Etcd E
# is a PVC of E's namespace named <template>-<E>-<n> (... any template is read ...)", and its
# DELETE "by anyone (..., the garbage collector, ...)" is refused while E is live and n is in
# its member range. A PVC name has no separator of its own: data-redis-cache-0 is the claim
# "data" of StatefulSet redis-cache, member 0, which the StatefulSet controller made; it is also
# "<data-redis>-<cache>-0". An Etcd named cache in the namespace makes it an Etcd claim, and the
# Redis owner can no longer delete the volumes of her own StatefulSet (nor can the garbage
# collector, for a StatefulSet with persistentVolumeClaimRetentionPolicy whenDeleted: Delete).
#   A1. namespace apps: Etcd cache (3 replicas, awake) and alice's Redis: StatefulSet
#       redis-cache (no etcd-druid labels, no Etcd of that name), claims
#       data-redis-cache-0..2, no pod. alice deletes the Redis StatefulSet, then its claims.
#   A2. alice's StatefulSet queue-cache with persistentVolumeClaimRetentionPolicy whenDeleted:
#       Delete: the StatefulSet controller creates its claim data-queue-cache-0 owned by it
#       (an owner reference to StatefulSet queue-cache), as it does for that policy.
#   A0. control: the same Redis named redis-store (claims data-redis-store-0..2): deleted;
#       and Etcd cache's own claim cache-cache-0 is refused.
#   A3. control: an owner reference to StatefulSet queue-cache patched onto cache-cache-0 is
#       refused, and the claim still cannot be deleted.
#   A4. control: data-old-cache-0, created before Etcd cache's StatefulSet, without an owner,
#       is refused (nothing proves that no StatefulSet cache took it).
# Oracle: what kube-sim stores: a claim of StatefulSet redis-cache (which no Etcd owns, names or
# labels) still stored after alice's DELETE.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
# A4, control: a claim of that shape older than StatefulSet cache (no owner) proves nothing: an
# earlier StatefulSet cache may have taken it, so it stays Etcd cache's
printf '%s\n' "apiVersion: v1" "kind: Namespace" "metadata: {name: apps}" | kc apply -f - >/dev/null ||
    ctl_fail "cannot create namespace apps"
printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" "metadata: {name: data-old-cache-0, labels: {app: old-cache}}" \
    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}" | kc -n apps create -f - >/dev/null ||
    ctl_fail "cannot create claim data-old-cache-0"
made=$(date -d "$(kc -n apps get pvc data-old-cache-0 -o jsonpath='{.metadata.creationTimestamp}')" +%s) ||
    ctl_fail "no creationTimestamp on claim data-old-cache-0"
while [ "$(date +%s)" -le "$made" ]; do sleep 0.1; done # bounded: at most a second
druid_etcd apps cache
# the claims below are younger than StatefulSet cache, as they are on a cluster where the Etcd
# came first (creationTimestamp has seconds; bounded: at most a second)
made=$(date -d "$(kc -n apps get statefulset cache -o jsonpath='{.metadata.creationTimestamp}')" +%s) ||
    ctl_fail "no creationTimestamp on StatefulSet cache"
while [ "$(date +%s)" -le "$made" ]; do sleep 0.1; done
claims() { # STS: the claims the StatefulSet controller makes for template data, members 0..2
    for i in 0 1 2; do
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: data-$1-$i, labels: {app: $1}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}"
    done
}
redis() { # NAME: alice's Redis StatefulSet at 0 replicas, and its claims
    kc -n apps apply -f - >/dev/null <<YAML || ctl_fail "cannot create StatefulSet $1"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $1, labels: {app: $1}}
spec:
  replicas: 0
  serviceName: $1
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec: {containers: [{name: redis, image: redis:7, volumeMounts: [{name: data, mountPath: /data}]}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
YAML
    claims "$1" | kc -n apps create -f - >/dev/null || ctl_fail "cannot create the claims of $1"
}
stored() { [ -n "$(kc -n apps get pvc "$1" -o jsonpath='{.metadata.name}' 2>/dev/null)" ] &&
    [ -z "$(kc -n apps get pvc "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]; }
printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" "metadata: {name: cache-cache-0}" \
    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}" | kc -n apps create -f - >/dev/null ||
    ctl_fail "cannot create claim cache-cache-0"
redis redis-store
redis redis-cache
sleep 1 # the webhook's caches

out=$(WH_AS_NS=apps wh_as alice delete pvc cache-cache-0 --wait=false 2>&1)
stored cache-cache-0 || ctl_fail "control: claim cache-cache-0 of live Etcd cache deleted: $out"
echo "ok: control: the claim of Etcd cache's member 0 is not deleted: $(tr '\n' ' ' <<<"$out" | head -c 160)"
holes=0
for s in redis-store redis-cache; do
    WH_AS_NS=apps wh_as alice delete statefulset $s >/dev/null 2>&1 || ctl_fail "alice cannot delete StatefulSet $s"
    out=$(WH_AS_NS=apps wh_as alice delete pvc data-$s-0 data-$s-1 data-$s-2 --wait=false 2>&1)
    left=""
    for i in 0 1 2; do stored data-$s-$i && left="$left data-$s-$i"; done
    if [ $s = redis-store ]; then
        [ -z "$left" ] || ctl_fail "control: the claims of alice's redis-store were not deleted:$left: $out"
        echo "ok: control: alice deleted the claims of her StatefulSet redis-store"
    elif [ -n "$left" ]; then
        echo "HOLE: A1: claims$left of alice's StatefulSet apps/redis-cache (no Etcd's: no Etcd of that name, no labels, no owner) are refused deletion as Etcd cache's: $(tr '\n' ' ' <<<"$out" | head -c 300)"
        holes=$((holes + 1))
    else echo "held: A1: alice deleted the claims of redis-cache"; fi
done
# A2: the StatefulSet controller's claim of a StatefulSet with whenDeleted: Delete
uid=$(kc -n apps apply -o jsonpath='{.metadata.uid}' -f - <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: queue-cache, labels: {app: queue-cache}}
spec:
  replicas: 0
  serviceName: queue-cache
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
  selector: {matchLabels: {app: queue-cache}}
  template:
    metadata: {labels: {app: queue-cache}}
    spec: {containers: [{name: queue, image: redis:7, volumeMounts: [{name: data, mountPath: /data}]}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
YAML
) || ctl_fail "cannot create StatefulSet queue-cache"
out=$(printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" \
    "metadata: {name: data-queue-cache-0, labels: {app: queue-cache}, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: queue-cache, uid: $uid, controller: true, blockOwnerDeletion: true}]}" \
    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}" | kc -n apps create -f - 2>&1)
if stored data-queue-cache-0; then echo "held: A2: the claim of queue-cache owned by its StatefulSet is created"
else
    echo "HOLE: A2: the StatefulSet controller's claim data-queue-cache-0 of alice's StatefulSet queue-cache (whenDeleted: Delete), owned by it, is refused as Etcd cache's: $(tr '\n' ' ' <<<"$out" | head -c 300)"
    holes=$((holes + 1))
fi
# A3, control: Etcd cache's own claim does not become another application's by an owner
# reference to StatefulSet queue-cache written onto it, and stays undeletable
out=$(WH_AS_NS=apps wh_as alice patch pvc cache-cache-0 --type merge -p "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"queue-cache\",\"uid\":\"$uid\",\"controller\":true}]}}" 2>&1) &&
    ctl_fail "control: an owner reference to StatefulSet queue-cache was written onto claim cache-cache-0 of Etcd cache: $out"
out=$(WH_AS_NS=apps wh_as alice delete pvc cache-cache-0 --wait=false 2>&1)
stored cache-cache-0 || ctl_fail "control: claim cache-cache-0 of live Etcd cache deleted after the patch: $out"
echo "ok: control: claim cache-cache-0 takes no owner of queue-cache and stays"
out=$(WH_AS_NS=apps wh_as alice delete pvc data-old-cache-0 --wait=false 2>&1)
stored data-old-cache-0 || ctl_fail "control: claim data-old-cache-0, older than StatefulSet cache, deleted: $out"
echo "ok: control: claim data-old-cache-0, older than StatefulSet cache, stays Etcd cache's: $(tr '\n' ' ' <<<"$out" | head -c 160)"
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): another application's claims refused as an Etcd's by the shape of their name"; exit 1; }
echo "attack12_claim_name_alias: ok"
