#!/usr/bin/env python3
"""A minimal Azure Blob client for the tests (SharedKey, standard library only).

Seeds and inspects Azurite independently of warden-snapshot's own ABS code:
  abs_client.py ENDPOINT ACCOUNT KEY mkcontainer C
  abs_client.py ENDPOINT ACCOUNT KEY put C BLOB FILE
  abs_client.py ENDPOINT ACCOUNT KEY tag C BLOB KEY=VALUE
  abs_client.py ENDPOINT ACCOUNT KEY get C BLOB          (content to stdout)
  abs_client.py ENDPOINT ACCOUNT KEY ls C [PREFIX]       (one name per line)
  abs_client.py ENDPOINT ACCOUNT KEY rm C BLOB
  abs_client.py ENDPOINT ACCOUNT KEY policy C BLOB       ("UNIX-SECONDS MODE", "" when none)
  abs_client.py ENDPOINT ACCOUNT KEY setpolicy C BLOB UNIX-SECONDS MODE  (Unlocked|Locked)
  abs_client.py ENDPOINT ACCOUNT KEY putmany C MANIFEST  (lines "BLOB FILE")
  abs_client.py ENDPOINT ACCOUNT KEY check C MANIFEST    (each BLOB equals its FILE)
ENDPOINT is the emulator's http://host:port.
"""
import base64, hashlib, hmac, sys, urllib.parse, urllib.request, xml.etree.ElementTree as ET
from email.utils import formatdate, parsedate_to_datetime

VERSION = "2021-10-04"


last_headers = {}


def request(endpoint, account, key, method, path, query=None, body=b"", headers=None):
    query = query or {}
    headers = dict(headers or {})
    if method in ("PUT", "POST"):
        headers.setdefault("Content-Type", "application/octet-stream")
    headers["x-ms-date"] = formatdate(usegmt=True)
    headers["x-ms-version"] = VERSION
    length = str(len(body)) if body else ""
    std = lambda n: headers.get(n, "")
    canon_h = "".join(f"{k}:{headers[k]}\n" for k in sorted(h for h in headers if h.startswith("x-ms-")))
    canon_r = f"/{account}/{account}{path}" + "".join(f"\n{k}:{query[k]}" for k in sorted(query))
    sts = "\n".join([method, std("Content-Encoding"), std("Content-Language"), length,
                     std("Content-MD5"), std("Content-Type"), "", std("If-Modified-Since"),
                     std("If-Match"), std("If-None-Match"), std("If-Unmodified-Since"), "",
                     canon_h + canon_r])
    sig = base64.b64encode(hmac.new(base64.b64decode(key), sts.encode(), hashlib.sha256).digest())
    headers["Authorization"] = f"SharedKey {account}:{sig.decode()}"
    url = f"{endpoint}/{account}{urllib.parse.quote(path)}"
    if query:
        url += "?" + urllib.parse.urlencode(sorted(query.items()))
    req = urllib.request.Request(url, data=body if method in ("PUT", "POST") else None,
                                 method=method, headers=headers)
    global last_headers
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            last_headers = r.headers
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def main():
    endpoint, account, key, cmd = sys.argv[1:5]
    args = sys.argv[5:]
    go = lambda *a, **k: request(endpoint, account, key, *a, **k)
    if cmd == "mkcontainer":
        st, b = go("PUT", f"/{args[0]}", {"restype": "container"})
        ok = st in (201, 409)
    elif cmd in ("put", "putmany"):
        pairs = [args[1:3]] if cmd == "put" else [l.split() for l in open(args[1]) if l.strip()]
        for blob, path in pairs:
            data = open(path, "rb").read()
            st, b = go("PUT", f"/{args[0]}/{blob}", body=data,
                       headers={"x-ms-blob-type": "BlockBlob",
                                "Content-MD5": base64.b64encode(hashlib.md5(data).digest()).decode()})
            ok = st == 201
            if not ok:
                break
    elif cmd == "check":
        ok = True
        for blob, path in (l.split() for l in open(args[1]) if l.strip()):
            st, b = go("GET", f"/{args[0]}/{blob}")
            if st != 200 or b != open(path, "rb").read():
                print(f"abs_client check: {blob}: HTTP {st}, content differs or missing", file=sys.stderr)
                ok = False
        st, b = 200, b""
    elif cmd == "tag":
        k, v = args[2].split("=", 1)
        body = (f'<?xml version="1.0" encoding="utf-8"?><Tags><TagSet><Tag><Key>{k}</Key>'
                f"<Value>{v}</Value></Tag></TagSet></Tags>").encode()
        st, b = go("PUT", f"/{args[0]}/{args[1]}", {"comp": "tags"}, body=body,
                   headers={"Content-Type": "application/xml"})
        ok = st == 204
    elif cmd == "get":
        st, b = go("GET", f"/{args[0]}/{args[1]}")
        ok = st == 200
        if ok:
            sys.stdout.buffer.write(b)
    elif cmd == "ls":
        q = {"restype": "container", "comp": "list"}
        if len(args) > 1:
            q["prefix"] = args[1]
        st, b = go("GET", f"/{args[0]}", q)
        ok = st == 200
        if ok:
            for n in ET.fromstring(b).iter("Name"):
                print(n.text)
    elif cmd == "meta":  # one metadata value (x-ms-meta-NAME), "" when absent
        st, b = go("HEAD", f"/{args[0]}/{args[1]}")
        ok = st == 200
        if ok:
            print(last_headers.get(f"x-ms-meta-{args[2]}", ""))
    elif cmd == "policy":  # the current version's immutability policy (Get Blob Properties)
        st, b = go("HEAD", f"/{args[0]}/{args[1]}")
        ok = st == 200
        until = last_headers.get("x-ms-immutability-policy-until-date", "") if ok else ""
        if ok and until:
            print(int(parsedate_to_datetime(until).timestamp()),
                  last_headers.get("x-ms-immutability-policy-mode", ""))
        elif ok:
            print("")
    elif cmd == "setpolicy":  # Set Blob Immutability Policy
        st, b = go("PUT", f"/{args[0]}/{args[1]}", {"comp": "immutabilityPolicies"},
                   headers={"x-ms-immutability-policy-until-date": formatdate(int(args[2]), usegmt=True),
                            "x-ms-immutability-policy-mode": args[3]})
        ok = st == 200
    elif cmd == "rm":
        st, b = go("DELETE", f"/{args[0]}/{args[1]}")
        ok = st == 202
    else:
        sys.exit(f"unknown command {cmd}")
    if not ok:
        sys.exit(f"abs_client {cmd}: HTTP {st}: {b[:300]!r}")


main()
