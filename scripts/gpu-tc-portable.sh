#!/usr/bin/env bash
# gpu-tc-portable.sh - the portable (mma.sync) tensor-core GEMM alone on an NVIDIA GPU: build, check, time.
#
# Usage: OUT=dir [VARIANTS="base"] [PHASES="test check bench sass"] bash scripts/gpu-tc-portable.sh
# Builds build-gpu (sm_90, Release, -DDUET_WERROR=ON; duet-bench, test_gemm_lowp) and, for each
# extra variant NAME=FLAGS in VARIANTS (e.g. "wide=-DTC_BN_WIDE=256"), build-gpu-NAME with those
# CUDA flags (duet-bench only). Every run sets DUET_GEMM_PORTABLE=1 (no Hopper path). Phases:
#   test   test_gemm_lowp --quick        check  lab/gemm_lowp_check.c (the sweep)
#   bench  duet-bench --only gemm-lowp --reps 10 for the base build and each variant
#   ncu    Nsight Compute sections of the first portable kernel of duet-bench --quick
#   sass   ptxas resources and the SASS of the bf16 swizzled kernel (A and B k-major)
# BENCH_ARGS: more duet-bench arguments (e.g. --quick).
set -uo pipefail
OUT=${OUT:-out}
PHASES=${PHASES:-"test check bench sass"}
VARIANTS=${VARIANTS:-}
mkdir -p "$OUT"
export DUET_GEMM_PORTABLE=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
cfg="-DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DDUET_WERROR=ON"
t0=$(date +%s)
{ cmake -S . -B build-gpu $cfg && cmake --build build-gpu -j12 --target duet-bench test_gemm_lowp; } \
    >"$OUT/build.log" 2>&1 &
for v in $VARIANTS; do
    name=${v%%=*} flags=${v#*=}
    { cmake -S . -B "build-gpu-$name" $cfg "-DCMAKE_CUDA_FLAGS=$flags" &&
        cmake --build "build-gpu-$name" -j6 --target duet-bench; } >"$OUT/build-$name.log" 2>&1 &
done
wait
echo "build: $(( $(date +%s) - t0 )) s"
grep -E "warning|error" "$OUT"/build*.log | head -20
[ -x build-gpu/bench/duet-bench ] || { tail -30 "$OUT/build.log"; exit 1; }
for phase in $PHASES; do
    t0=$(date +%s)
    case $phase in
    test) timeout 120 ./build-gpu/tests/test_gemm_lowp --quick >"$OUT/test.log" 2>&1
        echo "test_gemm_lowp --quick: rc $? $(tail -1 "$OUT/test.log")" ;;
    check)
        cc -O2 -std=c11 -Iinclude lab/gemm_lowp_check.c -Lbuild-gpu -Wl,-rpath,"$PWD/build-gpu" \
            -lduet -lm -o build-gpu/gemm_lowp_check &&
            timeout 150 ./build-gpu/gemm_lowp_check >"$OUT/check.log" 2>&1
        echo "gemm_lowp_check: rc $? $(tail -1 "$OUT/check.log")" ;;
    bench)
        for b in build-gpu $(for v in $VARIANTS; do echo "build-gpu-${v%%=*}"; done); do
            timeout 150 "$b/bench/duet-bench" --only gemm-lowp --reps 10 ${BENCH_ARGS:-} --out "$OUT/$b.csv" \
                >"$OUT/$b.bench.log" 2>&1
            echo "== $b: rc $?"
            grep -E "^gemm" "$OUT/$b.bench.log" | cut -c1-150
        done ;;
    ncu)
        timeout 120 ncu --clock-control none -k regex:gemm_tcs?_kernel -c 1 --import-source no \
            --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
            --section Occupancy --section SchedulerStats --section WarpStateStats \
            --section InstructionStats --section SourceCounters \
            ./build-gpu/bench/duet-bench --quick --only gemm-lowp --reps 1 >"$OUT/ncu.txt" 2>&1
        echo "ncu: rc $?"; grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|Issue Slots Busy|No Eligible|Achieved Occupancy|Registers Per|Warp Cycles Per Issued" "$OUT/ncu.txt" | head -20 ;;
    sass)
        lib=$(ls build-gpu/libduet.so* build-gpu/libduet.a 2>/dev/null | head -1)
        cuobjdump -res-usage "$lib" 2>/dev/null | grep -A1 -E 'gemm_tcs?_kernel' >"$OUT/res.txt"
        cuobjdump -sass -fun '_Z15gemm_tcs_kernelILi1ELi128ELi128ELi3ELi0ELi0EEv7tc_args' \
            "$lib" >"$OUT/sass-bf16.txt" 2>&1
        echo "sass: $(grep -c HMMA "$OUT/sass-bf16.txt") HMMA, $(grep -c LDSM "$OUT/sass-bf16.txt") LDSM" ;;
    esac
    echo "[$phase $(( $(date +%s) - t0 )) s]"
done
