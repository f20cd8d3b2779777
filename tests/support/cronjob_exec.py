#!/usr/bin/env python3
"""Run a CronJob's first container as the kubelet would, on this machine.

  cronjob_exec.py CRONJOB_JSON SECRET_DIR ROOT WARDEN_SNAPSHOT

ROOT stands for the container's root file system. Secret volumes come from
SECRET_DIR/<secretName>/ (files) or SECRET_DIR/<secretName>.json (a Secret
object, base64 data) and are written under ROOT/<mountPath>. hostPath volumes
are materialised by path rewriting: the node's file system is the directory
$CRONJOB_EXEC_HOST_ROOT (required when the CronJob has one), the volume's
directory HOST_ROOT/<path> must exist for type Directory (the kubelet refuses
the pod otherwise) and is created for DirectoryOrCreate, and ROOT/<mountPath>
becomes a symbolic link to it. Env values (literal, secretKeyRef, fieldRef to
the pod's name and namespace) and $(VAR) references are resolved as
Kubernetes does; an absolute path in an env value or an argument (alone or
after "=") that is a mount path, lies under one or is a directory above one
(HOME=/home/nonroot above /home/nonroot/<container>) points into ROOT. The
program runs in ROOT, the container's "/" (the image sets no WORKDIR). The
program of the container's command must be warden-snapshot (any directory):
it runs as WARDEN_SNAPSHOT with the command's other words and the args exactly
as written; an init container's may be etcdbrctl, which runs as
$WARDEN_ETCDBRCTL (its peer URL 127.0.0.1:2380 moved to $CRONJOB_EXEC_PEER_PORT). emptyDir volumes are
directories under ROOT. CRONJOB_EXEC_CONTAINER=init/N runs the pod's init
container N instead of its first container. Exit status: the command's, or 2 with a message when the CronJob
cannot be run.
"""
import base64, json, os, re, subprocess, sys


def die(msg):
    print(f"cronjob_exec: {msg}", file=sys.stderr)
    sys.exit(2)


def secret_data(secret_dir, name):
    d = os.path.join(secret_dir, name)
    if os.path.isdir(d):
        return {f: open(os.path.join(d, f), "rb").read() for f in os.listdir(d)
                if os.path.isfile(os.path.join(d, f))}
    j = d + ".json"
    if os.path.isfile(j):
        obj = json.load(open(j))
        data = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
        data.update({k: v.encode() for k, v in (obj.get("stringData") or {}).items()})
        return data
    die(f"Secret {name} not found in {secret_dir} (as a directory or {name}.json)")


def host_path(v, target):
    """The node's directory of hostPath volume v, linked at target (the mount in ROOT)."""
    host_root = os.environ.get("CRONJOB_EXEC_HOST_ROOT") or die(
        f"volume {v['name']} is a hostPath volume: set CRONJOB_EXEC_HOST_ROOT to the node's files")
    path, kind = v["hostPath"]["path"], v["hostPath"].get("type", "")
    if not path.startswith("/"):
        die(f"hostPath {path} is not absolute")
    host = os.path.join(host_root, path.lstrip("/"))
    if kind == "DirectoryOrCreate":
        os.makedirs(host, exist_ok=True)
    elif kind == "Directory" and not os.path.isdir(host):
        die(f"hostPath type check failed: {path} is not a directory")
    elif kind not in ("", "Directory", "DirectoryOrCreate"):
        die(f"hostPath type {kind} is not supported")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.symlink(host, target)
    return host


def expand(s, env):
    # $(VAR) -> value when defined; $$(VAR) -> literal $(VAR), as Kubernetes does.
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), s)


