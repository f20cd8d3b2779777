#!/usr/bin/env python3
"""A small HTTP fault proxy in front of an object-store emulator (tests only).

  fault_proxy.py --upstream http://127.0.0.1:PORT [--rule R]... [--kill K]...

Listens on a free loopback port and prints "fault-proxy ready PORT" on stdout.
  --rule METHOD:MATCH:STATUS:CODE:COUNT[:MESSAGE]  the first COUNT requests
      (or "inf") whose method is METHOD ("*" any) and whose path+query
      contains MATCH ("*" any) get HTTP STATUS with an S3/ABS style
      <Error><Code>CODE</Code><Message>MESSAGE</Message> body instead of being
      forwarded (e.g. PUT:*:503:SlowDown:2).
  --kill METHOD:MATCH:NTH:PIDFILE  at the NTH matching request, SIGKILL the
      process whose pid is in PIDFILE (the emulator) and drop the connection.
  --set-header METHOD:MATCH:NAME:VALUE  matching requests are forwarded and the
      answer's header NAME is set to VALUE (the rest of the spec, colons included),
      e.g. '*:*:x-amz-server-side-encryption:aws:kms'.
  --if-none-match ACCESS:SECRET  honour "If-None-Match: *" on every PUT as AWS
      does (also on CopyObject): 412 PreconditionFailed when the key exists (a
      HEAD upstream first, signed by curl with these keys), for emulators that
      ignore the header.
  --hold METHOD:MATCH:FILE  matching requests are held (at most 120 s) until FILE
      exists, then forwarded; "fault-proxy: ... holding" is logged when one arrives.
  --corrupt METHOD:MATCH  matching requests are forwarded and the first byte of a
      2xx answer's body is flipped (a store handing out damaged bytes).
  --record FILE  every request forwarded is appended to FILE once answered, one JSON line:
      {"t": the time it arrived (seconds since the epoch), "method", "path" (with the
      query), "status", "keys": the keys of a multi-object delete's body (POST ?delete)}.
Every other request is forwarded as is (Host header included, so signatures
still verify). Each decision is logged on stderr.
"""
import argparse, http.client, http.server, json, os, signal, subprocess, sys, threading, time, urllib.parse
import xml.etree.ElementTree as ET

lock = threading.Lock()


class Rule:
    def __init__(self, spec, kill=False):
        parts = spec.split(":")
        self.method, self.match = parts[0], parts[1]
        self.kill = kill
        if kill:
            self.nth, self.pidfile, self.count = int(parts[2]), parts[3], 0
        else:
            self.status, self.code = int(parts[2]), parts[3]
            self.left = float("inf") if parts[4] == "inf" else int(parts[4])
            self.message = ":".join(parts[5:]) or "injected by the fault proxy"

    def matches(self, method, path):
        return self.method in ("*", method) and (self.match == "*" or self.match in path)


def set_headers(specs, method, path):
    out = {}
    for spec in specs:
        m, match, name, value = spec.split(":", 3)
        if m in ("*", method) and (match == "*" or match in path):
            out[name.lower()] = (name, value)
    return out


def hold(specs, method, path):
    for spec in specs:
        m, match, path_file = spec.split(":", 2)
        if m in ("*", method) and (match == "*" or match in path):
            print(f"fault-proxy: {method} {path}: holding until {path_file}", file=sys.stderr, flush=True)
            for _ in range(1200):
                if os.path.exists(path_file):
                    break
                time.sleep(0.1)


def record(path_file, entry):
    with lock:
        with open(path_file, "a") as f:
            f.write(json.dumps(entry) + "\n")


