# A second validating webhook, a stand-in for any policy webhook, that holds an Etcd CREATE:
# kube-apiserver stores an object only once every validating webhook has answered, so what
# warden-webhook admitted and recorded is not stored while this one holds it. Sourced by a
# script that has run wh_init (its certificates) and sourced snapshot.sh (a free port, waiting for it).
#
#   holdhook_start DIR NS [GROUP RESOURCE]   # default: druid.gardener.cloud etcds
#   holdhook_recorded PREFIX   # a claim naming PREFIX is recorded in a claim Lease
#
# serves on a free port of 127.0.0.1 with warden-webhook's certificate and registers itself
# (ValidatingWebhookConfiguration zz-policy, failurePolicy Fail, timeoutSeconds 30: the
# longest the API server allows). While DIR/armed exists, a CREATE of an Etcd of namespace NS
# (or of GROUP/RESOURCE) is held until DIR/release exists, 28 s at most (then allowed); DIR/held is created when one
# is held. Everything else is allowed at once. Its log: DIR/log; stopped at exit.
holdhook_start() {
    local dir=$1 ns=$2 group=${3:-druid.gardener.cloud} resource=${4:-etcds} port pid
    mkdir -p "$dir"
    port=$(snap_free_port)
    python3 - "$dir" "$port" "$WH_DIR/certs" "$ns" >"$dir/log" 2>&1 <<'PY' &
import json, os, ssl, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
d, port, ns = sys.argv[1], int(sys.argv[2]), sys.argv[4]
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        rv = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        req = rv.get("request", {})
        if (os.path.exists(os.path.join(d, "armed")) and req.get("namespace") == ns
                and req.get("operation") == "CREATE"):
            open(os.path.join(d, "held"), "w").close()
            end = time.time() + 28
            while time.time() < end and not os.path.exists(os.path.join(d, "release")):
                time.sleep(0.05)
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": {"uid": req.get("uid", ""), "allowed": True}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = ThreadingHTTPServer(("127.0.0.1", port), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(os.path.join(sys.argv[3], "tls.crt"), os.path.join(sys.argv[3], "tls.key"))
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
PY
    pid=$!
    ksim_on_exit "touch $dir/release; reap_child $pid 5 TERM || true"
    # registered only once it listens: with failurePolicy Fail, a CREATE sent before would be
    # refused (python's start takes seconds on a loaded machine)
    _snap_wait_port "$port" "$pid" || ctl_fail "the holding webhook did not listen on $port: $(cat "$dir/log")"
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot register the holding webhook"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: zz-policy}
webhooks:
- name: hold.policy.example.test
  admissionReviewVersions: [v1]
  clientConfig: {url: "https://127.0.0.1:$port/", caBundle: "$WH_CA_BUNDLE"}
  failurePolicy: Fail
  sideEffects: None
  timeoutSeconds: 30
  rules:
  - {apiGroups: [$group], apiVersions: [v1alpha1], operations: [CREATE], resources: [$resource], scope: Namespaced}
EOF
}

# Succeeds when a record naming PREFIX is in a claim Lease (common/pclaim: what warden-webhook
# records when it admits a claim, before the API server stores the object).
holdhook_recorded() {
    kc get leases -A -o json | jq -e --arg p "$1" '[.items[] | select(.metadata.name | startswith("etcd-warden-claims-"))
        | .metadata.annotations["etcd-warden.io/claims"] // "[]" | fromjson | .[] | select(tostring | contains($p))] | length > 0' >/dev/null
}
