#!/usr/bin/env python3
"""A stand-in for AWS STS's AssumeRoleWithWebIdentity, and an S3 gate that accepts
only the temporary credentials it issued (tests only).

  sts_standin.py --s3-upstream URL --role-arn ARN --token-file PATH
                 [--lifetime SECONDS]... [--log FILE]

Listens on two free loopback ports and prints "sts-standin ready STS_PORT S3_PORT".

STS (the query API as the AWS STS API reference specifies AssumeRoleWithWebIdentity;
the request is not signed): POST / with an application/x-www-form-urlencoded body,
no Authorization header, and exactly these parameters:
  Action=AssumeRoleWithWebIdentity, Version=2011-06-15,
  RoleArn (20..2048 characters; must be --role-arn),
  RoleSessionName (2..64 characters of [A-Za-z0-9_+=,.@-]),
  WebIdentityToken (4..20000 characters; must be the text of --token-file, read
  at every call, so a rotated token is expected from then on),
  DurationSeconds (optional, 900..43200).
A refusal is a 400 ErrorResponse (MissingParameter, ValidationError,
InvalidAction, InvalidParameterValue) or 403 AccessDenied / 400 InvalidIdentityToken,
with the Type/Code/Message layout of the query API. Success is an
AssumeRoleWithWebIdentityResponse with fresh AccessKeyId (ASIA...), SecretAccessKey,
SessionToken and an Expiration of now + the Nth --lifetime for the Nth call (the
last one repeats; default 3600).

S3 gate: every request is forwarded to --s3-upstream (s3rver, which accepts
anonymous requests) only when, as AWS requires of temporary credentials, it carries
x-amz-security-token with a token this stand-in issued and that has not expired,
its Authorization is SigV4 with that token's AccessKeyId, lists
x-amz-security-token among its SignedHeaders and its signature, recomputed with
the token's secret key by AWS's canonical-request rules, matches; else 403
InvalidAccessKeyId, 400 InvalidToken, 400 ExpiredToken, 403 AccessDenied or 403
SignatureDoesNotMatch. Forwarded requests go upstream without Authorization and
token (anonymous: the emulator knows none of the temporary keys).

--log FILE gets one JSON line per request: {"api": "sts"|"s3", "ok": bool, ...}.
"""
import argparse, datetime, hashlib, hmac, http.client, http.server, json, re, secrets, sys
import threading, time, urllib.parse

lock = threading.Lock()
issued = {}  # session token -> (access key, expiry unix seconds)
calls = [0]
args = None

SESSION_NAME = re.compile(r"^[\w+=,.@-]{2,64}$", re.ASCII)
PARAMS = {"Action", "Version", "RoleArn", "RoleSessionName", "WebIdentityToken", "DurationSeconds"}


def log(entry):
    if args.log:
        with lock, open(args.log, "a") as f:
            f.write(json.dumps(entry) + "\n")


def error_xml(code, message, sender=True):
    return ('<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>%s</Type>'
            "<Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>"
            % ("Sender" if sender else "Receiver", code, message, secrets.token_hex(8)))


def check_sts(handler, body):
    """(status, code, message) of a refusal, or None; and the parsed form."""
    ctype = handler.headers.get("Content-Type", "")
    if handler.command != "POST" or handler.path != "/":
        return (400, "InvalidAction", "expected POST /"), {}
    if not ctype.startswith("application/x-www-form-urlencoded"):
        return (400, "InvalidParameterValue", "Content-Type %s" % ctype), {}
    if handler.headers.get("Authorization"):
        return (400, "InvalidParameterValue", "AssumeRoleWithWebIdentity is not signed"), {}
    try:
        pairs = urllib.parse.parse_qsl(body.decode(), keep_blank_values=True, strict_parsing=True)
    except ValueError as e:
        return (400, "InvalidParameterValue", "malformed form: %s" % e), {}
    form = dict(pairs)
    if len(form) != len(pairs) or set(form) - PARAMS:
        return (400, "InvalidParameterValue", "unexpected or repeated parameters %s" % sorted(form)), form
    for p in ("Action", "Version", "RoleArn", "RoleSessionName", "WebIdentityToken"):
        if p not in form:
            return (400, "MissingParameter", "%s is required" % p), form
    if form["Action"] != "AssumeRoleWithWebIdentity" or form["Version"] != "2011-06-15":
        return (400, "InvalidAction", "%s %s" % (form["Action"], form["Version"])), form
    if not 20 <= len(form["RoleArn"]) <= 2048:
        return (400, "ValidationError", "RoleArn length"), form
    if not SESSION_NAME.match(form["RoleSessionName"]):
        return (400, "ValidationError", "RoleSessionName %r" % form["RoleSessionName"]), form
    if not 4 <= len(form["WebIdentityToken"]) <= 20000:
        return (400, "ValidationError", "WebIdentityToken length"), form
    if "DurationSeconds" in form and not (form["DurationSeconds"].isdigit()
                                          and 900 <= int(form["DurationSeconds"]) <= 43200):
        return (400, "ValidationError", "DurationSeconds"), form
    with open(args.token_file) as f:
        want = f.read().strip()
    if form["WebIdentityToken"] != want:
        return (400, "InvalidIdentityToken", "the token is not the current one"), form
    if form["RoleArn"] != args.role_arn:
        return (403, "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity"), form
    return None, form


