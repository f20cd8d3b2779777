#!/usr/bin/env bash
# The one test command: installs what a fresh Debian 12 machine lacks, builds
# (plain and ASan+UBSan), runs every test in both builds, checks the Release
# build compiles cleanly, then builds the libFuzzer targets with clang and
# gives each a short run.
#
#   tests/run-all.sh            everything
#   FUZZ_SECONDS=60 tests/run-all.sh
#   tests/run-all.sh --install-only   only the packages and emulators (tests/demo.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
fuzz_seconds=${FUZZ_SECONDS:-15}

packages=(build-essential cmake pkg-config git clang clang-format libclang-rt-14-dev
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
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug "$@" >/dev/null
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

# What the Dockerfiles build: optimised, still -Werror clean.
echo "== build build/release"
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build/release -j "$jobs"

echo "== fuzz (${fuzz_seconds}s per target)"
CC=clang cmake -S . -B build/fuzz -DFUZZ=ON -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build/fuzz -j "$jobs"
for bin in build/fuzz/tests/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin"); name=${name#fuzz_}
    work=$(mktemp -d)
    [ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$work/"
    "$bin" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -print_final_stats=1 "$work" \
        > "build/fuzz/$name.log" 2>&1 || { tail -40 "build/fuzz/$name.log"; exit 1; }
    echo "fuzz $name: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "build/fuzz/$name.log" | grep -o '[0-9]*$') executions, no crash"
    rm -rf "$work"
done
echo "== all green in $(( $(date +%s) - start ))s"
