#!/usr/bin/env bash
# The one test command: installs what a fresh Debian 12 machine lacks, builds
# (plain and ASan+UBSan, -Werror), runs every test in both builds, checks the
# Release and RelWithDebInfo builds compile without a warning, then builds the
# libFuzzer targets with clang and runs each over its committed inputs and for
# a fixed-seed short run (tests/fuzz/gate.sh).
#
#   tests/run-all.sh            everything
#   FUZZ_RUNS=1000000 FUZZ_SEED=7 tests/run-all.sh
#   tests/run-all.sh --install-only   only the packages and emulators (tests/demo.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)

packages=(build-essential cmake pkg-config git clang clang-format libclang-rt-14-dev prometheus
          libmicrohttpd-dev libgnutls28-dev libssl-dev libcjson-dev libcurl4-openssl-dev
          libyaml-dev libcriterion-dev openssl curl procps wrk nginx-light
          libexpat1-dev python3 jq zlib1g-dev etcd-server etcd-client
          podman runc debootstrap mmdebstrap
          radosgw ceph-mon ceph-osd ceph-common
          golang-go golang-github-masterminds-sprig-dev golang-k8s-sigs-yaml-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Object-store emulators for the warden-snapshot tests (npm, pinned, project-local).
tests/install-emulators.sh "$root/build/npm"
[ "${1:-}" != --install-only ] || exit 0

run_suite() {
    local dir=$1; shift
    echo "== build $dir"
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DWERROR=ON "$@" >/dev/null
    cmake --build "$dir" -j "$jobs"
    echo "== test $dir"
    (cd "$dir" && ctest --output-on-failure -j "$jobs" -LE images)
}

start=$(date +%s)
run_suite build/debug
run_suite build/asan -DSANITIZE=ON

# The images: built with podman from the Dockerfiles and run (tests/e2e/image_*.sh).
echo "== images"
images_start=$(date +%s)
(cd build/debug && ctest --output-on-failure -j "$jobs" -L images)
echo "images: built and run in $(( $(date +%s) - images_start ))s"

# Warning-free where the optimiser looks further (-O2, -O3: format-truncation,
# maybe-uninitialized, ...): what the Dockerfiles build (Release), and what a
# distribution packages, the tests included (RelWithDebInfo). Build only.
echo "== build build/release"
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DWERROR=ON >/dev/null
cmake --build build/release -j "$jobs"
echo "== build build/relwithdebinfo"
cmake -S . -B build/relwithdebinfo -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWERROR=ON >/dev/null
cmake --build build/relwithdebinfo -j "$jobs"

# Fuzzing, deterministic: every committed and regression input, then a
# fixed-seed run (tests/fuzz/gate.sh; the random campaign is tests/fuzz/campaign.sh).
echo "== fuzz (seed ${FUZZ_SEED:-1}, ${FUZZ_RUNS:-100000} executions per target)"
FUZZ_JOBS=$jobs tests/fuzz/gate.sh
echo "== all green in $(( $(date +%s) - start ))s"
