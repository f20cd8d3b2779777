# shellcheck shell=bash
# The set-up of the e2e scripts in which a tenant's own StatefulSet points its backup sidecar at
# another namespace's part of a Local BackupBucket partitioned by namespace
# (tests/e2e/attack15_local_sidecar_prefix.sh, attack16_local_sidecar_spellings.sh). Sourcing
# it sources snapshot.sh, controller.sh and localstore.sh, needs jq and runs snap_cleanups on
# exit:
#
#   localsidecar_stage  # warden-webhook (--backup-entries --etcd-backups, and
#                       # --local-volume-guard when it has that flag; warden-controller not
#                       # started); namespaces shoot and victim (label etcd-warden.io/backups=local,
#                       # Secret etcd-backup at /var/lib/lb), BackupBucket local (Local, container
#                       # bkt, hostPath /var/lib/lb, prefixScope Namespace), the backups webhooks
#                       # registered; Etcds victim/etcd-v at bkt/victim/etcd-v and shoot/etcd-a at
#                       # bkt/shoot/etcd-a; the control: etcd-druid's StatefulSet of shoot/etcd-a
#                       # (local-backup /var/lib/lb/bkt mounted at /home/nonroot/bkt) admitted
#                       # (ok: control: ...); alice (shoot's editor) disables component
#                       # protection of etcd-a; BASE is the StatefulSet as stored; the control:
#                       # alice's local-backup path in victim's part refused (ok: control: ...)
#   sidecar_dir         # the node directory the stored template's sidecar writes, read from its
#                       # STORAGE_CONTAINER, --store-prefix and the hostPath mount deepest at or
#                       # above <home>/<container>/<prefix> (home /home/nonroot)
#   update JQ           # alice's UPDATE of shoot's StatefulSet etcd-a: BASE's template, then the
#                       # jq program JQ; prints kubectl's answer, status 1 when refused (a
#                       # conflict is tried again, 5 times at most)
#   restore_base        # alice puts BASE's template back (the test fails when she cannot)

# shellcheck source=snapshot.sh
. "$(dirname "${BASH_SOURCE[0]}")/snapshot.sh"
# shellcheck source=controller.sh
. "$(dirname "${BASH_SOURCE[0]}")/controller.sh"
# shellcheck source=localstore.sh
. "$(dirname "${BASH_SOURCE[0]}")/localstore.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || ksim_fail "jq is not installed"

sidecar_dir() {
    kc -n shoot get sts etcd-a -o json | jq -r '
        .spec.template.spec as $s
        | ($s.containers[] | select(.name == "backup-restore")) as $c
        | ($c.args | map(select(startswith("--store-prefix=")))[0] | ltrimstr("--store-prefix=")) as $p
        | ($c.env | map(select(.name == "STORAGE_CONTAINER"))[0].value) as $k
        | ("/home/nonroot/" + $k + "/" + $p) as $dir
        | [$c.volumeMounts[] | . as $m | ($m.mountPath | rtrimstr("/")) as $mp
            | select(($dir + "/") | startswith($mp + "/"))
            | ($s.volumes[] | select(.name == $m.name) | .hostPath.path) as $h
            | select($h != null)
            | {len: ($mp | length), node: ($h + (if $m.subPath then "/" + $m.subPath else "" end)
                + "/" + ($dir | ltrimstr($mp) | ltrimstr("/")))}]
        | max_by(.len) | .node' | sed 's://*:/:g'
}

update() {
    local i out
    for i in 1 2 3 4 5; do
        out=$(kc -n shoot get sts etcd-a -o json | jq --argjson base "$BASE" \
            "(.spec.template = \$base.spec.template) | $1" | WH_AS_NS=shoot wh_as alice replace -f - 2>&1) && { echo "$out"; return 0; }
        case $out in *"(Conflict)"*) sleep 0.2 ;; *) break ;; esac
    done
    echo "$out"
    return 1
}

restore_base() { update '.' >/dev/null || ctl_fail "cannot put etcd-a's template back"; }

localsidecar_stage() {
    local help guard="" ns out
    help=$("$(_wh_binary)" --help 2>&1 || true)
    case $help in *--local-volume-guard*) guard=--local-volume-guard ;; esac
    CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups $guard" ctl_stage
    kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
    for ns in shoot victim; do
        kc create namespace "$ns" >/dev/null
        kc label namespace "$ns" etcd-warden.io/backups=local >/dev/null
        local_host_path "$ns" etcd-backup /var/lib/lb
    done
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket local"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: local}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: 1h
  prefixScope: Namespace
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: local}}
EOF
    wh_register_backups
    # shoot's Etcd (a dry run) in victim's part refused: the webhook's caches hold the bucket
    part_known() { ! local_etcd shoot probe bkt victim/probe etcd-backup --dry-run=server >/dev/null 2>&1; }
    ksim_wait 30 part_known || ctl_fail "the webhook's caches never held BackupBucket local"
    out=$(local_etcd victim etcd-v bkt victim/etcd-v etcd-backup 2>&1) || ctl_fail "victim/etcd-v refused: $out"
    out=$(local_etcd shoot etcd-a bkt shoot/etcd-a etcd-backup 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
    wh_caught_up
    # etcd-druid's StatefulSet of shoot/etcd-a, Local store as its builder renders it
    kc_druid -n shoot create -f - >/dev/null <<EOF || ctl_fail "control: etcd-druid's StatefulSet of shoot/etcd-a refused"
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: etcd-a
  labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-a}
spec:
  replicas: 1
  serviceName: etcd-a-peer
  selector: {matchLabels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-a}}
  template:
    metadata: {labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-a}}
    spec:
      containers:
      - {name: etcd, image: etcd-wrapper, volumeMounts: [{name: etcd-a, mountPath: /var/etcd/data}]}
      - name: backup-restore
        image: etcdbrctl
        args: [server, --server-port=8080, --storage-provider=Local, --store-prefix=shoot/etcd-a]
        env: [{name: STORAGE_CONTAINER, value: bkt}]
        volumeMounts: [{name: etcd-a, mountPath: /var/etcd/data}, {name: etcd-config-file, mountPath: /var/etcd/config/}, {name: local-backup, mountPath: /home/nonroot/bkt}]
      volumes:
      - {name: etcd-config-file, configMap: {name: etcd-a-config, defaultMode: 420, items: [{key: etcd.conf.yaml, path: etcd.conf.yaml}]}}
      - {name: local-backup, hostPath: {path: /var/lib/lb/bkt, type: DirectoryOrCreate}}
  volumeClaimTemplates:
  - metadata: {name: etcd-a}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
EOF
    ok "control: etcd-druid's StatefulSet of shoot/etcd-a (local-backup /var/lib/lb/bkt) admitted"
    WH_AS_NS=shoot wh_as alice annotate etcd etcd-a druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable component protection of shoot/etcd-a"
    wh_caught_up
    BASE=$(kc -n shoot get sts etcd-a -o json)
    [ "$(sidecar_dir)" = /var/lib/lb/bkt/shoot/etcd-a ] || ctl_fail "the oracle reads etcd-druid's template as $(sidecar_dir)"
    # control: the documented guard, a new local-backup path in victim's part
    out=$(update '(.spec.template.spec.volumes[] | select(.name == "local-backup") | .hostPath.path) = "/var/lib/lb/bkt/victim"') &&
        ctl_fail "control: alice's local-backup path /var/lib/lb/bkt/victim admitted (now $(sidecar_dir))"
    ok "control: a local-backup hostPath in victim's part refused: $(tr '\n' ' ' <<<"$out" | head -c 200)"
}
