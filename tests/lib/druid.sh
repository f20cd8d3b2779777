# etcd-druid's part in the controller tests, the demo and the benches. No etcd-druid runs
# here, so these helpers create an Etcd's components exactly as etcd-druid names and builds
# them (its component builders), acting as etcd-druid's service account so the
# component-protection webhook lets them through, and run backup-double (the
# etcd-backup-restore stand-in) on the client Service's clusterIP, where the pods behind the
# Service would answer. Source this file (it sources webhook.sh and kubesim.sh):
#
#   . "$(dirname "$0")/../lib/druid.sh"
#   wh_init
#   druid_tokens "$WH_DIR/tokens.csv"      # admin, etcd-druid, warden-controller, GC, alice
#   wh_certs
#   kubesim_start --token-file "$WH_DIR/tokens.csv" --service-alias "$(wh_alias)" \
#       --service-cluster-ip-range "$(druid_ip_range)" --statefulset-delay 100ms
#   druid_crds                            # the chart's four CRDs, served
#   (or, for the five lines above: druid_stage [KUBESIM-ARGS...])
#   wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
#   druid_register_webhooks              # etcd-druid's and etcd-warden's configurations
#   druid_etcd NS NAME [--no-store] [--bucket] [--replicas N] [--schedule CRON]
#   druid_double_for NS NAME             # backup-double on <NAME>-client's clusterIP
#   druid_backup_port NS NAME PORT       # spec.backup.port and the Service's backuprestore port
#   druid_double_start IP PORT [--tls-dir DIR]   # one directly
#   druid_double_stop [PID]              # SIGTERM; fails unless it exits 0
#   druid_double_requests                # its /admin/requests
#   druid_double_admin PATH?QUERY        # POST to an admin route
#   druid_double_held                    # how many snapshot requests it holds
#   druid_component_names NS NAME        # "kind/name" of every component, one per line
#   druid_actor_start NS [--executor] [--auto-reconcile]   # etcd-druid's model (below)
#   druid_actor_stop                     # stop it (SIGTERM, then SIGKILL)
#
# The druid actor is a small model of etcd-druid v0.38 (gardener/etcd-druid 5b90b4a7), checked
# against its source for what hibernation depends on; each step cites the lines it models. It
# polls the Etcds of NS every DRUID_ACTOR_PERIOD (0.2 s, for druid's requeues) as etcd-druid's
# service account, through the API with curl and jq, and logs to $DRUID_ACTOR_LOG. It models:
# the spec reconcile gate (the suspend annotation, the operation annotation or auto-reconcile),
# the StatefulSet's PreSync hibernation snapshot with three attempts, the StatefulSet and client
# Service sync, the completion (observedGeneration, the operation annotation removed, the
# errors of a failed step in status.lastErrors), and with --executor the EtcdOpsTask executor
# (the one-unfinished-task rejection, POST /snapshot/full on the client Service). Not modelled:
# pods, members, TTL clean-up of tasks, the Etcd's Ready check of the executor.
#
# Users (tokens in the token file druid_tokens writes):
#   DRUID_SA  system:serviceaccount:etcd-druid:etcd-druid        token druid-token
#   CTL_SA    system:serviceaccount:etcd-warden:warden-controller token warden-token
#   GC_SA     system:serviceaccount:kube-system:generic-garbage-collector token gc-token
#   alice     a person                                           token alice-token
# kc_druid ARGS runs kubectl as etcd-druid.
#
# The backup-double binary is $BACKUP_DOUBLE (set by CTest), else found under
# $WARDEN_BINARY_DIR or the usual build directories.

# shellcheck source=webhook.sh
. "$(dirname "${BASH_SOURCE[0]}")/webhook.sh"

DRUID_SA=system:serviceaccount:etcd-druid:etcd-druid
CTL_SA=system:serviceaccount:etcd-warden:warden-controller
GC_SA=system:serviceaccount:kube-system:generic-garbage-collector
DRUID_DOUBLE_PID=""
DRUID_DOUBLE_URL=""
DRUID_ACTOR_PERIOD=${DRUID_ACTOR_PERIOD:-0.2}
DRUID_ACTOR_PID=""
_druid_doubles=()
_druid_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

