#!/usr/bin/env python3
"""A client of etcd on one established connection (the tests' kube-apiserver stream).

  etcd_writer.py URL PREFIX LOG [PERIOD_S]

Opens one keep-alive HTTP connection to etcd's gRPC gateway at URL and, until SIGTERM, puts
PREFIX<i> = value-<i> every PERIOD_S seconds (0.05) on it, never reconnecting: removing the
client Service's ports does not stop it. After each acknowledged write it appends
"<i> <revision> <unix ns>" to LOG (the revision etcd answered). A failed write ends it with
status 1.
"""
import base64, http.client, json, signal, sys, time, urllib.parse

stop = False


def on_term(*_):
    global stop
    stop = True


def main():
    url, prefix, log = sys.argv[1], sys.argv[2], sys.argv[3]
    period = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05
    u = urllib.parse.urlparse(url)
    signal.signal(signal.SIGTERM, on_term)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    i = 0
    with open(log, "a", buffering=1) as out:
        while not stop:
            i += 1
            body = json.dumps({"key": base64.b64encode(("%s%d" % (prefix, i)).encode()).decode(),
                               "value": base64.b64encode(("value-%d" % i).encode()).decode()})
            c.request("POST", "/v3/kv/put", body=body, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
            if r.status != 200:
                print("etcd_writer: HTTP %d: %s" % (r.status, data[:200]), file=sys.stderr)
                return 1
            rev = json.loads(data)["header"]["revision"]
            out.write("%d %s %d\n" % (i, rev, time.time_ns()))
            time.sleep(period)
    return 0


if __name__ == "__main__":
    sys.exit(main())
