#!/usr/bin/env bash
# splitk-gpu.sh - the split-K GEMM on a GPU: conformance tests, then duet-bench's GEMM table.
#
#   scripts/splitk-gpu.sh OUTDIR [BINDIR]
#
# BINDIR holds libduet.so*, the test programs and duet-bench of a Release CUDA build for this
# GPU (copied from a build tree); without it the script configures and builds one in
# build-splitk/ (-DCMAKE_CUDA_ARCHITECTURES=90, Release, -j16). Logs, the tests' output and the
# benchmark CSV go to OUTDIR. Exit status: the number of failed steps.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: splitk-gpu.sh OUTDIR [BINDIR]}"
bin="${2:-}"
mkdir -p "$out"
{
    date -u '+%Y-%m-%dT%H:%M:%SZ'
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit \
        --format=csv 2>&1 || true
    nvcc --version 2>/dev/null | tail -n 2 || true
} >"$out/environment.txt"

if [[ -z "$bin" ]]; then
    build="$root/build-splitk"
    cmake -S "$root" -B "$build" -DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_BUILD_TYPE=Release -DDUET_WERROR=ON >"$out/build.log" 2>&1 &&
        cmake --build "$build" -j16 >>"$out/build.log" 2>&1 || {
        tail -n 40 "$out/build.log"
        exit 1
    }
    bin="$out/bin"
    mkdir -p "$bin"
    cp -a "$build"/libduet.so* "$build"/tests/test_* "$build"/bench/duet-bench "$bin"/
fi
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

failed=0
run() { # name, then the command
    local name="$1"
    shift
    local t0=$SECONDS
    "$@" >"$out/$name.log" 2>&1
    local rc=$?
    printf '%-28s rc %d  %4ds\n' "$name" "$rc" $((SECONDS - t0)) | tee -a "$out/summary.txt"
    if [[ $rc -ne 0 && $rc -ne 77 ]]; then
        failed=$((failed + 1))
        tail -n 15 "$out/$name.log"
    fi
}
for t in test_split_rule test_api test_launch test_module test_threads; do
    [[ -x "$bin/$t" ]] && run "$t" "$bin/$t"
done
for t in test_gemm test_seeds test_transpose test_elementwise; do
    [[ -x "$bin/$t" ]] && run "${t}_quick" "$bin/$t" --quick
done
grep -h "split-K\|checks," "$out"/test_gemm_quick.log || true
run duet-bench "$bin/duet-bench" --only gemm --out "$out/duet-bench.csv"
grep -E "^gemm" "$out/duet-bench.log" | awk '{printf "%-4s %-18s %-10s %-40s %9s %8s %s %s %s\n",$2,$3,$4,$5,$6,$8,$10,$12,$13}'
exit "$failed"
