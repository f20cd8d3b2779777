# The project's two images, built and run with Debian 12's podman: no Docker engine, no
# image registry, nothing of the machine's own container configuration. Source this file:
#
#   . "$(dirname "$0")/../lib/podman.sh"
#   img_setup                    # configuration files, exported to every podman call
#   img_base                     # docker.io/library/debian:bookworm, made from Debian's archive
#   img_build webhook|controller # podman build -f Dockerfile.<kind> -t $IMG_WEBHOOK|$IMG_CONTROLLER
#   img_size IMAGE               # its size in bytes
#   img_run [podman run flags] IMAGE [ARGS]   # as the chart runs it (below), in the foreground
#   img_exec IMAGE ARGS          # in place of a binary of the build tree (below)
#   img_fail "message"           # print and exit 1
#
# Everything lives under IMG_DIR (default: $WARDEN_BINARY_DIR/images, else build/images):
# containers.conf, storage.conf and registries.conf (exported as CONTAINERS_CONF,
# CONTAINERS_STORAGE_CONF, CONTAINERS_REGISTRIES_CONF), the image store (store/), and the
# base image's root file system as a tar (bookworm-minbase.tar), kept across runs: a
# second build imports it instead of downloading the packages again.
#
# The podman settings a root container host without systemd needs: the runc runtime
# (crun refuses hybrid cgroup layouts), cgroupfs and file events (no systemd, no journald),
# default ulimits no higher than this process's hard limits (podman's defaults cannot be
# raised to without CAP_SYS_RESOURCE), overlay storage, no registry to search.
#
# img_run runs a container as the chart's securityContext runs the pods: user 65532, read-only
# root file system, every capability dropped, no privilege escalation (img_exec adds the host
# network: kube-sim, backup-double and the emulators listen on loopback). Every container
# of a run carries the label etcd-warden.test=$IMG_RUN_ID; img_cleanup, which the
# tests/e2e/image_*.sh scripts run at exit, removes them all (a SIGKILLed podman client
# leaves its container behind).

_img_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ -z "${IMG_DIR:-}" ]; then
    if [ -n "${WARDEN_BINARY_DIR:-}" ]; then IMG_DIR=$WARDEN_BINARY_DIR/images; else IMG_DIR=$_img_root/build/images; fi
fi
IMG_WEBHOOK=${IMG_WEBHOOK:-localhost/etcd-warden/webhook:test}
IMG_CONTROLLER=${IMG_CONTROLLER:-localhost/etcd-warden/controller:test}
IMG_BASE=docker.io/library/debian:bookworm
IMG_RUN_ID=${IMG_RUN_ID:-$$}
IMG_UID=65532
export IMG_DIR IMG_WEBHOOK IMG_CONTROLLER IMG_RUN_ID
export CONTAINERS_CONF=$IMG_DIR/containers.conf CONTAINERS_STORAGE_CONF=$IMG_DIR/storage.conf \
    CONTAINERS_REGISTRIES_CONF=$IMG_DIR/registries.conf

img_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Write the configuration files (each time: the hard limits may differ between runs).
img_setup() {
    local nofile nproc
    command -v podman >/dev/null || img_fail "podman is not installed (tests/run-all.sh installs it)"
    command -v runc >/dev/null || img_fail "runc is not installed (tests/run-all.sh installs it)"
    mkdir -p "$IMG_DIR/store"
    nofile=$(ulimit -Hn)
    nproc=$(ulimit -Hu)
    if [ "$nofile" = unlimited ] || [ "$nofile" -gt 1048576 ]; then nofile=1048576; fi
    if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then nproc=32768; fi
    cat >"$IMG_DIR/containers.conf.$$" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$IMG_DIR/store/events.log"
EOF
    cat >"$IMG_DIR/storage.conf.$$" <<EOF
[storage]
driver = "overlay"
graphroot = "$IMG_DIR/store/root"
runroot = "$IMG_DIR/store/run"
EOF
    cat >"$IMG_DIR/registries.conf.$$" <<EOF
unqualified-search-registries = []
short-name-mode = "permissive"
EOF
    local f
    for f in containers storage registries; do
        mv "$IMG_DIR/$f.conf.$$" "$IMG_DIR/$f.conf"
    done
}

