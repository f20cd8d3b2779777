#!/usr/bin/env python3
"""Seeded random sequences against the scale-down guard (driven by tests/e2e/guard_random.sh).

  guard_random.py --seeds 1,2,3 --ops N [--shrink-seconds S]

Runs as the coprocess of guard_random.sh: the stage (kube-sim, warden-webhook registered as
the chart registers it, warden-controller, backup-double, the druid actor) belongs to the
script, which this driver asks for things on stdout, one line each, and reads the answer of
on stdin:

  setup NS            two Etcds etcd-a and etcd-b in a fresh namespace NS with their
                      components, a backup-double each and the druid actor: "ok URL-A URL-B"
  teardown NS         stop the doubles and the druid actor of NS: "ok"
  recreate NS ETCD    etcd-druid re-creates the missing components of ETCD: "ok"
  ctl kill9|stop      SIGKILL / SIGTERM warden-controller, then start it again: "ok"
  ctl down|up         stop warden-controller (SIGTERM) / start it again: "ok"

Each seed gets a namespace of its own and a sequence of operations drawn from
random.Random(seed) alone (never from the state it meets), so a seed always tries the same
requests: scale, JSON, merge and strategic merge patches and server-side apply of the
StatefulSets, `kubectl scale` and Gardener's spec.replicas of the Etcds, the hibernate,
break-glass, protection, restoring, managed-by and part-of toggles, DELETEs, sidecar failures
and stalls, controller kills and restarts, by a person (alice), etcd-druid and
warden-controller; clients writing to etcd while its StatefulSet stands above 0 (through the
client Service while it has its client port, and on established connections that the cut does
not stop but that end with the pods they were opened to), state annotations
forged or removed by a non-controller identity (refused once only warden-controller may write
them; either way safety must hold), etcd-druid waking an Etcd while warden-controller is down,
and signal swaps (annotation to spec.replicas and back). About one draw in twenty is a whole
sleep/wake cycle of one Etcd instead (gen_cycle: writes on an established connection in the
background through the cut and the final snapshot; etcd-druid waking it while warden-controller
is down, then a scale back to 0 with the sidecar broken; etcd-druid's three failed pre-sync
snapshots after Gardener's wake), so that every seed has scale-downs to 0 to judge; a seed
that judged fewer than --min-judged fails. After every operation the invariants
are checked on what kube-sim holds,
with watches of the StatefulSets, Etcds and EtcdOpsTasks so that every instant counts, not
only the one seen after the operation:

  (a) no StatefulSet of an Etcd with a backup store, a component of it at that moment, went
      from above 0 replicas to 0 (or was deleted with its pods) while a write acknowledged
      before it is missing from the store - judged from ground truth alone, what the Etcd's
      backup-double recorded: each acknowledged write with its revision, each snapshot with
      its last revision (never etcd-warden's annotations) - unless, on a version of its
      Etcd the webhook may still have been reading (the current one, or one replaced less
      than STALE seconds before: the webhook decides from watch-fed caches), the break-glass
      annotation was set (then a Warning event ScaleDownWithoutSnapshot on the Etcd must
      follow). The one window a revision check cannot close without a write barrier in etcd
      (docs/hibernation.md, "The final snapshot holds the last write"): writes acknowledged
      after the sidecar's last answer to a final full snapshot, when nothing was written in
      the second before that answer (the quiet second the check proves), the StatefulSet
      stayed above 0 since (writes after a wake are no such window) and the scale-down
      follows it within WINDOW seconds; every write before the answer must be stored. Those
      writes are counted in the summary ("in the check-to-scale window");
  (b) no component lost or changed its managed-by or part-of label through a request of
      a non-reconciler (runtime components of an Etcd with runtime component creation
      disabled excepted, as etcd-druid);
  (c) nothing was deleted that a non-reconciler may not delete (a component of an Etcd
      with protection on), and no component disappeared but by a request of the test;
  (d) warden-controller records every wake: a StatefulSet scaled from 0 above 0 while its
      Etcd said Hibernated with a traffic-cut-at (the signal removed, Gardener's
      spec.replicas, etcd-druid while warden-controller is down) is followed, within
      WAKE_WAIT seconds, by a version of the Etcd (what warden-controller writes) whose phase
      is not Hibernated and whose cut is not that one. Read from the watch's versions, so it
      adds no wait to the operations; the wakes still open at the end are waited for.

The summary lines on stderr: "guard_random: seeds ... ops N checks M (invariants a b c d after
every operation) violations V" and "guard_random: judged N scale-downs to 0, M with writes
since the last snapshot" (M: the store as it was when the StatefulSet last rose above 0 lacked
a write made before the scale-down). On a violation: the seed, the sequence up to it, and a
shortened sequence that still fails (prefix replays, then dropping operations, within
--shrink-seconds).
"""
import argparse, datetime, http.client, json, os, random, re, ssl, subprocess, sys, threading, time
import calendar, urllib.request

from kenv import KUBECTL_ENV

KSIM_URL = os.environ["KSIM_URL"]
KSIM_TOKEN = os.environ["KSIM_TOKEN"]
KSIM_DIR = os.environ["KSIM_DIR"]
KUBECONFIG = os.environ["KUBECONFIG"]
KUBECTL_SHARE = 0.2  # of the requests sent with kubectl; the rest go as kubectl sends them
STALE = float(os.environ.get("GUARD_STALE_SECONDS", "3"))
# the revision check's answer to the scale-down request: the ScalingDown status write and the
# scale itself, on a loaded machine (invariant (a)); scaled as the harness scales its waits
WINDOW = 2.0 * float(os.environ.get("WARDEN_WAIT_SCALE", "3") or 3)
QUIET = 1.0  # the second the revision check proves quiet (docs/hibernation.md)
# how long warden-controller may take to record a wake (it may be down during it and start
# again at the end of the operation); scaled as the harness scales its waits
WAKE_WAIT = 5.0 * float(os.environ.get("WARDEN_WAIT_SCALE", "3") or 3)
HOST, PORT = KSIM_URL.split("//")[1].split(":")
PORT = int(PORT)
SSL = ssl.create_default_context(cafile=os.path.join(KSIM_DIR, "ca.crt"))

USERS = {"alice": "alice-token", "druid": "druid-token", "warden": "warden-token"}
RECONCILERS = ("druid", "warden")
ETCDS = ("etcd-a", "etcd-b")
CUT = "etcd-warden.io/traffic-cut-at"
BREAK = "etcd-warden.io/allow-scale-down-without-snapshot"


def break_glass_value():
    """Break glass as the webhook accepts it: an expiry an hour ahead, then the reason."""
    soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    return soon.strftime("%Y-%m-%dT%H:%M:%SZ") + " sidecar broken in a random test"
NOPROT = "druid.gardener.cloud/disable-etcd-component-protection"
NORUNTIME = "druid.gardener.cloud/disable-etcd-runtime-component-creation"
MANAGED = "app.kubernetes.io/managed-by"
# state annotations a non-controller forges ("-" removes)
FORGES = ["etcd-warden.io/traffic-cut-at=2000-01-01T00:00:00Z", "etcd-warden.io/traffic-cut-at-",
          "etcd-warden.io/hibernation-phase=Hibernated", "etcd-warden.io/hibernation-phase-",
          "etcd-warden.io/suspend-added-", "etcd-warden.io/suspend-added=true",
          "etcd-warden.io/removed-ports-", "druid.gardener.cloud/suspend-etcd-spec-reconcile-"]
