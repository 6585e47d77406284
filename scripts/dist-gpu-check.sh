#!/usr/bin/env bash
# dist-gpu-check.sh - on an NVIDIA machine with MPI: duet_dist's tests on the GPU(s) and its scaling.
#
# Usage (from the repository root): scripts/dist-gpu-check.sh [OUTDIR]   (default: $OUT, else
# ./dist-gpu-check-out). Needs nvcc, an MPI (Debian: libopenmpi-dev openmpi-bin) and a GPU.
# Phases:
#   build    -DBACKEND=cuda -DDUET_DIST=ON, the targets test_dist_gemm and dist-bench
#   shared   tests/dist with 4 ranks (grids 1x4, 2x2, 4x1) and 1 rank, all on GPU 0
#            (CUDA_VISIBLE_DEVICES=0: several processes share one GPU, panels staged in host memory)
#            and, where duet_dist was built with NCCL, the same with the NCCL transport (--nccl;
#            several ranks on one GPU is not a configuration NCCL supports, so that run has 1 rank)
#   multi    with N >= 2 GPUs: tests/dist with N ranks, one rank per GPU (rank r takes GPU r % N),
#            host-staged, on device buffers (where MPI takes them) and (when built) NCCL
#   scaling  dist-bench, C = A * B of SCALING_N^2 f64 and bf16 (f32 C), on 1, 2, 4, ... GPUs up to N
#            (one rank per GPU), for each transport built, printing each time and the efficiency
#            T(1) / (p * T(p)) of linear scaling; with one GPU only the 1-GPU baseline runs
# Writes into OUTDIR: summary.log (one line per phase and the scaling table; read this first),
# build.log, shared.log, multi.log, scaling.log. Exit status 0 when every phase passed.
#
# Knobs (environment):
#   BUILD_DIR    build tree                      (default /tmp/duet-dist-gpu-build)
#   SKIP_BUILD   1: use BUILD_DIR as it is
#   JOBS         parallel build jobs             (default 16)
#   CUDA_ARCHS   CMAKE_CUDA_ARCHITECTURES        (default 90)
#   SCALING_N    matrix order of the timing runs (default 32768; f64 needs 3 * 8 * N^2 / p bytes
#                per GPU: 26 GB at p = 1)
#   BLOCK        block size of the timing runs   (default 1024)
#   ITERS        timed iterations (median)       (default 3)
#   MPIEXEC      the MPI launcher                (default mpiexec)
#   WIDTHS       panel widths to try beside the rule's at p >= 2 (DUET_DIST_PANEL_WIDTH; e.g.
#                "8192 32768"; default none)
set -u
set -o pipefail

OUTDIR=${1:-${OUT:-dist-gpu-check-out}}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
SRC=$(pwd)
BUILD_DIR=${BUILD_DIR:-/tmp/duet-dist-gpu-build}
SKIP_BUILD=${SKIP_BUILD:-0}
JOBS=${JOBS:-16}
CUDA_ARCHS=${CUDA_ARCHS:-90}
SCALING_N=${SCALING_N:-32768}
BLOCK=${BLOCK:-1024}
ITERS=${ITERS:-3}
MPIEXEC=${MPIEXEC:-mpiexec}
WIDTHS=${WIDTHS:-}
SUMMARY=$OUTDIR/summary.log
: >"$SUMMARY"
status=0

note() { echo "$*" | tee -a "$SUMMARY"; }
phase() { # phase NAME RC
    if [ "$2" -eq 0 ]; then note "PASS  $1"; else note "FAIL  $1 (exit $2)"; status=1; fi
}

if [ ! -f "$SRC/include/duet/duet_dist.h" ]; then
    echo "dist-gpu-check: run from the repository root" >&2
    exit 2
fi

# Open MPI: may run as root in containers, oversubscribes when ranks outnumber cores, and the
# one-copy shared-memory path needs ptrace rights containers often lack. MPICH ignores these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
MPI_FLAGS=()
WIDTH_FLAGS=() # Open MPI passes an exported variable to the ranks only when told; MPICH always
if "$MPIEXEC" --version 2>&1 | grep -q -E "Open MPI|OpenRTE"; then
    MPI_FLAGS+=(--oversubscribe --bind-to none)
    WIDTH_FLAGS+=(-x DUET_DIST_PANEL_WIDTH)
fi

NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
note "dist-gpu-check: $NGPU GPU(s); $("$MPIEXEC" --version 2>&1 | head -n1)"
if [ "$NGPU" -lt 1 ]; then
    note "FAIL  no GPU (nvidia-smi -L lists none)"
    exit 1
fi

if [ "$SKIP_BUILD" != 1 ]; then
    {
        cmake -S "$SRC" -B "$BUILD_DIR" -DBACKEND=cuda -DDUET_DIST=ON \
            -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS" &&
            cmake --build "$BUILD_DIR" -j "$JOBS" --target test_dist_gemm dist-bench
    } >"$OUTDIR/build.log" 2>&1
    phase build $?
    [ "$status" -eq 0 ] || exit 1
fi
TEST=$BUILD_DIR/tests/dist/test_dist_gemm
BENCH=$BUILD_DIR/bench/dist-bench

