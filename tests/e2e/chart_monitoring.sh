#!/usr/bin/env bash
# The chart's alerts and dashboard (values prometheusRule and grafanaDashboard, rendered
# with tests/chart/values/monitoring.yaml):
#  - the PrometheusRule's groups pass `promtool check rules` and the unit tests of
#    tests/chart/alerts/alerts_test.yaml, which hold a firing and a silent case of every
#    alert (checked here); each alert has a summary, a description and a runbook_url whose
#    anchor is a heading of docs/troubleshooting.md;
#  - the dashboard ConfigMap carries the sidecar label and valid JSON;
#  - every metric name the dashboard's and the alerts' expressions read is in the /metrics
#    of a live warden-controller and warden-webhook (started on kube-sim, with an Etcd and
#    its components created through the webhook so that its request series exist, the Etcd
#    hibernating while no sidecar answers, and a second Etcd inside its prefix); the
#    per-object gauges name that Etcd and its entry, and drop its series once it is woken;
#    a dashboard naming an unknown metric is shown to fail the check.
# promtool is Debian's prometheus package (tests/run-all.sh installs it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../lib/controller.sh"
. "$here/../lib/chart.sh"

command -v promtool >/dev/null || wh_fail "promtool is missing (tests/run-all.sh installs prometheus)"
chart_tool
wh_init
work=$WH_DIR/monitoring
mkdir -p "$work"
r=$work/chart.yaml
chart_render "$r" -f "$root/tests/chart/values/monitoring.yaml" || wh_fail "render failed"

# ---- alerts
chart_get "$r" PrometheusRule etcd-warden spec >"$work/rules.yaml" || wh_fail "no PrometheusRule rendered"
cp "$root/tests/chart/alerts/alerts_test.yaml" "$work/"
promtool check rules "$work/rules.yaml" || wh_fail "promtool check rules"
(cd "$work" && promtool test rules alerts_test.yaml) || wh_fail "promtool test rules"
alerts=$(jq -r '.groups[].rules[].alert' "$work/rules.yaml")
[ "$(echo "$alerts" | wc -l)" -ge 11 ] || wh_fail "fewer alerts than expected: $alerts"
for a in $alerts; do
    # a silent case (exp_alerts: []) and a firing one (exp_labels) of each alert
    grep -q "alertname: $a, exp_alerts: \[\]" "$work/alerts_test.yaml" ||
        wh_fail "$a has no case where it stays silent"
    grep -A2 "alertname: $a\$" "$work/alerts_test.yaml" | grep -q 'exp_labels' ||
        wh_fail "$a has no case where it fires"
    for k in summary description runbook_url; do
        v=$(jq -r --arg a "$a" --arg k "$k" '.groups[].rules[] | select(.alert == $a) | .annotations[$k] // ""' "$work/rules.yaml")
        [ -n "$v" ] || wh_fail "$a has no $k"
    done
    anchor=$(jq -r --arg a "$a" '.groups[].rules[] | select(.alert == $a) | .annotations.runbook_url' "$work/rules.yaml" | sed 's/.*#//')
    # GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes
    sed -n 's/^#\{1,6\} //p' "$root/docs/troubleshooting.md" |
        tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g' | grep -qx "$anchor" ||
        wh_fail "$a: runbook anchor #$anchor is no heading of docs/troubleshooting.md"
done
echo "ok alerts: $(echo "$alerts" | wc -l) alerts, promtool check and unit tests pass"
# the drill alerts can be left out
chart_render "$work/nodrills.yaml" -f "$root/tests/chart/values/monitoring.yaml" \
    --set prometheusRule.restoreDrills=false || wh_fail "restoreDrills=false did not render"
chart_get "$work/nodrills.yaml" PrometheusRule etcd-warden spec | grep -q EtcdWardenNotRestorable &&
    wh_fail "restoreDrills=false rendered the drill alerts"
echo "ok restoreDrills=false: no drill alerts"

# ---- dashboard
chart_get "$r" ConfigMap etcd-warden-dashboard metadata.labels.grafana_dashboard | grep -qx '"1"' ||
    wh_fail "the dashboard ConfigMap lacks the label grafana_dashboard: \"1\""
