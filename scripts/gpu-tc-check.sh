#!/usr/bin/env bash
# gpu-tc-check.sh - the tensor-core GEMM on an NVIDIA GPU: sweep, conformance, sanitizers, benchmark.
#
# Usage: [BUILD_DIR=build-dev] [OUT=out] [PHASES="check ctest sanitize bench"] bash scripts/gpu-tc-check.sh
# BUILD_DIR is a configured -DBACKEND=cuda build (static or shared) that already holds duet,
# the tests and duet-bench; this script builds lab/gemm_lowp_check.c against it, then runs
#   check     the quick sweep of every dtype combination x layouts x ops x odd shapes
#   ctest     the conformance suite's quick programs (test_gemm_lowp among them)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck, initcheck over the sweep
#   hopper    test_gemm_lowp with every shape on the Hopper kernels (DUET_GEMM_HOPPER_ALL=1),
#             3xTF32 both ways (pre-split B; DUET_GEMM_X3_INKERNEL=1: split in the kernel)
#   sanitize-hopper  the four sanitizer tools over the sweep with DUET_GEMM_HOPPER_ALL=1
#   paths     test_gemm_lowp --quick down each path the planner can take for the suite's small
#             shapes: the small-problem rule off (DUET_GEMM_NO_SMALL=1: copies and the
#             swizzled kernel), no copies either (DUET_GEMM_NO_PACK=1: the register-staged
#             kernel AMD runs), the portable kernels only (DUET_GEMM_PORTABLE=1), and the
#             small tensor-core kernel ahead of every rule (DUET_GEMM_TC_SMALL=all: its cluster
#             split on sm_90), the compact small-problem kernel off (DUET_GEMM_TINY=0: the rules
#             behind it) and ahead of every rule up to cost 16 (DUET_GEMM_TINY=all)
#   bench     duet-bench --only gemm-lowp (CSV in $OUT)
# Logs go to $OUT; the last lines printed summarise each phase.
set -uo pipefail
BUILD_DIR=${BUILD_DIR:-build-dev}
OUT=${OUT:-out}
PHASES=${PHASES:-"check ctest sanitize bench"}
mkdir -p "$OUT"
summary=()
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv \
    | tee "$OUT/gpu.txt"

chk=$BUILD_DIR/gemm_lowp_check
if [ ! -x "$chk" ]; then
    if [ -f "$BUILD_DIR/libduet.a" ]; then
        nvcc -O2 -Iinclude lab/gemm_lowp_check.c "$BUILD_DIR/libduet.a" -lnvrtc -lm -o "$chk"
    else
        cc -O2 -std=c11 -Iinclude lab/gemm_lowp_check.c -L"$BUILD_DIR" \
            -Wl,-rpath,"$PWD/$BUILD_DIR" -lduet -lm -o "$chk"
    fi
fi

for phase in $PHASES; do
    case $phase in
    check)
        "$chk" 2>&1 | tee "$OUT/check.log" | tail -25
        summary+=("check: $(tail -1 "$OUT/check.log")")
        ;;
    ctest)
        ctest --test-dir "$BUILD_DIR" -L quick -j 8 --output-on-failure >"$OUT/ctest.log" 2>&1
        summary+=("ctest: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1)")
        grep -E "Failed|\*\*\*" "$OUT/ctest.log" | head -20
        ;;
    sanitize)
        for tool in memcheck racecheck synccheck initcheck; do
            compute-sanitizer --tool "$tool" --error-exitcode 9 "$chk" --quick \
                >"$OUT/sanitize-$tool.log" 2>&1
            summary+=("$tool: rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.log" | tail -1)")
        done
        ;;
    hopper)
        # The suite's small shapes through the Hopper (wgmma) kernels, 3xTF32 with B split by
        # its pre-pass and, second, by the kernel itself (the fallback without workspace).
        for mode in presplit inkernel; do
            extra=DUET_GEMM_X3_INKERNEL=0
            [ "$mode" = inkernel ] && extra=DUET_GEMM_X3_INKERNEL=1
            env DUET_GEMM_HOPPER_ALL=1 "$extra" "$BUILD_DIR/tests/test_gemm_lowp" \
                >"$OUT/hopper-$mode.log" 2>&1
            summary+=("hopper $mode: rc $? $(tail -1 "$OUT/hopper-$mode.log")")
        done
        ;;
    paths)
        for env_set in DUET_GEMM_NO_SMALL=1 "DUET_GEMM_NO_SMALL=1 DUET_GEMM_NO_PACK=1" \
            DUET_GEMM_PORTABLE=1 DUET_GEMM_TC_SMALL=all DUET_GEMM_TINY=0 DUET_GEMM_TINY=all; do
            name=$(echo "$env_set" | tr ' =' '_-')
            env $env_set "$BUILD_DIR/tests/test_gemm_lowp" --quick >"$OUT/paths-$name.log" 2>&1
            summary+=("paths $env_set: rc $? $(tail -1 "$OUT/paths-$name.log")")
        done
        ;;
    sanitize-hopper)
        for tool in memcheck racecheck synccheck initcheck; do
            DUET_GEMM_HOPPER_ALL=1 compute-sanitizer --tool "$tool" --error-exitcode 9 "$chk" \
                --quick >"$OUT/sanitize-hopper-$tool.log" 2>&1
            summary+=("hopper $tool: rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-hopper-$tool.log" | tail -1)")
        done
        ;;
    bench)
        "$BUILD_DIR/bench/duet-bench" --only gemm-lowp --reps "${REPS:-20}" \
            --out "$OUT/duet-bench-lowp.csv" >"$OUT/bench.log" 2>&1
        summary+=("bench: rc $? $(tail -1 "$OUT/bench.log")")
        grep -E "^gemm" "$OUT/bench.log" | cut -c1-160
        ;;
    esac
done
printf '%s\n' "${summary[@]}"
