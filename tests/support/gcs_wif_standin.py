#!/usr/bin/env python3
"""The GCS JSON API stand-in (gcs_standin.py) with workload identity federation, for
warden-snapshot's external-account tests.

  gcs_wif_standin.py --bucket B --client-email E --audience A --subject-token-file F
                     [--retention S]

Everything gcs_standin.py serves, plus, as Google documents them:
  - POST /v1/token, Google STS's token exchange (RFC 8693 section 2.1, form encoded):
    grant_type urn:ietf:params:oauth:grant-type:token-exchange, audience A,
    requested_token_type urn:ietf:params:oauth:token-type:access_token,
    subject_token_type urn:ietf:params:oauth:token-type:jwt, subject_token = the
    current text of F (read at every call), scope; answers {access_token,
    issued_token_type, token_type, expires_in}, or 400 {error, error_description}.
    A token asked for with a devstorage scope reaches the bucket (federated access);
  - POST /v1/projects/-/serviceAccounts/E:generateAccessToken, IAM Credentials: with a
    federated token asked for with the cloud-platform scope (Bearer), a JSON body
    {"scope": [a devstorage scope], "lifetime"} gets {accessToken, expireTime} for the
    bucket; else 401 UNAUTHENTICATED, 403 PERMISSION_DENIED or 400 INVALID_ARGUMENT;
  - GET /_standin/calls: "exchange" and "impersonate" lines, one per granted call.
No JWT bearer key: --pubkey of gcs_standin.py is not used here.
Prints "gcs-standin ready PORT" once listening on 127.0.0.1.
"""
import argparse, datetime, json, os, secrets, sys, time
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gcs_standin as g  # noqa: E402

CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
FEDERATED = {}  # token from an exchange -> the scope it was asked for
CALLS = []


class Handler(g.Handler):
    def dispatch(self):
        path = self.path.split("?")[0]
        if path == "/v1/token" and self.command == "POST":
            with g.LOCK:
                return self.exchange()
        if path.startswith("/v1/projects/-/serviceAccounts/") and self.command == "POST":
            with g.LOCK:
                return self.impersonate(path)
        if path == "/_standin/calls":
            return self.send(200, "".join(c + "\n" for c in CALLS), ctype="text/plain")
        return super().dispatch()

    def exchange(self):
        import urllib.parse
        if not self.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
            return self.send(400, {"error": "invalid_request", "error_description": "Content-Type"})
        form = dict(urllib.parse.parse_qsl(self.body().decode()))
        want = {"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                "audience": g.ARGS.audience,
                "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
                "subject_token_type": "urn:ietf:params:oauth:token-type:jwt"}
        for k, v in want.items():
            if form.get(k) != v:
                return self.send(400, {"error": "invalid_request", "error_description": k})
        if not form.get("scope"):
            return self.send(400, {"error": "invalid_scope", "error_description": "scope"})
        with open(g.ARGS.subject_token_file) as f:
            if form.get("subject_token") != f.read().strip():
                return self.send(400, {"error": "invalid_grant",
                                       "error_description": "The subject token is not valid."})
        tok = secrets.token_hex(16)
        FEDERATED[tok] = form["scope"]
        if "devstorage" in form["scope"]:
            g.TOKENS.add(tok)
        CALLS.append("exchange")
        return self.send(200, {"access_token": tok, "expires_in": 3599, "token_type": "Bearer",
                               "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})

    def impersonate(self, path):
        a = self.headers.get("Authorization", "")
        if not (a.startswith("Bearer ") and FEDERATED.get(a[7:]) == CLOUD_PLATFORM):
            return self.send(401, {"error": {"code": 401, "message": "no federated token",
                                             "status": "UNAUTHENTICATED"}})
        if path != "/v1/projects/-/serviceAccounts/%s:generateAccessToken" % g.ARGS.client_email:
            return self.send(403, {"error": {"code": 403, "message": "Permission 'iam.serviceAccounts."
                                             "getAccessToken' denied", "status": "PERMISSION_DENIED"}})
        try:
            req = json.loads(self.body() or b"{}")
        except json.JSONDecodeError:
            req = {}
        if not any("devstorage" in sc for sc in req.get("scope", [])):
            return self.send(400, {"error": {"code": 400, "message": "scope",
                                             "status": "INVALID_ARGUMENT"}})
        tok = secrets.token_hex(16)
        g.TOKENS.add(tok)
        CALLS.append("impersonate")
        exp = datetime.datetime.fromtimestamp(int(time.time()) + 3600, datetime.timezone.utc)
        return self.send(200, {"accessToken": tok, "expireTime": exp.strftime("%Y-%m-%dT%H:%M:%SZ")})

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = lambda self: self.dispatch()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--client-email", required=True)
    ap.add_argument("--audience", required=True)
    ap.add_argument("--subject-token-file", required=True)
    ap.add_argument("--retention", type=int, default=0)
    g.ARGS = ap.parse_args()
    g.ARGS.pubkey = None
    g.STATE["retention"] = g.ARGS.retention
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    g.PORT = srv.server_address[1]
    print("gcs-standin ready %d" % g.PORT, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
