#!/usr/bin/env bash
# transpose_inplace_lab.sh - builds and runs lab/transpose_inplace_lab.cu, each variant in a
# process of its own, into OUTDIR (lab.csv, lab.log, ptxas.txt, lab-table.txt).
#   lab/transpose_inplace_lab.sh OUTDIR [extra lab arguments, e.g. --reps 50]
set -u
out=${1:?usage: $0 OUTDIR [lab arguments]}
shift
cd "$(dirname "$0")/.."
mkdir -p "$out" build-lab
bin=build-lab/transpose_inplace_lab
nvcc -std=c++17 -O3 -arch=sm_90 -Ikernels -Isrc -Isrc/common -Iinclude -Ilab -Xptxas -v \
    lab/transpose_inplace_lab.cu -o "$bin" 2> "$out/ptxas.txt" || {
    echo "build failed (see $out/ptxas.txt)"; tail -20 "$out/ptxas.txt"; exit 1; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv \
    > "$out/gpu.txt" 2>&1 || true
echo "elem,n,kernel,ms,gbs,copy_gbs,vs_copy,status" > "$out/lab.csv"
"$bin" --list > "$out/variants.txt" || exit 1
status=0
while IFS= read -r v; do
    # One process per variant: a fault or a hang in one cannot stop the others.
    timeout 300 "$bin" --only "$v" --csv "$out/lab.csv" "$@" 2>&1 | tee -a "$out/lab.log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ]; then
        status=1
        if ! grep -q "^${v%%:*},[0-9]*,${v#*:}," "$out/lab.csv" 2>/dev/null; then
            echo "${v%%:*},,${v#*:},0,0,0,0,FAIL exit $rc" >> "$out/lab.csv"
            echo "${v%%:*} B  ${v#*:}: FAIL (exit $rc, no result)" | tee -a "$out/lab.log"
        fi
    fi
done < "$out/variants.txt"
# The table: one line per variant, best ratio to copy first within each element size.
{
    printf '%-5s %-20s %9s %8s %8s %8s  %s\n' elem kernel ms GB/s copy "x copy" status
    tail -n +2 "$out/lab.csv" | sort -t, -k1,1n -k7,7gr |
        awk -F, '{printf "%-5s %-20s %9s %8s %8s %8s  %s\n", $1, $3, $4, $5, $6, $7, $8}'
} | tee "$out/lab-table.txt"
exit $status
