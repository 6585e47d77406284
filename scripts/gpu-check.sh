#!/usr/bin/env bash
# gpu-check.sh - on an NVIDIA GPU machine: build duet for CUDA, run the suite, large checks, sanitizers.
#
# Usage (from the repository root): scripts/gpu-check.sh [OUTDIR]     (default: $OUT, else ./gpu-check-out)
# Phases: build, ctest, the status table (tests/status_table.expected, line for line on cuda),
# large_check (lab/large_check.c), the four compute-sanitizer tools over every program of
# the quick suite and the seed examples (slowest, last). Writes into OUTDIR: summary.log (one
# line per phase, read this first), versions.log, build.log, ctest.log, status_table.log,
# large_check.log, sanitizers.log.
# Exit status: 0 when every phase passed.
#
# Knobs (environment):
#   BUILD_DIR            build tree                      (default /tmp/duet-gpu-check-build)
#   SKIP_BUILD           1: use BUILD_DIR as it is (a tree built elsewhere for this GPU)
#   JOBS                 parallel build jobs             (default 16)
#   CUDA_ARCHS           CMAKE_CUDA_ARCHITECTURES        (default 90: the H100/H200 the lead runs on)
#   CTEST_LABEL          run only tests with this label  (default: every test, the full suite)
#   CTEST_JOBS           tests at once on the one GPU    (default 1: timings and memory stay sane)
#   CTEST_TIMEOUT        seconds per test                (default: each test's own, 900)
#   SANITIZER_TOOLS      compute-sanitizer tools         (default "memcheck racecheck synccheck initcheck";
#                        "none" skips the phase)
#   SANITIZER_TIMEOUT    seconds per test and tool       (default 900)
#   SANITIZER_LABEL      ctest label regex of the programs run under the sanitizers
#                        (default "quick|examples": every test program, at its quick size)
#   SANITIZER_TESTS      regex of test names to narrow that to (default: none, all of them)
#   LARGE_CHECK          lab/large_check.c section: all, bandwidth, oom, transpose, inplace, gemm,
#                        none
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
CTEST_TIMEOUT=${CTEST_TIMEOUT:-}
SKIP_BUILD=${SKIP_BUILD:-0}
SANITIZER_TESTS=${SANITIZER_TESTS:-}
SANITIZER_LABEL=${SANITIZER_LABEL:-quick|examples}
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
if [ "$SKIP_BUILD" = 1 ]; then
    echo "SKIP_BUILD=1: using $BUILD_DIR as built" >"$OUTDIR/build.log"
    [ -f "$BUILD_DIR/CTestTestfile.cmake" ]
    rc=$?
    phase "build skipped (prebuilt tree $BUILD_DIR)" $rc
else
    {
        cmake -S "$SRC" -B "$BUILD_DIR" -DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS" \
            -DDUET_WERROR=ON -DCMAKE_BUILD_TYPE=Release &&
            cmake --build "$BUILD_DIR" -j "$JOBS"
    } >"$OUTDIR/build.log" 2>&1
    rc=$?
    phase "build (-DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS -DDUET_WERROR=ON, $((SECONDS - t0)) s)" $rc
fi
if [ $rc -ne 0 ]; then
    tail -40 "$OUTDIR/build.log"
    exit 1
fi

# ---- conformance suite -----------------------------------------------------------------------
t0=$SECONDS
ctest_args=(--output-on-failure -j "$CTEST_JOBS")
[ -n "$CTEST_LABEL" ] && ctest_args+=(-L "$CTEST_LABEL")
[ -n "$CTEST_TIMEOUT" ] && ctest_args+=(--timeout "$CTEST_TIMEOUT")
(cd "$BUILD_DIR" && ctest "${ctest_args[@]}") >"$OUTDIR/ctest.log" 2>&1
rc=$?
phase "ctest ${CTEST_LABEL:-full} ($((SECONDS - t0)) s): $(grep -E 'tests passed|tests failed' "$OUTDIR/ctest.log" | tail -1)" $rc
grep -E '\*\*\*(Failed|Timeout|Exception)|Not Run' "$OUTDIR/ctest.log" | head -20 | sed 's/^/      /' | tee -a "$SUMMARY"
skipped=$(grep -c '\*\*\*Skipped' "$OUTDIR/ctest.log")
[ "$skipped" -gt 0 ] && note "      $skipped tests skipped (exit 77: no device?)"

# ---- the status table: the same lines as on cpu --------------------------------------------
t0=$SECONDS
"$BUILD_DIR/tests/test_status_table" "$SRC/tests/status_table.expected" >"$OUTDIR/status_table.log" 2>&1
rc=$?
phase "status table on cuda ($((SECONDS - t0)) s): $(grep -E '^status table' "$OUTDIR/status_table.log" | tail -1)" $rc
[ $rc -ne 0 ] && grep -A2 -E '^line [0-9]+' "$OUTDIR/status_table.log" | head -30 | sed 's/^/      /' | tee -a "$SUMMARY"

