#!/usr/bin/env bash
# warden-controller with the longest Etcd names: 56 characters (the longest whose
# "<name>-client" Service etcd-druid can create, a DNS-1035 label) and 44 (the first whose
# "<name>-extend-immutability" no longer fits a label value). Each is hibernated with
# bucket immutability (the etcd-warden.io/immutability-retention-type annotation) through
# to its CronJob. kube-sim validates names, labels and annotations as kube-apiserver does,
# so every name and label the controller derives must be accepted: the final-snapshot
# task, the ExtendFullSnapshotImmutabilityTask, its CronJob (at most 52 characters) and
# their labels.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

long56=an-etcd-name-of-fifty-six-characters-is-the-longest-one1
long44=a-rather-long-etcd-name-of-44-characters-xyz
[ ${#long56} = 56 ] && [ ${#long44} = 44 ] || ctl_fail "test names of the wrong length"

ctl_stage
for n in "$long56" "$long44"; do
    druid_etcd shoot "$n" --schedule "15 */6 * * *"
    druid_double_for shoot "$n"
    kc -n shoot annotate etcd "$n" etcd-warden.io/immutability-retention-type=bucket >/dev/null
done
ctl_start

for n in "$long56" "$long44"; do
    kc -n shoot annotate etcd "$n" etcd-warden.io/hibernate=true >/dev/null
done
for n in "$long56" "$long44"; do
    kc -n shoot wait "etcd/$n" --timeout="$(ksim_secs 40)s" \
        --for=jsonpath='{.metadata.annotations.etcd-warden\.io/hibernation-phase}'=Hibernated >/dev/null ||
        ctl_fail "$n did not reach Hibernated: $(jp shoot "etcd/$n" '{.metadata.annotations}')"
    ok "$n (${#n} characters) hibernated"

    task=$(jp shoot etcdopstasks "{range .items[?(@.spec.etcdName==\"$n\")]}{.metadata.name} {.status.state}{\"\n\"}{end}")
    expect "one final snapshot task, Succeeded" "$n-final-snapshot-1 Succeeded" "$task"
    of=$(jp shoot "etcdopstask/$n-final-snapshot-1" '{.metadata.labels.etcd-warden\.io/final-snapshot-of}')
    expect "final-snapshot-of label" "$n" "$of"

    imt="$n-extend-immutability"
    ksim_wait 15 kc -n shoot get extendfullsnapshotimmutabilitytask "$imt" >/dev/null ||
        ctl_fail "no ExtendFullSnapshotImmutabilityTask $imt: $(ctl_events shoot "$n")"
    ksim_wait 15 test -n "$(jp shoot cronjobs "{.items[?(@.metadata.ownerReferences[0].name==\"$imt\")].metadata.name}")" ||
        ctl_fail "no CronJob for $imt: $(kc -n shoot get extendfullsnapshotimmutabilitytask "$imt" -o jsonpath='{.status}') $(ctl_events shoot "$imt")"
    cj=$(jp shoot cronjobs "{.items[?(@.metadata.ownerReferences[0].name==\"$imt\")].metadata.name}")
    [ "${#cj}" -le 52 ] || ctl_fail "CronJob name of ${#cj} characters: $cj"
    ok "CronJob $cj (${#cj} characters)"
    labels=$(jp shoot "cronjob/$cj" '{.metadata.labels}')
    part_of=$(jp shoot "cronjob/$cj" '{.metadata.labels.app\.kubernetes\.io/part-of}')
    expect "CronJob part-of label" "$n" "$part_of"
    task_label=$(jp shoot "cronjob/$cj" '{.metadata.labels.etcd-warden\.io/task}')
    [ -n "$task_label" ] && [ "${#task_label}" -le 63 ] || ctl_fail "task label: $labels"
    # the CronJob is found by its labels as a user would
    expect "selected by its labels" "cronjob.batch/$cj" \
        "$(kc -n shoot get cronjobs -l "app.kubernetes.io/part-of=$n,etcd-warden.io/task=$task_label" -o name)"
    expect "task Ready" "True CronJobReady" \
        "$(jp shoot "extendfullsnapshotimmutabilitytask/$imt" '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}')"
done
echo "controller_long_names: ok"
