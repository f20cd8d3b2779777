#!/usr/bin/env bash
# A tenant reads another namespace's backup prefix out of the one-prefix-one-cluster refusals.
# The refusal to another namespace says only "overlaps a prefix claimed from another
# namespace", but whether a probe is refused is itself the answer: prefix p is refused exactly
# when some claim starts with p (or p with it). So namespace evil, with no Etcd of its own,
# sends server-side dry-run CREATEs (nothing recorded, nothing stored) of an Etcd with prefixes
# growing a character at a time, keeps the character that is refused, and spells out shoot's
# secret prefix ("shoot--7f3q-team/etcd-main": Gardener's prefixes carry the shoot's uid).
# The defence is the bucket owner's (docs/backup-entries.md, "Who may claim a prefix"):
# BackupBucket spec.prefixScope Namespace gives every prefix to one namespace, named by its
# first segment, and refuses any other namespace's claim of it before any other claim is read.
# Without the partition every refusal over another namespace's claim is counted by the
# requesting namespace (warden_webhook_prefix_refusals_cross_namespace_total), so probing shows.
# Wanted: the probe recovers nothing: evil's answers, probe for probe, are the same with and
# without shoot's Etcd (refused-or-not carries no bit of it), and the spelling-out attack
# learns no character. Fail closed still: evil's own prefixes are admitted, shoot's Etcd on a
# prefix of shoot's overlapping a claim of evil made before the setting is refused.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

SECRET_PREFIX=shoot--7f3q-team/etcd-main
edoc() { # ns name prefix
    cat <<EOF2
{"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd","metadata":{"name":"$2","namespace":"$1"},
 "spec":{"replicas":1,"labels":{"app":"etcd-statefulset"},"etcd":{"clientPort":2379,"serverPort":2380},
  "backup":{"port":8080,"store":{"provider":"S3","container":"etcd-bucket","prefix":"$3","secretRef":{"name":"etcd-backup"}}}}}
EOF2
}
# answer PREFIX: "refused" or "admitted", a dry-run CREATE in evil, as alice
answer() {
    local out
    out=$(edoc evil probe "$1" | curl -sk --max-time 20 -X POST -H "Authorization: Bearer alice-token" \
        -H 'Content-Type: application/json' --data-binary @- \
        "$KSIM_URL/apis/druid.gardener.cloud/v1alpha1/namespaces/evil/etcds?dryRun=All")
    case "$out" in
    *'"reason":"Forbidden"'*) echo refused ;;
    *'"kind":"Etcd"'*) echo admitted ;;
    *) ctl_fail "probe \"$1\": unexpected answer: ${out:0:300}" ;;
    esac
}
refused() { [ "$(answer "$1")" = refused ]; }
PROBES=(s sh shoot shoot- shoot-- shoot--7 shoot--7f3q-team shoot--7f3q-team/ "$SECRET_PREFIX"
    "$SECRET_PREFIX-x" shoot--8 t x "" . evil evil--a/x evil/etcd evil--7f3q/etcd-main)
answers() { local p; for p in "${PROBES[@]}"; do printf '%s=%s\n' "$p" "$(answer "$p")"; done; }

WH_METRICS=$(wh_free_port)
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups --metrics-bind-address 127.0.0.1:$WH_METRICS" ctl_stage
# cross NS: warden_webhook_prefix_refusals_cross_namespace_total of namespace NS (0 when none)
cross() {
    curl -sf "http://127.0.0.1:$WH_METRICS/metrics" |
        awk -v m="warden_webhook_prefix_refusals_cross_namespace_total{namespace=\"$1\"}" '$1 == m { v = $2 } END { print v + 0 }'
}
ctl_namespace shoot evil
ctl_backup_secret etcd-warden creds
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: etcd-bucket
  secretRef: {namespace: etcd-warden, name: creds}
  deletionGracePeriod: 1h
  prefixScope: Namespace
EOF
[ "$(kc get backupbucket shared -o jsonpath='{.spec.prefixScope}')" = Namespace ] ||
    ctl_fail "spec.prefixScope not stored (the CRD prunes it?)"
wh_caught_up # the webhook's BackupBucket cache
before=$(answers)
edoc shoot etcd-main "$SECRET_PREFIX" | kc apply -f - >/dev/null || ctl_fail "shoot/etcd-main refused"
ksim_wait 20 sh -c "kubectl --kubeconfig '$KUBECONFIG' -n shoot get etcd etcd-main" >/dev/null ||
    ctl_fail "shoot/etcd-main not stored"
wh_caught_up # the webhook's Etcd cache
after=$(answers)
echo "$after" | sed 's/^/  probe /'
[ "$before" = "$after" ] ||
    ctl_fail "evil's answers depend on shoot's claim: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"
ok "${#PROBES[@]} probes of evil answered the same with and without shoot's Etcd"
grep -qx "evil--a/x=admitted" <<<"$after" || ctl_fail "evil's own prefix refused"
grep -qx "shoot--7=refused" <<<"$after" || ctl_fail "a prefix of shoot's admitted for evil"

known="" probes=0
while [ ${#known} -lt 64 ]; do
    hits=""
    for c in a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8 9 - _ /; do
        probes=$((probes + 1))
        if refused "$known$c"; then hits="$hits$c"; [ ${#hits} -ge 2 ] && break; fi
    done
    [ ${#hits} = 1 ] || break # none, or every extension refused: nothing to tell apart
    known=$known$hits
done
echo "evil read \"$known\" out of shoot's refusals in $probes dry-run probes"
[ -z "$known" ] || ctl_fail "namespace evil read \"$known\" of shoot's prefix \"$SECRET_PREFIX\""
ok "the probe recovered nothing of shoot's prefix"
expect "refusals of evil counted as over another namespace's claim (the partition's are not)" 0 "$(cross evil)"

# fail closed: an overlap across namespaces is still refused (evil's claim from before the
# setting, inside shoot's part)
kc patch backupbucket shared --type merge -p '{"spec":{"prefixScope":"Bucket"}}' >/dev/null
wh_caught_up # the caches see it
# without the partition the probing shows in the webhook's metrics, by namespace
refused shoot--7 || ctl_fail "without the partition, evil's probe overlapping shoot's prefix admitted"
refused shoot--7f || ctl_fail "without the partition, evil's probe overlapping shoot's prefix admitted"
expect "evil's probes refused over another namespace's claim" 2 "$(cross evil)"
edoc evil old shoot--old | kc apply -f - >/dev/null || ctl_fail "evil/old refused without the scope"
kc patch backupbucket shared --type merge -p '{"spec":{"prefixScope":"Namespace"}}' >/dev/null
wh_caught_up # the caches see it
if out=$(edoc shoot etcd-old shoot--old/etcd-main | kc apply -f - 2>&1); then
    ctl_fail "shoot's Etcd admitted over evil's earlier claim: $out"
fi
grep -q 'overlaps a prefix claimed from another namespace' <<<"$out" || ctl_fail "refusal: $out"
expect "shoot's refusal over evil's earlier claim counted" 1 "$(cross shoot)"
ok "a claim overlapping another namespace's earlier claim is still refused"
echo "attack_prefix_probe: ok"
