#!/usr/bin/env bash
# warden-controller end to end: the final snapshot over HTTPS. An Etcd with spec.backup.tls
# (CA in the Secret of tlsCASecretRef, data key bundle.crt) hibernates; backup-double serves
# HTTPS on the client Service's clusterIP with a certificate for <etcd>-client.<ns>.svc, so
# the snapshot succeeds only when the controller connects to the clusterIP while verifying
# the Service name (CURLOPT_CONNECT_TO); with a certificate for another name and CA the
# request never reaches the sidecar, the task records the transport error and nothing is
# scaled down.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)

ctl_stage
druid_etcd shoot etcd-tls --tls
druid_etcd shoot etcd-wrong --tls
for e in etcd-tls etcd-wrong; do
    "$root/certs/gen-certs.sh" -o "$CTL_DIR/$e" -n shoot -s "$e-client" >/dev/null
    kc -n shoot create secret generic "$e-ca" --from-file=bundle.crt="$CTL_DIR/$e/ca.crt" >/dev/null
done
druid_double_for shoot etcd-tls --tls-dir "$CTL_DIR/etcd-tls"
double_tls=$DRUID_DOUBLE_URL
# etcd-wrong's sidecar presents etcd-tls's certificate (another name, another CA).
druid_double_for shoot etcd-wrong --tls-dir "$CTL_DIR/etcd-tls"
double_wrong=$DRUID_DOUBLE_URL
[[ $double_tls == https://* ]] || ctl_fail "the double does not serve HTTPS: $double_tls"
ctl_start --snapshot-retries 1

kc -n shoot annotate etcd etcd-tls etcd-warden.io/hibernate=true >/dev/null
kc -n shoot annotate etcd etcd-wrong etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase shoot etcd-tls Hibernated 40
reqs=$(curl -sfk "$double_tls/admin/requests")
grep -q '"path":"/snapshot/full","query":{"final":"true"},"code":200' <<<"$reqs" ||
    ctl_fail "no successful HTTPS final snapshot: $reqs"
ok "final snapshot over HTTPS to the clusterIP, certificate verified for etcd-tls-client.shoot.svc"
expect "scaled to 0" "0" "$(jp shoot sts/etcd-tls '{.spec.replicas}')"

# A TLS failure is a transport error: recorded on the task and retried until its timeout
# (etcd-druid's semantics), the flow waits in FinalSnapshot.
task_err() { jp shoot etcdopstasks '{range .items[?(@.spec.etcdName=="etcd-wrong")]}{.status.state} {.status.lastErrors[*].code}{"\n"}{end}'; }
err_seen() { task_err | grep -q '^InProgress .*ERR_EXECUTE_HTTP_REQUEST'; }
ksim_wait 30 err_seen || ctl_fail "etcd-wrong's task: $(task_err)"
ok "the task records ERR_EXECUTE_HTTP_REQUEST and stays InProgress: $(task_err | head -1)"
sleep 2
expect "still waiting for the snapshot" "FinalSnapshot" "$(ctl_phase shoot etcd-wrong)"
expect "the sidecar with the wrong certificate got no snapshot request through" "" \
    "$(curl -sfk "$double_wrong/admin/requests")"
expect "not scaled down" "3" "$(jp shoot sts/etcd-wrong '{.spec.replicas}')"
ctl_stop
echo "PASS"