chart_get "$r" ConfigMap etcd-warden-dashboard data | jq -r '.["etcd-warden.json"]' >"$work/dashboard.json"
jq -e '.panels | length > 10' "$work/dashboard.json" >/dev/null || wh_fail "the dashboard is not valid JSON with panels"
cmp -s <(jq -S . "$work/dashboard.json") <(jq -S . "$root/charts/etcd-warden/dashboards/etcd-warden.json") ||
    wh_fail "the ConfigMap's dashboard differs from charts/etcd-warden/dashboards/etcd-warden.json"

# ---- every metric they read, against a live scrape of both programs
wh_metrics_port=$(wh_free_port)
CTL_WEBHOOK_FLAGS="--metrics-bind-address 127.0.0.1:$wh_metrics_port" ctl_stage
# both namespaces with the backup Secret their Etcds name: without it an Etcd gets no entry
ctl_namespace shoot other2
druid_etcd shoot etcd-main --bucket # no sidecar answers: its final snapshot fails
ctl_backup_secret etcd-warden bucket-credentials
kc apply -f - >/dev/null <<END
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: eu-west-1}
spec: {provider: aws, container: etcd-bucket, secretRef: {namespace: etcd-warden, name: bucket-credentials}}
END
# a second cluster inside etcd-main's prefix: an object admitted before the rule (ctl_stage
# registers the Etcd webhook for UPDATE only; with CREATE it refuses the overlapping claim)
ctl_store_etcd other2 etcd-dup S3 etcd-bucket shoot--etcd-main/x
ctl_start --backup-entries --backups
scrape() { { ctl_metrics; curl -sf "http://127.0.0.1:$wh_metrics_port/metrics"; } >"$work/scrape.txt"; }
# a review the webhook denies and one it allows: its request and decision series exist
kc -n shoot delete statefulset etcd-main >/dev/null 2>&1 && ctl_fail "deleting a component went through"
# the sidecar's record of its last full snapshot (etcd-backup-restore renews its Lease so)
kc_druid -n shoot patch lease etcd-main-full-snap --type merge \
    -p '{"spec":{"holderIdentity":"42","renewTime":"2026-01-02T03:04:05.250000Z"}}' >/dev/null
snap_time() { scrape && awk '$1 == "warden_etcd_last_full_snapshot_timestamp_seconds{etcd_namespace=\"shoot\",etcd=\"etcd-main\"}" {printf "%.2f", $2}' "$work/scrape.txt"; }
snap_time_is() { [ "$(snap_time)" = "$(date -u -d 2026-01-02T03:04:05.25Z +%s).25" ]; }
ksim_wait 30 snap_time_is || ctl_fail "last full snapshot time of etcd-main: '$(snap_time)'"
grep -q 'warden_etcd_last_full_snapshot_timestamp_seconds{etcd_namespace="other2"' "$work/scrape.txt" &&
    ctl_fail "a snapshot time for etcd-dup, which has no snapshot Lease"
echo "ok last full snapshot: the time in etcd-main-full-snap's renewTime"
# a restore drill of etcd-main whose last drill failed after a good one (its status as the
# controller writes it from a Job; the controller keeps what it did not find itself)
kc apply -f - >/dev/null <<END
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestoreDrill
metadata: {name: nightly, namespace: shoot}
spec: {schedule: "0 0 1 1 *", target: {etcdName: etcd-main}}
END
kc -n shoot patch etcdrestoredrill nightly --subresource=status --type merge -p \
    '{"status":{"etcdName":"etcd-main","lastResult":"NotRestorable","lastSuccessfulDrillTime":"2026-01-01T03:00:00Z","newestRestorableSnapshotTime":"2026-01-01T02:59:00Z"}}' >/dev/null
