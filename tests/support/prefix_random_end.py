#!/usr/bin/env python3
"""The end of prefix_random.py's run against records written as the stack would write them,
each event tied to one of the checker's own reads of the bucket (no timing, no stack):

  prefix_random_end.py in-flight   a deletion Job's run starts before the end (job_exec
      writes its line then, "end" null), deletes as the end's check lists the bucket, and is
      over at the next listing: its deletions are its entry's, the writer's; no violation
      (seed 3's failure on main: they were reported as made outside every Job run)
  prefix_random_end.py no-run      the same deletions with no run in the Job record, started
      or over: "deleted outside every Job run"
  prefix_random_end.py wrong-owner the run is for an entry of another Etcd: a violation

Exit 0 when the outcome is the one named, 1 otherwise.
"""
import importlib.util, json, os, sys, tempfile, time, types

KEYS = [f"a/b/v2/Full-00000000-0000000{i}-170000000{i}.gz" for i in (7, 8, 9)]
JOB = {"namespace": "etcd-warden", "job": "a-b-cd0cfabe--delete-7600c73c", "uid": "u1",
       "annotations": {"etcd-warden.io/backup-entry": "a-b--cd0cfabe"},
       "command": ["warden-snapshot", "delete-snapshots", "--written-before=T2"]}


def append(path, obj):
    with open(path, "a") as f:
        f.write(json.dumps(obj) + "\n")


def main():
    case = sys.argv[1] if len(sys.argv) == 2 else ""
    if case not in ("in-flight", "no-run", "wrong-owner"):
        print(__doc__, file=sys.stderr)
        return 2
    d = tempfile.mkdtemp()
    os.environ.update(STORE_RECORD=f"{d}/store", JOB_RECORD=f"{d}/jobs", BUCKET="seed-3",
                      KUBECONFIG="/dev/null", KUBECTL_CACHE=d)
    open(f"{d}/store", "w").close()
    spec = importlib.util.spec_from_file_location(
        "prefix_random", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                      "prefix_random.py"))
    pr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pr)

    class World(pr.World):
        def __init__(self):
            super().__init__(3, sys.stdout)
            self.store, self.listings, self.t0 = set(KEYS), 0, time.time()
            owner = ("s3-2", "e1") if case == "wrong-owner" else ("s3-1", "e2")
            self.watch.owner = lambda entry, run_start: owner if run_start == self.t0 else None
            self.watch.start = lambda: None
            self.watch.claimants = lambda: set()
            self.kubectl = lambda *a, **k: types.SimpleNamespace(returncode=0, stdout="",
                                                                  stderr="")
            self.namespaces = ()
            if case != "no-run":  # the run is in the Job record from its start
                append(os.environ["JOB_RECORD"], dict(JOB, start=self.t0, end=None))

        def keys(self):
            self.listings += 1
            if self.listings == 2:  # the Job deletes as the end's check lists the bucket
                for k in KEYS:
                    append(os.environ["STORE_RECORD"], {"t": time.time(), "method": "DELETE",
                                                        "path": f"/seed-3/{k}"})
                    self.store.discard(k)
            if self.listings == 3 and case != "no-run":  # then its run is over
                append(os.environ["JOB_RECORD"], dict(JOB, start=self.t0, end=time.time()))
            return set(self.store)

    w = World()
    for k in KEYS:
        w.objects[k] = ("s3-1", "e2", 1)
    bad = []
    check = w.check
    w.check = lambda final=False: bad.extend(check(final)) or bad
    rc = w.run(0)  # the end alone
    print(f"prefix_random_end {case}: exit {rc}, violations {bad}, deleters {w.deleters}")
    if case == "in-flight":
        return 0 if rc == 0 and not bad and set(w.deleters) == set(KEYS) else 1
    want = "outside every Job run" if case == "no-run" else "the entry a-b--cd0cfabe of s3-2/e1"
    return 0 if rc == 1 and any(want in b for b in bad) else 1


if __name__ == "__main__":
    sys.exit(main())
