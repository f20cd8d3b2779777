#!/usr/bin/env python3
"""The kubelet and the Job controller for batch/v1 Jobs in kube-sim (which runs no pods).

  job_exec.py run NAMESPACE JOB WORK_DIR WARDEN_SNAPSHOT
  job_exec.py serve NAMESPACE SELECTOR WORK_DIR WARDEN_SNAPSHOT STOP_FILE SECONDS

kubectl (with the caller's KUBECONFIG) reads the Job; every Secret its pod
template names (volumes, secretKeyRefs) is read from the Job's namespace at
that moment, as the kubelet does (a Secret missing there fails the pod); the
container runs through cronjob_exec.py (same directory: Secret and hostPath
volumes, env, the command's program must be warden-snapshot) under a fresh
root in WORK_DIR. What the Job controller and the kubelet would write: before
the container starts, a Pod "<job>-<5 letters>" (labels job-name,
batch.kubernetes.io/job-name, controller-uid, the template's; a controller
reference to the Job with blockOwnerDeletion; phase Running) with the
finalizer etcd-warden.io/test-kubelet while the container runs, standing for
the kubelet's graceful deletion: a Pod deleted meanwhile (the Job deleted with
propagation Foreground, its namespace deleted) has its container's process
group sent SIGTERM, SIGKILL after terminationGracePeriodSeconds (10 s at
most), and only then goes, its Job left without a status. Otherwise, once the
container exits, the Pod's status.phase Succeeded or Failed and
containerStatuses[0].state.terminated {exitCode, reason, message}, then the
Job's status (succeeded or failed 1, a Complete or Failed condition,
startTime, completionTime).

The message is what the program wrote to its termination-message file (a
file of the run's own, named by WARDEN_TERMINATION_LOG, standing for the
kubelet's /dev/termination-log); when that is empty and the container failed,
its output (stdout and stderr, in order) cut to its last 80 lines and 2048
bytes, as the kubelet does for terminationMessagePolicy FallbackToLogsOnError.

serve runs every Job matching SELECTOR in NAMESPACE that has no status yet,
once per uid, one at a time, as a watch (kubectl get --watch) shows them, until
STOP_FILE exists or SECONDS pass. Each run is logged on stderr; with JOB_EXEC_RECORD set, also
appended to that file as JSON lines: {"namespace", "job", "uid", "annotations",
"command" (the container's command and args), "start", "end"} (seconds since
the epoch: before its Pod is made, after its containers have stopped), once
with "end" null before the run starts (a run in flight is in the file, so a
request it makes is never taken for nobody's), once more when it is over; so a
store's record of requests can be told apart by Job. Exit status of run: 0 when the Job ran (whatever
its container's status), 2 when it could not be read or written.
"""
import json, os, queue, random, signal, string, subprocess, sys, tempfile, threading, time

from kenv import KUBECTL_ENV

HERE = os.path.dirname(os.path.abspath(__file__))


def log(msg):
    print(f"job_exec: {msg}", file=sys.stderr, flush=True)


def kubectl(*args, stdin=None, check=True):
    p = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, env=KUBECTL_ENV,
                       timeout=60)
    if check and p.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {p.stderr.strip()}")
    return p


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def secret_names(pod):
    names = {v["secret"]["secretName"] for v in pod.get("volumes", []) if "secret" in v}
    for c in pod.get("containers", []):
        for e in c.get("env", []):
            ref = e.get("valueFrom", {}).get("secretKeyRef")
            if ref and not ref.get("optional"):
                names.add(ref["name"])
    return names


def tail(out):
    lines = out.splitlines()[-80:]
    text = "\n".join(lines).encode()[-2048:]
    return text.decode(errors="replace")


KUBELET_FINALIZER = "etcd-warden.io/test-kubelet"


def pod_deleted(ns, pod_name):
    p = kubectl("-n", ns, "get", "pod", pod_name, "-o", "json", check=False)
    if p.returncode != 0:
        return "not found" in p.stderr.lower() or "notfound" in p.stderr.lower()
    return bool(json.loads(p.stdout)["metadata"].get("deletionTimestamp"))


def release_pod(ns, pod_name):
    """The kubelet's part of a Pod's deletion done: its finalizer goes (the others stay)."""
    for _ in range(5):
        p = kubectl("-n", ns, "get", "pod", pod_name, "-o", "json", check=False)
        if p.returncode != 0:
            return
        meta = json.loads(p.stdout)["metadata"]
        fins = [f for f in meta.get("finalizers", []) if f != KUBELET_FINALIZER]
        patch = {"metadata": {"finalizers": fins or None,
                              "resourceVersion": meta["resourceVersion"]}}
        if kubectl("-n", ns, "patch", "pod", pod_name, "--type=merge", "-p", json.dumps(patch),
                   check=False).returncode == 0:
            return
    log(f"pod {ns}/{pod_name}: its finalizer could not be removed")


