#!/usr/bin/env python3
"""Seeded random sequences against the whole stack that keeps backups apart: kube-sim,
warden-webhook's one-prefix rule, warden-controller's BackupEntries and deletion Jobs (run by
job_exec.py) and an S3 bucket (s3rver), driven with kubectl and curl.

    prefix_random.py SEED STEPS

Environment: KUBECONFIG, KUBECTL_CACHE (kubectl's cache directory), S3_URL, BUCKET (an s3rver
bucket of this seed's alone, with the credentials S3RVER:S3RVER, and its BackupBucket),
PREFIX_RANDOM_WAIT (seconds of a "time passes" step, longer than the bucket's grace period).

Operations, drawn from the seed alone, over two namespaces of the seed's and three names: Etcd creates (one,
or two at the same moment) with prefixes drawn to collide ("a", "a-2", "/a", "a/", "a//b",
"a/b", "b", "", "/"), deletes, re-creates, prefix moves, time passing (the grace period ends,
deletion Jobs run) and the backup sidecars writing. A cluster's sidecar writes a snapshot
under its cleaned prefix, as the real one does, only while its BackupEntry is the Etcd's
(its uid, phase Active): from then on etcd-warden answers for those backups.

After every operation, from a listing of the bucket: not one snapshot written by a cluster
that is still alive (the same Etcd object, since its create or its last prefix move) was
deleted. A failure prints the
seed, the step and the sequence so far, and exits 1.
"""
import json
import os
import posixpath
import random
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

NAMES = ("e1", "e2", "e3")
# Drawn by weight: the whole container ("", "/") is rare, since once it is claimed, its entry
# (never emptied) holds every other prefix of the bucket for the rest of the sequence.
PREFIXES = {"a": 12, "a-2": 8, "/a": 4, "a/": 4, "a//b": 4, "a/b": 8, "b": 12, "b-2": 8,
            "": 1, "/": 1}


def canon(prefix):
    """The prefix as the sidecar's S3 client uses it: cleaned, no leading '/'."""
    p = posixpath.normpath(prefix) if prefix else "."
    p = p.lstrip("/")
    return "" if p == "." else p