_druid_double_binary() {
    local c
    if [ -n "${BACKUP_DOUBLE:-}" ] && [ -x "$BACKUP_DOUBLE" ]; then
        echo "$BACKUP_DOUBLE"; return 0
    fi
    for c in "${WARDEN_BINARY_DIR:-/nonexistent}/tests/backup-double/backup-double" \
             "$_druid_root"/build/debug/tests/backup-double/backup-double \
             "$_druid_root"/build*/tests/backup-double/backup-double \
             "$_druid_root"/build/*/tests/backup-double/backup-double; do
        [ -x "$c" ] && { echo "$c"; return 0; }
    done
    echo "backup-double binary not found (set BACKUP_DOUBLE)" >&2
    return 1
}

# wh_init, druid_tokens, wh_certs, kube-sim started with that token file, the webhook's
# Service alias and KUBESIM-ARGS, then druid_crds: what a webhook test needs before wh_start.
#   druid_stage [KUBESIM-ARGS...]
druid_stage() {
    wh_init
    druid_tokens "$WH_DIR/tokens.csv"
    wh_certs
    kubesim_start --token-file "$WH_DIR/tokens.csv" --service-alias "$(wh_alias)" "$@"
    druid_crds
}

# Write a kube-sim token file with the users above (and admin-token for system:masters).
#   druid_tokens FILE
druid_tokens() {
    cat >"$1" <<EOF
admin-token,admin,u-admin,"system:masters"
druid-token,$DRUID_SA,u-druid,"system:serviceaccounts"
warden-token,$CTL_SA,u-warden,"system:serviceaccounts"
gc-token,$GC_SA,u-gc,"system:serviceaccounts"
alice-token,alice,u-alice,"dev"
EOF
}

# A Service IP range on the loopback interface for --service-cluster-ip-range: a random
# /24 (or /PREFIX) of 127.64.0.0/10, so that tests running side by side do not share IPs.
#   druid_ip_range [PREFIX]
druid_ip_range() {
    local prefix=${1:-24}
    case $prefix in
    24) echo "127.$((64 + RANDOM % 190)).$((RANDOM % 256)).0/24" ;;
    *) echo "127.$((64 + RANDOM % 190)).$(((RANDOM % 256) & ~((1 << (24 - prefix)) - 1))).0/$prefix" ;;
    esac
}

kc_druid() {
    kc_as druid-token "$@"
}

# warden-webhook flags naming the trusted reconcilers (etcd-druid, warden-controller) and
# the garbage collector as exempt, as the chart sets them.
druid_webhook_flags() {
    echo "--reconciler-service-account $DRUID_SA --reconciler-service-account $CTL_SA" \
        "--etcd-components-webhook-exempt-service-accounts $GC_SA"
}

# Apply the chart's CRDs (Etcd, EtcdOpsTask, EtcdStatusBackup,
# ExtendFullSnapshotImmutabilityTask) and wait until kube-sim serves them. With
# DRUID_REAL_CRDS=1 and DRUID_CRD_DIR naming a folder of etcd-druid's own CRDs, its Etcd
# (without CEL: kube-sim evaluates no CEL rules) and EtcdOpsTask CRDs are used instead.
druid_crds() {
    local f files=()
    for f in "$_druid_root"/charts/etcd-warden/crds/*.yaml; do
        if [ "${DRUID_REAL_CRDS:-0}" = 1 ] && [ -n "${DRUID_CRD_DIR:-}" ]; then
            case $f in
            */druid.gardener.cloud_etcds.yaml) f=$DRUID_CRD_DIR/druid.gardener.cloud_etcds_without_cel.yaml ;;
            */druid.gardener.cloud_etcdopstasks.yaml) f=$DRUID_CRD_DIR/druid.gardener.cloud_etcdopstasks.yaml ;;
            esac
        fi
        files+=(-f "$f")
    done
    # one kubectl for all of them: a kubectl run costs more CPU than kube-sim's work for it
    kc apply "${files[@]}" >/dev/null || wh_fail "cannot apply the CRDs: ${files[*]}"
    ksim_wait 20 kc get etcds,etcdopstasks,etcdstatusbackups,extendfullsnapshotimmutabilitytasks -A ||
        wh_fail "the CRDs are not served"
}

