#!/usr/bin/env python3
"""Seeded random sequences against the whole stack that keeps backups apart: kube-sim,
warden-webhook's one-prefix rule and its BackupBucket authority check, warden-controller's
BackupEntries and deletion Jobs (run by job_exec.py) and an S3 bucket, driven with kubectl and
curl.

    prefix_random.py SEED STEPS

Environment: KUBECONFIG, KUBECTL_CACHE (kubectl's cache directory), S3_URL, S3_CREDENTIALS
("access:secret"), BUCKET (a bucket of this seed's alone in that S3 store, which must keep a
key's leading '/' as AWS does: Ceph's RADOS Gateway, not s3rver), SELECTOR (the label
"key=value" its BackupBucket's namespaceSelector selects), STORE_RECORD (the requests the
deletion Jobs made to the store, as fault_proxy.py --record writes them: the operator's Secret
names that proxy, the tenants' sidecars write to the store directly), JOB_RECORD (the Job runs,
as job_exec.py writes them with JOB_EXEC_RECORD), PREFIX_RANDOM_WAIT (seconds of a "time
passes" step, longer than the bucket's grace period), PREFIX_RANDOM_SIDECAR_DELAY (seconds from
an Etcd's admission to its sidecar's first snapshot, 1), CONTROLLER_PID and JOBS_PID
(warden-controller and job_exec.py: the run stops, saying so, once either has exited).

Drawn from the seed alone, over three namespaces (two the bucket's namespaceSelector selects,
one it does not) and three names:
  - Etcd creates (one, or two at the same moment) with prefixes drawn to collide ("a", "a-2",
    "/a", "a/", "a//b", "a/b", "b", "", "/"), provider spellings of one container (aws, S3,
    s3, stackit, and gcp, GCS, azure, ABS: one store whatever the provider), endpoint aliases
    (none, "", the AWS defaults, the store's URL spelled three ways), a backup sidecar version
    (v0.28.4, whose S3 client cleans a leading '/', or v0.43.0, whose aws-sdk-go-v2 keeps it),
    and credentials (the Secret, no secretRef, or a secretRef naming no Secret);
  - deletes, re-creates, prefix moves, and respellings of live Etcds (another provider
    spelling, endpoint alias or sidecar version, the same prefix: the same cluster);
  - EtcdBackups that never write: of an Etcd that does not exist, or of a live Etcd with a
    destination whose Secret does not exist (the backup fails), with destinations drawn like
    the prefixes, and their deletion;
  - time passing (the grace period ends, deletion Jobs run) and the sidecars writing.
Every admitted Etcd runs a member (its StatefulSet's pod, Running). A cluster's sidecar writes a
snapshot, from PREFIX_RANDOM_SIDECAR_DELAY after its admission on and once its entry recorded
the member seen running (spec.membersSeenAt: nothing before is deleted), as its version writes it (path.Join(prefix, "v2", name), a leading '/' dropped by v0.28.4's S3
client: tests/test_bstore_diff.c m_written), when it has credentials.

After every operation, from the bucket's listing and the store's and Job runner's records
(never etcd-warden's annotations or status):
  - no snapshot a live cluster wrote since its create or its last move was deleted;
  - every live cluster with credentials lists only its own snapshots: the keys under its
    listing prefix (its store prefix path.Join(prefix, "v2") less the last token, as every
    sidecar version lists: s3_snapstore.go List) were written by it (its namespace and name);
  - every object deleted was deleted by a deletion Job, and written by the Etcd of the entry
    that Job deleted for (its namespace and name, read from a watch of the BackupEntries: the
    entry the Job's annotation names, as seen with status.deletionStartedAt before the Job ran);
  - no BackupEntry, ever, names the namespace the bucket does not select, and no claim of that
    namespace (an Etcd, a prefix move, an EtcdBackup's destination) was admitted.
A failure prints the seed, the step and the sequence so far, and exits 1.
"""
import base64
import calendar
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET

from kenv import KUBECTL_ENV

NAMES = ("e1", "e2", "e3")
# Drawn by weight: the whole container ("", "/") is rare, since once it is claimed, its entry
# (never emptied) holds every other prefix of the bucket for the rest of the sequence.
PREFIXES = {"a": 12, "a-2": 8, "/a": 4, "a/": 4, "a//b": 4, "a/b": 8, "b": 12, "b-2": 8,
            "/b/c": 4, "c": 8, "/c": 4, "d/e": 6, "d": 6, "": 1, "/": 1}
