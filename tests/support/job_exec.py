#!/usr/bin/env python3
"""The kubelet and the Job controller for batch/v1 Jobs in kube-sim (which runs no pods).

  job_exec.py run NAMESPACE JOB WORK_DIR WARDEN_SNAPSHOT
  job_exec.py serve NAMESPACE SELECTOR WORK_DIR WARDEN_SNAPSHOT STOP_FILE SECONDS

kubectl (with the caller's KUBECONFIG) reads the Job; every Secret its pod
template names (volumes, secretKeyRefs) is read from the Job's namespace at
that moment, as the kubelet does (a Secret missing there fails the pod); the
container runs through cronjob_exec.py (same directory: Secret and hostPath
volumes, env, the command's program must be warden-snapshot) under a fresh
root in WORK_DIR. Then what the Job controller and the kubelet would write:
a Pod "<job>-<5 letters>" (labels job-name, batch.kubernetes.io/job-name,
controller-uid, the template's; a controller reference to the Job) with
status.phase Succeeded or Failed and containerStatuses[0].state.terminated
{exitCode, reason, message}, then the Job's status (succeeded or failed 1,
a Complete or Failed condition, startTime, completionTime).

The message is what the program wrote to its termination-message file (a
file of the run's own, named by WARDEN_TERMINATION_LOG, standing for the
kubelet's /dev/termination-log); when that is empty and the container failed,
its output (stdout and stderr, in order) cut to its last 80 lines and 2048
bytes, as the kubelet does for terminationMessagePolicy FallbackToLogsOnError.

serve runs every Job matching SELECTOR in NAMESPACE that has no status yet,
once per uid, polling every 0.1 s until STOP_FILE exists or SECONDS pass.
Each run is logged on stderr. Exit status of run: 0 when the Job ran (whatever
its container's status), 2 when it could not be read or written.
"""
import json, os, random, string, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))


def log(msg):
    print(f"job_exec: {msg}", file=sys.stderr, flush=True)


def kubectl(*args, stdin=None, check=True):
    p = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True,
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


def run_container(cj_path, secrets, root, binary, which):
    """One container of the pod through cronjob_exec.py: exit code, output, termination log."""
    tlog = root + ".termination-log"
    p = subprocess.run([sys.executable, os.path.join(HERE, "cronjob_exec.py"), cj_path,
                        secrets, root, binary], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300,
                       env=dict(os.environ, WARDEN_TERMINATION_LOG=tlog,
                                CRONJOB_EXEC_CONTAINER=which))
    written = ""
    if os.path.exists(tlog):
        with open(tlog) as f:
            written = f.read()[:4096]
        os.unlink(tlog)
    sys.stderr.write(p.stdout)
    return p.returncode, p.stdout, written


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
        # the init containers in order, then the container, in one ROOT (emptyDirs shared)
        for i, ic in enumerate(spec.get("initContainers", [])):
            icode, iout, iwritten = run_container(cj_path, secrets, root, binary, f"init/{i}")
            inits.append(status_of(ic, icode, iwritten or (tail(iout) if icode else ""),
                                   started))
            if icode != 0:
                code, out, written = icode, iout, ""
                break
        else:
            code, out, written = run_container(cj_path, secrets, root, binary, "")
    ok = code == 0
    ctr = spec["containers"][0]
    labels = dict(job["spec"]["template"].get("metadata", {}).get("labels", {}))
    labels.update({"job-name": name, "batch.kubernetes.io/job-name": name,
                   "controller-uid": job["metadata"]["uid"]})
    pod_name = name + "-" + "".join(random.choices(string.ascii_lowercase, k=5))
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": pod_name, "namespace": ns, "labels": labels,
                        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                             "name": name, "uid": job["metadata"]["uid"],
                                             "controller": True,
                                             "blockOwnerDeletion": True}]},
           "spec": spec}
    kubectl("create", "-f", "-", stdin=json.dumps(pod))
    status = {"phase": "Succeeded" if ok else "Failed", "startTime": started}
    if inits:
        status["initContainerStatuses"] = inits
    if not inits or inits[-1]["state"]["terminated"]["exitCode"] == 0:
        # the container ran (or its Secret was missing: the kubelet reports it there)
        status["containerStatuses"] = [
            status_of(ctr, code, written or (tail(out) if not ok else ""), started)]
    kubectl("-n", ns, "patch", "pod", pod_name, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": status}))
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


def serve(ns, selector, work, binary, stop, seconds):
    done, end = set(), time.monotonic() + seconds
    while time.monotonic() < end and not os.path.exists(stop):
        p = kubectl("-n", ns, "get", "jobs", "-l", selector, "-o", "json", check=False)
        items = json.loads(p.stdout).get("items", []) if p.returncode == 0 else []
        for job in items:
            uid = job["metadata"]["uid"]
            st = job.get("status") or {}
            if uid in done or st.get("succeeded") or st.get("failed") or \
                    job["metadata"].get("deletionTimestamp"):
                continue
            done.add(uid)
            try:
                run(ns, job["metadata"]["name"], work, binary)
            except (RuntimeError, KeyError, subprocess.TimeoutExpired) as e:
                log(f"Job {ns}/{job['metadata']['name']}: {e}")
        time.sleep(0.1)


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