# ---- large sizes, out of memory, bandwidth ---------------------------------------------------
if [ "$LARGE_CHECK" != "none" ]; then
    t0=$SECONDS
    lib_dir=$BUILD_DIR
    cc_flags=(-O2 -std=c11 -Wall -Wextra -I"$SRC/include")
    exe=$BUILD_DIR/large_check
    if ! cc "${cc_flags[@]}" -fopenmp "$SRC/lab/large_check.c" -L"$lib_dir" -Wl,-rpath,"$lib_dir" \
        -lduet -lm -o "$exe" >"$OUTDIR/large_check.log" 2>&1; then
        cc "${cc_flags[@]}" "$SRC/lab/large_check.c" -L"$lib_dir" -Wl,-rpath,"$lib_dir" \
            -lduet -lm -o "$exe" >>"$OUTDIR/large_check.log" 2>&1
    fi
    if [ -x "$exe" ]; then
        OMP_NUM_THREADS=${OMP_NUM_THREADS:-$JOBS} "$exe" "$LARGE_CHECK" 2>&1 | tee -a "$OUTDIR/large_check.log"
        rc=$?
    else
        rc=1
    fi
    if [ $rc -eq 77 ]; then
        note "SKIP  large_check: $(tail -1 "$OUTDIR/large_check.log")"
        status=1 # this script exists to exercise a GPU: a skip is not a pass
    else
        phase "large_check $LARGE_CHECK ($((SECONDS - t0)) s): $(tail -1 "$OUTDIR/large_check.log")" $rc
    fi
    grep -E 'GB/s|TFLOP' "$OUTDIR/large_check.log" | sed 's/^/      /' >>"$SUMMARY"
fi

# ---- sanitizers over every test program (quick sizes) --------------------------------------
# The registrations of SANITIZER_LABEL (every program, the sized ones at their quick size),
# with their arguments, as ctest knows them.
quick_cmds() {
    local filter=()
    [ -n "$SANITIZER_TESTS" ] && filter=(-R "$SANITIZER_TESTS")
    (cd "$BUILD_DIR" && ctest -L "$SANITIZER_LABEL" "${filter[@]}" --show-only=json-v1) 2>/dev/null | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin).get("tests", []):
    print(shlex.join(t["command"]))' 2>/dev/null ||
        (cd "$BUILD_DIR" && ctest -L "$SANITIZER_LABEL" "${filter[@]}" -N -V | sed -n 's/^[0-9]*: Test command: //p')
}
# A run fails the phase when the tool reports errors or gives no summary (a time-out, a crash);
# a test that fails its own checks is ctest's business, reported above.
if [ "$SANITIZER_TOOLS" != "none" ] && command -v compute-sanitizer >/dev/null; then
    : >"$OUTDIR/sanitizers.log"
    mapfile -t cmds < <(quick_cmds)
    # duet's own kernels on small odd shapes, every algorithm: quick even under racecheck.
    [ -x "$BUILD_DIR/large_check" ] && cmds+=("$BUILD_DIR/large_check small")
    one_log=$(mktemp)
    for tool in $SANITIZER_TOOLS; do
        t0=$SECONDS
        failed=0
        ran=0
        extra=()
        [ "$tool" = memcheck ] && extra=(--leak-check full)
        for cmd in "${cmds[@]}"; do
            eval "set -- $cmd"
            api=()
            # test_module provokes runtime API errors on purpose (a missing kernel name) and the
            # parameter-count query probes one index past the last parameter: neither is a
            # memory error, and duet turns both into statuses that the test checks.
            case "$1" in */test_module) api=(--report-api-errors no) ;; esac
            DUET_TEST_QUICK=1 timeout "$SANITIZER_TIMEOUT" compute-sanitizer --tool "$tool" \
                "${extra[@]}" "${api[@]}" --error-exitcode=99 "$@" >"$one_log" 2>&1
            rc=$?
            { echo "=== $tool: $* (exit $rc)"; cat "$one_log"; } >>"$OUTDIR/sanitizers.log"
            ran=$((ran + 1))
            # memcheck, synccheck, initcheck: "ERROR SUMMARY: N errors";
            # racecheck: "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)".
            errors=$(grep -oE 'ERROR SUMMARY: [0-9]+|\([0-9]+ errors' "$one_log" | grep -oE '[0-9]+' | tail -1)
            if [ -z "$errors" ] || [ "$errors" -ne 0 ] || [ $rc -eq 99 ]; then
                failed=$((failed + 1))
                note "      $tool: ${errors:-no summary} errors (exit $rc): $*"
            fi
        done
        [ $failed -eq 0 ]
        phase "compute-sanitizer $tool over $ran programs ($((SECONDS - t0)) s)" $?
    done
    rm -f "$one_log"
elif [ "$SANITIZER_TOOLS" != "none" ]; then
    phase "compute-sanitizer (not found)" 1
fi

note "gpu-check: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
