# Helpers of the e2e scripts that use Local backup stores. Source after kubesim.sh:
#
#   local_host_path NS SECRET PATH   # Secret SECRET of NS with hostPath=PATH, created or replaced
#                                    # (etcd-druid's Local store: the directory on the node)
#   local_drill NS ETCD              # EtcdRestoreDrill d of NS (mode Verify, target ETCD), run now
#                                    # (annotation etcd-warden.io/run-drill)

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