def run_container(ns, pod_name, argv, env, grace):
    """Run the container; (exit code, output), or (None, output) when the Pod was deleted
    meanwhile: then its process group got SIGTERM, and SIGKILL after grace seconds."""
    with tempfile.TemporaryFile(mode="w+") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, text=True, env=env,
                             start_new_session=True)
        end = time.monotonic() + 300
        while p.poll() is None:
            if time.monotonic() > end:
                os.killpg(p.pid, 9)
                p.wait()
                break
            if pod_deleted(ns, pod_name):
                log(f"pod {ns}/{pod_name} deleted: SIGTERM to its container")
                os.killpg(p.pid, 15)
                try:
                    p.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, 9)
                    p.wait()
                out.seek(0)
                return None, out.read()
            time.sleep(0.25)
        out.seek(0)
        return p.returncode, out.read()


def run_one(ns, pod_name, cj_path, secrets, root, binary, which, grace):
    """One container of the pod (WHICH: "" or init/N) through cronjob_exec.py: exit code (None
    when the Pod was deleted meanwhile), output, termination log."""
    tlog = root + ".termination-log"
    code, out = run_container(
        ns, pod_name,
        [sys.executable, os.path.join(HERE, "cronjob_exec.py"), cj_path, secrets, root, binary],
        dict(os.environ, WARDEN_TERMINATION_LOG=tlog, CRONJOB_EXEC_CONTAINER=which), grace)
    written = ""
    if os.path.exists(tlog):
        with open(tlog) as f:
            written = f.read()[:4096]
        os.unlink(tlog)
    sys.stderr.write(out)
    return code, out, written


def status_of(ctr, code, message, started):
    return {"name": ctr["name"], "image": ctr.get("image", ""), "ready": False,
            "restartCount": 0, "imageID": "", "started": False,
            "state": {"terminated": {"exitCode": code,
                                     "reason": "Completed" if code == 0 else "Error",
                                     "message": message, "startedAt": started,
                                     "finishedAt": now()}}}


