#!/usr/bin/env python3
"""Azure Blob version-level immutability in front of Azurite (tests only).

  abs_imm_standin.py --upstream http://127.0.0.1:PORT --account A --key BASE64
                     [--versioned CONTAINER]...

Azurite answers Set Blob Immutability Policy with 501 NotImplemented and reports no
immutability, so this proxy implements exactly what warden-snapshot's extend-in-place
uses, as the Blob service REST reference describes it, and forwards everything else to
Azurite unchanged (signatures still verify there):

  - Set Blob Immutability Policy (PUT <blob>?comp=immutabilityPolicies);
  - x-ms-immutable-storage-with-versioning-enabled on Get Container Properties
    (true for the --versioned containers: the container setting made through Azure
    Resource Manager, which has no data-plane call);
  - x-ms-immutability-policy-until-date / -mode on Get Blob Properties and Get Blob,
    and ImmutabilityPolicyUntilDate / ImmutabilityPolicyMode in List Blobs with
    include=immutabilitypolicy;
  - the refusals: a delete or an overwrite of a blob whose policy is in force, and a
    Locked policy shortened or unlocked.

Policies live in this process (per container and blob, on the current version). It
listens on a free loopback port and prints "abs-imm-standin ready PORT"; each decision is
logged on stderr.
"""
import argparse, base64, hashlib, hmac, http.client, http.server, re, sys, threading, time
import urllib.parse
from email.utils import formatdate, parsedate_to_datetime

lock = threading.Lock()
policies = {}  # (container, blob) -> (until: unix seconds, mode: "unlocked" | "locked")


def rfc1123(t):
    return formatdate(t, usegmt=True)


def error_body(code, message):
    return (f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code>'
            f"<Message>{message}</Message></Error>").encode()


