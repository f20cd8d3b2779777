# Helpers of the e2e scripts that use Local backup stores. Source after kubesim.sh:
#
#   local_host_path NS SECRET PATH   # Secret SECRET of NS with hostPath=PATH, created or replaced
#                                    # (etcd-druid's Local store: the directory on the node)
#   local_drill NS ETCD              # EtcdRestoreDrill d of NS (mode Verify, target ETCD), run now
#                                    # (annotation etcd-warden.io/run-drill)
#   local_etcd NS NAME CONTAINER PREFIX SECRET [KUBECTL FLAG]
#                                    # Etcd NAME of NS (1 replica) on a Local store, applied

local_host_path() {
    kc -n "$1" create secret generic "$2" --from-literal=hostPath="$3" --dry-run=client -o yaml |
        kc apply -f - >/dev/null
}

local_drill() {
    kc apply -f - >/dev/null <<EOF2
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestoreDrill
metadata: {name: d, namespace: $1}
spec: {schedule: "0 3 * * *", mode: Verify, target: {etcdName: $2}}
EOF2
    kc -n "$1" annotate --overwrite etcdrestoredrill d etcd-warden.io/run-drill=1 >/dev/null
}

local_etcd() {
    kc apply ${6:+"$6"} -f - <<EOF2
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: Local, container: $3, prefix: $4, secretRef: {name: $5}}}
EOF2
}