def run(ns, name, work, binary):
    job = json.loads(kubectl("-n", ns, "get", "job", name, "-o", "json").stdout)
    spec = job["spec"]["template"]["spec"]
    started = now()
    root = tempfile.mkdtemp(prefix="pod.", dir=work)
    secrets = os.path.join(root + ".secrets")
    os.makedirs(secrets)
    ctr = spec["containers"][0]
    labels = dict(job["spec"]["template"].get("metadata", {}).get("labels", {}))
    labels.update({"job-name": name, "batch.kubernetes.io/job-name": name,
                   "controller-uid": job["metadata"]["uid"]})
    pod_name = name + "-" + "".join(random.choices(string.ascii_lowercase, k=5))
    # the Pod exists while its container runs, as the Job controller makes it first; its
    # finalizer stands for the kubelet, which lets a deleted Pod go only once its container
    # has stopped
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": pod_name, "namespace": ns, "labels": labels,
                        "finalizers": [KUBELET_FINALIZER],
                        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                             "name": name, "uid": job["metadata"]["uid"],
                                             "controller": True,
                                             "blockOwnerDeletion": True}]},
           "spec": spec}
    kubectl("create", "-f", "-", stdin=json.dumps(pod))
    try:
        kubectl("-n", ns, "patch", "pod", pod_name, "--subresource=status", "--type=merge",
                "-p", json.dumps({"status": {"phase": "Running", "startTime": started}}))
        code, out, written = None, "", ""
        for s in secret_names(spec):
            p = kubectl("-n", ns, "get", "secret", s, "-o", "json", check=False)
            if p.returncode != 0:
                code, out = 1, f"secret \"{s}\" not found"
                break
            with open(os.path.join(secrets, s + ".json"), "w") as f:
                f.write(p.stdout)
        inits = []
        if code is None:
            cj = {"kind": "CronJob", "metadata": job["metadata"],
                  "spec": {"jobTemplate": {"spec": job["spec"]}}}
            cj_path = root + ".cronjob.json"
            with open(cj_path, "w") as f:
                json.dump(cj, f)
            grace = min(int(spec.get("terminationGracePeriodSeconds", 30)), 10)
            killed = False
            # the init containers in order, then the container, in one ROOT (emptyDirs shared)
            for i, ic in enumerate(spec.get("initContainers", [])):
                icode, iout, iwritten = run_one(ns, pod_name, cj_path, secrets, root, binary,
                                                f"init/{i}", grace)
                if icode is None:
                    killed = True
                    break
                inits.append(status_of(ic, icode, iwritten or (tail(iout) if icode else ""),
                                       started))
                if icode != 0:
                    code, out, written = icode, iout, ""
                    break
            else:
                code, out, written = run_one(ns, pod_name, cj_path, secrets, root, binary, "",
                                             grace)
                killed = code is None
            if killed:
                log(f"Job {ns}/{name}: pod {pod_name} killed")
                return
        ok = code == 0
        status = {"phase": "Succeeded" if ok else "Failed", "startTime": started}
        if inits:
            status["initContainerStatuses"] = inits
        if not inits or inits[-1]["state"]["terminated"]["exitCode"] == 0:
            # the container ran (or its Secret was missing: the kubelet reports it there)
            status["containerStatuses"] = [
                status_of(ctr, code, written or (tail(out) if not ok else ""), started)]
        kubectl("-n", ns, "patch", "pod", pod_name, "--subresource=status", "--type=merge",
                "-p", json.dumps({"status": status}))
    finally:
        release_pod(ns, pod_name)
    cond = {"type": "Complete" if ok else "Failed", "status": "True",
            "lastProbeTime": now(), "lastTransitionTime": now()}
    if not ok:
        cond.update({"reason": "BackoffLimitExceeded",
                     "message": "Job has reached the specified backoff limit"})
    jst = {"startTime": started, "conditions": [cond],
           ("succeeded" if ok else "failed"): 1}
    if ok:
        jst["completionTime"] = now()
    kubectl("-n", ns, "patch", "job", name, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": jst}))
    log(f"Job {ns}/{name}: pod {pod_name} exit {code}")


def record(path, ns, job, start, end):
    ctrs = job["spec"]["template"]["spec"].get("containers", [{}])
    line = {"namespace": ns, "job": job["metadata"]["name"], "uid": job["metadata"]["uid"],
            "annotations": job["metadata"].get("annotations", {}),
            "command": (ctrs[0].get("command") or []) + (ctrs[0].get("args") or []),
            "start": start, "end": end}
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def watch_jobs(ns, selector, out, procs):
    """Put every Job that kubectl's watch of NS/SELECTOR prints (the list first, then each
    change) on the queue out; a watch that ends (the server closed it) is opened again. The
    running kubectl is procs[0]."""
    dec = json.JSONDecoder()
    while True:
        procs[:] = [None]
        p = subprocess.Popen(["kubectl", "-n", ns, "get", "jobs", "-l", selector, "-o", "json",
                              "--watch"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, env=KUBECTL_ENV)
        procs[:] = [p]
        buf = ""
        for line in p.stdout:
            buf += line
            while True:
                buf = buf.lstrip()
                try:
                    obj, used = dec.raw_decode(buf)
                except ValueError:
                    break
                buf = buf[used:]
                out.put(obj)
        p.wait()
        time.sleep(0.5)


def serve(ns, selector, work, binary, stop, seconds):
    done, end = set(), time.monotonic() + seconds
    jobs, procs = queue.Queue(), [None]
    threading.Thread(target=watch_jobs, args=(ns, selector, jobs, procs), daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        serve_queue(ns, jobs, done, end, work, binary, stop)
    finally:
        if procs[0]:
            procs[0].kill()


def serve_queue(ns, jobs, done, end, work, binary, stop):
    while time.monotonic() < end and not os.path.exists(stop):
        try:
            job = jobs.get(timeout=0.2)
        except queue.Empty:
            continue
        uid = job["metadata"]["uid"]
        st = job.get("status") or {}
        if uid in done or st.get("succeeded") or st.get("failed") or \
                job["metadata"].get("deletionTimestamp"):
            continue
        done.add(uid)
        start = time.time()
        if os.environ.get("JOB_EXEC_RECORD"):
            record(os.environ["JOB_EXEC_RECORD"], ns, job, start, None)
        try:
            run(ns, job["metadata"]["name"], work, binary)
        except (RuntimeError, KeyError, subprocess.TimeoutExpired, ValueError) as e:
            log(f"Job {ns}/{job['metadata']['name']}: {e}")
        if os.environ.get("JOB_EXEC_RECORD"):
            record(os.environ["JOB_EXEC_RECORD"], ns, job, start, time.time())


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "run":
        try:
            run(*sys.argv[2:6])
        except (RuntimeError, KeyError) as e:
            log(str(e))
            sys.exit(2)
    elif len(sys.argv) == 8 and sys.argv[1] == "serve":
        serve(*sys.argv[2:7], float(sys.argv[7]))
    else:
        log("usage: run NAMESPACE JOB WORK_DIR WARDEN_SNAPSHOT | "
            "serve NAMESPACE SELECTOR WORK_DIR WARDEN_SNAPSHOT STOP_FILE SECONDS")
        sys.exit(2)


main()