PARTOF = "app.kubernetes.io/part-of"

# kind: (kubectl resource, API collection path, runtime component, name of ETCD's)
KINDS = {
    "StatefulSet": ("statefulset", "/apis/apps/v1/namespaces/{ns}/statefulsets", False, "{e}"),
    "ClientService": ("service", "/api/v1/namespaces/{ns}/services", True, "{e}-client"),
    "PeerService": ("service", "/api/v1/namespaces/{ns}/services", True, "{e}-peer"),
    "ConfigMap": ("configmap", "/api/v1/namespaces/{ns}/configmaps", False, "{e}-config"),
    "ServiceAccount": ("serviceaccount", "/api/v1/namespaces/{ns}/serviceaccounts", True, "{e}"),
    "Role": ("role", "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", True,
             "druid.gardener.cloud:etcd:{e}"),
    "RoleBinding": ("rolebinding", "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
                    True, "druid.gardener.cloud:etcd:{e}"),
    "PodDisruptionBudget": ("poddisruptionbudget", "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
                            True, "{e}"),
    "Lease": ("lease", "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", True, "{e}-0"),
    "SnapLease": ("lease", "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", True, "{e}-full-snap"),
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def rfc3339(s):
    """Seconds of an RFC 3339 UTC time (fraction dropped); None when not one."""
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-]\d\d:\d\d)$", s or "")
    if not m:
        return None
    t = calendar.timegm(tuple(int(m.group(i)) for i in range(1, 7)) + (0, 0, 0))
    z = m.group(8)
    if z not in ("Z", "z"):
        off = (int(z[1:3]) * 60 + int(z[4:6])) * 60
        t = t - off if z[0] == "+" else t + off
    return t


def rfc3339_frac(s):
    """Seconds (with the fraction) of an RFC 3339 UTC time; None when not one."""
    m = re.match(r"^(.*?)(\.\d+)?Z$", s or "")
    base = rfc3339((m.group(1) + "Z") if m else None)
    return None if base is None else base + (float(m.group(2)) if m.group(2) else 0.0)


_conns = threading.local()


def api(method, path, body=None, ctype="application/json", token=KSIM_TOKEN, timeout=15):
    """One request on this thread's kept-alive connection (opened again once on a failure)."""
    h = {"Authorization": "Bearer " + token}
    if body is not None:
        h["Content-Type"] = ctype
        body = body if isinstance(body, (bytes, str)) else json.dumps(body)
    for attempt in (0, 1):
        c = getattr(_conns, "c", None)
        if c is None:
            c = _conns.c = http.client.HTTPSConnection(HOST, PORT, context=SSL, timeout=timeout)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            return r.status, (json.loads(data) if data else None)
        except (http.client.HTTPException, OSError):
            c.close()
            _conns.c = None
            if attempt:
                raise


def kubectl(user, args, stdin=None):
    cmd = ["kubectl", "--kubeconfig", KUBECONFIG, "--cache-dir", os.path.join(KSIM_DIR, "kubectl-cache"),
           "--request-timeout=20s"]
    if user != "admin":
        cmd.append("--token=" + USERS[user])
    p = subprocess.run(cmd + args, input=stdin, capture_output=True, text=True, timeout=60,
                       env=KUBECTL_ENV)
    return p.returncode, (p.stdout + p.stderr).strip()


class Stage:
    """The script on the other end of stdin/stdout."""

    def ask(self, line):
        print(line, flush=True)
        ans = sys.stdin.readline().strip()
        if not ans.startswith("ok"):
            raise RuntimeError("%s: %s" % (line, ans))
        return ans.split()[1:]


STAGE = Stage()