# etcd-druid's provider names: the S3 family's sidecar client, and others naming objects as
# given; all of one container are one store
PROVIDERS = {"aws": 10, "S3": 4, "s3": 4, "stackit": 2, "gcp": 2, "GCS": 1, "azure": 1, "ABS": 1}
S3_FAMILY = ("aws", "S3", "s3", "stackit")
VERSIONS = ("v0.28.4", "v0.43.0")
CREDENTIALS = {"etcd-backup": 10, None: 1, "missing": 1}


def go_clean(p):
    """Go's path.Clean."""
    if p == "":
        return "."
    rooted = p.startswith("/")
    out = []
    for seg in p.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if out and out[-1] != "..":
                out.pop()
            elif not rooted:
                out.append("..")
            continue
        out.append(seg)
    s = ("/" if rooted else "") + "/".join(out)
    return s or "."


def go_join(*elems):
    """Go's path.Join: the non-empty elements joined with '/', cleaned; "" when none."""
    e = [x for x in elems if x]
    return go_clean("/".join(e)) if e else ""


def written_key(prefix, provider, version, name):
    """The object key a sidecar writes: path.Join(prefix, "v2", name) as its client sends it
    (aws-sdk-go, v0.28.4's, cleans the request path: no leading '/')."""
    key = go_join(prefix, "v2", name)
    if provider in S3_FAMILY and version == "v0.28.4":
        key = key.lstrip("/")
    return key


def listing_prefix(prefix):
    """The string prefix every sidecar version lists: the store prefix path.Join(prefix, "v2")
    without its last token (s3_snapstore.go List, v0.28.4 and v0.43.0 alike)."""
    toks = go_join(prefix, "v2").split("/")
    return go_join("/".join(toks[:-1]))


