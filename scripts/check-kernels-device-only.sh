#!/usr/bin/env bash
# check-kernels-device-only.sh - fails when kernels/ includes src/ or names the host state.
#
# Usage: scripts/check-kernels-device-only.sh [DIR]       (default: the repository's kernels)
#        scripts/check-kernels-device-only.sh --self-test (plants violations and legitimate code
#                                                          in a scratch tree, checks the verdicts)
# kernels/ is device code shared by CUDA and HIP: kernels, device functions, the argument structs
# the kernels take, constexpr and __host__ __device__ helpers, the compat headers. Launchers and
# host planning live in src/gpu/ (README.md, "Layout"), which includes kernels/, never the other
# way round. Each finding is printed as file:line: text; the exit status is 1 when there is any,
# else 0. Flagged in every C, C++, CUDA and HIP file under DIR:
#   include  an #include of a header of src/: a quoted path starting with common/, gpu/, cuda/ or
#            hip/ that is not a file beside the including one, or any include (quoted or <>) that
#            names a file of src/ or src/common/ (both are include directories of the library);
#            <hip/hip_runtime.h> and other system headers are not files of src/ and pass;
#   state    the library's host state and error reporting by name, comments included:
#            dt_context, duet_status, dt_fail, dt_workspace_reserve, dt_gemm_tuning.
set -euo pipefail

STATE_NAMES='dt_context|duet_status|dt_fail|dt_workspace_reserve|dt_gemm_tuning'
STATE_RE="(^|[^A-Za-z0-9_])(${STATE_NAMES})([^A-Za-z0-9_]|\$)"

# Prints every finding for the kernels directory $1 of the tree rooted at $2; returns 1 when
# there is one.
scan() {
    local dir=$1 root=$2 found=0 file line text path kind out
    while IFS= read -r file; do
        while IFS=: read -r line text; do
            if [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
                path=${BASH_REMATCH[1]}
                kind=quoted
            elif [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
                path=${BASH_REMATCH[1]}
                kind=angle
            else
                continue
            fi
            # A quoted include is looked up beside the including file first.
            if [ "$kind" = quoted ] && [ -f "$(dirname "$file")/$path" ]; then continue; fi
            if { [ "$kind" = quoted ] && [[ $path =~ ^(common|gpu|cuda|hip)/ ]]; } ||
                [ -f "$root/src/$path" ] || [ -f "$root/src/common/$path" ]; then
                printf '%s:%s:%s\n' "$file" "$line" "$text"
                found=1
            fi
        done < <(grep -nE '^[[:space:]]*#[[:space:]]*include' "$file" || true)
        out=$(grep -nE "$STATE_RE" "$file" || true)
        if [ -n "$out" ]; then
            printf '%s\n' "$out" | sed "s|^|$file:|"
            found=1
        fi
    done < <(find "$dir" -type f \( -name '*.h' -o -name '*.cuh' -o -name '*.cu' -o -name '*.hip' \
        -o -name '*.inc' -o -name '*.c' -o -name '*.cpp' -o -name '*.hpp' \) | sort)
    return $found
}

self_test() {
    local root rc=0 n
    root=$(mktemp -d)
    trap 'rm -rf "$root"' RETURN
    mkdir -p "$root/kernels" "$root/src/common" "$root/src/gpu" "$root/src/cuda" \
        "$root/include/duet"
    touch "$root/src/common/internal.h" "$root/src/common/tuning.h" "$root/src/cuda/gemm_x.h" \
        "$root/src/gpu/launch_util.h" "$root/include/duet/duet.h" "$root/kernels/compat.h"
    # Each line of bad.cuh must be flagged; nothing in good.cuh may be.
    cat >"$root/kernels/bad.cuh" <<'EOF'
#include "common/internal.h"
#include "gpu/launch_util.h"
#  include "cuda/gemm_x.h"
#include "hip/runtime_hip.h"
#include "internal.h"
#include <tuning.h>
static int launch(dt_context *ctx);
/* returns a duet_status */
    if (bad) return dt_fail(st, "f", "x");
    dt_workspace_reserve(ctx, s, ws, n, "f", &p);
const dt_gemm_tuning *row;
EOF
    cat >"$root/kernels/good.cuh" <<'EOF'
#include "compat.h"
#include "duet/duet.h"
#include <hip/hip_runtime.h>
#include <cuda/std/cstdint>
#include <stdint.h>
/* the launcher in src/gpu/launch_util.h fills these from dt_view and dt_gemm */
struct duet_statusless { int my_dt_context_free; int duet_status_bits; };
EOF
    n=$(scan "$root/kernels/bad.cuh" "$root" | wc -l) || true
    if [ "$n" -ne "$(wc -l <"$root/kernels/bad.cuh")" ]; then
        echo "self-test: $n of $(wc -l <"$root/kernels/bad.cuh") planted lines flagged:"
        scan "$root/kernels/bad.cuh" "$root" || true
        rc=1
    fi
    if ! scan "$root/kernels/good.cuh" "$root" >/dev/null; then
        echo "self-test: legitimate device code flagged:"
        scan "$root/kernels/good.cuh" "$root" || true
        rc=1
    fi
    [ "$rc" -eq 0 ] && echo "self-test: the planted violations are flagged, the device code is not"
    return $rc
}

if [ "${1:-}" = "--self-test" ]; then
    self_test
    exit $?
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DIR=${1:-kernels}
if scan "$DIR" "$PWD"; then
    echo "check-kernels-device-only: $DIR includes nothing of src/ and names no host state"
else
    echo "check-kernels-device-only: the lines above put host code in $DIR; launchers," \
        "planning and error reporting belong in src/gpu/ (README.md, \"Layout\")" >&2
    exit 1
fi