class Watch:
    """Every version of the objects of one collection, in resourceVersion order."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.events = []  # (rv, recv time, type, name, object)
        self.latest = {}  # name -> (rv, object)
        self.stop = False
        st, lst = api("GET", path)
        if st != 200:
            raise RuntimeError("list %s: %s" % (path, st))
        now = time.time()
        for o in lst["items"]:
            self._add(int(o["metadata"]["resourceVersion"]), now, "ADDED", o)
        self.rv = lst["metadata"]["resourceVersion"]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _add(self, rv, t, typ, o):
        name = o["metadata"]["name"]
        with self.lock:
            self.events.append((rv, t, typ, name, o))
            if typ == "DELETED":
                self.latest.pop(name, None)
            else:
                self.latest[name] = (rv, o)

    def _run(self):
        while not self.stop:
            try:
                c = http.client.HTTPSConnection(HOST, PORT, context=SSL, timeout=30)
                c.request("GET", "%s?watch=1&resourceVersion=%s" % (self.path, self.rv),
                          headers={"Authorization": "Bearer " + KSIM_TOKEN})
                r = c.getresponse()
                if r.status != 200:
                    raise RuntimeError("watch %s: %s" % (self.path, r.status))
                while not self.stop:
                    line = r.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    o = ev["object"]
                    if ev["type"] in ("BOOKMARK", "ERROR"):
                        if ev["type"] == "ERROR":
                            raise RuntimeError("watch %s: %s" % (self.path, o))
                        continue
                    rv = int(o["metadata"]["resourceVersion"])
                    self.rv = str(rv)
                    self._add(rv, time.time(), ev["type"], o)
                c.close()
            except Exception as e:  # a watch that ends is started again from the last version
                if self.stop:
                    return
                log("watch %s: %s (again)" % (self.path, e))
                time.sleep(0.1)

    def synced(self):
        """Wait (bounded) until every object of a fresh list has been seen at its version."""
        deadline = time.time() + 20
        while True:
            st, lst = api("GET", self.path)
            want = {o["metadata"]["name"]: int(o["metadata"]["resourceVersion"]) for o in lst["items"]}
            with self.lock:
                have = {n: v[0] for n, v in self.latest.items()}
            if all(have.get(n, -1) >= rv for n, rv in want.items()) and all(n in want for n in have):
                return
            if time.time() > deadline:
                raise RuntimeError("watch of %s did not catch up" % self.path)
            time.sleep(0.02)


def labels_of(o):
    return (o.get("metadata", {}).get("labels") or {})


def ann_of(o):
    return (o.get("metadata", {}).get("annotations") or {})


def replicas_of(o):
    r = o.get("spec", {}).get("replicas")
    return 1 if r is None else r


def gen_ops(seed, n):
    """The operations of a seed: a list of dicts, drawn from the seed alone."""
    rnd = random.Random(seed)
    ops = []

    def user(p_alice=0.45):
        x = rnd.random()
        return "alice" if x < p_alice else ("druid" if x < p_alice + (1 - p_alice) * 0.6 else "warden")

    table = [
        ("sts_scale", 12), ("sts_patch", 16), ("sts_apply", 5), ("etcd_scale", 3), ("etcd_gardener", 6),
        ("hibernate", 11), ("break_glass", 4), ("protection", 3), ("runtime", 2), ("restoring", 2),
        ("label", 9), ("delete", 6), ("recreate", 4), ("sidecar", 6), ("controller", 2), ("wait", 2), ("settle", 2),
        ("write", 10), ("established", 5), ("forge", 5), ("druid_wake", 2), ("swap", 3),
        ("cycle", 7),
    ]
    names = [t for t, _ in table]
    weights = [w for _, w in table]
    while len(ops) < n:
        k = rnd.choices(names, weights)[0]
        e = rnd.choice(ETCDS)
        if k == "cycle":
            ops.extend(gen_cycle(rnd, e)[:n - len(ops)])
            continue
        op = {"k": k, "e": e}
        if k in ("sts_scale", "sts_patch", "sts_apply", "etcd_scale", "etcd_gardener", "hibernate",
                 "break_glass", "protection", "runtime", "restoring", "label", "delete"):
            op["via"] = "kubectl" if rnd.random() < KUBECTL_SHARE else "api"
        if k == "sts_scale":
            op.update(u=user(), r=rnd.choice([0, 0, 1, 3]))
        elif k == "sts_patch":
            op.update(u=user(), r=rnd.choice([0, 0, 1, 3]), t=rnd.choice(["json", "merge", "strategic"]),
                      tamper=rnd.choice([None, None, None, "drop-managed", "part-of", "managed-other"]))
        elif k == "sts_apply":
            op.update(u=user(), r=rnd.choice([0, 3]), tamper=rnd.choice([None, None, "drop-managed", "part-of"]))
        elif k == "etcd_scale":
            op.update(r=rnd.choice([0, 3]))
        elif k == "etcd_gardener":
            op.update(r=rnd.choice([0, 0, 3]))
        elif k == "hibernate":
            op.update(v=rnd.choice(["true", "true", "true", "true", "-", "false"]))
        elif k in ("break_glass", "protection", "runtime", "restoring"):
            op.update(on=rnd.random() < {"break_glass": 0.3, "restoring": 0.3}.get(k, 0.4))
        elif k == "label":
            op.update(u=user(0.6), c=rnd.choice(list(KINDS)), l=rnd.choice(
                ["drop-managed", "managed-other", "part-of-other", "part-of-sibling", "restore"]))
        elif k == "delete":
            op.update(u=user(0.6), c=rnd.choice(list(KINDS) + ["StatefulSet"] * 3),
                      p=rnd.choice(["background", "foreground", "orphan"]))
        elif k == "sidecar":
            op.update(f=rnd.choice(["fail1", "fail3", "failall", "ok", "ok", "hold", "release", "release", "delay"]))
        elif k == "controller":
            op.update(how=rnd.choice(["kill9", "kill9", "stop"]))
        elif k == "wait":
            op.update(s=round(rnd.uniform(0.1, 1.0), 2))
        elif k == "settle":
            op.update(s=2.5)
        elif k == "write":
            op.update(n=rnd.randint(1, 5))
        elif k == "established":
            op.update(n=rnd.randint(2, 8))
        elif k == "forge":
            op.update(u=rnd.choice(["alice", "admin"]), a=rnd.choice(FORGES))
        elif k == "druid_wake":
            op.update(n=rnd.randint(1, 4))
        elif k == "swap":
            op.update(to=rnd.choice(["spec", "annotation"]))
        ops.append(op)
    return ops


def gen_cycle(rnd, e):
    """One sleep and wake of Etcd e, drawn from rnd: the operations of the random mix in the
    order that makes the final snapshot's proof matter (each still judged after it runs):
      sleep   - clients write; a client on an established connection keeps writing (a burst,
                in the background) while the hibernation cuts the traffic and takes the final
                snapshot; the StatefulSet goes to 0; then a wake by the signal's removal;
      down    - a sleep, then etcd-druid wakes the Etcd while warden-controller is down and
                clients write; then, with the sidecar broken, the scale back to 0 that
                etcd-druid's three strikes (Gardener's spec.replicas: 0) or a person asks for;
      strike  - hibernated by spec.replicas: 0, then hibernate=true, Gardener wakes
                (spec.replicas: 3), clients write, the sidecar breaks and Gardener hibernates
                again: etcd-druid's pre-sync fails three times and it scales to 0."""
    kind = rnd.choice(["sleep", "sleep", "down", "strike"])
    spec = kind == "strike" or rnd.random() < 0.4  # the hibernation signal: spec.replicas or the annotation
    via = lambda: "kubectl" if rnd.random() < KUBECTL_SHARE else "api"
    sleep = ({"k": "etcd_gardener", "e": e, "via": via(), "r": 0} if spec else
             {"k": "hibernate", "e": e, "via": via(), "v": "true"})
    wake = ({"k": "etcd_gardener", "e": e, "via": via(), "r": 3} if spec else
            {"k": "hibernate", "e": e, "via": via(), "v": rnd.choice(["-", "false"])})
    # first an Etcd awake with its components, as the random operations may have left it otherwise
    ops = [{"k": "recreate", "e": e},
           {"k": "label", "e": e, "via": "api", "u": "druid", "c": "StatefulSet", "l": "restore"},
           {"k": "hibernate", "e": e, "via": "api", "v": "-"},
           {"k": "etcd_gardener", "e": e, "via": "api", "r": 3},
           {"k": "sidecar", "e": e, "f": "ok"},
           {"k": "sidecar", "e": e, "f": rnd.choice(["release", "delay"])},
           {"k": "settle", "e": e, "s": 3.0, "until": "awake"},
           {"k": "write", "e": e, "n": rnd.randint(1, 5)},
           {"k": "burst", "e": e, "s": round(rnd.uniform(0.5, 2.0), 1), "ms": rnd.choice([20, 50, 100])},
           sleep,
           {"k": "settle", "e": e, "s": 6.0, "until": "asleep"}]
    if kind == "sleep":
        ops += [{"k": "established", "e": e, "n": rnd.randint(2, 8)}, wake,
                {"k": "settle", "e": e, "s": 3.0, "until": "awake"},
                {"k": "write", "e": e, "n": rnd.randint(1, 5)}]
    elif kind == "down":
        ops += [{"k": "druid_wake", "e": e, "n": rnd.randint(1, 4)},
                {"k": "sidecar", "e": e, "f": "failall"},
                rnd.choice([{"k": "etcd_gardener", "e": e, "via": via(), "r": 0},
                            {"k": "sts_scale", "e": e, "via": via(), "u": rnd.choice(["druid", "alice"]), "r": 0}]),
                {"k": "settle", "e": e, "s": 4.0, "until": "asleep"},
                {"k": "sidecar", "e": e, "f": "ok"}, wake,
                {"k": "settle", "e": e, "s": 3.0, "until": "awake"}]
    else:
        ops += [{"k": "hibernate", "e": e, "via": via(), "v": "true"},
                {"k": "etcd_gardener", "e": e, "via": via(), "r": 3},
                {"k": "settle", "e": e, "s": 3.0, "until": "awake"},
                {"k": "write", "e": e, "n": rnd.randint(1, 5)},
                {"k": "established", "e": e, "n": rnd.randint(2, 8)},
                {"k": "sidecar", "e": e, "f": "failall"},
                {"k": "etcd_gardener", "e": e, "via": via(), "r": 0},
                {"k": "settle", "e": e, "s": 4.0, "until": "asleep"},
                {"k": "sidecar", "e": e, "f": "ok"},
                {"k": "hibernate", "e": e, "via": via(), "v": "-"},
                {"k": "etcd_gardener", "e": e, "via": via(), "r": 3},
                {"k": "settle", "e": e, "s": 3.0, "until": "awake"}]
    ops[0]["cycle"] = kind  # counted in the summary
    return ops


def describe(op):
    return " ".join("%s=%s" % (k, op[k]) for k in op if op[k] is not None)


class Violation(Exception):
    pass


