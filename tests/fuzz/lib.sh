# Shared by tests/fuzz/gate.sh and tests/fuzz/campaign.sh (sourced, not run).
#
# Every target tests/fuzz/fuzz_<name>.c has a committed corpus in
# tests/fuzz/corpus/<name>/ (inputs that reach its code) and may have
# tests/fuzz/regress/<name>/: every input that ever crashed it, kept so that
# the crash cannot come back unnoticed.
fuzz_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fuzz_build=${FUZZ_BUILD:-$fuzz_root/build/fuzz}
fuzz_jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}

# Configures and builds the libFuzzer targets with clang into $fuzz_build.
fuzz_build_all() {
    CC=clang cmake -S "$fuzz_root" -B "$fuzz_build" -DFUZZ=ON -DBUILD_TESTING=OFF \
        -DCMAKE_BUILD_TYPE=Debug -DWERROR=ON >/dev/null
    cmake --build "$fuzz_build" -j "$fuzz_jobs" >/dev/null
}

# The names of the targets asked for ($@), or of every target; an unknown name fails.
fuzz_targets() {
    local src name
    if [ $# -eq 0 ]; then
        for src in "$fuzz_root"/tests/fuzz/fuzz_*.c; do
            name=$(basename "$src" .c)
            echo "${name#fuzz_}"
        done
        return 0
    fi
    for name in "$@"; do
        name=${name#fuzz_}
        if [ ! -f "$fuzz_root/tests/fuzz/fuzz_$name.c" ]; then
            echo "unknown fuzz target: $name (tests/fuzz/fuzz_$name.c does not exist)" >&2
            return 1
        fi
        echo "$name"
    done
}

# The binary of target $1; fails when it was not built.
fuzz_bin() {
    local bin=$fuzz_build/tests/fuzz/fuzz_$1
    if [ ! -x "$bin" ]; then
        echo "fuzz target $1: $bin was not built" >&2
        return 1
    fi
    echo "$bin"
}

# The committed inputs of target $1, one path a line: its corpus, then its regressions.
fuzz_inputs() {
    local d
    for d in "$fuzz_root/tests/fuzz/corpus/$1" "$fuzz_root/tests/fuzz/regress/$1"; do
        [ -d "$d" ] && find "$d" -type f | LC_ALL=C sort
    done
    return 0
}

# Copies the committed inputs of target $1 into directory $2 (created), each named by
# the SHA-1 of its content as libFuzzer names what it adds.
fuzz_seed_dir() {
    local f
    mkdir -p "$2"
    while IFS= read -r f; do
        cp "$f" "$2/$(sha1sum <"$f" | cut -c1-40)"
    done < <(fuzz_inputs "$1")
}

# The executions libFuzzer reports in log $1 (-print_final_stats=1).
fuzz_execs() {
    grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$1" | grep -o '[0-9]*$' || echo 0
}
