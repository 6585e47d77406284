#!/usr/bin/env bash
# gpu-check.sh - on a machine with an NVIDIA GPU: build duet for CUDA, run the suite, the sanitizers and the large checks.
#
# Usage (from the repository root): scripts/gpu-check.sh [OUTDIR]     (default: $OUT, else ./gpu-check-out)
# Writes into OUTDIR: summary.log (one line per phase, read this first), versions.log, build.log,
# ctest.log, sanitizers.log, large_check.log. Exit status: 0 when every phase passed.
#
# Knobs (environment):
#   BUILD_DIR            build tree                      (default /tmp/duet-gpu-check-build)
#   JOBS                 parallel build jobs             (default 16)
#   CUDA_ARCHS           CMAKE_CUDA_ARCHITECTURES        (default 90: the H100/H200 the lead runs on)
#   CTEST_LABEL          run only tests with this label  (default: every test, the full suite)
#   CTEST_JOBS           tests at once on the one GPU    (default 1: timings and memory stay sane)
#   SANITIZER_TOOLS      compute-sanitizer tools         (default "memcheck racecheck synccheck initcheck";
#                        "none" skips the phase)
#   SANITIZER_TIMEOUT    seconds per test and tool       (default 900)
#   LARGE_CHECK          scripts/large_check.c section: all, bandwidth, oom, transpose, gemm, none
#                        (default all)
set -u
set -o pipefail

OUTDIR=${1:-${OUT:-gpu-check-out}}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
SRC=$(pwd)
BUILD_DIR=${BUILD_DIR:-/tmp/duet-gpu-check-build}
JOBS=${JOBS:-16}
CUDA_ARCHS=${CUDA_ARCHS:-90}
CTEST_LABEL=${CTEST_LABEL:-}
CTEST_JOBS=${CTEST_JOBS:-1}
SANITIZER_TOOLS=${SANITIZER_TOOLS:-memcheck racecheck synccheck initcheck}
SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-900}
LARGE_CHECK=${LARGE_CHECK:-all}
SUMMARY=$OUTDIR/summary.log
: >"$SUMMARY"
status=0

note() { echo "$*" | tee -a "$SUMMARY"; }
phase() { # phase NAME RC
    if [ "$2" -eq 0 ]; then note "PASS  $1"; else note "FAIL  $1 (exit $2)"; status=1; fi
}

if [ ! -f "$SRC/include/duet/duet.h" ]; then
    echo "gpu-check: run from the repository root" >&2
    exit 2
fi
export PATH=/usr/local/cuda/bin:$PATH
note "gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) in $SRC, build $BUILD_DIR"

# ---- versions --------------------------------------------------------------------------------
{
    nvidia-smi || echo "nvidia-smi failed"
    echo
    nvcc --version || echo "nvcc not found"
    echo
    cmake --version | head -1
    command -v compute-sanitizer && compute-sanitizer --version | head -2
} >"$OUTDIR/versions.log" 2>&1
note "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
note "nvcc: $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1)"

# ---- build -----------------------------------------------------------------------------------
t0=$SECONDS
{
    cmake -S "$SRC" -B "$BUILD_DIR" -DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS" \
        -DDUET_WERROR=ON -DCMAKE_BUILD_TYPE=Release &&
        cmake --build "$BUILD_DIR" -j "$JOBS"
} >"$OUTDIR/build.log" 2>&1
rc=$?
phase "build (-DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS -DDUET_WERROR=ON, $((SECONDS - t0)) s)" $rc
if [ $rc -ne 0 ]; then
    tail -40 "$OUTDIR/build.log"
    exit 1
fi

# ---- conformance suite -----------------------------------------------------------------------
t0=$SECONDS
label_args=()
[ -n "$CTEST_LABEL" ] && label_args=(-L "$CTEST_LABEL")
(cd "$BUILD_DIR" && ctest --output-on-failure -j "$CTEST_JOBS" "${label_args[@]}") >"$OUTDIR/ctest.log" 2>&1
rc=$?
phase "ctest ${CTEST_LABEL:-full} ($((SECONDS - t0)) s): $(grep -E 'tests passed|tests failed' "$OUTDIR/ctest.log" | tail -1)" $rc
grep -E '\*\*\*|Failed|Not Run|Skipped' "$OUTDIR/ctest.log" | grep -v '^ *$' | head -20 | sed 's/^/      /' | tee -a "$SUMMARY"

# ---- sanitizers over the quick tests ---------------------------------------------------------
# The quick registrations, with their arguments, as ctest knows them.
quick_cmds() {
    (cd "$BUILD_DIR" && ctest -L quick --show-only=json-v1) 2>/dev/null | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin).get("tests", []):
    print(shlex.join(t["command"]))' 2>/dev/null ||
        (cd "$BUILD_DIR" && ctest -L quick -N -V | sed -n 's/^[0-9]*: Test command: //p')
}
if [ "$SANITIZER_TOOLS" != "none" ] && command -v compute-sanitizer >/dev/null; then
    : >"$OUTDIR/sanitizers.log"
    mapfile -t cmds < <(quick_cmds)
    for tool in $SANITIZER_TOOLS; do
        t0=$SECONDS
        failed=0
        ran=0
        extra=()
        [ "$tool" = memcheck ] && extra=(--leak-check full)
        for cmd in "${cmds[@]}"; do
            eval "set -- $cmd"
            echo "=== $tool: $*" >>"$OUTDIR/sanitizers.log"
            DUET_TEST_QUICK=1 timeout "$SANITIZER_TIMEOUT" compute-sanitizer --tool "$tool" "${extra[@]}" \
                --error-exitcode=1 "$@" >>"$OUTDIR/sanitizers.log" 2>&1
            rc=$?
            ran=$((ran + 1))
            if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
                failed=$((failed + 1))
                note "      $tool failed (exit $rc): $*"
            fi
        done
        [ $failed -eq 0 ]
        phase "compute-sanitizer $tool over $ran quick tests ($((SECONDS - t0)) s)" $?
    done
elif [ "$SANITIZER_TOOLS" != "none" ]; then
    phase "compute-sanitizer (not found)" 1
fi

# ---- large sizes, out of memory, bandwidth ---------------------------------------------------
if [ "$LARGE_CHECK" != "none" ]; then
    t0=$SECONDS
    lib_dir=$BUILD_DIR
    cc_flags=(-O2 -std=c11 -Wall -Wextra -I"$SRC/include")
    exe=$BUILD_DIR/large_check
    if ! cc "${cc_flags[@]}" -fopenmp "$SRC/scripts/large_check.c" -L"$lib_dir" -Wl,-rpath,"$lib_dir" \
        -lduet -lm -o "$exe" >"$OUTDIR/large_check.log" 2>&1; then
        cc "${cc_flags[@]}" "$SRC/scripts/large_check.c" -L"$lib_dir" -Wl,-rpath,"$lib_dir" \
            -lduet -lm -o "$exe" >>"$OUTDIR/large_check.log" 2>&1
    fi
    if [ -x "$exe" ]; then
        OMP_NUM_THREADS=${OMP_NUM_THREADS:-$JOBS} "$exe" "$LARGE_CHECK" 2>&1 | tee -a "$OUTDIR/large_check.log"
        rc=$?
    else
        rc=1
    fi
    phase "large_check $LARGE_CHECK ($((SECONDS - t0)) s): $(tail -1 "$OUTDIR/large_check.log")" $rc
    grep -E 'GB/s|TFLOP' "$OUTDIR/large_check.log" | sed 's/^/      /' >>"$SUMMARY"
fi

note "gpu-check: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