drill_series() { # NAME VALUE: the drill's series of NAME holds VALUE (whole seconds)
    scrape && [ "$(awk -v m="$1{etcd_namespace=\"shoot\",etcd=\"etcd-main\",drill=\"nightly\"}" \
        '$1 == m { printf "%.0f", $2 }' "$work/scrape.txt")" = "$2" ]
}
for s in "warden_etcd_restorable 0" \
         "warden_etcd_last_successful_drill_timestamp_seconds $(date -u -d 2026-01-01T03:00:00Z +%s)" \
         "warden_etcd_newest_restorable_snapshot_timestamp_seconds $(date -u -d 2026-01-01T02:59:00Z +%s)"; do
    # shellcheck disable=SC2086
    ksim_wait 30 drill_series $s || { grep drill "$work/scrape.txt" >&2; ctl_fail "no series $s"; }
done
echo "ok restore drill gauges: restorable 0, the last successful drill, the newest restorable snapshot"
kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "annotating the Etcd"
# the per-object gauges name the objects: etcd-main's phase and failing final snapshot,
# the entries in conflict
series() { scrape && grep -qF "$1" "$work/scrape.txt"; }
for s in 'warden_etcd_hibernation_phase{etcd_namespace="shoot",etcd="etcd-main",phase="FinalSnapshot"} 1' \
         'warden_etcd_final_snapshot_failing{etcd_namespace="shoot",etcd="etcd-main"} 1' \
         'etcd_namespace="other2",etcd="etcd-dup"} 1' 'etcd_namespace="shoot",etcd="etcd-main"} 1'; do
    ksim_wait 30 series "$s" || { cat "$work/scrape.txt" >&2; ctl_fail "no series $s"; }
done
grep -q '^warden_backup_entry_prefix_conflict{entry="shoot--etcd-main--[0-9a-f]*",etcd_namespace="shoot",etcd="etcd-main"} 1$' "$work/scrape.txt" ||
    ctl_fail "no prefix conflict series of etcd-main's entry"
# a hibernated Etcd's immutable-until: the task's status.immutableUntil (as the controller
# reads it from its CronJob's last run) is the gauge's value
kc apply -f - >/dev/null <<END
apiVersion: etcd-warden.io/v1alpha1
kind: ExtendFullSnapshotImmutabilityTask
metadata: {name: etcd-dup-extend-immutability, namespace: other2}
spec: {etcdName: etcd-dup}
END
kc -n other2 patch extendfullsnapshotimmutabilitytask etcd-dup-extend-immutability --subresource=status \
    --type merge -p '{"status":{"immutableUntil":"2026-12-01T10:00:00Z"}}' >/dev/null ||
    ctl_fail "writing the task's status"
until_is() { # the series' value is the date
    scrape && awk -v want="$(date -u -d 2026-12-01T10:00:00Z +%s)" \
        '$1 == "warden_etcd_snapshot_immutable_until_timestamp_seconds{etcd_namespace=\"other2\",etcd=\"etcd-dup\"}" && $2 == want {ok = 1} END {exit !ok}' "$work/scrape.txt"
}
ksim_wait 30 until_is || { grep '^warden_etcd_snap' "$work/scrape.txt" >&2; ctl_fail "no immutable-until series of etcd-dup"; }
echo "ok immutable until: etcd-dup's task's status.immutableUntil"
cp "$work/scrape.txt" "$work/scrape-all.txt"
echo "ok per-object gauges: $(grep -c '^warden_\(etcd_\|backup_entry_prefix_conflict{\)' "$work/scrape.txt") series name their Etcds and entries"
# woken, etcd-main's series go
kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null
gone() { scrape && ! grep -q 'etcd_namespace="shoot",etcd="etcd-main"' <(grep '^warden_etcd_\(hibernation_phase\|final_snapshot_failing\){' "$work/scrape.txt"); }
ksim_wait 30 gone || { grep '^warden_etcd_' "$work/scrape.txt" >&2; ctl_fail "etcd-main's series stay after the wake-up"; }
echo "ok woken: etcd-main's phase and failing series are gone"
mv "$work/scrape-all.txt" "$work/scrape.txt"
grep -v '^#' "$work/scrape.txt" | sed 's/[{ ].*//' | sort -u >"$work/exported.txt"
check_names() { # FILE: fail listing the names FILE's expressions read that no program exports
    local unknown
    python3 "$root/tests/chart/promnames.py" "$1" >"$work/read.txt" || return 1
    unknown=$(comm -23 "$work/read.txt" "$work/exported.txt")
    [ -z "$unknown" ] || { echo "not exported: $unknown" >&2; return 1; }
}
check_names "$work/dashboard.json" || wh_fail "the dashboard reads a metric no program exports"
echo "ok dashboard: $(wc -l <"$work/read.txt") metric names, each exported"
check_names "$work/rules.yaml" || wh_fail "an alert reads a metric no program exports"
echo "ok alerts: $(wc -l <"$work/read.txt") metric names, each exported"
# the check fails on a name no program exports
jq '.panels[1].targets[0].expr = "max(etcd_warden_drill_restorable)"' "$work/dashboard.json" >"$work/bad.json"
check_names "$work/bad.json" 2>/dev/null && wh_fail "a dashboard reading an unknown metric passed"
echo "ok an unknown metric fails the check"
ctl_stop
