#!/usr/bin/env bash
# check-source-comments.sh - fails when the library's sources carry experiment history: dates, before -> after timings.
#
# Usage: scripts/check-source-comments.sh [PATH...]    (default: src kernels include)
#        scripts/check-source-comments.sh --self-test  (plants violations and legitimate code in a
#                                                       scratch directory and checks the verdicts)
# A comment in src/, kernels/ or include/ states a rule and its reason; how the rule was found
# (the day of a run, "X -> Y us") belongs in the commit message and docs/performance.md. Each
# finding is printed as file:line: text; the exit status is 1 when there is any, else 0.
#
# Flagged in the C, C++, CUDA and HIP sources (*.c *.h *.cu *.cuh *.hip *.inc *.cpp *.hpp):
#   date     20YY-MM-DD anywhere on a line (a file name holding a date included);
#   timing   a number, optionally with a unit, then -> (or the arrow character), then a
#            number and optionally a unit that end the word ("858 -> 969", "0.90x -> 0.93x",
#            "100 -> 86 us"; not "16 -> 32-bit"), or -> then a number with a time unit or x.
#            Neither can be code: a member name after -> never starts with a digit, so
#            `p->next`, `a[1]->b` and `x1->y` are never flagged.
set -euo pipefail

DATE_RE='(^|[^0-9])20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([^0-9]|$)'
UNIT='(ns|us|ms|s|x|%|GB/s|TB/s|TFLOP/s|GFLOP/s)'
TIMING_RE="[0-9][0-9.]*( *${UNIT})? *(->|→) *[0-9][0-9.]*( *${UNIT})?([^A-Za-z0-9_.-]|$)|(->|→) *[0-9][0-9.]* *(ns|us|ms|x)([^A-Za-z0-9_]|$)"

# Prints every finding under the given paths; returns 1 when there is one.
scan() {
    local found=0 out
    out=$(grep -rnIE --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
        --include='*.hip' --include='*.inc' --include='*.cpp' --include='*.hpp' \
        -e "$DATE_RE" -e "$TIMING_RE" "$@" || true)
    if [ -n "$out" ]; then
        printf '%s\n' "$out"
        found=1
    fi
    return $found
}

self_test() {
    local dir rc=0 n
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' RETURN
    # Each line of bad.c must be flagged; nothing in good.c may be.
    cat >"$dir/bad.c" <<'EOF'
/* Measured on the H100 (2026-11-24): the strip wins. */
 * docs/performance.md: 1023 x 1025 x 1027 (858 -> 969) 100 -> 86 us, 1024 x 1028 x 1024 83 -> 77,
 * H100 f32 4095 x 4097 x 4093 0.90x -> 0.93x cuBLAS
 * 2048^3: 3.20 ms -> 3.08 ms
// the strip lost (before) -> 146 us
/* 640^3 44.6 → 23.9 */
EOF
    cat >"$dir/good.c" <<'EOF'
struct node { struct node *next; int v2; };
static int walk(struct node *p, struct node **a, struct node *x1)
{
    int s = p->next->v2 + a[1]->v2 + x1->v2; /* 16 -> 32-bit widening of f16 -> f32 */
    s += (p->v2 > 2) ? 1 : 0; /* i8 -> i32, m x k -> k x m, 2026 rows */
    return s; /* version 2.0-rc1, 12-15 stages, 1-2 us */
}
EOF
    n=$(scan "$dir/bad.c" | wc -l) || true
    if [ "$n" -ne "$(wc -l <"$dir/bad.c")" ]; then
        echo "self-test: $n of $(wc -l <"$dir/bad.c") planted lines flagged:"
        scan "$dir/bad.c" || true
        rc=1
    fi
    if ! scan "$dir/good.c" >/dev/null; then
        echo "self-test: legitimate code flagged:"
        scan "$dir/good.c" || true
        rc=1
    fi
    [ "$rc" -eq 0 ] && echo "self-test: the planted violations are flagged, the code is not"
    return $rc
}

if [ "${1:-}" = "--self-test" ]; then
    self_test
    exit $?
fi

if [ $# -eq 0 ]; then
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    set -- src kernels include
fi
if scan "$@"; then
    echo "check-source-comments: no dates or before -> after timings in $*"
else
    echo "check-source-comments: the lines above carry experiment history (a date or a before -> after" \
        "timing); state the rule and its reason instead, and keep the numbers in the commit message" \
        "or docs/performance.md" >&2
    exit 1
fi
