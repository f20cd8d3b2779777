#!/usr/bin/env python3
"""A stand-in for the Google Cloud Storage JSON API, for warden-snapshot's tests.

It implements only the calls warden-snapshot makes, each as the published JSON API
reference (cloud.google.com/storage/docs/json_api/v1/objects/...) describes it, on
one bucket held in memory, plus:

  - an OAuth2 token endpoint (POST /token) taking a JWT bearer assertion (RFC 7523)
    whose RS256 signature is checked against the service account's public key
    (openssl dgst, --pubkey) and whose iss/aud/exp are checked; every JSON API call
    needs a token it issued (401 otherwise);
  - Bucket Lock: a bucket retention period (--retention, seconds); an object's
    retentionExpirationTime is its creation time plus the period, and deleting it
    before then is refused with 403 retentionPolicyNotMet;
  - a settable clock and direct object access for the test scripts, under
    /_standin/ (not part of GCS; no authentication):
      POST /_standin/clock?now=T          the stand-in's time (Unix seconds)
      POST /_standin/retention?seconds=S  the bucket's retention period
      PUT  /_standin/o/NAME               create NAME with the request body
      GET  /_standin/o/NAME               NAME's bytes
      POST /_standin/meta/NAME?k=v        set NAME's custom metadata k=v
      GET  /_standin/meta/NAME            NAME's custom metadata (JSON)
      GET  /_standin/ls?prefix=P          names, one a line
      GET  /_standin/log                  the JSON API calls so far, "METHOD path status"
      POST /_standin/appear?name=N        someone else creates N just before the next
                                          rewrite or upload that would create N

Usage: gcs_standin.py --bucket B --pubkey PEM --client-email E [--retention S]
Prints "gcs-standin ready PORT" once listening on 127.0.0.1.
"""
import argparse
import base64
import datetime
import hashlib
import json
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
OBJECTS = {}  # name -> dict(data, generation, created, metadata)
UPLOADS = {}  # upload_id -> dict(name, metadata, data, if_gen_match)
TOKENS = set()
STATE = {"now": None, "retention": 0, "generation": 1000, "log": [], "appear": None}
REWRITE_CHUNK = 1024 * 1024  # bytes per objects.rewrite call, as maxBytesRewrittenPerCall
PAGE_SIZE = 5  # objects.list maxResults default here, so listings page


def now():
    return STATE["now"] if STATE["now"] is not None else int(time.time())