def delete_keys(body):
    """The keys of a DeleteObjects request's XML body."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return []
    return [e.text or "" for e in root.iter() if e.tag.rsplit("}", 1)[-1] == "Key"]


def make_handler(upstream, rules, header_specs=(), corrupt=(), if_none_match=False, holds=(),
                 record_file=""):
    up = urllib.parse.urlparse(upstream)

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def decide(self):
            with lock:
                for r in rules:
                    if not r.matches(self.command, self.path):
                        continue
                    if r.kill:
                        r.count += 1
                        if r.count == r.nth:
                            return r
                    elif r.left > 0:
                        r.left -= 1
                        return r
            return None

        def handle_any(self):
            arrived = time.time()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            r = self.decide()
            if r is not None and r.kill:
                pid = int(open(r.pidfile).read().strip())
                print(f"fault-proxy: {self.command} {self.path}: killing {pid}", file=sys.stderr)
                os.kill(pid, signal.SIGKILL)
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if (r is None and if_none_match and self.command == "PUT"
                    and self.headers.get("If-None-Match") == "*" and "uploadId=" not in self.path):
                head = subprocess.run(
                    ["curl", "-s", "-I", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30",
                     "--aws-sigv4", "aws:amz:us-east-1:s3", "-u", if_none_match,
                     "-H", "x-amz-content-sha256:UNSIGNED-PAYLOAD",
                     upstream.rstrip("/") + self.path.split("?")[0]],
                    capture_output=True, text=True, timeout=60)
                exists = head.stdout.strip() == "200"
                if exists:
                    r = Rule("PUT:*:412:PreconditionFailed:1")
            if r is not None:
                print(f"fault-proxy: {self.command} {self.path}: {r.status} {r.code}", file=sys.stderr)
                msg = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{r.code}</Code>'
                       f"<Message>{r.message}</Message></Error>").encode()
                self.send_response(r.status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(msg)))
                if self.command != "HEAD":
                    self.end_headers()
                    self.wfile.write(msg)
                else:
                    self.end_headers()
                return
            hold(holds, self.command, self.path)
            try:
                conn = http.client.HTTPConnection(up.hostname, up.port, timeout=120)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "expect"}
                conn.request(self.command, self.path, body=body if length else None, headers=headers)
                resp = conn.getresponse()
            except OSError as e:
                print(f"fault-proxy: {self.command} {self.path}: upstream {e}", file=sys.stderr)
                self.send_response(502)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if record_file:
                query = urllib.parse.urlparse(self.path).query
                keys = delete_keys(body) if self.command == "POST" and \
                    "delete" in urllib.parse.parse_qs(query, keep_blank_values=True) else []
                record(record_file, {"t": arrived, "method": self.command, "path": self.path,
                                     "status": resp.status, "keys": keys})
            self.send_response(resp.status)
            chunked = False
            forced = set_headers(header_specs, self.command, self.path)
            for name, value in forced.values():
                print(f"fault-proxy: {self.command} {self.path}: {name}: {value}", file=sys.stderr)
                self.send_header(name, value)
            for k, v in resp.getheaders():
                if k.lower() == "transfer-encoding":
                    chunked = True
                    continue
                if k.lower() != "connection" and k.lower() not in forced:
                    self.send_header(k, v)
            data = resp.read()
            for spec in corrupt:
                m, match = spec.split(":", 1)
                if (m in ("*", self.command) and (match == "*" or match in self.path)
                        and 200 <= resp.status < 300 and data):
                    print(f"fault-proxy: {self.command} {self.path}: body corrupted", file=sys.stderr)
                    data = bytes([data[0] ^ 0xFF]) + data[1:]
            if chunked:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    return H


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--rule", action="append", default=[])
    ap.add_argument("--kill", action="append", default=[])
    ap.add_argument("--set-header", action="append", default=[])
    ap.add_argument("--corrupt", action="append", default=[])
    ap.add_argument("--if-none-match", default="")
    ap.add_argument("--hold", action="append", default=[])
    ap.add_argument("--record", default="")
    a = ap.parse_args()
    rules = [Rule(s) for s in a.rule] + [Rule(s, kill=True) for s in a.kill]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(a.upstream, rules, a.set_header, a.corrupt, a.if_none_match, a.hold, a.record))
    srv.daemon_threads = True
    print(f"fault-proxy ready {srv.server_address[1]}", flush=True)
    srv.serve_forever()


main()