# ---- several processes sharing GPU 0 ------------------------------------------------------
{
    CUDA_VISIBLE_DEVICES=0 timeout 600 "$MPIEXEC" -np 4 "${MPI_FLAGS[@]}" "$TEST" --mpi-host &&
        CUDA_VISIBLE_DEVICES=0 timeout 300 "$MPIEXEC" -np 1 "${MPI_FLAGS[@]}" "$TEST" --mpi-host
} >"$OUTDIR/shared.log" 2>&1
phase "shared: tests/dist, 4 ranks and 1 rank on GPU 0, host-staged MPI" $?
TRANSPORTS=(mpi-host)

# MPI on device buffers: test_dist_gemm --mpi-device exits 77 where MPI does not take CUDA
# memory (MPIX_Query_cuda_support).
CUDA_VISIBLE_DEVICES=0 timeout 300 "$MPIEXEC" -np 1 "${MPI_FLAGS[@]}" "$TEST" --mpi-device \
    >>"$OUTDIR/shared.log" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
    note "SKIP  mpi-device: this MPI does not take device memory"
else
    phase "mpi-device: tests/dist, 1 rank, MPI on device buffers" $rc
    TRANSPORTS+=(mpi-device)
fi

# The NCCL transport: test_dist_gemm --nccl exits 77 where duet_dist has no NCCL.
CUDA_VISIBLE_DEVICES=0 timeout 300 "$MPIEXEC" -np 1 "${MPI_FLAGS[@]}" "$TEST" --nccl \
    >>"$OUTDIR/shared.log" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
    note "SKIP  nccl: duet_dist built without NCCL"
else
    phase "nccl: tests/dist, 1 rank, NCCL transport" $rc
    TRANSPORTS+=(nccl)
fi

# ---- one rank per GPU ---------------------------------------------------------------------
if [ "$NGPU" -ge 2 ]; then
    : >"$OUTDIR/multi.log"
    for tr in "${TRANSPORTS[@]}"; do
        flag=("--$tr")
        timeout 600 "$MPIEXEC" -np "$NGPU" "${MPI_FLAGS[@]}" "$TEST" "${flag[@]}" \
            >>"$OUTDIR/multi.log" 2>&1
        phase "multi: tests/dist, $NGPU ranks, one per GPU, $tr" $?
    done
else
    note "SKIP  multi: one GPU only"
fi

# ---- scaling ------------------------------------------------------------------------------
: >"$OUTDIR/scaling.log"
note "scaling: C = A * B, n $SCALING_N, block $BLOCK, median of $ITERS (efficiency = T1 / (p * Tp), and against one duet_gemm per rank of its share)"
for tr in "${TRANSPORTS[@]}"; do
    flag=(--transport "$tr")
    for dt in f64 bf16; do
        t1=""
        for p in 1 2 4 8; do
            [ "$p" -le "$NGPU" ] || break
            line=$(timeout 900 "$MPIEXEC" -np "$p" "${MPI_FLAGS[@]}" "$BENCH" --dtype "$dt" \
                --n "$SCALING_N" --block "$BLOCK" --iters "$ITERS" "${flag[@]}" 2>&1 |
                tee -a "$OUTDIR/scaling.log" | grep '^dist-bench:')
            rc=$?
            if [ $rc -ne 0 ] || [ -z "$line" ]; then
                phase "scaling $tr $dt p=$p" 1
                continue
            fi
            t=$(echo "$line" | sed -n 's/.* time_s \([0-9.]*\).*/\1/p')
            tf=$(echo "$line" | sed -n 's/.* tflops \([0-9.]*\).*/\1/p')
            [ -n "$t1" ] || t1=$t
            eff=$(awk -v a="$t1" -v b="$t" -v p="$p" 'BEGIN { printf "%.1f", 100 * a / (p * b) }')
            # Against p devices at one device's duet_gemm speed (dist-bench's baseline).
            eg=$(echo "$line" | sed -n 's/.* efficiency \([0-9.]*\).*/\1/p')
            eg=$(awk -v e="${eg:-0}" 'BEGIN { printf "%.1f", 100 * e }')
            note "  $tr  $dt  gpus $p  time ${t} s  ${tf} TFLOP/s  efficiency ${eff}% of its 1-GPU run, ${eg}% of p x duet_gemm"
            [ "$p" -ge 2 ] || continue
            for w in $WIDTHS; do
                line=$(DUET_DIST_PANEL_WIDTH=$w timeout 900 "$MPIEXEC" -np "$p" "${MPI_FLAGS[@]}" \
                    "${WIDTH_FLAGS[@]}" "$BENCH" --dtype "$dt" --n "$SCALING_N" \
                    --block "$BLOCK" --iters "$ITERS" "${flag[@]}" 2>&1 |
                    tee -a "$OUTDIR/scaling.log" | grep '^dist-bench:')
                eg=$(echo "$line" | sed -n 's/.* efficiency \([0-9.]*\).*/\1/p')
                if [ -z "$eg" ]; then
                    phase "scaling $tr $dt p=$p width $w" 1
                    continue
                fi
                eg=$(awk -v e="$eg" 'BEGIN { printf "%.1f", 100 * e }')
                note "  $tr  $dt  gpus $p  panel width $w: ${eg}% of p x duet_gemm"
            done
        done
    done
done
[ "$NGPU" -ge 2 ] || note "  (one GPU: scaling at 2 and 4 GPUs not measured)"

note "dist-gpu-check: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
