# A second validating webhook, a stand-in for any policy webhook, that holds an Etcd CREATE:
# kube-apiserver stores an object only once every validating webhook has answered, so what
# warden-webhook admitted and recorded is not stored while this one holds it. Sourced by a
# script that has run wh_init (its certificates) and, for holdhook_start, sourced snapshot.sh
# (a free port).
#
#   holdhook_start DIR NS [GROUP RESOURCE]   # default: druid.gardener.cloud etcds
#   holdhook_recorded PREFIX   # a claim naming PREFIX is recorded in a claim Lease
#   holdhook_serve ...         # the server holdhook_start (and glass.sh's glass_hold) runs, below
#
# serves on a free port of 127.0.0.1 with warden-webhook's certificate and registers itself
# (ValidatingWebhookConfiguration zz-policy, failurePolicy Fail, timeoutSeconds 30: the
# longest the API server allows). While DIR/armed exists, a CREATE of an Etcd of namespace NS
# (or of GROUP/RESOURCE) is held until DIR/release exists, 28 s at most (then allowed); DIR/held is created when one
# is held. Everything else is allowed at once. Its log: DIR/log; stopped at exit.
holdhook_start() {
    local dir=$1 ns=$2 group=${3:-druid.gardener.cloud} resource=${4:-etcds}
    holdhook_serve "$dir" "$(snap_free_port)" CREATE "$ns" 28 \
        "{apiGroups: [$group], apiVersions: [v1alpha1], operations: [CREATE], resources: [$resource], scope: Namespaced}" \
        "$dir/release"
}

# holdhook_serve DIR PORT OP NS SECONDS RULE RELEASE...: the holding webhook on PORT of
# 127.0.0.1, registered as zz-policy for RULE (a rules entry in flow style) once it listens.
# With NS, an OP request of namespace NS is held while DIR/armed exists: DIR/held is written
# (the oldObject's resourceVersion) and the answer waits for DIR/release. With NS empty, an OP
# request of any namespace N is held while DIR/armed-N exists: DIR/held-N-I is written (I
# counting from 0) and the answer waits for DIR/release-N. SECONDS at most, then allowed;
# everything else is allowed at once. Its log: DIR/log; HOLDHOOK_PID its pid; at exit the files
# RELEASE... are created (a held request answers) and it is stopped.
holdhook_serve() {
    local dir=$1 port=$2 op=$3 ns=$4 secs=$5 rule=$6 deadline
    shift 6
    mkdir -p "$dir"
    python3 - "$dir" "$port" "$WH_DIR/certs" "$op" "$ns" "$secs" >"$dir/log" 2>&1 <<'PY' &
import json, os, ssl, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
d, port, op, only, secs = sys.argv[1], int(sys.argv[2]), sys.argv[4], sys.argv[5], float(sys.argv[6])
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        rv = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        req = rv.get("request", {})
        ns = req.get("namespace")
        sfx = "" if only else "-" + ns
        if ((not only or ns == only) and os.path.exists(os.path.join(d, "armed" + sfx))
                and req.get("operation") == op):
            held, n = os.path.join(d, "held"), 0
            while not only and os.path.exists(os.path.join(d, "held-%s-%d" % (ns, n))):
                n += 1
            if not only:
                held = os.path.join(d, "held-%s-%d" % (ns, n))
            open(held, "w").write(
                json.dumps((req.get("oldObject") or {}).get("metadata", {}).get("resourceVersion")))
            end = time.time() + secs
            while time.time() < end and not os.path.exists(os.path.join(d, "release" + sfx)):
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
    HOLDHOOK_PID=$!
    ksim_on_exit "touch $*; reap_child $HOLDHOOK_PID 5 TERM || true"
    # registered only once it listens: with failurePolicy Fail, a request sent before would be
    # refused (python's start takes seconds on a loaded machine)
    deadline=$((SECONDS + 60))
    until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        kill -0 "$HOLDHOOK_PID" 2>/dev/null && [ $SECONDS -lt $deadline ] ||
            ctl_fail "the holding webhook did not listen on $port: $(cat "$dir/log")"
        sleep 0.1
    done
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
  - $rule
EOF
}

# Succeeds when a record naming PREFIX is in a claim Lease (common/pclaim: what warden-webhook
# records when it admits a claim, before the API server stores the object).
holdhook_recorded() {
    kc get leases -A -o json | jq -e --arg p "$1" '[.items[] | select(.metadata.name | startswith("etcd-warden-claims-"))
        | .metadata.annotations["etcd-warden.io/claims"] // "[]" | fromjson | .[] | select(tostring | contains($p))] | length > 0' >/dev/null
}