# The build stages' base, debian:bookworm, from Debian's archive with the machine's apt
# sources (mmdebstrap --variant=minbase), imported under the name the Dockerfiles use.
img_base() {
    local tar=$IMG_DIR/bookworm-minbase.tar sources=/etc/apt/sources.list.d/debian.sources
    podman image exists "$IMG_BASE" && return 0
    if [ ! -s "$tar" ]; then
        command -v mmdebstrap >/dev/null || img_fail "mmdebstrap is not installed (tests/run-all.sh installs it)"
        if [ -f "$sources" ]; then set -- "$sources"; else set -- "deb http://deb.debian.org/debian bookworm main"; fi
        nice -n 10 mmdebstrap --variant=minbase --mode=root bookworm "$tar.part.tar" "$@" \
            >"$IMG_DIR/mmdebstrap.log" 2>&1 || { tail -20 "$IMG_DIR/mmdebstrap.log" >&2; img_fail "mmdebstrap"; }
        mv "$tar.part.tar" "$tar"   # mmdebstrap picks the format by the name: .tar
    fi
    podman import --change 'CMD ["bash"]' "$tar" "$IMG_BASE" >/dev/null || img_fail "podman import $tar"
}

# podman build of Dockerfile.KIND as it is, from the source tree, no network but the host's
# (apt in the build stage), no pull. The log is $IMG_DIR/build-KIND.log.
img_build() {
    local kind=$1 tag
    case "$kind" in
    webhook) tag=$IMG_WEBHOOK ;;
    controller) tag=$IMG_CONTROLLER ;;
    *) img_fail "img_build: webhook or controller" ;;
    esac
    (cd "$_img_root" && nice -n 10 podman build --pull=never --network=host \
        -f "Dockerfile.$kind" -t "$tag" .) >"$IMG_DIR/build-$kind.log" 2>&1 ||
        { tail -30 "$IMG_DIR/build-$kind.log" >&2; img_fail "podman build -f Dockerfile.$kind"; }
}

img_size() {
    podman image inspect "$1" --format '{{.Size}}'
}

# Both images must exist (the image_build test makes them).
img_need() {
    local i
    for i in "$IMG_WEBHOOK" "$IMG_CONTROLLER"; do
        podman image exists "$i" || img_fail "no image $i: run the image_build test first"
    done
}

IMG_SECURE=(--read-only --read-only-tmpfs=false --cap-drop=ALL
            --security-opt=no-new-privileges)

img_run() {
    podman run --rm --label "etcd-warden.test=$IMG_RUN_ID" \
        --user "$IMG_UID:$IMG_UID" "${IMG_SECURE[@]}" "$@"
}

img_cleanup() {
    local ids
    ids=$(podman ps -aq --filter "label=etcd-warden.test=$IMG_RUN_ID" 2>/dev/null) || return 0
    [ -z "$ids" ] || podman rm -f -t 0 $ids >/dev/null 2>&1 || true
}

# Run IMAGE with ARGS in place of a binary of the build tree (the e2e helpers start it as
# they would start the binary): every argument, or --flag=value, naming an existing file
# or directory of this machine is copied into a directory of uid 65532 mounted read-only at
# the same path, as the chart mounts its Secrets; the container runs as img_run runs it and
# shares the host's network. exec: this process is the podman client, which passes
# SIGTERM on to the container and exits with its status.
#   img_exec IMAGE ARGS...
img_exec() {
    local image=$1 a v mnt vols=()
    shift
    mnt=$(mktemp -d "${TMPDIR:-/tmp}/img-mnt.XXXXXX")
    for a in "$@"; do
        v=${a#--*=}
        case "$v" in /*) ;; *) continue ;; esac
        [ -e "$v" ] || continue
        mkdir -p "$mnt$(dirname "$v")"
        cp -r "$v" "$mnt$v"
        vols+=(-v "$mnt$v:$v:ro")
    done
    chown -R "$IMG_UID:$IMG_UID" "$mnt"
    exec podman run --rm --network=host --label "etcd-warden.test=$IMG_RUN_ID" \
        --name "warden-test-$IMG_RUN_ID-$$" --user "$IMG_UID:$IMG_UID" "${IMG_SECURE[@]}" \
        "${vols[@]}" "$image" "$@"
}
