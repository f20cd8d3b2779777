#!/usr/bin/env bash
# One prefix, one cluster, with kubectl against kube-sim, warden-webhook (--backup-entries,
# the Etcd webhook also on CREATE as the chart registers it) and warden-controller keeping
# the BackupEntries of a BackupBucket: an Etcd whose prefix in the same store overlaps
# another Etcd's as the backup sidecar lists it (one cleaned prefix a string prefix of the
# other: "ns--etcd-2" next to "ns--etcd", "/x" next to "x", "/" next to anything) is refused
# naming the other; the same prefix in another container is allowed. An UPDATE moving an Etcd into another's prefix is
# refused, one keeping its prefix is not. A deleted Etcd's pending entry keeps its prefix
# from a different Etcd (named in the message) but not from the same namespace/name,
# which reattaches, unless its backups are being deleted. A refusal names the other owner only
# to its own namespace. Two CREATEs of overlapping prefixes at once (24 rounds): exactly one
# admitted in each.
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
ctl_namespace shoot other team
ctl_backup_secret etcd-warden creds
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
refused "equal prefix" 'a prefix claimed from another namespace' other etcd-copy shoot--etcd-main
refused "equal but for a trailing slash" 'a prefix claimed from another namespace' other etcd-copy shoot--etcd-main/
refused "nested inside another's" 'a prefix claimed from another namespace' other etcd-copy shoot--etcd-main/backup
refused "containing another's" 'a prefix claimed from another namespace' other etcd-team team
refused "inside another's, cleaned" 'a prefix claimed from another namespace' other etcd-team ./team//a/b
refused "a sibling the sidecar lists with it" 'of Etcd shoot/etcd-main' \
    shoot etcd-events shoot--etcd-main-events
refused "a leading slash the S3 client cleans away" 'of Etcd shoot/etcd-main' \
    shoot etcd-copy /shoot--etcd-main
refused "the whole bucket" 'a prefix claimed from another namespace' other etcd-copy /
out=$(etcd other etcd-copy shoot--etcd-main 2>&1) && ctl_fail "equal prefix allowed: $out"
case "$out" in *shoot/*) ctl_fail "another namespace's claim named: $out" ;; esac
ok "a refusal names nothing of another namespace's claim"
allowed "a prefix no other one starts" shoot etcd-events shoot--events
allowed "the same prefix in another container" other etcd-copy shoot--etcd-main other-bucket
allowed "an UPDATE keeping the prefix" shoot etcd-main shoot--etcd-main/
refused "an UPDATE moving into another's prefix" 'of Etcd shoot/etcd-events' \
    shoot etcd-main shoot--events/x

# A deleted Etcd's entry keeps its prefix within the grace period.
kc -n shoot delete etcd etcd-main >/dev/null
ksim_wait 60 phase_is etcd-main PendingDeletion || ctl_fail "entry not PendingDeletion"
ksim_wait 10 refused_now shoot etcd-steal shoot--etcd-main ||
    ctl_fail "a pending entry's prefix taken: $(etcd shoot etcd-steal shoot--etcd-main 2>&1)"
refused "a pending entry's prefix, for another Etcd" \
    'of BackupEntry shoot--etcd-main--' shoot etcd-steal shoot--etcd-main/x
refused "a pending entry's prefix, from another namespace" \
    'a prefix claimed from another namespace' other etcd-steal shoot--etcd-main/x
allowed "a pending entry's prefix, for the same namespace/name" shoot etcd-main shoot--etcd-main
ksim_wait 20 phase_is etcd-main Active || ctl_fail "entry not reattached"
ok "reattached"

# Re-created while its entry's backups are being deleted (the controller stopped with the
# entry in phase Deleting, as it is while its Job runs): refused, the Job would delete the
# new cluster's first snapshots; once the deletion is over (here: the phase back), allowed.
entry_main=$(kc get backupentries -o jsonpath='{.items[?(@.spec.etcd.name=="etcd-main")].metadata.name}')
kc -n shoot delete etcd etcd-main >/dev/null
ksim_wait 60 phase_is etcd-main PendingDeletion || ctl_fail "entry not PendingDeletion"
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

# Two CREATEs of overlapping prefixes at the same moment, from two namespaces (equal:
# "race-NN" and "/race-NN/"; or one a string prefix of the other: "race-NN" and
# "race-NN-b"), ROUNDS rounds: neither is in the webhook's caches when the other is
# reviewed, and the claim Lease of the store (common/pclaim) admits exactly one of them.
# The oracle is kubectl's answer and the API server's Etcds, not an entry.
ROUNDS=${WEBHOOK_PREFIX_ROUNDS:-24}
live_etcds() { # prefix: the namespaces of the stored Etcds named etcd whose prefix it starts
    kc get etcds -A -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name} {.spec.backup.store.prefix}{"\n"}{end}' |
        awk -v p="$1" '$2 == "etcd" { q = $3; gsub(/^\/+|\/+$/, "", q) } $2 == "etcd" && index(q, p) == 1 { print $1 }'
}
ctl_namespace race-a race-b
for i in $(seq -w 1 "$ROUNDS"); do
    if [ $((10#$i % 2)) -eq 0 ]; then pb="/race-$i/"; else pb="race-$i-b"; fi
    etcd race-a etcd "race-$i" >/dev/null 2>&1 &
    a=$!
    etcd race-b etcd "$pb" >/dev/null 2>&1 &
    b=$!
    admitted=0
    wait "$a" && admitted=$((admitted + 1))
    wait "$b" && admitted=$((admitted + 1))
    stored=$(live_etcds "race-$i" | wc -l | tr -d ' ')
    expect "race $i (race-$i, $pb): admitted" 1 "$admitted"
    expect "race $i: Etcds stored on the prefix" 1 "$stored"
    kc -n race-a delete etcd etcd --ignore-not-found >/dev/null
    kc -n race-b delete etcd etcd --ignore-not-found >/dev/null
done
ok "$ROUNDS rounds of two CREATEs of overlapping prefixes at once: exactly one admitted each"

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