class EntryWatch(threading.Thread):
    """Every version of every BackupEntry, from a kubectl watch (restarted when it ends)."""

    def __init__(self, kubectl_argv):
        super().__init__(daemon=True)
        self.argv = kubectl_argv
        self.lock = threading.Lock()
        self.versions = []  # (name, ns, etcd name, deletionStartedAt or None)
        self.stop = False
        self.proc = None

    def close(self):
        self.stop = True
        if self.proc:
            self.proc.terminate()
            self.proc.wait()

    def run(self):
        while not self.stop:
            self.proc = p = subprocess.Popen(self.argv + ["get", "backupentries", "--watch", "-o", "json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                 env=KUBECTL_ENV)
            if self.stop:
                p.terminate()
            dec, buf = json.JSONDecoder(), ""
            for line in p.stdout:
                buf += line
                while True:
                    buf = buf.lstrip()
                    if not buf:
                        break
                    try:
                        obj, end = dec.raw_decode(buf)
                    except ValueError:
                        break
                    buf = buf[end:]
                    for o in obj.get("items", [obj]) if obj.get("kind", "").endswith("List") \
                            else [obj]:
                        self.add(o)
            p.wait()
            time.sleep(0.2)

    def add(self, o):
        spec, st = o.get("spec", {}), o.get("status", {}) or {}
        etcd = spec.get("etcd", {})
        v = (o.get("metadata", {}).get("name"), etcd.get("namespace"), etcd.get("name"),
             st.get("deletionStartedAt"), etcd.get("uid"))
        with self.lock:
            if v not in self.versions:
                self.versions.append(v)

    def owner(self, entry, run_start):
        """(namespace, Etcd name) of entry as last seen deleting (status.deletionStartedAt)
        before a Job run that started at run_start (seconds since the epoch; the field has
        whole seconds), or None when no such version was seen."""
        found, at = None, None
        with self.lock:
            for name, ns, etcd, t, _ in self.versions:
                if name != entry or not t:
                    continue
                try:
                    ts = calendar.timegm(time.strptime(t, "%Y-%m-%dT%H:%M:%SZ"))
                except ValueError:
                    continue
                if ts <= run_start + 1 and (at is None or ts >= at):
                    found, at = (ns, etcd), ts
        return found

    def claimants(self):
        """(entry, namespace, Etcd name, Etcd uid) of every version seen."""
        with self.lock:
            return {(name, ns, etcd, uid) for name, ns, etcd, _, uid in self.versions}


class World:
    def __init__(self, seed, log):
        self.rng = random.Random(seed)
        self.seed = seed
        self.namespaces = (f"s{seed}-1", f"s{seed}-2", f"s{seed}-3")
        self.unselected = self.namespaces[2]
        self.log = log
        self.live = {}  # (ns, name) -> incarnation
        self.objects = {}  # key -> (ns, name, incarnation id) of the writer
        self.backups = {}  # (ns, name) -> what it was drawn as
        self.seq = 0
        self.incarnations = 0
        self.store_seen = 0  # lines of STORE_RECORD read
        self.deletes = []  # (time, key) not yet attributed to a Job run
        self.deleters = {}  # key -> (ns, name) of the Etcd whose entry's Job deleted it
        self.runs = []  # Job runs read from JOB_RECORD
        self.runs_before = 0  # of earlier seeds
        self.uncredentialed = set()  # uids of the Etcds created without credentials
        self.stats = {"admitted": 0, "refused": 0, "raced": 0, "deleted": 0, "written": 0,
                      "respelled": 0, "respell refused": 0, "unselected refused": 0,
                      "no credentials": 0, "backups admitted": 0, "backups refused": 0,
                      "deletion runs": 0}
        self.kube = ["kubectl", "--kubeconfig", os.environ["KUBECONFIG"],
                     "--cache-dir", os.environ["KUBECTL_CACHE"]]
        self.watch = EntryWatch(self.kube)

    # ---- tools ----
    def kubectl(self, *args, stdin=None):
        return subprocess.run(self.kube + list(args), input=stdin, capture_output=True,
                              text=True, timeout=60, env=KUBECTL_ENV)

    def bucket_secret_data(self):
        """The data of the bucket's Secret (etcd-warden/s3-bucket), as stored."""
        r = self.kubectl("-n", "etcd-warden", "get", "secret", "s3-bucket", "-o", "json")
        if r.returncode != 0:
            raise RuntimeError(f"get the bucket's Secret: {r.stderr.strip()}")
        return json.loads(r.stdout)["data"]

    def s3(self, *args, data=None):
        cmd = ["curl", "-sS", "--fail-with-body", "--path-as-is", "--aws-sigv4",
               "aws:amz:us-east-1:s3", "-u", os.environ["S3_CREDENTIALS"],
               "-H", "x-amz-content-sha256:UNSIGNED-PAYLOAD", *args]
        r = subprocess.run(cmd, input=data, capture_output=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"curl {args}: {r.stderr.decode()} {r.stdout.decode()}")
        return r.stdout

    def keys(self):
        base = f"{os.environ['S3_URL']}/{os.environ['BUCKET']}"
        out, token = set(), None
        while True:
            q = "?list-type=2" + (f"&continuation-token={urllib.parse.quote(token)}"
                                  if token else "")
            root = ET.fromstring(self.s3(base + q))
            tag = lambda e: e.tag.rsplit("}", 1)[-1]
            for e in root.iter():
                if tag(e) == "Key":
                    out.add(e.text)
            token = next((e.text for e in root.iter() if tag(e) == "NextContinuationToken"), None)
            if not token:
                return out

    def draw(self, weights):
        return self.rng.choices(list(weights), list(weights.values()))[0]

    def endpoint(self, provider):
        """An alias of the one endpoint (or none): the store is the container. Mostly none, or
        the bucket's Secret's endpoint: only those get entries (an Etcd's sidecar must write
        where the bucket's deletions do), the other spellings only claim."""
        url = os.environ["S3_URL"]
        port = url.rsplit(":", 1)[1]
        aliases = [None, "", url, url + "/", f"http://localhost:{port}",
                   "https://s3.amazonaws.com", "https://s3.us-east-1.amazonaws.com"]
        if provider not in S3_FAMILY:
            aliases = [None, "", "https://storage.googleapis.com"]
        elif self.rng.random() < 0.6:
            if not hasattr(self, "bucket_endpoint"):
                self.bucket_endpoint = base64.b64decode(
                    self.bucket_secret_data()["endpoint"]).decode()
            return self.rng.choice([None, "", self.bucket_endpoint])
        return self.rng.choice(aliases)

    def store(self, provider, prefix, endpoint, secret):
        s = {"provider": provider, "container": os.environ["BUCKET"], "prefix": prefix}
        if endpoint is not None:
            s["endpointOverride"] = endpoint
        if secret:
            s["secretRef"] = {"name": secret}
        return s

    def manifest(self, ns, name, spell):
        return json.dumps({
            "apiVersion": "druid.gardener.cloud/v1alpha1", "kind": "Etcd",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": 1, "labels": {"app": "etcd-statefulset"},
                     "etcd": {"clientPort": 2379, "serverPort": 2380},
                     "backup": {"port": 8080, "store": self.store(
                         spell["provider"], spell["prefix"], spell["endpoint"],
                         spell["secret"])}}})

    def spelling(self, prefix=None):
        provider = self.draw(PROVIDERS)
        return {"prefix": self.prefix() if prefix is None else prefix, "provider": provider,
                "endpoint": self.endpoint(provider), "secret": self.draw(CREDENTIALS),
                "version": self.rng.choice(VERSIONS)}

    @staticmethod
    def reason(err):
        """The refusal's reason, short: what it names after the field."""
        err = err.strip().splitlines()[-1] if err.strip() else ""
        cut = err.find("denied the request: ")
        return f" ({err[cut + 20:][:160] if cut >= 0 else err[-160:]})"

    @staticmethod
    def spell_text(s):
        cred = s["secret"] or "no secretRef"
        ep = "" if s["endpoint"] is None else f" {s['endpoint']}"
        return f"{s['prefix']!r} {s['provider']}{ep} {s['version']} {cred}"

    # ---- operations ----
    def create_start(self, ns, name, spell):
        p = subprocess.Popen(self.kube + ["create", "-f", "-", "-o", "jsonpath={.metadata.uid}"],
                             env=KUBECTL_ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        p.stdin.write(self.manifest(ns, name, spell))
        p.stdin.close()
        return p

    def create_end(self, p, ns, name, spell):
        out, err = p.stdout.read(), p.stderr.read()
        if p.wait(timeout=60) == 0 and out:
            self.live[(ns, name)] = self.incarnation(out.strip(), spell)
            self.members(ns, name)
            self.stats["admitted"] += 1
            if ns == self.unselected:
                self.violations.append(f"Etcd {ns}/{name} of the namespace the bucket does "
                                       f"not select was admitted")
            if not self.live[(ns, name)]["creds"]:
                self.stats["no credentials"] += 1
                self.uncredentialed.add(out.strip())
            return "admitted"
        if "denied the request" not in err and "already exists" not in err:
            raise RuntimeError(f"create {ns}/{name} {spell['prefix']!r}: {err.strip()}")
        self.stats["refused"] += 1
        if ns == self.unselected:
            self.stats["unselected refused"] += 1
        return "refused" + self.reason(err)

    def op_create(self):
        ns, name = self.free_identity()
        if not ns:
            return self.op_wait()
        spell = self.spelling()
        return f"create {ns}/{name} {self.spell_text(spell)}: " + \
            self.create_end(self.create_start(ns, name, spell), ns, name, spell)

    def op_race(self):
        a, b = self.free_identity(), self.free_identity()
        if not a[0] or not b[0] or a == b:
            return self.op_create()
        sa = self.spelling()
        pa = sa["prefix"]
        sb = self.spelling(self.rng.choice([pa, pa + "/", "/" + pa, pa + "-2", self.prefix()]))
        procs = [self.create_start(*a, sa), self.create_start(*b, sb)]
        ra = self.create_end(procs[0], *a, sa)
        rb = self.create_end(procs[1], *b, sb)
        self.stats["raced"] += 1
        return f"race {a[0]}/{a[1]} {self.spell_text(sa)} ({ra}), " \
            f"{b[0]}/{b[1]} {self.spell_text(sb)} ({rb})"

    def op_delete(self):
        if not self.live:
            return self.op_create()
        ns, name = self.rng.choice(sorted(self.live))
        r = self.kubectl("-n", ns, "delete", "etcd", name, "--wait=false")
        if r.returncode != 0:
            raise RuntimeError(f"delete {ns}/{name}: {r.stderr.strip()}")
        del self.live[(ns, name)]
        return f"delete {ns}/{name}"

    def patch_store(self, ns, name, store):
        patch = json.dumps({"spec": {"backup": {"store": store}}})
        r = self.kubectl("-n", ns, "patch", "etcd", name, "--type", "merge", "-p", patch)
        if r.returncode != 0 and "denied the request" not in r.stderr:
            raise RuntimeError(f"patch {ns}/{name}: {r.stderr.strip()}")
        return r

    def op_move(self):
        if not self.live:
            return self.op_create()
        ns, name = self.rng.choice(sorted(self.live))
        inc = self.live[(ns, name)]
        prefix = self.prefix()
        r = self.patch_store(ns, name, {"prefix": prefix})
        if r.returncode == 0:
            if ns == self.unselected:
                self.violations.append(f"a prefix move of {ns}/{name}, of the namespace the "
                                       f"bucket does not select, was admitted")
            self.live[(ns, name)] = self.incarnation(inc["uid"], dict(inc["spell"],
                                                                      prefix=prefix))
            return f"move {ns}/{name} to {prefix!r}: admitted"
        return f"move {ns}/{name} to {prefix!r}: refused" + self.reason(r.stderr)

    def op_respell(self):
        """Another spelling of the same store and prefix: the same cluster, which keeps its
        backups (a druid upgrade changes the sidecar's version as well, sometimes)."""
        if not self.live:
            return self.op_create()
        ns, name = self.rng.choice(sorted(self.live))
        inc = self.live[(ns, name)]
        old = inc["spell"]
        new = dict(old)
        what = self.rng.choice(["provider", "endpoint", "version", "all"])
        if what in ("provider", "all"):
            new["provider"] = self.draw(PROVIDERS)
            new["endpoint"] = self.endpoint(new["provider"])
        if what in ("endpoint", "all"):
            new["endpoint"] = self.endpoint(new["provider"])
        if what in ("version", "all"):
            new["version"] = self.rng.choice(VERSIONS)
        store = {"provider": new["provider"], "endpointOverride": new["endpoint"]}
        text = f"respell {ns}/{name} {self.spell_text(old)} to {self.spell_text(new)}"
        r = self.patch_store(ns, name, store)
        if r.returncode == 0:
            inc["spell"] = new
            self.stats["respelled"] += 1
            return text + ": admitted"
        self.stats["respell refused"] += 1
        return text + ": refused" + self.reason(r.stderr)

    def op_backup(self):
        """An EtcdBackup that never writes: of an Etcd that does not exist, or of a live one
        with a destination whose Secret does not exist."""
        ns = self.rng.choice(self.namespaces)
        live = sorted(n for (s, n) in self.live if s == ns)
        if live and self.rng.random() < 0.5:
            etcd, secret, kind = self.rng.choice(live), "missing-destination", "failing"
        else:
            etcd, secret, kind = "absent", "etcd-backup", "of no Etcd"
        name = f"b{len(self.backups) + 1}"
        spell = self.spelling()
        dest = self.store(spell["provider"], spell["prefix"], spell["endpoint"], secret)
        obj = {"apiVersion": "etcd-warden.io/v1alpha1", "kind": "EtcdBackup",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"etcdName": etcd, "destination": dest}}
        r = self.kubectl("create", "-f", "-", stdin=json.dumps(obj))
        text = f"backup {ns}/{name} {kind} ({etcd}) to {self.spell_text(spell)}"
        if r.returncode == 0:
            self.backups[(ns, name)] = kind
            self.stats["backups admitted"] += 1
            if ns == self.unselected:
                self.violations.append(f"EtcdBackup {ns}/{name}, of the namespace the bucket "
                                       f"does not select, was admitted")
            return text + ": admitted"
        if "denied the request" not in r.stderr and "is invalid" not in r.stderr:
            raise RuntimeError(f"create EtcdBackup {ns}/{name}: {r.stderr.strip()}")
        self.stats["backups refused"] += 1
        return text + ": refused" + self.reason(r.stderr)

    def op_backup_delete(self):
        if not self.backups:
            return self.op_backup()
        ns, name = self.rng.choice(sorted(self.backups))
        r = self.kubectl("-n", ns, "delete", "etcdbackup", name, "--wait=false")
        if r.returncode != 0:
            raise RuntimeError(f"delete EtcdBackup {ns}/{name}: {r.stderr.strip()}")
        del self.backups[(ns, name)]
        return f"delete backup {ns}/{name}"

    def op_wait(self):
        time.sleep(float(os.environ.get("PREFIX_RANDOM_WAIT", "2.5")))
        return "time passes"

    def incarnation(self, uid, spell):
        """A cluster from its create or its move on: what it writes from then on is its own."""
        self.incarnations += 1
        delay = float(os.environ.get("PREFIX_RANDOM_SIDECAR_DELAY", "1"))
        return {"id": self.incarnations, "uid": uid, "spell": dict(spell),
                "creds": spell["secret"] == "etcd-backup", "from": time.time() + delay}

    def prefix(self):
        return self.draw(PREFIXES)

    def free_identity(self):
        """A namespace and name with no live Etcd; the unselected namespace drawn less often."""
        free = [(n, m) for n in self.namespaces for m in NAMES if (n, m) not in self.live]
        if not free:
            return None, None
        return self.rng.choices(free, [1 if n == self.unselected else 3 for n, _ in free])[0]

    def members(self, ns, name):
        """The Etcd's StatefulSet and its member pod, Running, as the StatefulSet controller and
        the kubelet make them (tests/lib/controller.sh's ctl_members): a BackupEntry's deletion
        deletes only what was written once warden-controller saw a member running. They stay
        when the Etcd goes (no owner): an Etcd created again of that name runs them again."""
        labels = {"app.kubernetes.io/part-of": name,
                  "app.kubernetes.io/component": "etcd-statefulset"}
        mount = [{"name": name, "mountPath": "/var/etcd/data"}]
        conf = {"name": "etcd-config-file", "configMap": {"name": name + "-config", "items": [
            {"key": "etcd.conf.yaml", "path": "etcd.conf.yaml"}]}}
        spec = {"containers": [
            {"name": "etcd", "image": "etcd-wrapper:v0.4.2", "args": ["start-etcd"],
             "volumeMounts": mount},
            {"name": "backup-restore", "image": "etcdbrctl:v0.34.0", "args": ["server"],
             "ports": [{"name": "server", "containerPort": 8080}],
             "volumeMounts": mount + [{"name": "etcd-config-file",
                                       "mountPath": "/var/etcd/config/"}]}],
            "volumes": [conf]}
        sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"replicas": 1, "serviceName": name + "-peer",
                        "selector": {"matchLabels": labels},
                        "template": {"metadata": {"labels": labels}, "spec": spec},
                        "volumeClaimTemplates": [{"metadata": {"name": name}, "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}}}}]}}
        r = self.kubectl("apply", "-f", "-", "-o", "jsonpath={.metadata.uid}",
                         stdin=json.dumps(sts))
        if r.returncode != 0:
            raise RuntimeError(f"StatefulSet {ns}/{name}: {r.stderr.strip()}")
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name + "-0", "namespace": ns, "labels": labels,
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                                 "name": name, "uid": r.stdout.strip(),
                                                 "controller": True}]},
               "spec": dict(spec, volumes=[conf, {"name": name, "persistentVolumeClaim": {
                   "claimName": f"{name}-{name}-0"}}])}
        r = self.kubectl("create", "-f", "-", stdin=json.dumps(pod))
        if r.returncode != 0 and "already exists" not in r.stderr:
            raise RuntimeError(f"pod {ns}/{name}-0: {r.stderr.strip()}")
        r = self.kubectl("-n", ns, "patch", "pod", name + "-0", "--subresource=status",
                         "--type", "merge", "-p",
                         '{"status":{"phase":"Running","podIP":"10.96.0.10"}}')
        if r.returncode != 0:
            raise RuntimeError(f"pod {ns}/{name}-0 status: {r.stderr.strip()}")

    def seen(self):
        """(ns, name, uid, prefix) of every BackupEntry that recorded a running member."""
        r = self.kubectl("get", "backupentries", "-o", "json")
        if r.returncode != 0:
            raise RuntimeError(f"list BackupEntries: {r.stderr.strip()}")
        return {(e["spec"]["etcd"]["namespace"], e["spec"]["etcd"]["name"],
                 e["spec"]["etcd"].get("uid", ""), e["spec"].get("prefix", ""))
                for e in json.loads(r.stdout)["items"] if e["spec"].get("membersSeenAt")}

    def write(self):
        """Every running sidecar with credentials writes a full snapshot, as its version does,
        once warden-controller recorded one of its members running in its entry."""
        base = f"{os.environ['S3_URL']}/{os.environ['BUCKET']}"
        now = time.time()
        seen = None
        for (ns, name), inc in sorted(self.live.items()):
            if not inc["creds"] or now < inc["from"]:
                continue
            if not inc.get("seen"):
                seen = self.seen() if seen is None else seen
                if (ns, name, inc["uid"], inc["spell"]["prefix"]) in seen:
                    inc["seen"] = True
                    inc["from"] = time.time() + 1  # object times have seconds
                continue
            self.seq += 1
            s = inc["spell"]
            key = written_key(s["prefix"], s["provider"], s["version"],
                              f"Full-00000000-{self.seq:08d}-{1700000000 + self.seq}.gz")
            self.s3("-X", "PUT", "--data-binary", "@-", f"{base}/{urllib.parse.quote(key)}",
                    "-o", "/dev/null",
                    data=b"snapshot")
            self.objects[key] = (ns, name, inc["id"])
            self.stats["written"] += 1

    # ---- the oracle: the bucket, the store's record, the Job runs ----
    def read_records(self):
        with open(os.environ["STORE_RECORD"]) as f:
            lines = f.read().splitlines()
        bucket = "/" + os.environ["BUCKET"] + "/"
        for line in lines[self.store_seen:]:
            try:
                r = json.loads(line)
            except ValueError:
                break  # a line being written: read again next time
            self.store_seen += 1
            path = urllib.parse.urlparse(r["path"]).path
            if r["method"] == "DELETE" and path.startswith(bucket):
                self.deletes.append((r["t"], urllib.parse.unquote(path[len(bucket):])))
            if path.rstrip("/") == bucket.rstrip("/"):
                for k in r.get("keys", []):
                    self.deletes.append((r["t"], k))
        runs = {}  # by uid: a run's line when it starts ("end" null), then when it is over
        if os.path.exists(os.environ["JOB_RECORD"]):
            with open(os.environ["JOB_RECORD"]) as f:
                for line in f:
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue  # a line being written: read again next time
                    if r["uid"] not in runs or r.get("end") is not None:
                        runs[r["uid"]] = r
        self.runs = list(runs.values())

    def in_flight(self, t=None):
        """The Job runs started (before t) and not over."""
        return [j for j in self.runs if j.get("end") is None and (t is None or j["start"] <= t)]

    def attribute(self, violations, have):
        """Each deletion of an object the sidecars wrote: the Job run it came from, the entry
        and deletion start that run was for, that entry's Etcd then; it must be the writer.
        (The store's record holds each request before the store has it: a request for an
        object still there is pending until its Job run is over, then it did nothing.)"""
        left = []
        for t, key in self.deletes:
            if key not in self.objects or key in self.deleters:
                continue  # never written, or accounted for: nothing more was deleted
            run = next((j for j in self.runs
                        if j.get("end") is not None and j["start"] <= t <= j["end"]), None)
            if key in have:
                if run is None:
                    left.append((t, key))
                continue
            if run is None:
                left.append((t, key))  # its Job has not finished: later
                continue
            entry = run.get("annotations", {}).get("etcd-warden.io/backup-entry")
            before = next((a.split("=", 1)[1] for a in run["command"]
                           if a.startswith("--written-before=")), None)
            owner = self.watch.owner(entry, run["start"])
            ns, name, _ = self.objects[key]
            self.deleters[key] = owner
            if owner is None:
                violations.append(f"{key} (written by {ns}/{name}) deleted by Job "
                                  f"{run['job']} (--written-before={before}), for no BackupEntry "
                                  f"{entry} seen deleting before the Job ran")
            elif owner != (ns, name):
                violations.append(f"{key} (written by {ns}/{name}) deleted by Job "
                                  f"{run['job']}, the entry {entry} of {owner[0]}/{owner[1]}")
        self.deletes = left

    @staticmethod
    def stopped():
        """What of the stack is no longer running (its checks would mean nothing)."""
        out = []
        for var, what in (("CONTROLLER_PID", "warden-controller"), ("JOBS_PID", "job_exec.py")):
            pid = os.environ.get(var)
            if pid:
                try:
                    os.kill(int(pid), 0)
                except OSError:
                    out.append(f"{what} (pid {pid}) is not running")
        return out

    def check(self, final=False):
        stopped = self.stopped()
        if stopped:
            return stopped
        have = self.keys()
        violations, self.violations = self.violations, []
        for key, (ns, name, i) in sorted(self.objects.items()):
            inc = self.live.get((ns, name))
            if key not in have and inc and inc["id"] == i:
                violations.append(f"{key} of live Etcd {ns}/{name} (uid {inc['uid']}, "
                                  f"{self.spell_text(inc['spell'])}) deleted")
        for (ns, name), inc in sorted(self.live.items()):
            if not inc["creds"]:
                continue
            lp = listing_prefix(inc["spell"]["prefix"])
            foreign = sorted(k for k in have if k.startswith(lp) and
                             self.objects.get(k, (None, None))[:2] != (ns, name))
            if foreign:
                violations.append(f"live Etcd {ns}/{name} ({self.spell_text(inc['spell'])}) "
                                  f"lists under {lp!r} what it did not write: "
                                  f"{', '.join(foreign[:4])}")
        self.read_records()
        self.attribute(violations, have)
        end = time.time() + 120
        while final and any(self.in_flight(t) for t, _ in self.deletes) and time.time() < end:
            # a run that started after the last wait (the Job of an entry whose grace ended
            # meanwhile) deletes as this reads: it is over before its deletions are judged
            time.sleep(0.5)
            have = self.keys()
            self.read_records()
            self.attribute(violations, have)
        if final and self.deletes:
            flying = [j["job"] for j in self.in_flight()]
            violations.append(f"deleted outside every Job run: {self.deletes[:4]}" +
                              (f" (Job runs still in flight after 120 s: {flying})"
                               if flying else ""))
        gone = {k for k in self.objects if k not in have}
        unknown = gone - set(self.deleters) - {k for _, k in self.deletes}
        if unknown:
            violations.append(f"gone, deleted by no one the store recorded: "
                              f"{sorted(unknown)[:4]}")
        for entry, ns, etcd, uid in sorted(self.watch.claimants(), key=str):
            if ns == self.unselected:
                violations.append(f"BackupEntry {entry} of {ns}/{etcd}, a namespace the "
                                  f"bucket does not select")
            if uid in self.uncredentialed:
                violations.append(f"BackupEntry {entry} of {ns}/{etcd} (uid {uid}), an Etcd "
                                  f"without credentials")
        self.stats["deleted"] = len(gone)
        self.stats["deletion runs"] = len(self.runs) - self.runs_before
        return violations

    def run(self, steps):
        ops = [(self.op_create, 26), (self.op_race, 7), (self.op_delete, 20),
               (self.op_move, 7), (self.op_respell, 8), (self.op_backup, 6),
               (self.op_backup_delete, 3), (self.op_wait, 18),
               (lambda: "the sidecars write", 10)]
        self.violations = []
        done = []
        for ns in self.namespaces:
            r = self.kubectl("create", "namespace", ns)
            if r.returncode != 0:
                raise RuntimeError(f"create namespace {ns}: {r.stderr.strip()}")
            if ns != self.unselected:
                self.kubectl("label", "namespace", ns, os.environ["SELECTOR"])
            # the Etcds' backup Secret: the bucket's credentials (an Etcd gets an entry only
            # when its Secret holds them)
            r = self.kubectl("-n", ns, "create", "-f", "-", stdin=json.dumps({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "etcd-backup", "namespace": ns},
                "data": self.bucket_secret_data()}))
            if r.returncode != 0:
                raise RuntimeError(f"create secret in {ns}: {r.stderr.strip()}")
        self.watch.start()
        self.read_records()  # what earlier seeds' Jobs did is theirs
        self.runs_before, self.deletes = len(self.runs), []
        step = 0
        while step <= steps:
            final = step == steps
            if final:
                # the last deletions' Jobs finish, or the deletions are nobody's: no deletion
                # left unattributed and no run in flight (one that has not deleted yet would
                # delete after this wait), or 120 s pass; what attribution finds is checked
                end = time.time() + 120
                while time.time() < end:
                    have = self.keys()  # before the record: a deletion it misses is there
                    self.read_records()
                    self.attribute(self.violations, have)
                    if not self.deletes and not self.in_flight():
                        break
                    time.sleep(0.5)
                what = "the end"
            else:
                op = self.rng.choices([o for o, _ in ops], [w for _, w in ops])[0]
                what = op()
                self.write()
            step += 1
            done.append(f"{step}: {what}")
            bad = self.check(final)
            if bad:
                print(f"prefix_random: seed {self.seed}, step {step}:", file=sys.stderr)
                for line in bad:
                    print(f"  {line}", file=sys.stderr)
                print("sequence:\n  " + "\n  ".join(done), file=sys.stderr)
                print(f"replay: PREFIX_RANDOM_SEEDS={self.seed} PREFIX_RANDOM_STEPS={steps}",
                      file=sys.stderr)
                return 1
            print(f"seed {self.seed} {done[-1]}", file=self.log, flush=True)
        r = self.kubectl("get", "backupentries,etcdbackups", "-A", "-o",
                         "custom-columns=NAME:.metadata.name,NS:.metadata.namespace,"
                         "PREFIX:.spec.prefix,ETCD:.spec.etcd.name,PHASE:.status.phase,"
                         "DESTINATION:.status.destination,WHY:.status.conditions[0].message,"
                         "ERROR:.status.error")
        print(f"seed {self.seed} at the end:\n{r.stdout}", file=self.log, flush=True)
        return 0


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    seed, steps = int(sys.argv[1]), int(sys.argv[2])
    w = World(seed, sys.stdout)
    try:
        rc = w.run(steps)
    finally:
        w.watch.close()
    s = w.stats
    print(f"prefix_random: seed {seed}: {steps} operations, creates admitted {s['admitted']} "
          f"({s['no credentials']} without credentials), refused {s['refused']} (of the "
          f"unselected namespace {s['unselected refused']}), races {s['raced']}; respellings "
          f"admitted {s['respelled']}, refused {s['respell refused']}; EtcdBackups admitted "
          f"{s['backups admitted']}, refused {s['backups refused']}; snapshots written "
          f"{s['written']}, deleted by etcd-warden {s['deleted']} in {s['deletion runs']} "
          f"deletion runs" + (" (none of a live cluster, each by its writer's entry)"
                              if rc == 0 else ""))
    return rc


if __name__ == "__main__":
    sys.exit(main())