def issue(form):
    with lock:
        n = calls[0]
        calls[0] += 1
    lifetime = args.lifetime[min(n, len(args.lifetime) - 1)] if args.lifetime else 3600
    ak = "ASIA" + secrets.token_hex(8).upper()
    sk = secrets.token_urlsafe(30)
    tok = "IQoJb3JpZ2lu" + secrets.token_urlsafe(60)
    exp = int(time.time()) + lifetime
    with lock:
        issued[tok] = (ak, exp, sk)
    when = datetime.datetime.fromtimestamp(exp, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    xml = ('<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
           "<AssumeRoleWithWebIdentityResult>"
           "<SubjectFromWebIdentityToken>system:serviceaccount:shoot:etcd-main</SubjectFromWebIdentityToken>"
           "<Audience>sts.amazonaws.com</Audience>"
           "<AssumedRoleUser><Arn>%s/%s</Arn><AssumedRoleId>AROA%s:%s</AssumedRoleId></AssumedRoleUser>"
           "<Credentials><SessionToken>%s</SessionToken><SecretAccessKey>%s</SecretAccessKey>"
           "<Expiration>%s</Expiration><AccessKeyId>%s</AccessKeyId></Credentials>"
           "<Provider>oidc.example</Provider></AssumeRoleWithWebIdentityResult>"
           "<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata>"
           "</AssumeRoleWithWebIdentityResponse>"
           % (args.role_arn, form["RoleSessionName"], secrets.token_hex(6).upper(),
              form["RoleSessionName"], tok, sk, when, ak, secrets.token_hex(8)))
    return xml, ak, tok, lifetime


class Sts(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        sys.stderr.write("sts-standin: " + fmt % a + "\n")

    def handle_any(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
        bad, form = check_sts(self, body)
        if bad:
            status, code, msg = bad
            out = error_xml(code, msg).encode()
            log({"api": "sts", "ok": False, "code": code, "message": msg})
        else:
            xml, ak, tok, lifetime = issue(form)
            status, out = 200, xml.encode()
            log({"api": "sts", "ok": True, "accessKeyId": ak, "sessionToken": tok,
                 "lifetime": lifetime, "roleSessionName": form["RoleSessionName"]})
        self.send_response(status)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_POST = do_GET = do_PUT = do_DELETE = handle_any


def aws_quote(s):
    return urllib.parse.quote(s, safe="-_.~")


def sigv4_ok(h, secret, scope, signed, signature):
    """Recompute the SigV4 signature of request h (AWS's canonical request rules)."""
    split = urllib.parse.urlsplit(h.path)
    uri = "/".join(aws_quote(urllib.parse.unquote(seg)) for seg in split.path.split("/"))
    pairs = []
    for part in filter(None, split.query.split("&")):
        k, _, v = part.partition("=")
        pairs.append((aws_quote(urllib.parse.unquote(k)), aws_quote(urllib.parse.unquote(v))))
    query = "&".join("%s=%s" % kv for kv in sorted(pairs))
    headers = ""
    for name in signed:
        vals = h.headers.get_all(name) or []
        headers += "%s:%s\n" % (name, ",".join(" ".join(v.split()) for v in vals))
    payload = h.headers.get("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
    canonical = "\n".join([h.command, uri, query, headers, ";".join(signed), payload])
    date = h.headers.get("x-amz-date", "")
    to_sign = "\n".join(["AWS4-HMAC-SHA256", date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in scope.split("/"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.compare_digest(hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest(), signature)


def s3_refusal(h):
    tok = h.headers.get("x-amz-security-token")
    auth = h.headers.get("Authorization", "")
    m = re.match(r"AWS4-HMAC-SHA256 Credential=([^/]+)/([^,]*), *SignedHeaders=([^,]+), *"
                 r"Signature=([0-9a-f]{64})$", auth)
    if not m:
        return 403, "AccessDenied", "no SigV4 Authorization"
    if tok is None:
        return 403, "InvalidAccessKeyId", "temporary credentials without x-amz-security-token"
    with lock:
        known = issued.get(tok)
    if known is None:
        return 400, "InvalidToken", "The provided token is malformed or otherwise invalid."
    if known[1] <= time.time():
        return 400, "ExpiredToken", "The provided token has expired."
    if m.group(1) != known[0]:
        return 403, "InvalidAccessKeyId", "the access key is not the token's"
    signed = m.group(3).split(";")
    if "x-amz-security-token" not in signed:
        return 403, "AccessDenied", "x-amz-security-token is not signed"
    if not sigv4_ok(h, known[2], m.group(2), signed, m.group(4)):
        return 403, "SignatureDoesNotMatch", "the signature does not match the temporary secret key"
    return None


class S3Gate(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        sys.stderr.write("sts-standin s3: " + fmt % a + "\n")

    def handle_any(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(n) if n else b""
        bad = s3_refusal(self)
        entry = {"api": "s3", "method": self.command, "path": self.path,
                 "sessionToken": self.headers.get("x-amz-security-token"), "ok": bad is None}
        if bad:
            status, code, msg = bad
            entry["code"] = code
            log(entry)
            out = ("<Error><Code>%s</Code><Message>%s</Message></Error>" % (code, msg)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(out)
            return
        log(entry)
        up = urllib.parse.urlsplit(args.s3_upstream)
        c = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
        # verified here: s3rver gets the request anonymously (it knows none of these keys)
        drop = ("expect", "authorization", "x-amz-security-token")
        hdrs = {k: v for k, v in self.headers.items() if k.lower() not in drop}
        c.request(self.command, self.path, body=body if n else None, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)) if self.command != "HEAD"
                         else r.getheader("Content-Length", "0"))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        c.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--s3-upstream", required=True)
    p.add_argument("--role-arn", required=True)
    p.add_argument("--token-file", required=True)
    p.add_argument("--lifetime", type=int, action="append", default=[])
    p.add_argument("--log")
    args = p.parse_args()
    sts = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sts)
    gate = http.server.ThreadingHTTPServer(("127.0.0.1", 0), S3Gate)
    for s in (sts, gate):
        s.daemon_threads = True
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("sts-standin ready %d %d" % (sts.server_address[1], gate.server_address[1]), flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