def rfc3339(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.000Z")


def b64url_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def resource(name, o):
    """objects#resource: the fields the JSON API returns that warden-snapshot reads."""
    r = {
        "kind": "storage#object",
        "id": "%s/%s/%d" % (ARGS.bucket, name, o["generation"]),
        "name": name,
        "bucket": ARGS.bucket,
        "generation": str(o["generation"]),
        "metageneration": str(o["metageneration"]),
        "size": str(len(o["data"])),
        "md5Hash": base64.b64encode(hashlib.md5(o["data"]).digest()).decode(),
        "etag": base64.b64encode(("%d" % o["generation"]).encode()).decode(),
        "timeCreated": rfc3339(o["created"]),
        "updated": rfc3339(o["created"]),
    }
    if o["metadata"]:
        r["metadata"] = dict(o["metadata"])
    if STATE["retention"]:
        r["retentionExpirationTime"] = rfc3339(o["created"] + STATE["retention"])
    return r


def new_object(name, data, metadata):
    STATE["generation"] += 1
    OBJECTS[name] = {"data": data, "generation": STATE["generation"], "metageneration": 1,
                     "created": now(), "metadata": dict(metadata or {})}
    return OBJECTS[name]


def race(name):
    """The object another writer creates first (/_standin/appear)."""
    if STATE["appear"] == name:
        STATE["appear"] = None
        new_object(name, b"someone else's object\n", {})


def verify_jwt(assertion):
    """RFC 7523 section 3: signature (RS256), iss, aud (this token endpoint), exp."""
    try:
        h64, c64, s64 = assertion.split(".")
        header = json.loads(b64url_decode(h64))
        claims = json.loads(b64url_decode(c64))
        sig = b64url_decode(s64)
    except (ValueError, json.JSONDecodeError):
        return "malformed assertion"
    if header.get("alg") != "RS256":
        return "alg is not RS256"
    with tempfile.NamedTemporaryFile() as sf, tempfile.NamedTemporaryFile() as df:
        sf.write(sig)
        sf.flush()
        df.write(("%s.%s" % (h64, c64)).encode())
        df.flush()
        p = subprocess.run(["openssl", "dgst", "-sha256", "-verify", ARGS.pubkey,
                            "-signature", sf.name, df.name], capture_output=True, timeout=30)
    if p.returncode != 0:
        return "invalid signature"
    if claims.get("iss") != ARGS.client_email:
        return "wrong iss"
    if claims.get("aud") != "http://127.0.0.1:%d/token" % PORT:
        return "wrong aud"
    t = int(time.time())
    if not (claims.get("iat", t + 1000) <= t + 300 and claims.get("exp", 0) > t):
        return "expired"
    if "devstorage" not in claims.get("scope", ""):
        return "no storage scope"
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body=b"", headers=None, ctype="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        if self.path.startswith(("/storage/", "/upload/")):
            STATE["log"].append("%s %s %d" % (self.command, self.path, status))

    def error(self, status, reason, message):
        """The JSON API's error shape: {"error": {code, message, errors: [{reason}]}}."""
        self.send(status, {"error": {"code": status, "message": message,
                                     "errors": [{"reason": reason, "message": message}]}})

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def route(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        segs = u.path.split("/")
        return u.path, segs, q

    def authed(self):
        a = self.headers.get("Authorization", "")
        if a.startswith("Bearer ") and a[7:] in TOKENS:
            return True
        self.error(401, "required", "Anonymous caller does not have storage access")
        return False

    def dispatch(self):
        path, segs, q = self.route()
        with LOCK:
            if path.startswith("/_standin/"):
                return self.standin(segs, q)
            if path == "/token" and self.command == "POST":
                return self.token()
            if not self.authed():
                return None
            # /storage/v1/b/BUCKET/o[/NAME[/rewriteTo/b/BUCKET/o/NAME]]
            if path.startswith("/upload/storage/v1/b/"):
                return self.upload(segs, q)
            if len(segs) < 6 or segs[1:4] != ["storage", "v1", "b"] or segs[5] != "o":
                return self.error(404, "notFound", "Not Found")
            if segs[4] != ARGS.bucket:
                return self.error(404, "notFound", "The specified bucket does not exist.")
            if len(segs) == 6:
                return self.list(q)
            name = urllib.parse.unquote(segs[6])
            if len(segs) == 12 and segs[7] == "rewriteTo":
                return self.rewrite(name, urllib.parse.unquote(segs[11]), q)
            if len(segs) != 7:
                return self.error(404, "notFound", "Not Found")
            return {"GET": self.get, "DELETE": self.delete, "PATCH": self.patch}.get(
                self.command, lambda n, q: self.error(405, "methodNotAllowed", "no"))(name, q)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = lambda self: self.dispatch()

    def token(self):
        """OAuth2 token endpoint, grant_type jwt-bearer (RFC 7523 section 2.1)."""
        form = dict(urllib.parse.parse_qsl(self.body().decode()))
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return self.send(400, {"error": "unsupported_grant_type"})
        why = verify_jwt(form.get("assertion", ""))
        if why:
            return self.send(400, {"error": "invalid_grant", "error_description": why})
        tok = secrets.token_hex(16)
        TOKENS.add(tok)
        return self.send(200, {"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})

    def list(self, q):
        """objects.list: names starting with prefix in lexicographic order, at most
        maxResults a page; nextPageToken continues after the page."""
        prefix = q.get("prefix", "")
        after = b64url_decode(q["pageToken"]).decode() if q.get("pageToken") else None
        names = sorted(n for n in OBJECTS if n.startswith(prefix) and (after is None or n > after))
        page = names[:int(q.get("maxResults", PAGE_SIZE))]
        out = {"kind": "storage#objects", "items": [resource(n, OBJECTS[n]) for n in page]}
        if len(names) > len(page):
            out["nextPageToken"] = base64.urlsafe_b64encode(page[-1].encode()).decode()
        return self.send(200, out)

    def get(self, name, q):
        """objects.get: the resource, or with alt=media the data (Range honoured, 206);
        generation selects that generation (404 when it is not the live one)."""
        o = OBJECTS.get(name)
        if o is None or (q.get("generation") and q["generation"] != str(o["generation"])):
            return self.error(404, "notFound", "No such object: %s/%s" % (ARGS.bucket, name))
        if q.get("alt") != "media":
            return self.send(200, resource(name, o))
        data, status, hdr = o["data"], 200, {}
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, b = rng[6:].split("-")
            a, b = int(a), min(int(b), len(data) - 1)
            hdr["Content-Range"] = "bytes %d-%d/%d" % (a, b, len(data))
            data, status = data[a:b + 1], 206
        return self.send(status, data, hdr, "application/octet-stream")

    def delete(self, name, q):
        """objects.delete: generation selects the generation; under a retention policy an
        object younger than the period is refused with 403 retentionPolicyNotMet."""
        o = OBJECTS.get(name)
        if o is None or (q.get("generation") and q["generation"] != str(o["generation"])):
            return self.error(404, "notFound", "No such object: %s/%s" % (ARGS.bucket, name))
        if STATE["retention"] and now() < o["created"] + STATE["retention"]:
            return self.error(403, "retentionPolicyNotMet",
                              "Object '%s/%s' is subject to bucket's retention policy or object "
                              "retention and cannot be deleted or overwritten until %s" %
                              (ARGS.bucket, name, rfc3339(o["created"] + STATE["retention"])))
        del OBJECTS[name]
        return self.send(204)

    def patch(self, name, q):
        """objects.patch: metadata keys merged in, a null value removes a key (allowed on
        retained objects: only the data is locked)."""
        o = OBJECTS.get(name)
        if o is None:
            return self.error(404, "notFound", "No such object: %s/%s" % (ARGS.bucket, name))
        for k, v in (json.loads(self.body() or b"{}").get("metadata") or {}).items():
            if v is None:
                o["metadata"].pop(k, None)
            else:
                o["metadata"][k] = str(v)
        o["metageneration"] += 1
        return self.send(200, resource(name, o))

    def rewrite(self, src, dst, q):
        """objects.rewrite: copies src (sourceGeneration) to dst, at most
        maxBytesRewrittenPerCall a call: done=false with a rewriteToken until the last
        call, which creates dst. ifGenerationMatch=0: 412 conditionNotMet when dst exists.
        The request body's metadata becomes dst's."""
        body = json.loads(self.body() or b"{}")
        race(dst)
        o = OBJECTS.get(src)
        if o is None or (q.get("sourceGeneration") and
                         q["sourceGeneration"] != str(o["generation"])):
            return self.error(404, "notFound", "No such object: %s/%s" % (ARGS.bucket, src))
        if q.get("ifGenerationMatch") == "0" and dst in OBJECTS:
            return self.error(412, "conditionNotMet", "At least one of the pre-conditions you "
                              "specified did not hold.")
        if dst in OBJECTS and STATE["retention"] and \
                now() < OBJECTS[dst]["created"] + STATE["retention"]:
            return self.error(403, "retentionPolicyNotMet", "dst is retained")
        done_bytes = int(b64url_decode(q["rewriteToken"]).decode()) if q.get("rewriteToken") else 0
        done_bytes = min(done_bytes + REWRITE_CHUNK, len(o["data"]))
        out = {"kind": "storage#rewriteResponse", "totalBytesRewritten": str(done_bytes),
               "objectSize": str(len(o["data"])), "done": done_bytes >= len(o["data"])}
        if out["done"]:
            n = new_object(dst, o["data"], body.get("metadata", o["metadata"]))
            out["resource"] = resource(dst, n)
        else:
            out["rewriteToken"] = base64.urlsafe_b64encode(str(done_bytes).encode()).decode()
        return self.send(200, out)

    def upload(self, segs, q):
        """Resumable upload: POST uploadType=resumable (body: the object's metadata) answers
        with the session URI in Location; PUTs with Content-Range "bytes a-b/total" append,
        308 until the last byte, which creates the object (ifGenerationMatch=0: 412 when
        it exists); "bytes */total" with total sent finalises; DELETE cancels (499)."""
        if self.command == "POST" and q.get("uploadType") == "resumable" and q.get("name"):
            uid = secrets.token_hex(12)
            meta = json.loads(self.body() or b"{}").get("metadata") or {}
            UPLOADS[uid] = {"name": q["name"], "metadata": meta, "data": b"",
                            "if_gen": q.get("ifGenerationMatch")}
            loc = "http://127.0.0.1:%d/upload/storage/v1/b/%s/o?uploadType=resumable" \
                  "&upload_id=%s" % (PORT, ARGS.bucket, uid)
            return self.send(200, b"", {"Location": loc})
        u = UPLOADS.get(q.get("upload_id", ""))
        if u is None:
            return self.error(404, "notFound", "No such upload")
        if self.command == "DELETE":
            del UPLOADS[q["upload_id"]]
            return self.send(499)
        cr = self.headers.get("Content-Range", "")
        data = self.body()
        rng, total = cr[6:].split("/")
        if rng != "*":
            a, b = (int(x) for x in rng.split("-"))
            if a != len(u["data"]) or b - a + 1 != len(data):
                return self.error(400, "invalid", "Content-Range does not follow the data sent")
            u["data"] += data
        if total == "*" or len(u["data"]) < int(total):
            hdr = {"Range": "bytes=0-%d" % (len(u["data"]) - 1)} if u["data"] else {}
            return self.send(308, b"", hdr)
        del UPLOADS[q["upload_id"]]
        race(u["name"])
        if u["if_gen"] == "0" and u["name"] in OBJECTS:
            return self.error(412, "conditionNotMet", "At least one of the pre-conditions you "
                              "specified did not hold.")
        return self.send(200, resource(u["name"], new_object(u["name"], u["data"],
                                                             u["metadata"])))

    def standin(self, segs, q):
        """Test-only controls (see the module doc)."""
        what = segs[2] if len(segs) > 2 else ""
        name = urllib.parse.unquote("/".join(segs[3:]))
        if what == "clock":
            STATE["now"] = int(q["now"])
            return self.send(200, "ok\n", ctype="text/plain")
        if what == "appear":
            STATE["appear"] = q["name"]
            return self.send(200, "ok\n", ctype="text/plain")
        if what == "retention":
            STATE["retention"] = int(q["seconds"])
            return self.send(200, "ok\n", ctype="text/plain")
        if what == "o" and self.command == "PUT":
            new_object(name, self.body(), {})
            return self.send(200, "ok\n", ctype="text/plain")
        if what == "o" and name in OBJECTS:
            return self.send(200, OBJECTS[name]["data"], ctype="application/octet-stream")
        if what == "meta" and name in OBJECTS and self.command == "GET":
            return self.send(200, OBJECTS[name]["metadata"])
        if what == "meta" and name in OBJECTS:
            OBJECTS[name]["metadata"].update(q)
            return self.send(200, "ok\n", ctype="text/plain")
        if what == "ls":
            names = sorted(n for n in OBJECTS if n.startswith(q.get("prefix", "")))
            return self.send(200, "".join(n + "\n" for n in names), ctype="text/plain")
        if what == "log":
            return self.send(200, "".join(x + "\n" for x in STATE["log"]), ctype="text/plain")
        return self.send(404, "not found\n", ctype="text/plain")


def main():
    global ARGS, PORT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--pubkey", required=True)
    ap.add_argument("--client-email", required=True)
    ap.add_argument("--retention", type=int, default=0)
    ARGS = ap.parse_args()
    STATE["retention"] = ARGS.retention
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    PORT = srv.server_address[1]
    print("gcs-standin ready %d" % PORT, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    ARGS = None
    PORT = 0
    sys.exit(main())