def make_handler(upstream, account, key, versioned):
    up = urllib.parse.urlparse(upstream)

    def sign(method, path, query, headers, length):
        """SharedKey string-to-sign (Authorize with Shared Key), emulator form: the
        canonical resource is /account + the URL path (which starts with /account)."""
        std = lambda n: next((v for k, v in headers.items() if k.lower() == n.lower()), "")
        ms = sorted((k.lower(), v.strip()) for k, v in headers.items() if k.lower().startswith("x-ms-"))
        canon_h = "".join(f"{k}:{v}\n" for k, v in ms)
        canon_r = f"/{account}{path}" + "".join(
            f"\n{k.lower()}:{','.join(sorted(v))}" for k, v in sorted(query.items()))
        sts = "\n".join([method, std("Content-Encoding"), std("Content-Language"),
                         str(length) if length else "", std("Content-MD5"), std("Content-Type"),
                         "", std("If-Modified-Since"), std("If-Match"), std("If-None-Match"),
                         std("If-Unmodified-Since"), "", canon_h + canon_r])
        mac = hmac.new(base64.b64decode(key), sts.encode(), hashlib.sha256).digest()
        return base64.b64encode(mac).decode()

    def upstream_head(path):
        """Get Blob Properties on Azurite, signed with the account key: does the blob exist?"""
        h = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2021-10-04"}
        h["Authorization"] = f"SharedKey {account}:{sign('HEAD', urllib.parse.unquote(path), {}, h, 0)}"
        conn = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
        try:
            conn.request("HEAD", path, headers=h)
            return conn.getresponse().status
        finally:
            conn.close()

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def note(self, what):
            print(f"abs-imm-standin: {self.command} {self.path}: {what}", file=sys.stderr, flush=True)

        def answer(self, status, code=None, message="", headers=()):
            body = error_body(code, message) if code else b""
            if code:
                self.note(f"{status} {code}")
            self.send_response(status)
            self.send_header("x-ms-version", "2021-10-04")
            self.send_header("Date", formatdate(usegmt=True))
            for k, v in headers:
                self.send_header(k, v)
            if code:
                self.send_header("x-ms-error-code", code)
                self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def where(self):
            u = urllib.parse.urlsplit(self.path)
            parts = urllib.parse.unquote(u.path).split("/", 3)  # "", account, container, blob
            container = parts[2] if len(parts) > 2 else ""
            blob = parts[3] if len(parts) > 3 else ""
            return u, container, blob, urllib.parse.parse_qs(u.query, keep_blank_values=True)

        def in_force(self, container, blob):
            with lock:
                p = policies.get((container, blob))
            return p if p and p[0] > time.time() else None

        def set_policy(self, u, container, blob, query):
            """Set Blob Immutability Policy: x-ms-version 2020-06-12 or later; the blob in a
            container with immutable storage with versioning; x-ms-immutability-policy-until-date
            required, RFC 1123, past times not valid; x-ms-immutability-policy-mode Unlocked
            (the default) or Locked. An Unlocked policy may be changed either way; a Locked one
            only extended (a shorter date, or a change back to Unlocked, is refused with the
            immutability refusal, 409 BlobImmutableDueToPolicy). 200 OK with the policy's
            date and mode in the answer headers."""
            if self.headers.get("x-ms-version", "") < "2020-06-12":
                return self.answer(400, "InvalidHeaderValue", "x-ms-version before 2020-06-12")
            mine = sign("PUT", urllib.parse.unquote(u.path), query, dict(self.headers.items()),
                        int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Authorization", "") != f"SharedKey {account}:{mine}":
                return self.answer(403, "AuthenticationFailed", "signature mismatch")
            if upstream_head(u.path) == 404:
                return self.answer(404, "BlobNotFound", "The specified blob does not exist.")
            if container not in versioned:
                # The reference requires such a container and names no code for the call
                # elsewhere; the stand-in answers a 409 of its own.
                return self.answer(409, "ImmutableStorageWithVersioningNotEnabled",
                                   "stand-in: the container has no version-level immutability")
            date = self.headers.get("x-ms-immutability-policy-until-date")
            if not date:
                return self.answer(400, "MissingRequiredHeader", "x-ms-immutability-policy-until-date")
            try:
                until = int(parsedate_to_datetime(date).timestamp())
            except (TypeError, ValueError):
                return self.answer(400, "InvalidHeaderValue", "x-ms-immutability-policy-until-date")
            if until <= time.time():
                return self.answer(400, "InvalidHeaderValue", "past times are not valid")
            mode = self.headers.get("x-ms-immutability-policy-mode", "Unlocked").lower()
            if mode not in ("unlocked", "locked"):
                return self.answer(400, "InvalidHeaderValue", "x-ms-immutability-policy-mode")
            with lock:
                cur = policies.get((container, blob))
                if cur and cur[1] == "locked" and cur[0] > time.time() and (
                        until < cur[0] or mode != "locked"):
                    refused = True
                else:
                    refused = False
                    policies[(container, blob)] = (until, mode)
            if refused:
                return self.answer(409, "BlobImmutableDueToPolicy",
                                   "This operation is not permitted as the blob is immutable due to a policy.")
            self.note(f"200 policy {mode} until {rfc1123(until)}")
            return self.answer(200, headers=[("x-ms-immutability-policy-until-date", rfc1123(until)),
                                             ("x-ms-immutability-policy-mode", mode)])

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            u, container, blob, query = self.where()
            comp = query.get("comp", [""])[0]
            if blob and self.command == "PUT" and comp == "immutabilityPolicies":
                return self.set_policy(u, container, blob, query)
            # Delete Blob, Put Blob / Copy Blob (overwrite), Put Block List, Set Blob Metadata
            # on a blob whose policy is in force: 409 BlobImmutableDueToPolicy (Blob service
            # error codes). Set Blob Tags stays allowed: index tags are not protected data.
            if blob and ((self.command == "DELETE" and not comp) or
                         (self.command == "PUT" and comp in ("", "blocklist", "metadata"))):
                p = self.in_force(container, blob)
                if p:
                    return self.answer(409, "BlobImmutableDueToPolicy",
                                       "This operation is not permitted as the blob is immutable due to a policy.")
            extra = []
            listing = (self.command == "GET" and comp == "list" and
                       "immutabilitypolicy" in query.get("include", [""])[0].lower())
            if not blob and query.get("restype") == ["container"] and not comp and \
                    self.command in ("GET", "HEAD"):
                # Get Container Properties (version 2020-06-12 and later)
                extra.append(("x-ms-immutable-storage-with-versioning-enabled",
                              "true" if container in versioned else "false"))
            elif blob and self.command in ("GET", "HEAD") and not comp:
                # Get Blob Properties and Get Blob: the current version's policy, if any
                with lock:
                    p = policies.get((container, blob))
                if p:
                    extra += [("x-ms-immutability-policy-until-date", rfc1123(p[0])),
                              ("x-ms-immutability-policy-mode", p[1])]
            try:
                conn = http.client.HTTPConnection(up.hostname, up.port, timeout=120)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "expect"}
                conn.request(self.command, self.path, body=body if length else None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except OSError as e:
                self.note(f"upstream {e}")
                self.send_response(502)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if resp.status >= 300:
                extra = []
            if listing and resp.status == 200:
                data = self.list_policies(container, data)
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            for k, v in extra:
                self.send_header(k, v)
            clen = resp.getheader("Content-Length") if self.command == "HEAD" else str(len(data))
            self.send_header("Content-Length", clen or "0")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()

        def list_policies(self, container, data):
            """List Blobs with include=immutabilitypolicy: each blob with a policy gets
            ImmutabilityPolicyUntilDate and ImmutabilityPolicyMode in its Properties."""
            text = data.decode("utf-8")

            def one(m):
                name = re.search(r"<Name>(.*?)</Name>", m.group(0))
                with lock:
                    p = policies.get((container, name.group(1))) if name else None
                if not p:
                    return m.group(0)
                add = (f"<ImmutabilityPolicyUntilDate>{rfc1123(p[0])}</ImmutabilityPolicyUntilDate>"
                       f"<ImmutabilityPolicyMode>{p[1]}</ImmutabilityPolicyMode></Properties>")
                return m.group(0).replace("</Properties>", add, 1)

            return re.sub(r"<Blob>.*?</Blob>", one, text, flags=re.S).encode("utf-8")

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    return H


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--account", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--versioned", action="append", default=[])
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                          make_handler(a.upstream, a.account, a.key, set(a.versioned)))
    srv.daemon_threads = True
    print(f"abs-imm-standin ready {srv.server_address[1]}", flush=True)
    srv.serve_forever()


main()