class World:
    def __init__(self, seed, log):
        self.rng = random.Random(seed)
        self.seed = seed
        self.namespaces = (f"s{seed}-1", f"s{seed}-2")
        self.log = log
        self.live = {}  # (ns, name) -> incarnation {id, uid, prefix, canon}
        self.objects = {}  # key -> (ns, name, incarnation id) of the writer
        self.seq = 0
        self.incarnations = 0
        self.stats = {"admitted": 0, "refused": 0, "raced": 0, "deleted": 0, "written": 0}

    # ---- tools ----
    def kubectl(self, *args, stdin=None):
        cmd = ["kubectl", "--kubeconfig", os.environ["KUBECONFIG"],
               "--cache-dir", os.environ["KUBECTL_CACHE"], *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)

    def s3(self, *args, data=None):
        cmd = ["curl", "-sS", "--fail-with-body", "--aws-sigv4", "aws:amz:us-east-1:s3",
               "-u", "S3RVER:S3RVER", "-H", "x-amz-content-sha256:UNSIGNED-PAYLOAD", *args]
        r = subprocess.run(cmd, input=data, capture_output=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"curl {args}: {r.stderr.decode()} {r.stdout.decode()}")
        return r.stdout

    def keys(self):
        base = f"{os.environ['S3_URL']}/{os.environ['BUCKET']}"
        out, token = set(), None
        while True:
            q = "?list-type=2" + (f"&continuation-token={token}" if token else "")
            root = ET.fromstring(self.s3(base + q))
            tag = lambda e: e.tag.rsplit("}", 1)[-1]
            for e in root.iter():
                if tag(e) == "Key":
                    out.add(e.text)
            token = next((e.text for e in root.iter() if tag(e) == "NextContinuationToken"), None)
            if not token:
                return out

    def manifest(self, ns, name, prefix):
        return json.dumps({
            "apiVersion": "druid.gardener.cloud/v1alpha1", "kind": "Etcd",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": 1, "labels": {"app": "etcd-statefulset"},
                     "etcd": {"clientPort": 2379, "serverPort": 2380},
                     "backup": {"port": 8080, "store": {
                         "provider": "aws", "container": os.environ["BUCKET"], "prefix": prefix,
                         "secretRef": {"name": "etcd-backup"}}}}})

    # ---- operations ----
    def create_start(self, ns, name, prefix):
        cmd = ["kubectl", "--kubeconfig", os.environ["KUBECONFIG"],
               "--cache-dir", os.environ["KUBECTL_CACHE"], "create", "-f", "-",
               "-o", "jsonpath={.metadata.uid}"]
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        p.stdin.write(self.manifest(ns, name, prefix))
        p.stdin.close()
        return p

    def create_end(self, p, ns, name, prefix):
        out, err = p.stdout.read(), p.stderr.read()
        if p.wait(timeout=60) == 0 and out:
            self.live[(ns, name)] = self.incarnation(out.strip(), prefix)
            self.stats["admitted"] += 1
            return "admitted"
        if "denied the request" not in err and "already exists" not in err:
            raise RuntimeError(f"create {ns}/{name} {prefix!r}: {err.strip()}")
        self.stats["refused"] += 1
        return "refused"

    def op_create(self):
        ns, name = self.free_identity()
        if not ns:
            return self.op_wait()
        prefix = self.prefix()
        return f"create {ns}/{name} {prefix!r}: " + \
            self.create_end(self.create_start(ns, name, prefix), ns, name, prefix)

    def op_race(self):
        a, b = self.free_identity(), self.free_identity()
        if not a[0] or not b[0] or a == b:
            return self.op_create()
        pa = self.prefix()
        pb = self.rng.choice([pa, pa + "/", "/" + pa, pa + "-2", self.prefix()])
        procs = [self.create_start(*a, pa), self.create_start(*b, pb)]
        ra = self.create_end(procs[0], *a, pa)
        rb = self.create_end(procs[1], *b, pb)
        self.stats["raced"] += 1
        return f"race {a[0]}/{a[1]} {pa!r} ({ra}), {b[0]}/{b[1]} {pb!r} ({rb})"

    def op_delete(self):
        if not self.live:
            return self.op_create()
        ns, name = self.rng.choice(sorted(self.live))
        r = self.kubectl("-n", ns, "delete", "etcd", name, "--wait=false")
        if r.returncode != 0:
            raise RuntimeError(f"delete {ns}/{name}: {r.stderr.strip()}")
        del self.live[(ns, name)]
        return f"delete {ns}/{name}"

    def op_move(self):
        if not self.live:
            return self.op_create()
        ns, name = self.rng.choice(sorted(self.live))
        prefix = self.prefix()
        patch = json.dumps({"spec": {"backup": {"store": {"prefix": prefix}}}})
        r = self.kubectl("-n", ns, "patch", "etcd", name, "--type", "merge", "-p", patch)
        if r.returncode == 0:
            self.live[(ns, name)] = self.incarnation(self.live[(ns, name)]["uid"], prefix)
            return f"move {ns}/{name} to {prefix!r}: admitted"
        if "denied the request" not in r.stderr:
            raise RuntimeError(f"move {ns}/{name}: {r.stderr.strip()}")
        return f"move {ns}/{name} to {prefix!r}: refused"

    def op_wait(self):
        time.sleep(float(os.environ.get("PREFIX_RANDOM_WAIT", "2.5")))
        return "time passes"

    def incarnation(self, uid, prefix):
        """A cluster from its create or its move on: what it writes from then on is its own."""
        self.incarnations += 1
        return {"id": self.incarnations, "uid": uid, "prefix": prefix, "canon": canon(prefix)}

    def prefix(self):
        return self.rng.choices(list(PREFIXES), list(PREFIXES.values()))[0]

    def free_identity(self):
        free = [(n, m) for n in self.namespaces for m in NAMES if (n, m) not in self.live]
        return self.rng.choice(free) if free else (None, None)

    def attached(self):
        """Live clusters whose entry is theirs: (ns, name) -> incarnation."""
        r = self.kubectl("get", "backupentries", "-o", "json")
        if r.returncode != 0:
            raise RuntimeError(f"get backupentries: {r.stderr.strip()}")
        out = {}
        for e in json.loads(r.stdout).get("items", []):
            spec, st = e.get("spec", {}), e.get("status", {})
            who = (spec.get("etcd", {}).get("namespace"), spec.get("etcd", {}).get("name"))
            inc = self.live.get(who)
            if inc and spec.get("etcd", {}).get("uid") == inc["uid"] and \
                    canon(spec.get("prefix", "")) == inc["canon"] and st.get("phase") == "Active":
                out[who] = inc
        return out

    def write(self):
        """Every attached cluster's sidecar writes a full snapshot under its cleaned prefix."""
        base = f"{os.environ['S3_URL']}/{os.environ['BUCKET']}"
        for (ns, name), inc in sorted(self.attached().items()):
            self.seq += 1
            key = (inc["canon"] + "/" if inc["canon"] else "") + \
                f"v2/Full-00000000-{self.seq:08d}-{1700000000 + self.seq}.gz"
            self.s3("-T", "-", f"{base}/{key}", "-o", "/dev/null", data=b"snapshot")
            self.objects[key] = (ns, name, inc["id"])
            self.stats["written"] += 1

    # ---- the invariant ----
    def check(self):
        have = self.keys()
        lost = []
        for key, (ns, name, i) in sorted(self.objects.items()):
            inc = self.live.get((ns, name))
            if key not in have and inc and inc["id"] == i:
                lost.append(f"{key} of live Etcd {ns}/{name} (uid {inc['uid']}, prefix "
                            f"{inc['prefix']!r})")
        gone = [k for k in self.objects if k not in have]
        self.stats["deleted"] = len(gone)
        return lost

    def run(self, steps):
        ops = [(self.op_create, 30), (self.op_race, 8), (self.op_delete, 22),
               (self.op_move, 8), (self.op_wait, 20), (lambda: "the sidecars write", 12)]
        done = []
        for ns in self.namespaces:
            r = self.kubectl("create", "namespace", ns)
            if r.returncode != 0:
                raise RuntimeError(f"create namespace {ns}: {r.stderr.strip()}")
            # the Etcds' backup Secret: an Etcd without credentials gets no BackupEntry
            r = self.kubectl("-n", ns, "create", "secret", "generic", "etcd-backup",
                             "--from-literal=accessKeyID=S3RVER")
            if r.returncode != 0:
                raise RuntimeError(f"create secret in {ns}: {r.stderr.strip()}")
        for step in range(1, steps + 1):
            op = self.rng.choices([o for o, _ in ops], [w for _, w in ops])[0]
            what = op()
            self.write()
            done.append(f"{step}: {what}")
            lost = self.check()
            if lost:
                print(f"prefix_random: seed {self.seed}, step {step}: a live cluster's "
                      f"snapshots were deleted:", file=sys.stderr)
                for line in lost:
                    print(f"  {line}", file=sys.stderr)
                print("sequence:\n  " + "\n  ".join(done), file=sys.stderr)
                print(f"replay: PREFIX_RANDOM_SEEDS={self.seed}", file=sys.stderr)
                return 1
            print(f"seed {self.seed} {done[-1]}", file=self.log, flush=True)
        return 0


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    seed, steps = int(sys.argv[1]), int(sys.argv[2])
    w = World(seed, sys.stdout)
    rc = w.run(steps)
    s = w.stats
    print(f"prefix_random: seed {seed}: {steps} operations, creates admitted {s['admitted']}, "
          f"refused {s['refused']}, races {s['raced']}; snapshots written {s['written']}, "
          f"deleted by etcd-warden {s['deleted']} (none of a live cluster)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
