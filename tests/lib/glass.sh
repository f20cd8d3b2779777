# shellcheck shell=bash
# Helpers of the e2e scripts that attack break glass (docs/hibernation.md, "Break glass once").
# Source after controller.sh, after ctl_stage:
#
#   glass_uses WHO        # the break-glass records of warden-webhook's Leases that name WHO
#                         # (printed; status 1 when there is none)
#   glass_stage NS...     # in each NS: Etcd etcd-main with its double (5 writes acknowledged,
#                         # no snapshot), break glass set by the operator ("<now + 2h> bucket
#                         # lost"), component protection disabled by alice (the runbook)

glass_uses() {
    kc get leases -A -o json | jq -r '.items[] | select(.metadata.name | startswith("etcd-warden-glass-"))
        | .metadata.annotations["etcd-warden.io/break-glass-used"] // empty' | grep -F "$1"
}

glass_stage() {
    local expiry ns
    expiry=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)
    for ns in "$@"; do
        druid_etcd "$ns" etcd-main
        druid_double_for "$ns" etcd-main
        curl -sf -X POST "$DRUID_DOUBLE_URL/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
        kc -n "$ns" annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$expiry bucket lost" >/dev/null ||
            ctl_fail "the operator cannot set break glass on $ns"
        WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
            ctl_fail "alice cannot disable protection of $ns"
    done
}
