#!/bin/sh
# callgrind-overhead.sh - host instructions per call of tiny ops on the cpu backend (callgrind).
#
# Usage: lab/callgrind-overhead.sh BUILD_DIR [N]
#   BUILD_DIR: a cpu-backend build holding libduet.so (cmake -DBACKEND=cpu, target duet).
# Builds lab/call_count.c against it, runs each op N times (default 2000) under
# valgrind --tool=callgrind and prints, per call: the whole public call (inclusive Ir of
# duet_<op>), the backend's part (be_*), and the rest, which is the common layer's
# validation, handle lookups and planning. Deterministic, unlike timings on a shared host.
set -eu
build=$1
n=${2:-2000}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build=$(cd "$build" && pwd)
cc -O2 -g -I"$src/include" "$src/lab/call_count.c" -L"$build" -lduet \
    -Wl,-rpath,"$build" -o "$tmp/call_count"
printf '%-10s %10s %10s %10s\n' op "call Ir" "backend" "common"
for op in fill scale add add_same gemm transpose; do
    case $op in
    add_same) fn=duet_add ;;
    *) fn=duet_$op ;;
    esac
    # Two runs, N and 2N calls: the difference is N calls, without setup and teardown.
    for k in 1 2; do
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$k" \
            "$tmp/call_count" $op $((n * k)) >/dev/null 2>&1
        callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg.$k" >"$tmp/an.$k"
    done
    awk -v fn="$fn" -v n="$n" '
        function ir(s) { gsub(/,/, "", s); return s + 0 }
        FNR == 1 { f++ }
        $NF ~ /\[/ && $0 ~ (":" fn " \\[") { call[f] += ir($1) }
        $0 ~ /:be_[a-z0-9_]+ \[/ { be[f] += ir($1) }
        END {
            c = (call[2] - call[1]) / n; b = (be[2] - be[1]) / n
            printf "%-10s %10.0f %10.0f %10.0f\n", op, c, b, c - b
        }' op=$op "$tmp/an.1" "$tmp/an.2"
done
