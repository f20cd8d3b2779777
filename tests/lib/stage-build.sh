# The binaries of the demo (tests/demo.sh) and the playground (tests/playground.sh), before
# tests/lib/stage.sh is sourced (it looks for them as it is sourced):
#
#   . tests/lib/stage-build.sh
#   stage_build

_stage_build_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Unless WARDEN_BINARY_DIR names a build already (ctest): as root, the packages the tests
# install (tests/run-all.sh --install-only); the emulators; the programs and the test
# doubles in build/demo (Release).
stage_build() {
    [ -z "${WARDEN_BINARY_DIR:-}" ] || return 0
    if [ "$(id -u)" = 0 ]; then
        "$_stage_build_root/tests/run-all.sh" --install-only
    fi
    "$_stage_build_root/tests/install-emulators.sh"
    echo "== building (build/demo)"
    cmake -S "$_stage_build_root" -B "$_stage_build_root/build/demo" -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$_stage_build_root/build/demo" -j "$(nproc 2>/dev/null || echo 2)" \
        --target warden-webhook warden-controller warden-snapshot kube-sim backup-double >/dev/null
    export WARDEN_BINARY_DIR=$_stage_build_root/build/demo
}
