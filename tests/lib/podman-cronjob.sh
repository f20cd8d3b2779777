# A CronJob's first container run from its image with podman, as a kubelet would start the
# pod of a manual run of it. Source after tests/lib/podman.sh:
#
#   img_cronjob_run CRONJOB_JSON SECRETS_JSON HOSTROOT   # its exit status
#
# CRONJOB_JSON is the CronJob as `kubectl get cronjob -o json` prints it and SECRETS_JSON
# the Secrets of its namespace (`kubectl get secrets -o json`). Run as written: the image,
# command (the entrypoint) and args, with $(VAR) references expanded from the container's
# environment as Kubernetes expands them; env values, secretKeyRefs and the pod's name and
# namespace through fieldRefs; volumes: a Secret's keys (or items) as files, read-only,
# a hostPath below HOSTROOT (the node's root stand-in; DirectoryOrCreate creates it), an
# emptyDir; the pod's and the container's securityContext: runAsUser/runAsGroup, fsGroup as
# a supplementary group, readOnlyRootFilesystem, allowPrivilegeEscalation: false,
# capabilities; workingDir when set (else the image's). The network is the host's (the
# emulators listen on loopback). Anything else in the pod is refused, not ignored.

img_cronjob_run() {
    local cj=$1 secrets=$2 hostroot=$3 work args=()
    work=$(mktemp -d "${TMPDIR:-/tmp}/img-pod.XXXXXX")
    readarray -d '' args < <(python3 - "$cj" "$secrets" "$hostroot" "$work" <<'PY'
import base64, json, os, re, sys

cj_path, secrets_path, hostroot, work = sys.argv[1:5]


def die(msg):
    print(f"img_cronjob_run: {msg}", file=sys.stderr)
    sys.exit(2)


cj = json.load(open(cj_path))
if cj.get("kind") != "CronJob":
    die(f"{cj_path} is not a CronJob")
meta = cj.get("metadata", {})
pod = cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
if len(pod.get("containers", [])) != 1 or pod.get("initContainers"):
    die("one container, no init containers")
c = pod["containers"][0]
secrets = {s["metadata"]["name"]: s for s in json.load(open(secrets_path)).get("items", [])}


def secret(name, optional=False):
    s = secrets.get(name)
    if s is None:
        if optional:
            return None
        die(f"Secret {name} not found")
    d = {k: base64.b64decode(v) for k, v in (s.get("data") or {}).items()}
    d.update({k: v.encode() for k, v in (s.get("stringData") or {}).items()})
    return d


def expand(s, env):
    # $(VAR) -> its value when defined; $$ -> $, as Kubernetes does.
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), s)


out = []
psc = pod.get("securityContext") or {}
csc = c.get("securityContext") or {}
known = {"runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup", "seccompProfile"}
if set(psc) - known:
    die(f"pod securityContext {sorted(set(psc) - known)} not supported")
uid = csc.get("runAsUser", psc.get("runAsUser"))
gid = csc.get("runAsGroup", psc.get("runAsGroup"))
if (csc.get("runAsNonRoot") or psc.get("runAsNonRoot")) and not uid:
    die("runAsNonRoot without a non-zero runAsUser")
if uid is not None:
    out += ["--user", f"{uid}:{gid}" if gid is not None else str(uid)]
if psc.get("fsGroup") is not None:
    out += ["--group-add", str(psc["fsGroup"])]
if csc.get("privileged"):
    die("a privileged container")
if csc.get("readOnlyRootFilesystem"):
    out += ["--read-only", "--read-only-tmpfs=false"]
if csc.get("allowPrivilegeEscalation") is False:
    out += ["--security-opt=no-new-privileges"]
caps = csc.get("capabilities") or {}
out += [f"--cap-drop={x}" for x in caps.get("drop") or []]
out += [f"--cap-add={x}" for x in caps.get("add") or []]

volumes = {v["name"]: v for v in pod.get("volumes") or []}
for m in c.get("volumeMounts") or []:
    v = volumes.get(m["name"]) or die(f"volumeMount {m['name']} has no volume")
    if m.get("subPath"):
        die("subPath is not supported")
    ro = bool(m.get("readOnly"))
    if "secret" in v:
        s = v["secret"]
        data = secret(s["secretName"], s.get("optional", False)) or {}
        src = os.path.join(work, "volumes", m["name"])
        os.makedirs(src, mode=0o755)
        items = s.get("items")
        pairs = [(i["key"], i["path"]) for i in items] if items else [(k, k) for k in data]
        for key, path in pairs:
            if key not in data:
                die(f"Secret {s['secretName']} has no key {key}")
            f = os.path.join(src, path)
            os.makedirs(os.path.dirname(f), exist_ok=True)
            with open(f, "wb") as fh:
                fh.write(data[key])
            os.chmod(f, s.get("defaultMode", 0o644))
        ro = True
    elif "hostPath" in v:
        hp = v["hostPath"]
        src = os.path.join(hostroot, hp["path"].lstrip("/"))
        if hp.get("type") == "DirectoryOrCreate":
            os.makedirs(src, exist_ok=True)
        elif not os.path.exists(src):
            die(f"hostPath {hp['path']} does not exist")
    elif "emptyDir" in v:
        src = os.path.join(work, "volumes", m["name"])
        os.makedirs(src)
        os.chmod(src, 0o777)
    else:
        die(f"volume {m['name']}: only secret, hostPath and emptyDir are supported")
    out += ["-v", f"{src}:{m['mountPath']}" + (":ro" if ro else "")]

env = {}
for e in c.get("env") or []:
    vf = e.get("valueFrom") or {}
    if "value" in e:
        env[e["name"]] = expand(e["value"], env)
    elif "fieldRef" in vf:
        path = vf["fieldRef"].get("fieldPath")
        if path == "metadata.name":
            env[e["name"]] = meta.get("name", "cronjob") + "-manual"
        elif path == "metadata.namespace":
            env[e["name"]] = meta.get("namespace", "default")
        else:
            die(f"env {e['name']}: fieldRef {path} is not supported")
    elif "secretKeyRef" in vf:
        ref = vf["secretKeyRef"]
        data = secret(ref["name"], ref.get("optional", False))
        if data is not None and ref["key"] in data:
            env[e["name"]] = data[ref["key"]].decode()
        elif not ref.get("optional", False):
            die(f"env {e['name']}: Secret {ref['name']} has no key {ref['key']}")
    else:
        die(f"env {e['name']}: only value, fieldRef and secretKeyRef are supported")
if c.get("envFrom"):
    die("envFrom is not supported")
for k, v in env.items():
    out += ["--env", f"{k}={v}"]
if c.get("workingDir"):
    out += ["--workdir", c["workingDir"]]
command = [expand(w, env) for w in c.get("command") or []]
if command:
    out += ["--entrypoint", json.dumps(command)]
out.append(c["image"])
out += [expand(w, env) for w in c.get("args") or []]
sys.stdout.write("".join(a + "\0" for a in out))
PY
    )
    [ ${#args[@]} -gt 0 ] || { rm -rf "$work"; return 2; }   # refused (the message is out)
    echo "img_cronjob_run: podman run ${args[*]}" >&2
    local rc=0
    podman run --rm --network=host --label "etcd-warden.test=$IMG_RUN_ID" "${args[@]}" || rc=$?
    rm -rf "$work"
    return $rc
}
