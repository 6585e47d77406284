#!/usr/bin/env bash
# bench-gpu.sh - Release CUDA build for sm_90, then duet-bench; CSV and logs to $1 or $OUT.
#
#   scripts/bench-gpu.sh [OUTDIR] [duet-bench options...]
#
# OUTDIR defaults to $OUT (the device machine's result folder) or ./bench-out. The build goes
# to $BUILD_DIR (default build-bench/ in the repository). Exit status is duet-bench's.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$root/bench-out}"
if [[ $# -gt 0 && "$1" != -* ]]; then
    out="$1"
    shift
fi
build="${BUILD_DIR:-$root/build-bench}"
mkdir -p "$out"

{
    date -u '+%Y-%m-%dT%H:%M:%SZ'
    uname -a
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit \
            --format=csv || true
    fi
    nvcc --version 2>/dev/null | tail -n 2 || true
} >"$out/environment.txt" 2>&1

cmake -S "$root" -B "$build" -DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_BUILD_TYPE=Release 2>&1 | tee "$out/configure.log"
cmake --build "$build" -j16 --target duet-bench 2>&1 | tee "$out/build.log"

set +e
"$build/bench/duet-bench" --out "$out/duet-bench.csv" "$@" 2>&1 | tee "$out/duet-bench.log"
status=${PIPESTATUS[0]}
set -e
echo "duet-bench exit status $status; results in $out"
exit "$status"