# etcd-druid's ValidatingWebhookConfiguration (component protection, as its chart ships
# it) and etcd-warden's (Etcd validation, Etcd mutation on CREATE and UPDATE, and the CREATE of every
# kind of component etcd-druid owns by the Etcd: ServiceAccount, Service, ConfigMap, PVC,
# Role, RoleBinding, StatefulSet, PodDisruptionBudget, Lease, Job), all served by
# warden-webhook.
druid_register_webhooks() {
    wh_register_druid
    kc apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: etcd-warden-components}
webhooks:
$(wh_webhook components-mutate.webhooks.etcd-warden.io /webhooks/etcd-mutate)
  objectSelector:
    matchLabels: {app.kubernetes.io/managed-by: etcd-druid}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [serviceaccounts, services, configmaps, persistentvolumeclaims], scope: Namespaced}
  - {apiGroups: [rbac.authorization.k8s.io], apiVersions: [v1], operations: [CREATE], resources: [roles, rolebindings], scope: Namespaced}
  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [statefulsets], scope: Namespaced}
  - {apiGroups: [policy], apiVersions: [v1], operations: [CREATE], resources: [poddisruptionbudgets], scope: Namespaced}
  - {apiGroups: [coordination.k8s.io], apiVersions: [v1], operations: [CREATE], resources: [leases], scope: Namespaced}
  - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs], scope: Namespaced}
EOF
    wh_register_etcd
}

# The labels etcd-druid puts on component COMPONENT of Etcd NAME with resource name RNAME.
_druid_labels() {
    echo "{app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $1," \
        "app.kubernetes.io/component: $2, app.kubernetes.io/name: $(_druid_name_label "$3")}"
}

# The app.kubernetes.io/name label etcd-druid gives a component: its name, ':' made '-'
# (the Role's and RoleBinding's "druid.gardener.cloud:etcd:<etcd>"). Past 63 characters
# kube-apiserver refuses the label and etcd-druid cannot create that component (the Role
# of an Etcd name above 37, the snapshot Leases above 52); the stand-in cuts it to 63 so
# that the longer names etcd-warden must handle can be tested with every component.
_druid_name_label() {
    local v=${1//:/-}
    v=${v:0:63}
    echo "${v%%[-.]}"
}

# Apply namespace NS and Etcd NAME (as a user), then its components (as etcd-druid,
# owned by the Etcd) and its status (Ready, as etcd-druid's status reconcile writes it).
#   druid_etcd NS NAME [--no-store] [--bucket] [--replicas N] [--schedule CRON] [--tls]
#              [--claim-template T]   # spec.volumeClaimTemplate (immutable once created)
# Sets DRUID_UID to the Etcd's uid.
druid_etcd() {
    local ns=$1 name=$2 store=1 bucket=0 replicas=3 schedule="0 */24 * * *" tls=0 backup ann vct=""
    shift 2
    while [ $# -gt 0 ]; do
        case $1 in
        --no-store) store=0 ;;
        --bucket) bucket=1 ;;
        --replicas) replicas=$2; shift ;;
        --schedule) schedule=$2; shift ;;
        --tls) tls=1 ;;
        --claim-template) vct="
  volumeClaimTemplate: $2"; shift ;;
        *) wh_fail "druid_etcd: unknown option $1" ;;
        esac
        shift
    done
    # bucket immutability as users set it: etcd-druid's CRD has no field for it (it prunes one)
    ann=""
    [ "$bucket" = 0 ] || ann=", annotations: {etcd-warden.io/immutability-retention-type: bucket}"
    backup="{port: 8080, fullSnapshotSchedule: \"$schedule\""
    [ "$tls" = 0 ] || backup="$backup, tls: {tlsCASecretRef: {name: $name-ca, dataKey: bundle.crt}, serverTLSSecretRef: {name: $name-server-tls}, clientTLSSecretRef: {name: $name-client-tls}}"
    if [ "$store" = 1 ]; then
        backup="$backup, store: {container: etcd-bucket, prefix: $ns--$name, provider: S3, secretRef: {name: etcd-backup}"
        backup="$backup}"
    fi
    backup="$backup}"
    kc apply -f - >/dev/null <<EOF || wh_fail "cannot create Etcd $ns/$name"