class Run:
    def __init__(self, ns, urls):
        self.ns = ns
        self.urls = dict(zip(ETCDS, urls))
        self.held = {e: False for e in ETCDS}
        base = "/apis/druid.gardener.cloud/v1alpha1/namespaces/%s" % ns
        self.w_sts = Watch("/apis/apps/v1/namespaces/%s/statefulsets" % ns)
        self.w_etcd = Watch(base + "/etcds")
        self.w_task = Watch(base + "/etcdopstasks")
        self.sts_seen = 0  # events of w_sts already judged
        self.orphaned = {}  # sts name -> rv bound of an orphaning DELETE by the test
        self.test_deletes = set()  # (kind, name) whose deletion a request of the test started
        self.test_deletes_now = set()
        self.break_glass_used = set()
        self.checks = 0
        self.stats = {"refused": 0, "downs": 0, "glass": 0, "window": 0, "writes": 0, "t_op": 0.0, "t_check": 0.0,
                      "judged": 0, "since": 0, "during": 0, "cycles": 0, "wakes": 0}
        self.wake_seen = 0  # events of w_sts already looked at for wakes
        self.wake_prev = {}  # sts name -> replicas of its last version (None: deleted)
        self.wakes = []  # (etcd, cut, rv, time, deadline) of wakes warden-controller must record
        self.wlock = threading.Lock()  # stats["writes"]: the burst writers count too
        self.bursts = {}  # etcd -> (thread, stop event) of a writer on an established connection
        self.labels = self.component_labels()
        # clients' connections, opened before any cut: to the pods of this StatefulSet (uid, rv)
        self.conn = {e: self.pods_up(e) for e in ETCDS}

    def close(self):
        self.stop_bursts()
        for w in (self.w_sts, self.w_etcd, self.w_task):
            w.stop = True

    def stop_bursts(self):
        for th, ev in self.bursts.values():
            ev.set()
            th.join(15)
        self.bursts = {}

    # ---- what kube-sim holds
    def component_labels(self):
        out, lists = {}, {}
        for kind, (_, coll, _, pat) in KINDS.items():
            path = coll.format(ns=self.ns)
            if path not in lists:
                st, lst = api("GET", path)
                lists[path] = {o["metadata"]["name"]: o for o in lst["items"]}
            for e in ETCDS:
                o = lists[path].get(pat.format(e=e))
                if o is not None:
                    lb = labels_of(o)
                    out[(kind, pat.format(e=e))] = (lb.get(MANAGED), lb.get(PARTOF), e,
                                                    bool(o["metadata"].get("deletionTimestamp")))
        return out

    def etcd_versions(self, name, rv, t):
        """The versions of Etcd name the webhook may have read for a request at rv (seen at t)."""
        with self.w_etcd.lock:
            evs = [x for x in self.w_etcd.events if x[3] == name]
        out = []
        for i, (erv, et, typ, _, o) in enumerate(evs):
            if erv >= rv or typ == "DELETED":
                continue
            nxt = next((x for x in evs[i + 1:]), None)
            if nxt is None or nxt[0] > rv or nxt[1] >= t - STALE:
                out.append(o)
        return out

    def succeeded_tasks(self, rv):
        """Tasks that were Succeeded in some version before rv: (etcdName, type, created seconds)."""
        out = []
        with self.w_task.lock:
            for (trv, _, typ, _, o) in self.w_task.events:
                if trv < rv and typ != "DELETED" and (o.get("status") or {}).get("state") == "Succeeded":
                    cfg = ((o.get("spec") or {}).get("config") or {}).get("onDemandSnapshot") or {}
                    out.append(((o.get("spec") or {}).get("etcdName"), cfg.get("type"),
                                rfc3339(o["metadata"].get("creationTimestamp"))))
        return out

    def sync(self):
        for w in (self.w_etcd, self.w_task, self.w_sts):
            w.synced()

    # ---- ground truth: what the Etcd's backup-double recorded
    def double_log(self, etcd, route):
        p = subprocess.run(["curl", "-sf", "--max-time", "10", self.urls[etcd] + "/admin/" + route],
                           capture_output=True, text=True)
        out = []
        for line in p.stdout.splitlines():
            if line.strip():
                o = json.loads(line)
                o["t"] = rfc3339_frac(o.get("time"))
                out.append(o)
        return out

    def logs(self, etcd):
        """What the Etcd's backup-double recorded: (acknowledged writes, snapshots answered 200)."""
        writes = [x for x in self.double_log(etcd, "writes") if x["t"] is not None]
        snaps = [x for x in self.double_log(etcd, "requests")
                 if x.get("code") == 200 and x.get("lastRevision") is not None and x["t"] is not None]
        return writes, snaps

    @staticmethod
    def is_final(x):
        return x.get("path") == "/snapshot/full" and \
            str((x.get("query") or {}).get("final", "")).lower() == "true"

    def truth(self, etcd, t, logs=None, up=0.0):
        """(last revision written before t, highest revision a snapshot stored before t, last
        revision written before the sidecar's last answer to a final full snapshot when that
        answer came at most WINDOW seconds before t after a quiet second, and after the
        StatefulSet last rose above 0 at up (writes after a wake are no check-to-scale window),
        else the first figure)."""
        writes, snaps = logs or self.logs(etcd)
        writes = [x for x in writes if x["t"] < t]
        snaps = [x for x in snaps if x["t"] <= t]
        w = max([x["revision"] for x in writes], default=0)
        s = max([x["lastRevision"] for x in snaps], default=0)
        answered = max([x["t"] for x in snaps if self.is_final(x)], default=None)
        # the check's premise, on the double's own clock: nothing written in the second before
        # that answer (a writer who was writing then is one the check must see)
        if answered is None or answered < up or t - answered > WINDOW or \
                any(answered - QUIET <= x["t"] < answered for x in writes):
            return w, s, w
        return w, s, max([x["revision"] for x in writes if x["t"] < answered], default=0)

    # ---- warden-controller's bookkeeping of a wake
    def etcd_at(self, name, rv):
        """The version of Etcd name current just before rv, or None."""
        with self.w_etcd.lock:
            evs = [x for x in self.w_etcd.events if x[3] == name and x[0] < rv]
        return None if not evs or evs[-1][2] == "DELETED" else evs[-1][4]

    def check_wakes(self, final=False):
        """Each StatefulSet of an Etcd scaled from 0 above 0 while warden-controller's own state
        on the Etcd said Hibernated with a cut (a wake: the signal removed, Gardener's
        spec.replicas, etcd-druid with warden-controller down) must be recorded by
        warden-controller within WAKE_WAIT seconds: a version of the Etcd after it whose phase is
        not Hibernated and whose traffic-cut-at is not that cut (docs/hibernation.md: "the cut
        goes and the phase leaves Hibernated in one write"). Read from the Etcd's versions as
        the watch saw them, so it adds no wait to the operations; final: wait (bounded) for the
        wakes still open."""
        with self.w_sts.lock:
            evs = list(self.w_sts.events[self.wake_seen:])
        self.wake_seen += len(evs)
        for rv, t, typ, name, o in evs:
            p = self.wake_prev.get(name)
            self.wake_prev[name] = None if typ == "DELETED" else replicas_of(o)
            if typ != "MODIFIED" or p != 0 or replicas_of(o) <= 0 or name not in ETCDS:
                continue
            etcd = self.etcd_at(name, rv)
            a = ann_of(etcd) if etcd else {}
            if a.get("etcd-warden.io/hibernation-phase") == "Hibernated" and a.get(CUT):
                self.wakes.append((name, a[CUT], rv, t, t + WAKE_WAIT))
                self.stats["wakes"] += 1
        while self.wakes:
            left = []
            for w in self.wakes:
                e, cut, rv, t, deadline = w
                with self.w_etcd.lock:
                    after = [x for x in self.w_etcd.events if x[3] == e and x[0] > rv]
                if any(typ == "DELETED" or (ann_of(o).get("etcd-warden.io/hibernation-phase") != "Hibernated"
                                            and ann_of(o).get(CUT) != cut) for (_, _, typ, _, o) in after):
                    continue
                if time.time() > deadline:
                    raise Violation("StatefulSet %s was scaled above 0 (rv %d) while Etcd %s was Hibernated with "
                                    "traffic-cut-at %s, and %.0fs later warden-controller still had not recorded the "
                                    "wake: no version of the Etcd since left phase Hibernated with that cut voided "
                                    "(%s)" % (e, rv, e, cut, WAKE_WAIT, [(x[0], ann_of(x[4]).get(
                                        "etcd-warden.io/hibernation-phase"), ann_of(x[4]).get(CUT))
                                        for x in after][-4:]))
                left.append(w)
            self.wakes = left
            if not final or not left:
                break
            time.sleep(0.2)
            self.w_etcd.synced()

    # ---- invariant (a), over every StatefulSet event not judged yet
    def check_a(self):
        with self.w_sts.lock:
            evs = list(self.w_sts.events)
        prev, orphan_uids, up_at, logs = {}, set(), {}, {}
        for i, (rv, t, typ, name, o) in enumerate(evs):
            p = prev.get(name)
            prev[name] = None if typ == "DELETED" else o
            if typ != "DELETED" and replicas_of(o) > 0 and (p is None or replicas_of(p) <= 0):
                up_at[name] = t
            if "orphan" in (o["metadata"].get("finalizers") or []):
                orphan_uids.add(o["metadata"].get("uid"))
            if i < self.sts_seen or p is None:
                continue
            pl = labels_of(p)
            etcd = pl.get(PARTOF)
            if pl.get(MANAGED) != "etcd-druid" or etcd not in ETCDS or replicas_of(p) <= 0:
                continue
            # a deletion is judged when it is accepted: the first version with a
            # deletionTimestamp (a finalizer holds it), else the DELETED event
            deleting = typ == "DELETED" or bool(o["metadata"].get("deletionTimestamp"))
            if deleting and not p["metadata"].get("deletionTimestamp"):
                if self.orphaned.get(name, -1) >= rv or o["metadata"].get("uid") in orphan_uids:
                    continue
                what = "deleted with its pods"
            elif not deleting and replicas_of(o) == 0:
                what = "scaled %d -> 0" % replicas_of(p)
            else:
                continue
            versions = self.etcd_versions(etcd, rv, t)
            ok, glass = False, False
            for v in versions:
                if not (v.get("spec", {}).get("backup") or {}).get("store"):
                    ok = True
                    break
                if deleting and (v["metadata"].get("deletionTimestamp") or
                                         (((v.get("status") or {}).get("lastOperation") or {}).get("type") == "Delete")):
                    ok = True
                    break
                if BREAK in ann_of(v):
                    glass = True
            # ground truth: every write acknowledged before the event is in the store; break
            # glass (and its Warning event) is judged only where that does not hold
            if etcd not in logs:
                logs[etcd] = self.logs(etcd)
            written, stored, checked = self.truth(etcd, t, logs[etcd], up_at.get(name, 0.0))
            if not ok and not deleting:
                self.judged(etcd, t, up_at.get(name), written, logs[etcd])
            if not ok and stored >= written:
                ok = True
            if not ok and stored >= checked:  # only writes after the check's last answer
                self.stats["window"] += 1
                ok = True
            if not ok and glass:
                self.break_glass_used.add(etcd)
                self.stats["glass"] += 1
                ok = True
            self.stats["downs"] += 1
            if not ok:
                raise Violation("(a) StatefulSet %s/%s %s at resourceVersion %d with write %d acknowledged "
                                "before it and the store holding revision %d (no break glass)" %
                                (self.ns, name, what, rv, written, stored))
        self.sts_seen = len(evs)

    def judged(self, etcd, t, up, written, logs):
        """Count a scale-down to 0 judged by ground truth: with writes since the last snapshot
        before the StatefulSet last rose above 0 (the sleep had writes to carry), and with writes
        after the first final snapshot answered since then (writes the cut did not stop)."""
        self.stats["judged"] += 1
        up = up if up is not None else 0.0
        _, stored_up, _ = self.truth(etcd, up, logs)
        if written > stored_up:
            self.stats["since"] += 1
        writes, snaps = logs
        first = min([x["t"] for x in snaps if self.is_final(x) and up <= x["t"] <= t], default=None)
        if first is not None and any(first < x["t"] < t for x in writes):
            self.stats["during"] += 1

    def check_a_events(self):
        """Every break-glass scale-down left its Warning event (bounded wait)."""
        deadline = time.time() + 15
        for etcd in sorted(self.break_glass_used):
            while True:
                st, lst = api("GET", "/apis/events.k8s.io/v1/namespaces/%s/events" % self.ns)
                if any(ev.get("type") == "Warning" and ev.get("reason") == "ScaleDownWithoutSnapshot" and
                       (ev.get("regarding") or {}).get("name") == etcd for ev in lst.get("items", [])):
                    break
                if time.time() > deadline:
                    raise Violation("(a) a break-glass scale-down of %s/%s left no Warning event "
                                    "ScaleDownWithoutSnapshot" % (self.ns, etcd))
                time.sleep(0.1)
        self.checks += 1

    # ---- invariants (b) and (c) around one request of the test
    def check_bc(self, op, before, t0):
        after = self.component_labels()
        user = op.get("u", "admin")
        for key, (m, p, etcd, deleting) in before.items():
            kind, name = key
            runtime = KINDS[kind][2]
            now = after.get(key)
            component = m == "etcd-druid" and p == etcd
            if key in self.test_deletes_now and (now is None or now[3]) and not deleting:
                # this request deleted it (or started to): was it one the user may send?
                self.test_deletes.add(key)
                if component and user not in RECONCILERS:
                    vs = self.etcd_versions(etcd, 1 << 62, t0)
                    if not any(NOPROT in ann_of(v) or (runtime and NORUNTIME in ann_of(v)) for v in vs):
                        raise Violation("(c) %s deleted %s %s/%s, a component of Etcd %s with protection on" %
                                        (user, kind, self.ns, name, etcd))
            if now is None:
                if key not in self.test_deletes:
                    raise Violation("(c) %s %s/%s disappeared, deleted by no request of the test" %
                                    (kind, self.ns, name))
                continue
            if (now[0], now[1]) != (m, p) and component and user not in RECONCILERS:
                vs = self.etcd_versions(etcd, 1 << 62, t0)
                if not (runtime and any(NORUNTIME in ann_of(v) for v in vs)):
                    raise Violation("(b) %s changed the labels of %s %s/%s from managed-by=%s part-of=%s "
                                    "to managed-by=%s part-of=%s" % (user, kind, self.ns, name, m, p,
                                                                     now[0], now[1]))
        for key, now in after.items():
            if not now[3]:  # there again (etcd-druid re-created it): its next deletion is judged again
                self.test_deletes.discard(key)
        self.labels = after

    # ---- the operations
    def sts_body_patch(self, op):
        e, r, tamper = op["e"], op["r"], op.get("tamper")
        if op["t"] == "json":
            ps = [{"op": "replace", "path": "/spec/replicas", "value": r}]
            if tamper == "drop-managed":
                ps.insert(0, {"op": "remove", "path": "/metadata/labels/app.kubernetes.io~1managed-by"})
            elif tamper == "part-of":
                ps.insert(0, {"op": "replace", "path": "/metadata/labels/app.kubernetes.io~1part-of",
                              "value": "nope"})
            elif tamper == "managed-other":
                ps.insert(0, {"op": "replace", "path": "/metadata/labels/app.kubernetes.io~1managed-by",
                              "value": "someone"})
            return json.dumps(ps)
        body = {"spec": {"replicas": r}}
        if tamper == "drop-managed":
            body["metadata"] = {"labels": {MANAGED: None}}
        elif tamper == "part-of":
            body["metadata"] = {"labels": {PARTOF: "nope"}}
        elif tamper == "managed-other":
            body["metadata"] = {"labels": {MANAGED: "someone"}}
        return json.dumps(body)

    # ---- clients: an etcd acknowledges writes only while it has pods
    def pods_up(self, e):
        """(uid, resourceVersion) of e's StatefulSet while it stands above 0 replicas, else None."""
        st, o = api("GET", "/apis/apps/v1/namespaces/%s/statefulsets/%s" % (self.ns, e))
        if st != 200 or o["metadata"].get("deletionTimestamp") or replicas_of(o) <= 0:
            return None
        return o["metadata"]["uid"], int(o["metadata"]["resourceVersion"])

    def conn_alive(self, e):
        """A connection opened to e's pods is still there: the same StatefulSet stands above 0 and
        went to 0 or away at no instant since (its pods, and the connections to them, end then)."""
        c, now = self.conn.get(e), self.pods_up(e)
        if c is None or now is None or now[0] != c[0]:
            return False
        self.w_sts.synced()
        with self.w_sts.lock:
            evs = [x for x in self.w_sts.events if x[3] == e and x[0] > c[1]]
        return not any(typ == "DELETED" or o["metadata"].get("deletionTimestamp") or replicas_of(o) <= 0
                       for (_, _, typ, _, o) in evs)

    def write(self, e, n):
        """n acknowledged writes to etcd e (its backup-double); 0 when they were."""
        p = subprocess.run(["curl", "-sf", "-X", "POST", "--max-time", "10",
                            "%s/admin/write?n=%d" % (self.urls[e], n)], capture_output=True)
        with self.wlock:
            self.stats["writes"] += n if p.returncode == 0 else 0
        return p.returncode

    def alive_seen(self, e, c):
        """conn_alive from the watch alone (no request): for a writer in the background."""
        with self.w_sts.lock:
            cur = self.w_sts.latest.get(e)
            evs = [x for x in self.w_sts.events if x[3] == e and x[0] > c[1]]
        if cur is None or cur[1]["metadata"].get("uid") != c[0]:
            return False
        return not any(typ == "DELETED" or o["metadata"].get("deletionTimestamp") or replicas_of(o) <= 0
                       for (_, _, typ, _, o) in evs)

    def burst(self, e, seconds, ms):
        """A client on a connection opened before any cut writes every ms for seconds, in the
        background (it goes on through the operations that follow): the cut does not stop it,
        the end of the pods it was opened to does. 1 when there is no such connection."""
        old = self.bursts.pop(e, None)
        if old:
            old[1].set()
            old[0].join(15)
        if not self.conn_alive(e):
            return 1
        c, stop = self.conn[e], threading.Event()
        url = "%s/admin/write?n=1" % self.urls[e]

        def run():
            end = time.time() + seconds
            while time.time() < end and not stop.is_set() and self.alive_seen(e, c):
                try:
                    req = urllib.request.Request(url, method="POST", data=b"")
                    with urllib.request.urlopen(req, timeout=10) as r:
                        r.read()
                    with self.wlock:
                        self.stats["writes"] += 1
                except OSError:
                    pass
                stop.wait(ms / 1000.0)

        th = threading.Thread(target=run, daemon=True)
        th.start()
        self.bursts[e] = (th, stop)
        return 0

    def do(self, op):
        k, e, ns = op["k"], op["e"], self.ns
        self.test_deletes_now = set()
        if op.get("via") == "api":
            return self.do_api(op)
        if k == "sts_scale":
            return kubectl(op["u"], ["-n", ns, "scale", "statefulset", e, "--replicas=%d" % op["r"]])
        if k == "sts_patch":
            return kubectl(op["u"], ["-n", ns, "patch", "statefulset", e, "--type", op["t"],
                                     "-p", self.sts_body_patch(op)])
        if k == "sts_apply":
            lb = {}
            if op["tamper"] == "part-of":
                lb = {PARTOF: "nope", MANAGED: "etcd-druid"}
            doc = {"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": e, "namespace": ns}, "spec": {"replicas": op["r"]}}
            if lb:
                doc["metadata"]["labels"] = lb
            rc, out = kubectl(op["u"], ["-n", ns, "apply", "--server-side", "--force-conflicts",
                                        "--field-manager=guard-random", "--validate=false", "-f", "-"],
                              stdin=json.dumps(doc))
            if op["tamper"] == "drop-managed":  # apply cannot remove a label it never owned: a patch
                rc, out = kubectl(op["u"], ["-n", ns, "label", "statefulset", e, MANAGED + "-"])
            return rc, out
        if k == "etcd_scale":
            return kubectl("admin", ["-n", ns, "scale", "etcd", e, "--replicas=%d" % op["r"]])
        if k == "etcd_gardener":
            return kubectl("admin", ["-n", ns, "patch", "etcd", e, "--type", "merge", "-p", json.dumps(
                {"metadata": {"annotations": {"gardener.cloud/operation": "reconcile"}},
                 "spec": {"replicas": op["r"]}})])
        if k == "hibernate":
            v = op["v"]
            arg = "etcd-warden.io/hibernate-" if v == "-" else "etcd-warden.io/hibernate=" + v
            return kubectl("admin", ["-n", ns, "annotate", "--overwrite", "etcd", e, arg])
        if k in ("break_glass", "protection", "runtime"):
            key = {"break_glass": BREAK, "protection": NOPROT, "runtime": NORUNTIME}[k]
            arg = key + ("=" + break_glass_value() if k == "break_glass" else "=") if op["on"] else key + "-"
            return kubectl("admin", ["-n", ns, "annotate", "--overwrite", "etcd", e, arg])
        if k == "restoring":
            arg = "etcd-warden.io/restoring=" if op["on"] else "etcd-warden.io/restoring-"
            return kubectl("admin", ["-n", ns, "label", "--overwrite", "etcd", e, arg])
        if k == "label":
            res, _, _, pat = KINDS[op["c"]]
            name = pat.format(e=e)
            other = ETCDS[1 - ETCDS.index(e)]
            arg = {"drop-managed": [MANAGED + "-"], "managed-other": [MANAGED + "=someone"],
                   "part-of-other": [PARTOF + "=nope"], "part-of-sibling": [PARTOF + "=" + other],
                   "restore": [MANAGED + "=etcd-druid", PARTOF + "=" + e]}[op["l"]]
            return kubectl(op["u"], ["-n", ns, "label", "--overwrite", res, name] + arg)
        if k == "delete":
            res, _, _, pat = KINDS[op["c"]]
            name = pat.format(e=e)
            self.test_deletes_now.add((op["c"], name))
            if op["c"] == "StatefulSet" and op["p"] == "orphan":
                self.orphaned[name] = 1 << 62
            rc, out = kubectl(op["u"], ["-n", ns, "delete", res, name, "--wait=false",
                                        "--cascade=" + op["p"]])
            if op["c"] == "StatefulSet" and op["p"] == "orphan":
                st, lst = api("GET", "/apis/apps/v1/namespaces/%s/statefulsets" % ns)
                self.orphaned[name] = int(lst["metadata"]["resourceVersion"])
            return rc, out
        if k == "recreate":
            if all((kind, KINDS[kind][3].format(e=e)) in self.labels and
                   not self.labels[(kind, KINDS[kind][3].format(e=e))][3] for kind in KINDS):
                return 0, ""  # nothing is missing
            STAGE.ask("recreate %s %s" % (ns, e))
            return 0, ""
        if k == "sidecar":
            url = self.urls[e]
            path = {"fail1": "reply?code=500&count=1", "fail3": "reply?code=500&count=3",
                    "failall": "reply?code=500&count=0", "ok": "reply?code=200", "hold": "hold",
                    "release": "release", "delay": "delay?ms=%d" % 300}[op["f"]]
            if op["f"] == "hold":
                self.held[e] = True
            if op["f"] == "release":
                self.held[e] = False
            subprocess.run(["curl", "-sf", "-X", "POST", "--max-time", "10", url + "/admin/" + path],
                           capture_output=True)
            return 0, ""
        if k == "controller":
            STAGE.ask("ctl " + op["how"])
            return 0, ""
        if k == "write":  # a client through the client Service: only while it has its client port
            st, svc = api("GET", "/api/v1/namespaces/%s/services/%s-client" % (ns, e))
            if st != 200 or not any(p.get("name") == "client" for p in (svc.get("spec") or {}).get("ports") or []):
                return 1, ""
            up = self.pods_up(e)  # and pods behind it; the client keeps its connection
            if up is None:
                return 1, ""
            if not self.conn_alive(e):
                self.conn[e] = up
            return self.write(e, op["n"]), ""
        if k == "established":  # a client on a connection opened before any cut: never stopped by it
            # ... but ended with the pods it was opened to (StatefulSet deleted or at 0 since)
            if not self.conn_alive(e):
                return 1, ""
            for _ in range(op["n"]):
                self.write(e, 1)
                time.sleep(0.02)
            return 0, ""
        if k == "burst":  # a client on an established connection writes in the background
            return self.burst(e, op["s"], op["ms"]), ""
        if k == "forge":  # a state annotation written by someone who is not warden-controller
            return kubectl(op["u"], ["-n", ns, "annotate", "--overwrite", "etcd", e, op["a"]])
        if k == "druid_wake":  # warden-controller down; etcd-druid scales the Etcd up, clients write
            STAGE.ask("ctl down")
            try:
                st, o = api("GET", "/apis/apps/v1/namespaces/%s/statefulsets/%s" % (ns, e))
                if st == 200 and replicas_of(o) == 0:
                    api("PATCH", "/apis/apps/v1/namespaces/%s/statefulsets/%s/scale" % (ns, e),
                        {"spec": {"replicas": 3}}, "application/merge-patch+json", USERS["druid"])
                up = self.pods_up(e)  # clients write to the pods etcd-druid woke, if there are any
                if up is not None:
                    if not self.conn_alive(e):
                        self.conn[e] = up
                    self.write(e, op["n"])
            finally:
                STAGE.ask("ctl up")
            return 0, ""
        if k == "swap":  # the hibernation signal moves from one form to the other
            etcd = "/apis/druid.gardener.cloud/v1alpha1/namespaces/%s/etcds/%s" % (ns, e)
            merge = "application/merge-patch+json"
            if op["to"] == "spec":
                api("PATCH", etcd, {"metadata": {"annotations": {"gardener.cloud/operation": "reconcile"}},
                                    "spec": {"replicas": 0}}, merge)
                st, _ = api("PATCH", etcd, {"metadata": {"annotations": {"etcd-warden.io/hibernate": None}}}, merge)
            else:
                api("PATCH", etcd, {"metadata": {"annotations": {"etcd-warden.io/hibernate": "true"}}}, merge)
                st, _ = api("PATCH", etcd, {"metadata": {"annotations": {"gardener.cloud/operation": "reconcile"}},
                                            "spec": {"replicas": 3}}, merge)
            return (0 if 200 <= st < 300 else 1), ""
        if k == "wait":
            time.sleep(op["s"])
            return 0, ""
        if k == "settle":  # give a hibernation (or a wake-up) of e time to finish (bounded)
            deadline, until = time.time() + op["s"], op.get("until")
            while time.time() < deadline:
                st, o = api("GET", "/apis/druid.gardener.cloud/v1alpha1/namespaces/%s/etcds/%s" % (ns, e))
                phase = ann_of(o).get("etcd-warden.io/hibernation-phase") if st == 200 else None
                if st != 200 or (until is None and phase in (None, "Hibernated", "Failed")):
                    break
                if until is not None:
                    up = self.pods_up(e)
                    if until == "asleep" and (phase in ("Hibernated", "Failed") or (phase is None and up is None)):
                        break
                    if until == "awake" and phase is None and up is not None:
                        break
                time.sleep(0.2)
            return 0, ""
        raise ValueError(k)

    def do_api(self, op):
        """The request kubectl would send for op, sent directly (faster than a kubectl run)."""
        k, e, ns = op["k"], op["e"], self.ns
        user = USERS.get(op.get("u"), KSIM_TOKEN)
        sts = "/apis/apps/v1/namespaces/%s/statefulsets/%s" % (ns, e)
        etcd = "/apis/druid.gardener.cloud/v1alpha1/namespaces/%s/etcds/%s" % (ns, e)
        merge = "application/merge-patch+json"
        if k == "sts_scale":
            st, _ = api("PATCH", sts + "/scale", {"spec": {"replicas": op["r"]}}, merge, user)
        elif k == "sts_patch":
            ct = {"json": "application/json-patch+json", "merge": merge,
                  "strategic": "application/strategic-merge-patch+json"}[op["t"]]
            st, _ = api("PATCH", sts, self.sts_body_patch(op), ct, user)
        elif k == "sts_apply":
            doc = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": e, "namespace": ns},
                   "spec": {"replicas": op["r"]}}
            if op["tamper"] == "part-of":
                doc["metadata"]["labels"] = {PARTOF: "nope", MANAGED: "etcd-druid"}
            st, _ = api("PATCH", sts + "?fieldManager=guard-random&force=true", doc,
                        "application/apply-patch+yaml", user)
            if op["tamper"] == "drop-managed":
                st, _ = api("PATCH", sts, {"metadata": {"labels": {MANAGED: None}}}, merge, user)
        elif k == "etcd_scale":
            st, _ = api("PATCH", etcd + "/scale", {"spec": {"replicas": op["r"]}}, merge)
        elif k == "etcd_gardener":
            st, _ = api("PATCH", etcd, {"metadata": {"annotations": {"gardener.cloud/operation": "reconcile"}},
                                        "spec": {"replicas": op["r"]}}, merge)
        elif k in ("hibernate", "break_glass", "protection", "runtime"):
            key = {"hibernate": "etcd-warden.io/hibernate", "break_glass": BREAK, "protection": NOPROT,
                   "runtime": NORUNTIME}[k]
            if k == "hibernate":
                val = None if op["v"] == "-" else op["v"]
            else:
                val = (break_glass_value() if k == "break_glass" else "") if op["on"] else None
            st, _ = api("PATCH", etcd, {"metadata": {"annotations": {key: val}}}, merge)
        elif k == "restoring":
            st, _ = api("PATCH", etcd, {"metadata": {"labels": {"etcd-warden.io/restoring": "" if op["on"] else None}}},
                        merge)
        elif k == "label":
            _, coll, _, pat = KINDS[op["c"]]
            other = ETCDS[1 - ETCDS.index(e)]
            lb = {"drop-managed": {MANAGED: None}, "managed-other": {MANAGED: "someone"},
                  "part-of-other": {PARTOF: "nope"}, "part-of-sibling": {PARTOF: other},
                  "restore": {MANAGED: "etcd-druid", PARTOF: e}}[op["l"]]
            st, _ = api("PATCH", "%s/%s" % (coll.format(ns=ns), pat.format(e=e)),
                        {"metadata": {"labels": lb}}, merge, user)
        elif k == "delete":
            _, coll, _, pat = KINDS[op["c"]]
            name = pat.format(e=e)
            self.test_deletes_now.add((op["c"], name))
            orphan = op["c"] == "StatefulSet" and op["p"] == "orphan"
            if orphan:
                self.orphaned[name] = 1 << 62
            st, _ = api("DELETE", "%s/%s" % (coll.format(ns=ns), name),
                        {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": op["p"].capitalize()},
                        "application/json", user)
            if orphan:
                _, lst = api("GET", "/apis/apps/v1/namespaces/%s/statefulsets" % ns)
                self.orphaned[name] = int(lst["metadata"]["resourceVersion"])
        else:
            raise ValueError(k)
        return (0 if 200 <= st < 300 else 1), ""

    def step(self, op):
        self.stats["cycles"] += "cycle" in op
        before = self.labels
        t0 = time.time()
        rc, _ = self.do(op)
        self.stats["refused"] += rc != 0
        t1 = time.time()
        self.sync()
        self.check_a()
        self.check_bc(op, before, t0)
        self.check_wakes()
        self.checks += 4
        self.stats["t_op"] += t1 - t0
        self.stats["t_check"] += time.time() - t1


def run_sequence(ops, ns, trace):
    """Run ops in a fresh namespace; returns (index of the failing op, message) or (None, None)."""
    urls = STAGE.ask("setup " + ns)
    run = Run(ns, urls)
    try:
        for i, op in enumerate(ops):
            trace.append(op)
            try:
                run.step(op)
            except Violation as v:
                return i, str(v), run.checks, run.stats
        # the end: release the sidecars, let the controller and the druid actor act, check again
        run.stop_bursts()
        for e in ETCDS:
            subprocess.run(["curl", "-sf", "-X", "POST", "--max-time", "10", run.urls[e] + "/admin/release"],
                           capture_output=True)
        time.sleep(1.0)
        try:
            run.sync()
            run.check_a()
            run.check_a_events()
            run.check_wakes(final=True)
        except Violation as v:
            return len(ops), str(v), run.checks, run.stats
        log("  wakes warden-controller recorded (phase left Hibernated, cut voided) %(wakes)d" % run.stats)
        log("  refused %(refused)d, writes %(writes)d, sleep/wake cycles %(cycles)d, scale-downs and deletions with pods %(downs)d "
            "(break glass %(glass)d, writes in the check-to-scale window %(window)d); judged %(judged)d scale-downs to 0, "
            "%(since)d with writes since the last snapshot (%(during)d with writes after the final snapshot's answer); "
            "%(t_op).1fs in operations, %(t_check).1fs in checks" % run.stats)
        return None, None, run.checks, run.stats
    finally:
        run.close()
        STAGE.ask("teardown " + ns)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--ops", type=int, required=True)
    ap.add_argument("--shrink-seconds", type=float, default=90)
    ap.add_argument("--min-judged", type=int, default=0,
                    help="fail a seed that judged fewer scale-downs to 0 (of an Etcd with a backup store)")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.replace(",", " ").split()]
    total_ops = total_checks = judged = since = 0
    t_start = time.time()
    for seed in seeds:
        ops = gen_ops(seed, a.ops)
        trace = []
        t = time.time()
        idx, msg, checks, stats = run_sequence(ops, "gr-%d" % seed, trace)
        total_ops += len(trace)
        total_checks += checks
        judged += stats["judged"]
        since += stats["since"]
        log("guard_random: seed %d: %d operations, %d invariant checks, %.1fs, judged %d scale-downs to 0, "
            "%d with writes since the last snapshot%s" %
            (seed, len(trace), checks, time.time() - t, stats["judged"], stats["since"],
             "" if idx is None else ", VIOLATION"))
        if idx is None and stats["judged"] < a.min_judged:
            log("guard_random: FAIL: seed %d judged %d scale-downs to 0, fewer than %d: a run that judges "
                "so little proves nothing (replay: GUARD_SEED=%d GUARD_OPS=%d)" %
                (seed, stats["judged"], a.min_judged, seed, a.ops))
            print("done fail", flush=True)
            return 1
        if idx is None:
            continue
        log("VIOLATION, seed %d (replay: GUARD_SEED=%d GUARD_OPS=%d): %s" % (seed, seed, a.ops, msg))
        log("the sequence up to it:")
        for i, op in enumerate(trace):
            log("  %3d %s" % (i, describe(op)))
        shrink(seed, ops[:idx + 1] if idx < len(ops) else ops, a.shrink_seconds)
        log("guard_random: FAIL after %d operations (%.0fs)" % (total_ops, time.time() - t_start))
        print("done fail", flush=True)
        return 1
    log("guard_random: seeds %s ops %d checks %d (invariants a b c d after every operation) "
        "violations 0 in %.0fs" % (",".join(map(str, seeds)), total_ops, total_checks, time.time() - t_start))
    log("guard_random: judged %d scale-downs to 0, %d with writes since the last snapshot" % (judged, since))
    print("done pass", flush=True)
    return 0


def shrink(seed, ops, budget):
    """Shorten a failing sequence: drop chunks, then single ops, while it still fails."""
    deadline = time.time() + budget
    best = list(ops)
    n = 0

    def fails(cand):
        nonlocal n
        n += 1
        idx, msg, _, _ = run_sequence(cand, "gr-%d-s%d" % (seed, n), [])
        return idx is not None

    # the failing operation alone, then with only the operations on its Etcd
    last = best[-1]
    for cand in ([last], [op for op in best if op["e"] == last["e"]]):
        if len(cand) < len(best) and time.time() < deadline and fails(cand):
            best = cand
    chunk = max(1, len(best) // 2)
    while chunk >= 1 and time.time() < deadline:
        i = 0
        while i < len(best) - 1 and time.time() < deadline:
            cand = best[:i] + best[i + chunk:]
            if cand and fails(cand):
                best = cand
            else:
                i += chunk
        chunk //= 2
    log("shortest failing sequence found (%d replays, %s): %d operations" %
        (n, "budget spent" if time.time() >= deadline else "done", len(best)))
    for i, op in enumerate(best):
        log("  %3d %s" % (i, describe(op)))


if __name__ == "__main__":
    sys.exit(main())
