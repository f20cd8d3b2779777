#!/usr/bin/env bash
# One prefix, one cluster, with kubectl against kube-sim, warden-webhook (--backup-entries,
# the Etcd webhook also on CREATE as the chart registers it) and warden-controller keeping
# the BackupEntries of a BackupBucket: an Etcd whose prefix in the same store overlaps
# another Etcd's as the backup sidecar lists it (one cleaned prefix a string prefix of the
# other: "ns--etcd-2" next to "ns--etcd", "/x" next to "x", "/" next to anything) is refused
# naming the other; the same prefix in another container is allowed. An UPDATE moving an Etcd into another's prefix is
# refused, one keeping its prefix is not. A deleted Etcd's pending entry keeps its prefix
# from a different Etcd (named in the message) but not from the same namespace/name,
# which reattaches, unless its backups are being deleted. Two CREATEs of one prefix at once (8 rounds): one entry, the API server
# deciding; an Etcd admitted beside the owner gets a PrefixConflict event naming it.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

etcd() { # ns name prefix [container]
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: ${4:-etcd-bucket}, prefix: "$3", secretRef: {name: etcd-backup}}}
EOF
}
allowed() { # what, then etcd's arguments
    local what=$1 out
    shift
    out=$(etcd "$@" 2>&1) || ctl_fail "$what: refused: $out"
    ok "$what"
}
refused() { # what, the text the denial must hold, then etcd's arguments
    local what=$1 want=$2 out
    shift 2
    if out=$(etcd "$@" 2>&1); then ctl_fail "$what: allowed: $out"; fi
    case "$out" in
    *'denied the request: spec.backup.store.prefix'*"$want"*'one prefix, one cluster'*) ;;
    *) ctl_fail "$what: $out" ;;
    esac
    ok "$what"
}
refused_now() { ! out=$(etcd "$@" 2>&1) && grep -q 'BackupEntry' <<<"$out"; }
phase_is() { [ "$(kc get backupentries -o jsonpath="{.items[?(@.spec.etcd.name==\"$1\")].status.phase}")" = "$2" ]; }

CTL_WEBHOOK_FLAGS=--backup-entries ctl_stage
ctl_register_etcd_create
for ns in shoot other team; do kc create namespace "$ns" >/dev/null; done
kc -n etcd-warden create secret generic creds --from-literal=accessKeyID=S3RVER >/dev/null
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec: {provider: aws, container: etcd-bucket, secretRef: {namespace: etcd-warden, name: creds}, deletionGracePeriod: 1h}
EOF
ctl_start

allowed "first Etcd" shoot etcd-main shoot--etcd-main
allowed "first Etcd of a team" team etcd-a team/a
ksim_wait 10 phase_is etcd-main Active || ctl_fail "no entry for etcd-main"
refused "equal prefix" 'of Etcd shoot/etcd-main' other etcd-copy shoot--etcd-main
refused "equal but for a trailing slash" 'of Etcd shoot/etcd-main' other etcd-copy shoot--etcd-main/
refused "nested inside another's" 'of Etcd shoot/etcd-main' other etcd-copy shoot--etcd-main/backup
refused "containing another's" 'of Etcd team/etcd-a' other etcd-team team
refused "inside another's, cleaned" 'of Etcd team/etcd-a' other etcd-team ./team//a/b
refused "a sibling the sidecar lists with it" 'of Etcd shoot/etcd-main' \
    shoot etcd-events shoot--etcd-main-events
refused "a leading slash the S3 client cleans away" 'of Etcd shoot/etcd-main' \
    other etcd-copy /shoot--etcd-main
refused "the whole bucket" 'of Etcd ' other etcd-copy /
allowed "a prefix no other one starts" shoot etcd-events shoot--events
allowed "the same prefix in another container" other etcd-copy shoot--etcd-main other-bucket
allowed "an UPDATE keeping the prefix" shoot etcd-main shoot--etcd-main/
refused "an UPDATE moving into another's prefix" 'of Etcd shoot/etcd-events' \
    shoot etcd-main shoot--events/x

# A deleted Etcd's entry keeps its prefix within the grace period.
kc -n shoot delete etcd etcd-main >/dev/null
ksim_wait 20 phase_is etcd-main PendingDeletion || ctl_fail "entry not PendingDeletion"
ksim_wait 10 refused_now other etcd-steal shoot--etcd-main ||
    ctl_fail "a pending entry's prefix taken: $(etcd other etcd-steal shoot--etcd-main 2>&1)"
refused "a pending entry's prefix, for another Etcd" \
    'of BackupEntry shoot--etcd-main--' other etcd-steal shoot--etcd-main/x
allowed "a pending entry's prefix, for the same namespace/name" shoot etcd-main shoot--etcd-main
ksim_wait 20 phase_is etcd-main Active || ctl_fail "entry not reattached"
ok "reattached"

# Re-created while its entry's backups are being deleted (the controller stopped with the
# entry in phase Deleting, as it is while its Job runs): refused, the Job would delete the
# new cluster's first snapshots; once the deletion is over (here: the phase back), allowed.
entry_main=$(kc get backupentries -o jsonpath='{.items[?(@.spec.etcd.name=="etcd-main")].metadata.name}')
kc -n shoot delete etcd etcd-main >/dev/null
ksim_wait 20 phase_is etcd-main PendingDeletion || ctl_fail "entry not PendingDeletion"
ctl_stop
set_entry_phase() {
    kc patch backupentry "$entry_main" --subresource=status --type merge -p "{\"status\":{\"phase\":\"$1\"}}" >/dev/null
}
set_entry_phase Deleting
deleting_refused() { ! out=$(etcd shoot etcd-main shoot--etcd-main 2>&1) && grep -q 'whose backups are being deleted' <<<"$out"; }
ksim_wait 10 deleting_refused || ctl_fail "re-created while Deleting: $(etcd shoot etcd-main shoot--etcd-main 2>&1)"
refused "re-created while its backups are being deleted" 'whose backups are being deleted' \
    shoot etcd-main shoot--etcd-main
set_entry_phase PendingDeletion
ctl_start
recreated() { etcd shoot etcd-main shoot--etcd-main >/dev/null 2>&1; }
ksim_wait 10 recreated || ctl_fail "not re-created: $(etcd shoot etcd-main shoot--etcd-main 2>&1)"
ok "re-created once the deletion is over"
ksim_wait 20 phase_is etcd-main Active || ctl_fail "entry not reattached"

# Two CREATEs of one prefix at the same moment (spelled "race-N" and "/race-N/"): the webhook
# may admit both, since neither is in its cache when the other is reviewed; the entry,
# named after the claim, is created once, so the API server keeps one owner. The other
# Etcd, when admitted, gets a PrefixConflict event naming the owner.
entries_of() { # canonical prefix: "<entry> <ns>/<name>" of each entry whose prefix it is
    kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name} {.spec.etcd.namespace}/{.spec.etcd.name} {.spec.prefix}{"\n"}{end}' |
        awk -v p="$1" '{ q = $3; gsub(/^\/+|\/+$/, "", q) } q == p { print $1, $2 }'
}
one_entry() { [ "$(entries_of "$1" | wc -l)" -eq 1 ]; }
loser_warned() { ctl_events "$1" etcd | grep -q "^Warning PrefixConflict: prefix .* is claimed by BackupEntry .* of Etcd $2 "; }
kc create namespace race-a >/dev/null
kc create namespace race-b >/dev/null
both=0
for i in 1 2 3 4 5 6 7 8; do
    etcd race-a etcd "race-$i" >/dev/null 2>&1 &
    a=$!
    etcd race-b etcd "/race-$i/" >/dev/null 2>&1 &
    b=$!
    admitted=0
    wait "$a" && admitted=$((admitted + 1))
    wait "$b" && admitted=$((admitted + 1))
    [ "$admitted" -ge 1 ] || ctl_fail "race $i: neither CREATE admitted"
    ksim_wait 20 one_entry "race-$i" || ctl_fail "race $i: entries $(entries_of "race-$i")"
    if [ "$admitted" -eq 2 ]; then
        both=$((both + 1))
        owner=$(entries_of "race-$i" | awk '{print $2}')
        case $owner in race-a/etcd) loser=race-b ;; race-b/etcd) loser=race-a ;; *) ctl_fail "race $i: owner $owner" ;; esac
        ksim_wait 20 loser_warned "$loser" "$owner" ||
            ctl_fail "race $i: no PrefixConflict event on $loser/etcd: $(ctl_events "$loser" etcd)"
    fi
    kc -n race-a delete etcd etcd --ignore-not-found >/dev/null
    kc -n race-b delete etcd etcd --ignore-not-found >/dev/null
done
ok "8 rounds of two CREATEs of one prefix at once: one entry each ($both rounds admitted both)"

# A careless toggle gets an answer, not silence.
out=$(kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate=yes 2>&1) &&
    ctl_fail "hibernate=yes accepted: $out"
grep -q 'is neither "true" (hibernate) nor "false"' <<<"$out" || ctl_fail "hibernate=yes: $out"
out=$(kc -n shoot annotate etcd etcd-main etcd-warden.io/allow-scale-down-without-snapshot= 2>&1) &&
    ctl_fail "an empty break-glass reason accepted: $out"
grep -q 'say why' <<<"$out" || ctl_fail "empty break-glass reason: $out"
ok "hibernate=yes and a break glass without a reason are refused, saying what to write"
ctl_stop
echo "webhook_prefix: ok"