apiVersion: v1
kind: Namespace
metadata: {name: $ns}
---
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $name, namespace: $ns, labels: {app: etcd-statefulset, role: main}$ann}
spec:
  replicas: $replicas
  labels: {app: etcd-statefulset, role: main}
  etcd: {clientPort: 2379, serverPort: 2380, quota: 8Gi}
  backup: $backup$vct
EOF
    DRUID_UID=$(kc -n "$ns" get etcd "$name" -o jsonpath='{.metadata.uid}')
    druid_components "$ns" "$name" "$DRUID_UID" "$replicas" | kc_druid -n "$ns" create -f - >/dev/null ||
        wh_fail "etcd-druid could not create the components of $ns/$name"
    druid_pods "$ns" "$name" "$replicas"
    druid_status "$ns" "$name" "$replicas"
}

# Create the member pods NAME-0 .. NAME-(REPLICAS-1) of StatefulSet NS/NAME as the
# StatefulSet controller creates them (etcd-druid's selector labels, owned by the
# StatefulSet), Running with a pod IP as the kubelet reports it: kube-sim runs no pods, but
# the scale-down guard asks the API server which members a StatefulSet created at 0 (or from
# a later ordinal) would adopt and delete and which pods mount a claim (each pod gets the
# volumes of the claim templates), and warden-controller asks the backup sidecar at a
# member's pod IP. That IP is the client Service's clusterIP, where backup-double listens
# (druid_double_for): every member's sidecar is the one double. The garbage collector deletes
# them with their StatefulSet; an orphaning DELETE leaves them.
#   druid_pods NS NAME REPLICAS
druid_pods() {
    local ns=$1 n=$2 r=$3 ip i
    [ "$r" -gt 0 ] || return 0
    # the template's containers as they are, each claim template's volume on the claim
    # <template>-<sts>-<ordinal>, as the StatefulSet controller gives its pods
    kc -n "$ns" get statefulset "$n" -o json 2>/dev/null | jq -c --argjson r "$r" '
        . as $s | range(0; $r) as $i | {apiVersion: "v1", kind: "Pod",
          metadata: {name: "\($s.metadata.name)-\($i)", labels: $s.spec.template.metadata.labels,
            ownerReferences: [{apiVersion: "apps/v1", kind: "StatefulSet", name: $s.metadata.name,
              uid: $s.metadata.uid, controller: true, blockOwnerDeletion: true}]},
          spec: ($s.spec.template.spec + {volumes: (($s.spec.template.spec.volumes // []) +
            [$s.spec.volumeClaimTemplates[]?.metadata.name |
             {name: ., persistentVolumeClaim: {claimName: "\(.)-\($s.metadata.name)-\($i)"}}])})}' |
        kc -n "$ns" create -f - >/dev/null || wh_fail "cannot create the pods of $ns/$n"
    ip=$(kc -n "$ns" get service "$n-client" -o jsonpath='{.spec.clusterIP}')
    [ -n "$ip" ] || wh_fail "no clusterIP on $ns/$n-client for the pods' IP"
    for ((i = 0; i < r; i++)); do
        kc -n "$ns" patch pod "$n-$i" --subresource=status --type merge \
            -p "{\"status\":{\"phase\":\"Running\",\"podIP\":\"$ip\",\"podIPs\":[{\"ip\":\"$ip\"}]}}" \
            >/dev/null || wh_fail "cannot set the status of pod $ns/$n-$i"
    done
}

# Print the components of Etcd NAME (uid UID, REPLICAS members) as etcd-druid builds them
# (YAML documents without namespace), with the owner reference GetAsOwnerReference makes.
#   druid_components NS NAME UID REPLICAS
druid_components() {
    local ns=$1 n=$2 uid=$3 r=$4 i sel owner store p1 p2 p3 p4 hp args="server, --server-port=8080" env=""
    local lmount="" lvol=""
    # the backup sidecar's store as etcd-druid renders it from spec.backup.store (its
    # statefulset builder: --storage-provider, --store-prefix, env STORAGE_CONTAINER; for a Local
    # store the hostPath volume local-backup "<hostPath>/<container>", hostPath from the backup
    # Secret or /etc/gardener/local-backupbuckets, mounted at /home/nonroot/<container>)
    store=$(kc -n "$ns" get etcd "$n" -o json 2>/dev/null | jq -r '.spec.backup.store // empty |
        [(.provider // "" | if . == "aws" or . == "s3" then "S3" else . end), .prefix // "",
         .container // "", .secretRef.name // ""] | @tsv' 2>/dev/null)
    if [ -n "$store" ]; then
        IFS=$'\t' read -r p1 p2 p3 p4 <<<"$store"
        args="$args, \"--storage-provider=$p1\", \"--store-prefix=$p2\""
        env=", env: [{name: STORAGE_CONTAINER, value: \"$p3\"}]"
        if [ "$p1" = Local ]; then
            hp=""
            [ -z "$p4" ] || hp=$(kc -n "$ns" get secret "$p4" -o jsonpath='{.data.hostPath}' 2>/dev/null | base64 -d 2>/dev/null)
            hp=${hp:-/etc/gardener/local-backupbuckets}
            lmount=", {name: local-backup, mountPath: \"/home/nonroot/$p3\"}"
            lvol="
      - {name: local-backup, hostPath: {path: \"$hp/$p3\", type: DirectoryOrCreate}}"
        fi
    fi
    sel="{app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $n}"
    owner="ownerReferences: [{apiVersion: druid.gardener.cloud/v1alpha1, kind: Etcd, name: $n, uid: $uid, controller: true, blockOwnerDeletion: true}]"
    cat <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: $n, labels: $(_druid_labels "$n" etcd-service-account "$n"), $owner}
automountServiceAccountToken: false
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: "druid.gardener.cloud:etcd:$n", labels: $(_druid_labels "$n" etcd-druid-role "druid.gardener.cloud:etcd:$n"), $owner}
rules:
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, list, patch, update, watch]}
- {apiGroups: [apps], resources: [statefulsets], verbs: [get, list, patch, update, watch]}
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: "druid.gardener.cloud:etcd:$n", labels: $(_druid_labels "$n" druid-role-binding "druid.gardener.cloud:etcd:$n"), $owner}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: "druid.gardener.cloud:etcd:$n"}
subjects: [{kind: ServiceAccount, name: $n, namespace: $ns}]
---
apiVersion: v1
kind: Service
metadata: {name: $n-client, labels: $(_druid_labels "$n" etcd-client-service "$n-client"), $owner}
spec:
  type: ClusterIP
  sessionAffinity: None
  selector: $sel
  ports:
  - {name: client, protocol: TCP, port: 2379, targetPort: 2379}
  - {name: server, protocol: TCP, port: 2380, targetPort: 2380}
  - {name: backuprestore, protocol: TCP, port: 8080, targetPort: 8080}
---
apiVersion: v1
kind: Service
metadata: {name: $n-peer, labels: $(_druid_labels "$n" etcd-peer-service "$n-peer"), $owner}
spec:
  clusterIP: None
  publishNotReadyAddresses: true
  selector: $sel
  ports:
  - {name: peer, protocol: TCP, port: 2380, targetPort: 2380}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: $n-config, labels: $(_druid_labels "$n" etcd-config "$n-config"), $owner}