def main():
    cj_path, secret_dir, root, binary = sys.argv[1:5]
    cj = json.load(open(cj_path))
    if cj.get("kind") != "CronJob":
        die(f"{cj_path} is a {cj.get('kind')}, not a CronJob")
    pod = cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    which = os.environ.get("CRONJOB_EXEC_CONTAINER", "")
    c = pod["initContainers"][int(which[5:])] if which.startswith("init/") else pod["containers"][0]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {}
    for m in c.get("volumeMounts", []):
        v = volumes.get(m["name"]) or die(f"volumeMount {m['name']} has no volume")
        target = os.path.join(root, m["mountPath"].strip("/"))
        if "hostPath" in v:
            mounts[m["mountPath"].rstrip("/") or "/"] = host_path(v, target)
            continue
        if "emptyDir" in v:
            # the pod's own directory: shared by its containers (they run in one ROOT)
            os.makedirs(target, exist_ok=True)
            mounts[m["mountPath"].rstrip("/") or "/"] = target
            continue
        if "secret" not in v:
            die(f"volume {m['name']} is neither a Secret nor a hostPath volume")
        os.makedirs(target, exist_ok=True)
        data = secret_data(secret_dir, v["secret"]["secretName"])
        items = v["secret"].get("items")
        pairs = [(i["key"], i["path"]) for i in items] if items else [(k, k) for k in data]
        for key, path in pairs:
            if key not in data:
                die(f"Secret {v['secret']['secretName']} has no key {key}")
            with open(os.path.join(target, path), "wb") as f:
                f.write(data[key])
        mounts[m["mountPath"].rstrip("/") or "/"] = target

    def inside(path):
        # a mount path, under one, or a directory above one: it lies in ROOT
        path = path.rstrip("/") or "/"
        return path.startswith("/") and path != "/" and any(
            path == mp or path.startswith(mp + "/") or mp.startswith(path + "/") for mp in mounts)

    def remap(s):
        if inside(s):
            return os.path.join(root, s.lstrip("/"))
        if "=" in s and inside(s.split("=", 1)[1]):
            k, val = s.split("=", 1)
            return k + "=" + os.path.join(root, val.lstrip("/"))
        return s

    env = {}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = remap(expand(e["value"], env))
        elif "secretKeyRef" in e.get("valueFrom", {}):
            ref = e["valueFrom"]["secretKeyRef"]
            env[e["name"]] = secret_data(secret_dir, ref["name"])[ref["key"]].decode()
        elif "fieldRef" in e.get("valueFrom", {}):
            # the downward API for the pod a manual run of the CronJob would get
            path = e["valueFrom"]["fieldRef"].get("fieldPath")
            meta = cj.get("metadata", {})
            if path == "metadata.name":
                env[e["name"]] = meta.get("name", "cronjob") + "-manual"
            elif path == "metadata.namespace":
                env[e["name"]] = meta.get("namespace", "default")
            else:
                die(f"env {e['name']}: fieldRef {path} is not supported")
        else:
            die(f"env {e['name']}: only value, secretKeyRef and fieldRef are supported")
    words = [expand(w, env) for w in (c.get("command") or []) + (c.get("args") or [])]
    if not words:
        die("the container has no command (the image's entrypoint is not known here)")
    prog = os.path.basename(words[0])
    if prog == "etcdbrctl" and which.startswith("init/") and os.environ.get("WARDEN_ETCDBRCTL"):
        # the backup sidecar's image: its etcdbrctl; its embedded etcd's peer URL on a port
        # of the test's (a pod has the loopback to itself)
        binary = os.environ["WARDEN_ETCDBRCTL"]
        peer = os.environ.get("CRONJOB_EXEC_PEER_PORT", "2380")
        words = [w.replace("127.0.0.1:2380", "127.0.0.1:" + peer) for w in words]
    elif prog != "warden-snapshot":
        die(f"the container runs {words[0]}, not warden-snapshot")
    argv = [binary] + [remap(w) for w in words[1:]]
    full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    # AWS_ENDPOINT_URL_STS: the tests' STS stand-in, where a pod reaches AWS's STS
    for k in ("WARDEN_SNAPSHOT_NOW", "WARDEN_TERMINATION_LOG", "ASAN_OPTIONS", "UBSAN_OPTIONS",
              "LSAN_OPTIONS", "AWS_ENDPOINT_URL_STS"):
        if k in os.environ:
            full_env[k] = os.environ[k]
    full_env.update(env)
    print("cronjob_exec: " + " ".join(argv), file=sys.stderr)
    sys.exit(subprocess.call(argv, env=full_env, cwd=root))


main()