data:
  etcd.conf.yaml: |
    name: etcd-config
    data-dir: /var/etcd/data/new.etcd
    listen-client-urls: http://0.0.0.0:2379
    advertise-client-urls: "http://$n-client.$ns.svc:2379"
    listen-peer-urls: http://0.0.0.0:2380
    initial-cluster-state: new
    initial-cluster-token: etcd-cluster
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: $n, labels: $(_druid_labels "$n" etcd-pdb "$n"), $owner}
spec:
  minAvailable: $((r > 1 ? r / 2 + 1 : 0))
  selector: {matchLabels: $sel}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $n, labels: $(_druid_labels "$n" etcd-sts "$n"), $owner}
spec:
  replicas: $r
  serviceName: $n-peer
  podManagementPolicy: Parallel
  updateStrategy: {type: RollingUpdate}
  selector: {matchLabels: $sel}
  template:
    metadata: {labels: $sel}
    spec:
      serviceAccountName: $n
      containers:
      - {name: etcd, image: "europe-docker.pkg.dev/gardener-project/public/gardener/etcd-wrapper:v0.4.2", ports: [{name: server, containerPort: 2380}, {name: client, containerPort: 2379}], volumeMounts: [{name: $n, mountPath: /var/etcd/data}]}
      - {name: backup-restore, image: "europe-docker.pkg.dev/gardener-project/public/gardener/etcdbrctl:v0.34.0", args: [$args]$env, ports: [{name: server, containerPort: 8080}], volumeMounts: [{name: $n, mountPath: /var/etcd/data}, {name: etcd-config-file, mountPath: /var/etcd/config/}$lmount]}
      volumes:
      - {name: etcd-config-file, configMap: {name: $n-config, defaultMode: 420, items: [{key: etcd.conf.yaml, path: etcd.conf.yaml}]}}$lvol
  volumeClaimTemplates:
  - metadata: {name: $n}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
    for ((i = 0; i < r; i++)); do
        cat <<EOF
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: $n-$i, labels: $(_druid_labels "$n" etcd-member-lease "$n-$i"), $owner}
EOF
    done
    for i in full delta; do
        cat <<EOF
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: $n-$i-snap, labels: $(_druid_labels "$n" etcd-snapshot-lease "$n-$i-snap"), $owner}
EOF
    done
}

# "kind/name" of every component druid_components creates for NAME with REPLICAS members.
#   druid_component_names NAME REPLICAS
druid_component_names() {
    local n=$1 r=$2 i
    printf '%s\n' "ServiceAccount/$n" "Role/druid.gardener.cloud:etcd:$n" \
        "RoleBinding/druid.gardener.cloud:etcd:$n" "Service/$n-client" "Service/$n-peer" \
        "ConfigMap/$n-config" "PodDisruptionBudget/$n" "StatefulSet/$n"
    for ((i = 0; i < r; i++)); do echo "Lease/$n-$i"; done
    printf '%s\n' "Lease/$n-full-snap" "Lease/$n-delta-snap"
}

# Write the status of Etcd NAME as etcd-druid's status reconcile does for a healthy
# cluster of REPLICAS members (through /status, as etcd-druid).
#   druid_status NS NAME REPLICAS
druid_status() {
    local ns=$1 n=$2 r=$3 now members="" i
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    for ((i = 0; i < r; i++)); do
        members="$members${members:+,}{\"name\":\"$n-$i\",\"id\":\"$((1000 + i))\",\"role\":\"$([ $i = 0 ] && echo Leader || echo Member)\",\"status\":\"Ready\",\"reason\":\"LeaseSucceeded\",\"lastTransitionTime\":\"$now\"}"
    done
    kc_druid -n "$ns" patch etcd "$n" --subresource=status --type=merge -p "{\"status\":{
      \"observedGeneration\":1,
      \"etcd\":{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"$n\"},
      \"conditions\":[
        {\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Quorate\",\"message\":\"The majority of ETCD members is ready\",\"lastTransitionTime\":\"$now\",\"lastUpdateTime\":\"$now\"},
        {\"type\":\"AllMembersReady\",\"status\":\"True\",\"reason\":\"AllMembersReady\",\"message\":\"All members are ready\",\"lastTransitionTime\":\"$now\",\"lastUpdateTime\":\"$now\"},
        {\"type\":\"BackupReady\",\"status\":\"True\",\"reason\":\"BackupSucceeded\",\"message\":\"Snapshot backup succeeded\",\"lastTransitionTime\":\"$now\",\"lastUpdateTime\":\"$now\"}],
      \"lastOperation\":{\"type\":\"Reconcile\",\"state\":\"Succeeded\",\"description\":\"Etcd cluster has been successfully reconciled\",\"runID\":\"6f1c0b1e-0000-4000-8000-000000000001\",\"lastUpdateTime\":\"$now\"},
      \"lastErrors\":[],
      \"replicas\":$r,\"currentReplicas\":$r,\"readyReplicas\":$r,\"ready\":true,
      \"members\":[$members],
      \"selector\":\"app.kubernetes.io/managed-by=etcd-druid,app.kubernetes.io/part-of=$n\"}}" \
        >/dev/null || wh_fail "etcd-druid could not write the status of $ns/$n"
}

_druid_double_cleanup() {
    local p
    for p in "${_druid_doubles[@]}"; do
        reap_child "$p" 10 || true
    done
    _druid_doubles=()
}

# Start backup-double on IP:PORT (extra flags passed on) and wait for its ready line.
# Sets DRUID_DOUBLE_PID and DRUID_DOUBLE_URL (http(s)://IP:PORT); the log is
# DRUID_DOUBLE_LOG. Stopped at exit.
#   druid_double_start IP PORT [--tls-dir DIR]
druid_double_start() {
    local bin dir line="" deadline
    bin=$(_druid_double_binary) || return 1
    dir=$(mktemp -d "${TMPDIR:-/tmp}/backup-double.XXXXXX")
    ksim_on_exit "rm -rf '$dir'"
    DRUID_DOUBLE_LOG=$dir/log
    "$bin" --listen "$1:$2" "${@:3}" >"$dir/out" 2>"$DRUID_DOUBLE_LOG" &
    DRUID_DOUBLE_PID=$!
    [ ${#_druid_doubles[@]} -gt 0 ] || ksim_on_exit _druid_double_cleanup
    _druid_doubles+=("$DRUID_DOUBLE_PID")
    deadline=$((SECONDS + $(ksim_secs 10)))
    while [ $SECONDS -lt $deadline ]; do
        line=$(grep -m1 '^backup-double ready ' "$dir/out" 2>/dev/null || true)
        [ -n "$line" ] && break
        kill -0 "$DRUID_DOUBLE_PID" 2>/dev/null || break
        sleep 0.02
    done
    [ -n "$line" ] || { cat "$DRUID_DOUBLE_LOG" >&2; echo "backup-double did not start on $1:$2" >&2; return 1; }
    DRUID_DOUBLE_URL=${line#backup-double ready }
    export DRUID_DOUBLE_PID DRUID_DOUBLE_URL DRUID_DOUBLE_LOG
}

# SIGTERM backup-double PID (default: the last started); fails unless it exits 0 with no
# sanitizer report.
#   druid_double_stop [PID]
druid_double_stop() {
    local pid=${1:-$DRUID_DOUBLE_PID} status=0 i rest=()
    kill -0 "$pid" 2>/dev/null || return 1
    reap_child "$pid" 10 || status=$?
    for i in "${_druid_doubles[@]}"; do [ "$i" = "$pid" ] || rest+=("$i"); done
    _druid_doubles=("${rest[@]+"${rest[@]}"}")
    if grep -qE 'Sanitizer|runtime error' "$DRUID_DOUBLE_LOG" 2>/dev/null; then
        cat "$DRUID_DOUBLE_LOG" >&2
        return 1
    fi
    return "$status"
}

# Start backup-double where the sidecar of Etcd NAME answers: the clusterIP of
# <NAME>-client on its backuprestore port (extra flags passed on).
#   druid_double_for NS NAME [--tls-dir DIR]
druid_double_for() {
    local ip port
    ip=$(kc -n "$1" get service "$2-client" -o jsonpath='{.spec.clusterIP}')
    port=$(kc -n "$1" get service "$2-client" \
        -o jsonpath='{.spec.ports[?(@.name=="backuprestore")].port}')
    [ -n "$ip" ] && [ -n "$port" ] || wh_fail "no clusterIP/backuprestore port on $1/$2-client"
    druid_double_start "$ip" "$port" "${@:3}" || wh_fail "cannot start backup-double on $ip:$port"
}

# Etcd NAME's backup port PORT, as etcd-druid derives it from spec.backup.port: the spec (as a
# user), the client Service's backuprestore port and targetPort and the backup-restore
# container's port server in the StatefulSet's pod template (as etcd-druid), for a
# sidecar on a port of its own (the real one binds every address: one per test).
#   druid_backup_port NS NAME PORT
druid_backup_port() {
    local i r a
    kc -n "$1" patch etcd "$2" --type merge -p "{\"spec\":{\"backup\":{\"port\":$3}}}" >/dev/null ||
        wh_fail "cannot set the backup port of $1/$2"
    i=$(kc -n "$1" get service "$2-client" -o jsonpath='{range .spec.ports[*]}{.name}{"\n"}{end}' |
        grep -nx backuprestore | cut -d: -f1)
    [ -n "$i" ] || wh_fail "no backuprestore port on $1/$2-client"
    kc_druid -n "$1" patch service "$2-client" --type json -p \
        "[{\"op\":\"replace\",\"path\":\"/spec/ports/$((i - 1))/port\",\"value\":$3},
          {\"op\":\"replace\",\"path\":\"/spec/ports/$((i - 1))/targetPort\",\"value\":$3}]" >/dev/null ||
        wh_fail "etcd-druid could not set the backuprestore port of $1/$2-client"
    i=$(kc -n "$1" get statefulset "$2" \
        -o jsonpath='{range .spec.template.spec.containers[*]}{.name}{"\n"}{end}' |
        grep -nx backup-restore | cut -d: -f1)
    [ -n "$i" ] || wh_fail "no backup-restore container in $1/$2's pod template"
    # and its arg --server-port (etcd-druid since v0.31): the port etcdbrctl listens on is the
    # one declared, or the sidecar's port is not taken from the template (controller/core/smport)
    a=$(kc -n "$1" get statefulset "$2" -o json | jq -c --argjson c $((i - 1)) --argjson p "$3" '
        .spec.template.spec.containers[$c].args // [] | map(startswith("--server-port=")) |
        index(true) // empty | [{op: "replace", path: "/spec/template/spec/containers/\($c)/args/\(.)",
        value: "--server-port=\($p)"}]')
    kc_druid -n "$1" patch statefulset "$2" --type json -p \
        "$(jq -c --argjson c $((i - 1)) --argjson p "$3" --argjson a "${a:-[]}" -n \
            '[{op: "replace", path: "/spec/template/spec/containers/\($c)/ports/0/containerPort", value: $p}] + $a')" \
        >/dev/null || wh_fail "etcd-druid could not set the backup-restore port of $1/$2"
    # the StatefulSet controller rolls the members onto the new template (a pod's ports
    # cannot change): a member pod is its template's whole spec (controller/core/smspec)
    r=$(kc -n "$1" get pods -o name | grep -c "^pod/$2-[0-9]*$" || true)
    if [ "$r" -gt 0 ]; then
        for ((i = 0; i < r; i++)); do
            kc -n "$1" delete pod "$2-$i" --wait=true >/dev/null ||
                wh_fail "cannot roll pod $1/$2-$i"
        done
        druid_pods "$1" "$2" "$r"
    fi
}

# The request log of the last started backup-double (one JSON line per snapshot request).
druid_double_requests() {
    curl -sf "$DRUID_DOUBLE_URL/admin/requests" -k
}

# How many snapshot requests the last started backup-double holds (druid_double_admin hold).
druid_double_held() {
    curl -sf -k "$DRUID_DOUBLE_URL/admin/held"
}

# POST to an admin route of the last started backup-double: druid_double_admin 'reply?code=500'
druid_double_admin() {
    curl -sf -k -X POST "$DRUID_DOUBLE_URL/admin/$1" >/dev/null
}

# The druid actor (druid_actor_start, druid_actor_stop).
# shellcheck source=druidactor.sh
. "$(dirname "${BASH_SOURCE[0]}")/druidactor.sh"

# etcd-druid's etcd.conf.yaml of Etcd E (REPLICAS members) as configmap.go marshals it, with
# QUOTA and SNAPSHOTS.
#   druid_conf E REPLICAS QUOTA SNAPSHOTS [NAMESPACE (shoot)]
druid_conf() {
    python3 - "$@" <<'PY'
import sys
e, r, quota, snaps = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ns = sys.argv[5] if len(sys.argv) > 5 else "shoot"
dom = f"{e}-peer.{ns}.svc"
def urls(port):
    return "".join(f"  {e}-{i}:\n  - http://{e}-{i}.{dom}:{port}\n" for i in range(r))
print(f"""advertise-client-urls:
{urls(2379)}auto-compaction-mode: periodic
auto-compaction-retention: 30m
backend-bbolt-freelist-type: array
data-dir: /var/etcd/data/new.etcd
enable-grpc-gateway: false
initial-advertise-peer-urls:
{urls(2380)}initial-cluster: {",".join(f"{e}-{i}=http://{e}-{i}.{dom}:2380" for i in range(r))}
initial-cluster-state: new
initial-cluster-token: etcd-cluster
listen-client-urls: http://0.0.0.0:2379
listen-peer-urls: http://0.0.0.0:2380
metrics: basic
name: etcd-config
next-cluster-version-compatible: true
quota-backend-bytes: {quota}
snapshot-count: {snaps}""")
PY
}
