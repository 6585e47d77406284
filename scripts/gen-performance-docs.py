#!/usr/bin/env python3
"""gen-performance-docs.py - writes docs/performance.md and its plots (docs/img/*.svg) from the
measurement files in docs/results/.

    python3 scripts/gen-performance-docs.py            # regenerate the page and the plots
    python3 scripts/gen-performance-docs.py --check    # exit 1 if a generated file would change

Python 3 standard library only (the SVG is written by hand). The output depends on the files
in docs/results/ and on this script only (no dates, no environment), so running it twice gives
identical files and CI can check that the page matches its data.

Which file describes which part of the current library is data: SOURCES below, one entry per
table, with the date, the machine, the commit and the command that produced the file. A new
measurement of the current library replaces a file name there (and the old file leaves
docs/results/). An optional GEMM sweep, docs/results/gemm-sweep-*.csv (`duet-bench --sweep`),
adds a section of its own.
"""

import csv
import glob
import io
import math
import os
import re
import statistics
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RESULTS = os.path.join(ROOT, "docs", "results")
IMG = os.path.join(ROOT, "docs", "img")
PAGE = os.path.join(ROOT, "docs", "performance.md")
SCRIPT = "scripts/gen-performance-docs.py"

H100 = "NVIDIA H100 80GB HBM3 (132 SMs, 700 W), driver 580.159.04, CUDA 13.0, cuBLAS 13"


def gpu_build(flags="-DDUET_WERROR=ON"):
    return ("cmake -S . -B build-gpu -DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES=90 "
            "-DCMAKE_BUILD_TYPE=Release %s && cmake --build build-gpu -j16 --target duet-bench"
            % flags).replace("  ", " ")


CPU_HOST = ("AMD EPYC (Zen 5, AVX-512), 2 cores of a shared VM, Debian 12, gcc, "
            "OpenBLAS 0.3.21 (Debian's libopenblas-dev, pthread build)")

# One entry per table of the page. "files": the measurement files (several runs of one build
# are shown side by side). "changed": code of the op that changed after the run, and why it
# does not or may move the numbers.
SOURCES = {
    "gemm": {
        "files": ["duet-bench-gemm-dmma-tma-many-2026-11-25-h100.csv",
                  "duet-bench-gemm-dmma-tma-many-run2-2026-11-25-h100.csv"],
        "date": "2026-11-25", "machine": H100, "commit": "fa71068",
        "build": gpu_build(),
        "command": "./build-gpu/bench/duet-bench --only gemm --reps 10 --out <csv>",
        "changed": None,
    },
    "lowp": {
        "files": ["duet-bench-gemm-lowp-3xtf32-2026-11-24-h100.csv"],
        "date": "2026-11-24", "machine": H100, "commit": "0afb6b6",
        "build": gpu_build("-DBUILD_SHARED_LIBS=OFF -DDUET_WERROR=ON"),
        "command": "./build-gpu/bench/duet-bench --only gemm-lowp --reps 10 --out <csv>",
        "changed": ("The Hopper kernels are unchanged since this run. The K-major copies that "
                    "the `_packed` rows (operands whose rows are not 16-byte aligned) make "
                    "before the GEMM were reworked afterwards (one packing helper, 82954c8; "
                    "copies through the transpose kernels, fdbaf83), so those rows may have "
                    "moved a little."),
    },
    "lowp-portable": {
        "files": ["duet-bench-gemm-lowp-portable-swizzled-2026-11-24-h100.csv"],
        "date": "2026-11-24", "machine": H100, "commit": "3cc1f06",
        "build": gpu_build(),
        "command": ("DUET_GEMM_PORTABLE=1 ./build-gpu/bench/duet-bench --only gemm-lowp "
                    "--reps 10 --out <csv>"),
        "changed": ("Since this run the portable kernels changed only in formatting and in "
                    "when they opt in to their shared memory (once per device); the packing "
                    "of unaligned operands changed as for the Hopper kernels above."),
    },
    "transpose": {
        "files": ["duet-bench-transpose-2026-11-21-h100.csv"],
        "date": "2026-11-21", "machine": H100, "commit": "9d0e4dc",
        "build": gpu_build(""),
        "command": "./build-gpu/bench/duet-bench --only transpose --out <csv>",
        "changed": ("Later commits to kernels/transpose.cuh share launch helpers without a "
                    "change of behaviour (73bdb19) and add an element-wise mode to the row "
                    "copy for rows off 16-byte boundaries (b48e604, fdbaf83), which a "
                    "transpose does not take."),
    },
    "inplace": {
        "files": ["duet-bench-transpose-inplace-folded-2026-11-24-h100.csv"],
        "date": "2026-11-24", "machine": H100, "commit": "3cc1f06",
        "build": gpu_build(),
        "command": "./build-gpu/bench/duet-bench --only transpose-inplace --out <csv>",
        "changed": ("One later commit to the in-place kernels (3b7ea46) shares a loop between "
                    "two kernels; the sm_90 PTX is unchanged."),
    },
    "elementwise": {
        "files": ["large-check-2026-11-21-h100.log"],
        "date": "2026-11-21", "machine": H100, "commit": "9d0e4dc",
        "build": ("cmake -S . -B build-gpu -DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES=90 "
                  "-DDUET_WERROR=ON -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j2"),
        "command": "SKIP_BUILD=1 BUILD_DIR=$PWD/build-gpu bash scripts/gpu-check.sh <outdir>",
        "changed": ("The elementwise kernels are unchanged since this run; one later commit "
                    "(95d5540) changed how the host names the kernel in the launch info."),
    },
    "cpu": {
        "files": ["duet-bench-cpu-transpose-1b-tiles-2026-11-24.log"],
        "blocks": r"^## set 2 after\.",
        "date": "2026-11-24", "machine": CPU_HOST, "commit": "833291c",
        "build": ("cmake -S . -B build-cpu -DBACKEND=cpu -DCMAKE_BUILD_TYPE=Release && "
                  "cmake --build build-cpu -j2 --target duet-bench"),
        "command": "OMP_NUM_THREADS=2 ./build-cpu/bench/duet-bench --only cpu --reps 9",
        "changed": ("Later cpu commits move code into a shared helper (94597b0) and change "
                    "which workspace share a call from inside an OpenMP team takes (9830779); "
                    "neither changes the work of these calls."),
    },
    "cpu-inplace": {
        "files": ["duet-bench-cpu-transpose-inplace-2026-11-24.log"],
        "blocks": None,
        "date": "2026-11-24", "machine": CPU_HOST, "commit": "f736928",
        "build": ("cmake -S . -B build-cpu -DBACKEND=cpu -DCMAKE_BUILD_TYPE=Release && "
                  "cmake --build build-cpu -j2 --target duet-bench"),
        "command": "./build-cpu/bench/duet-bench --only transpose-inplace --reps 9",
        "changed": "Later cpu commits move code into a shared helper (94597b0) only.",
    },
}

SOURCES["narrow"] = {
    "files": ["gemm-narrow-probe-2026-11-29-h200.csv"],
    "date": "2026-11-29", "machine": ("NVIDIA H200 (132 SMs), driver 580.159.04, CUDA 13.0, "
                                      "cuBLAS 13"),
    "commit": "41e08a5",
    "build": ("cmake -S . -B build -DBACKEND=cuda -DCMAKE_CUDA_ARCHITECTURES=90 "
              "-DCMAKE_BUILD_TYPE=Release -DDUET_WERROR=ON -DDUET_BUILD_LAB=ON && "
              "cmake --build build -j16 --target gemm_narrow_probe"),
    "command": "./build/lab/gemm_narrow_probe 20 full",
    "changed": None}

SOURCES["epilogue"] = {
    "files": ["gemm-epilogue-2026-11-29-h200.csv", "gemm-epilogue-2026-11-29-h200-run2.csv"],
    "date": "2026-11-29", "machine": ("NVIDIA H200 (132 SMs), driver 580.159.04, CUDA 13.0, "
                                      "cuBLAS 13"),
    "commit": "b9d55c4",
    "build": gpu_build(),
    "command": "./build-gpu/bench/duet-bench --only gemm-epilogue --reps 20 --csv <csv>",
    "changed": None}

SOURCES["fp8"] = {
    "files": ["gemm-fp8-2026-11-30-h200.csv"],
    "date": "2026-11-30", "machine": ("NVIDIA H200 (132 SMs), driver 580.159.04, CUDA 13.0, "
                                      "cuBLAS 13.1"),
    "commit": "63ef106",
    "build": gpu_build(),
    "command": "./build-gpu/bench/duet-bench --only gemm-fp8 --reps 20 --csv <csv>",
    "changed": None}

# What each sweep file measured, where that differs from the library of the page's date.
SWEEP_NOTES = {
    "gemm-sweep-2026-11-29-h200.csv": (
        "300 problems a dtype, seed 1, on an H200 (driver 580.159.04, CUDA 13.0, cuBLAS 13), "
        "every dtype at b6fc5b3's planner and kernels, `duet-bench --sweep 300 --seed 1 "
        "--sweep-ms 4 --sweep-dtypes <dtype> --csv <csv>`, one dtype a run, all in one session; "
        "the TF32 rows re-measured at 41e08a5 (its narrow TF32 rule; the other dtypes' plans and "
        "kernels are unchanged by it, their split reductions take one more, unused argument). "
        "i8>i32: cuBLAS ran 80 of the 300 (it refuses the others' layouts and alignments; duet's "
        "results are checked on the host for all 300). A seed draws each dtype's problems alone, "
        "so the rows are the same problems in every run."),
}

# What the page says about parts of the library that no file of docs/results/ describes.
NOT_MEASURED = [
    ("Call overhead (host time per small op)",
     "./build-gpu/bench/duet-bench --overhead",
     "The last run (2026-11-24) predates changes to the common layer's argument checks and "
     "to the GEMM planner, so it no longer describes the library."),
    ("FP8 GEMM outside Hopper (A and B decoded to 16 bits), with an 8-bit D (an f32 pass and a "
     "conversion), with e5m2 operands, or with C, a residual or aux in the epilogue",
     "./build/tests/test_fp8 on a GPU for correctness",
     "Correct on the cpu backend and on an H200 (tests/test_fp8.c, 62,700 checks, "
     "2026-11-30); only the e4m3 cases of the FP8 section are timed."),
    ("duet_gemm_ex epilogues outside the Hopper kernel (a second pass) and duet_convert",
     "./build/bench/duet-bench --only gemm-epilogue",
     "Correct on every backend (tests/test_gemm_epilogue.c, tests/test_fp8.c); only the "
     "fused Hopper case above is timed."),
]

COLORS = {
    "f32": "#1f77b4", "f64": "#d62728", "i32": "#7f7f7f", "bf16": "#2ca02c", "f16": "#9467bd",
    "tf32": "#ff7f0e", "3xtf32": "#8c564b", "i8": "#e377c2", "naive": "#bbbbbb",
    "tiled32": "#999999", "tiled_padded": "#666666", "auto": "#1f77b4", "cublas": "#ff7f0e",
    "in place": "#d62728", "out of place": "#1f77b4",
}
EXTRA_COLORS = ["#17becf", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39"]


# ---- reading measurement files ----------------------------------------------------------------

def device_name(meta):
    """'NVIDIA H100 80GB HBM3 (sm_90)' -> 'NVIDIA H100 80GB HBM3, sm_90'."""
    d = meta.get("device") or "GPU"
    return re.sub(r"\s*\((sm_\w+|gfx\w+)\)$", r", \1", d)


def shape(size):
    """'4096x4096x4096/Bt' -> '4096 x 4096 x 4096 /Bt'."""
    dims, sep, tag = size.partition("/")
    return dims.replace("x", " x ") + (" /" + tag if sep else "")


def rel(path):
    return os.path.relpath(path, ROOT).replace(os.sep, "/")


def num(text):
    """A float from a field such as '0.71491', '1.00x' or '-' (None)."""
    if text is None:
        return None
    t = text.strip().rstrip("x")
    try:
        v = float(t)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def read_bench_csv(name):
    """duet-bench's CSV: '#' comment lines, a header line, then rows. Returns (meta, rows)."""
    path = os.path.join(RESULTS, name)
    with open(path, newline="", encoding="utf-8") as f:
        text = f.read()
    comments = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("#")]
    body = "\n".join(ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#"))
    rows = []
    for r in csv.DictReader(io.StringIO(body)):
        rows.append({(k or "").strip().lower(): (v or "").strip() for k, v in r.items()})
    meta = {"device": None, "median_of": None}
    for c in comments:
        m = re.search(r"device (.+?)(?:, median of (\d+))?$", c)
        if m:
            meta["device"] = m.group(1)
            meta["median_of"] = m.group(2)
    return meta, rows


BENCH_COLUMNS = ["op", "type", "size", "algorithm", "kernel", "ms", "rate", "unit", "vs_vend",
                 "vs_copy", "check"]
BENCH_OPS = {"copy", "gemm", "transpose", "transp_inpl", "scale", "add", "fill", "overhead"}


def read_bench_text(name, block_pattern=None):
    """duet-bench's console table (columns split by spaces, the last one may hold spaces),
    as saved in a log. With block_pattern, only rows after a line matching it and before the
    next '## ' line count. Returns a list of runs, each a list of row dicts."""
    path = os.path.join(RESULTS, name)
    runs, cur, inside = [], None, block_pattern is None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("## "):
                inside = block_pattern is None or re.search(block_pattern, line) is not None
                cur = None
                continue
            if line.startswith("duet-bench: backend") or (block_pattern is None and cur is None):
                cur = []
                runs.append(cur)
                if line.startswith("duet-bench: backend"):
                    continue
            if not inside:
                continue
            parts = line.split(None, len(BENCH_COLUMNS) - 1)
            if len(parts) < len(BENCH_COLUMNS) - 1 or parts[0] not in BENCH_OPS:
                continue
            if block_pattern is None and parts[0] == "copy" and parts[1] == "u8" and cur:
                cur = []  # a new run of a log without headers starts with the 1 GiB copy
                runs.append(cur)
            cur.append(dict(zip(BENCH_COLUMNS, parts)))
    return [r for r in runs if r]


def read_sweep_csv(path):
    """A GEMM sweep: one row per problem with duet's and the vendor's time. Column names are
    matched loosely (duet_us or duet_ms, vendor_us, cublas_us, ...). The ratio is computed as
    vendor time / duet time where both times are present, else taken from a 'ratio' column."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = [ln for ln in f.read().splitlines() if ln.strip() and not ln.startswith("#")]
    out = []
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        r = {(k or "").strip().lower(): (v or "").strip() for k, v in r.items()}

        def pick(*names):
            for n in names:
                if n in r and r[n] != "":
                    return r[n]
            return None

        def time_us(prefixes):
            for p in prefixes:
                for suffix, scale in (("_us", 1.0), ("_ms", 1e3), ("_s", 1e6)):
                    v = num(pick(p + suffix))
                    if v is not None:
                        return v * scale
            return None

        dtype = pick("dtype", "type")
        m, n, k = (num(pick(x)) for x in ("m", "n", "k"))
        if dtype is None or None in (m, n, k):
            continue
        batch = num(pick("batch", "batch_count")) or 1.0
        duet = time_us(["duet", "duet_time"])
        vend = time_us(["vendor", "cublas", "hipblas", "rocblas", "vendor_time"])
        ratio = vend / duet if duet and vend else num(pick("ratio", "ratio_vendor"))
        if ratio is None:
            continue
        out.append({"dtype": dtype, "m": m, "n": n, "k": k, "batch": batch, "ratio": ratio,
                    "transa": pick("transa", "op_a") or "", "transb": pick("transb", "op_b") or "",
                    "check": pick("check") or ""})
    return out


def parse_size(size):
    """'4096x4096x4096/Bt' -> ((4096, 4096, 4096), 'Bt')."""
    dims, _, tag = size.partition("/")
    return tuple(int(x) for x in dims.split("x") if x.strip().isdigit()), tag


def gemm_pairs(rows):
    """GEMM rows paired per (type, size): duet's AUTO row and the reference row beside it."""
    ref, duet, order = {}, {}, []
    for r in rows:
        if r.get("op") != "gemm":
            continue
        key = (r["type"], r["size"])
        if key not in order:
            order.append(key)
        if r.get("algorithm") == "auto":
            duet[key] = r
        elif r.get("algorithm") in ("cublas", "hipblas", "rocblas", "imad-peak", "openblas"):
            ref[key] = r
    return [(key, duet[key], ref.get(key)) for key in order if key in duet]


def ratio_of(duet_row, ref_row):
    """Reference time / duet time (> 1: duet faster), from the times where both are there."""
    d, v = num(duet_row.get("ms")), num(ref_row.get("ms")) if ref_row else None
    if d and v:
        return v / d
    return num(duet_row.get("ratio_vendor") or duet_row.get("vs_vend"))


def dtype_label(t):
    """'bf16>f32' -> 'bf16 > f32'; 'f32>f32+tf32' -> 'f32 TF32'; 'f32' -> 'f32'."""
    if "+" in t:
        base, _, mode = t.partition("+")
        return "%s %s" % (base.split(">")[0], mode.upper().replace("XTF", "xTF"))
    return t.replace(">", " > ")


def series_of(t):
    """The colour family of a GEMM type."""
    if "+3xtf32" in t:
        return "3xtf32"
    if "+tf32" in t:
        return "tf32"
    return t.split(">")[0]


# ---- SVG --------------------------------------------------------------------------------------

def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def f(v):
    """Coordinates with one decimal, '-0.0' folded, so output is stable."""
    s = "%.1f" % v
    return "0.0" if s == "-0.0" else s


SUP = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


class Svg:
    W, H = 760, 420
    L, R, T, B = 72, 170, 48, 64

    def __init__(self, title):
        self.parts = []
        self.title = title

    def add(self, s):
        self.parts.append(s)

    def text(self, x, y, s, size=12, anchor="start", weight="normal", rotate=None, color="#222"):
        tr = ' transform="rotate(%d %s %s)"' % (rotate, f(x), f(y)) if rotate else ""
        self.add('<text x="%s" y="%s" font-size="%d" text-anchor="%s" font-weight="%s" '
                 'fill="%s"%s>%s</text>' % (f(x), f(y), size, anchor, weight, color, tr, esc(s)))

    def line(self, x1, y1, x2, y2, color="#ccc", width=1, dash=None):
        d = ' stroke-dasharray="%s"' % dash if dash else ""
        self.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/>'
                 % (f(x1), f(y1), f(x2), f(y2), color, width, d))

    def render(self):
        head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
                'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">\n'
                '<rect width="100%%" height="100%%" fill="#ffffff"/>\n'
                % (self.W, self.H, self.W, self.H))
        title = ('<text x="%s" y="26" font-size="15" font-weight="bold" fill="#222">%s</text>\n'
                 % (f(self.L), esc(self.title)))
        return head + title + "\n".join(self.parts) + "\n</svg>\n"

    def legend(self, entries, hollow_note=None):
        x, y = self.W - self.R + 18, self.T + 8
        for label, color, kind in entries:
            if kind == "ref":
                self.line(x, y - 4, x + 14, y - 4, color, 1.5, "6 4")
            elif kind == "bar":
                self.add('<rect x="%s" y="%s" width="12" height="12" fill="%s"/>'
                         % (f(x), f(y - 10), color))
            else:
                self.add('<circle cx="%s" cy="%s" r="5" fill="%s" stroke="%s" stroke-width="1.5"/>'
                         % (f(x + 6), f(y - 4), color, color))
            self.text(x + 20, y, label, 12)
            y += 20
        if hollow_note:
            y += 6
            self.add('<circle cx="%s" cy="%s" r="5" fill="#ffffff" stroke="#444" '
                     'stroke-width="1.5"/>' % (f(x + 6), f(y - 4)))
            self.text(x + 20, y, hollow_note, 12)


def nice_ceiling(v):
    for step in (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0):
        if v / step <= 8:
            return math.ceil(v / step - 1e-9) * step, step
    return v, v / 5


def ratio_scatter(path, title, series, xlabel, ylabel, run_note=None):
    """series: list of (label, color, [(x, y, hollow)]) with x > 0 on a log axis."""
    svg = Svg(title)
    xs = [p[0] for _, _, pts in series for p in pts]
    ys = [p[1] for _, _, pts in series for p in pts]
    lo, hi = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)))
    if hi == lo:
        hi += 1
    ymax, ystep = nice_ceiling(max(max(ys) * 1.05, 1.1))
    ymin = 0.0
    pw, ph = svg.W - svg.L - svg.R, svg.H - svg.T - svg.B

    def px(x):
        return svg.L + (math.log10(x) - lo) / (hi - lo) * pw

    def py(y):
        return svg.T + ph - (y - ymin) / (ymax - ymin) * ph

    yv = ymin
    while yv <= ymax + 1e-9:
        svg.line(svg.L, py(yv), svg.L + pw, py(yv), "#e5e5e5")
        svg.text(svg.L - 8, py(yv) + 4, "%.2f" % yv, 11, "end")
        yv += ystep
    for e in range(lo, hi + 1):
        svg.line(px(10 ** e), svg.T, px(10 ** e), svg.T + ph, "#e5e5e5")
        svg.text(px(10 ** e), svg.T + ph + 18, "10" + str(e).translate(SUP), 11, "middle")
        for m in (2, 5):
            if e < hi:
                svg.line(px(m * 10 ** e), svg.T + ph, px(m * 10 ** e), svg.T + ph + 4, "#888")
    svg.line(svg.L, svg.T + ph, svg.L + pw, svg.T + ph, "#444")
    svg.line(svg.L, svg.T, svg.L, svg.T + ph, "#444")
    svg.line(svg.L, py(1.0), svg.L + pw, py(1.0), "#444", 1, "6 4")
    for label, color, pts in series:
        for x, y, hollow in pts:
            svg.add('<circle cx="%s" cy="%s" r="4.5" fill="%s" stroke="%s" stroke-width="1.5" '
                    'fill-opacity="0.85"/>' % (f(px(x)), f(py(y)), "#ffffff" if hollow else color,
                                               color))
    svg.text(svg.L + pw / 2, svg.H - 18, xlabel, 12, "middle")
    svg.text(18, svg.T + ph / 2, ylabel, 12, "middle", rotate=-90)
    svg.legend([(label, color, "dot") for label, color, _ in series] +
               [("parity (1.0)", "#444", "ref")], run_note)
    write_file(path, svg.render())


def bar_chart(path, title, groups, series, values, ylabel, ref_line=None, ref_label=None,
              ymax=None, xlabel=None):
    """values[(group, series)] = y (missing pairs leave a gap)."""
    svg = Svg(title)
    pw, ph = svg.W - svg.L - svg.R, svg.H - svg.T - svg.B
    top = max(values.values()) * 1.12
    if ref_line:
        top = max(top, ref_line * 1.1)
    ymax, ystep = nice_ceiling(ymax or top)

    def py(y):
        return svg.T + ph - y / ymax * ph

    yv = 0.0
    while yv <= ymax + 1e-9:
        svg.line(svg.L, py(yv), svg.L + pw, py(yv), "#e5e5e5")
        svg.text(svg.L - 8, py(yv) + 4, "%.2f" % yv, 11, "end")
        yv += ystep
    if ref_line:  # under the bars, so their value labels stay readable
        svg.line(svg.L, py(ref_line), svg.L + pw, py(ref_line), "#444", 1, "6 4")
    gw = pw / len(groups)
    bw = min(28.0, gw * 0.8 / len(series))
    for gi, g in enumerate(groups):
        x0 = svg.L + gi * gw + (gw - bw * len(series)) / 2
        for si, (sname, color) in enumerate(series):
            v = values.get((g, sname))
            if v is None:
                continue
            x = x0 + si * bw
            svg.add('<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>'
                    % (f(x + 1), f(py(v)), f(bw - 2), f(py(0) - py(v)), color))
            svg.text(x + bw / 2, py(v) - 4, "%.2f" % v, 9, "middle")
        for li, part in enumerate(g.split("\n")):
            svg.text(svg.L + gi * gw + gw / 2, svg.T + ph + 18 + 14 * li, part, 11, "middle")
    svg.line(svg.L, svg.T + ph, svg.L + pw, svg.T + ph, "#444")
    svg.line(svg.L, svg.T, svg.L, svg.T + ph, "#444")
    if xlabel:
        svg.text(svg.L + pw / 2, svg.H - 18, xlabel, 12, "middle")
    svg.text(18, svg.T + ph / 2, ylabel, 12, "middle", rotate=-90)
    svg.legend([(s, c, "bar") for s, c in series] +
               ([(ref_label, "#444", "ref")] if ref_line and ref_label else []))
    write_file(path, svg.render())


# ---- output -----------------------------------------------------------------------------------

WRITTEN = {}


def write_file(path, text):
    WRITTEN[path] = text


def fmt_ms(ms):
    if ms is None:
        return "-"
    return "%.1f us" % (ms * 1e3) if ms < 1 else "%.2f ms" % ms


def fmt_rate(v):
    if v is None:
        return "-"
    return "%.0f" % v if v >= 100 else "%.1f" % v


def fmt_ratio(v):
    if v is None:
        return "-"
    return "%.2f" % v


def md_table(header, rows, align):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def source_block(src, extra=None):
    files = ", ".join("[%s](results/%s)" % (n, n) for n in src["files"])
    lines = ["- Measured **%s** at commit `%s` on %s." % (src["date"], src["commit"],
                                                        src["machine"]),
             "- Build: `%s`" % src["build"],
             "- Command: `%s`" % src["command"],
             "- Data: %s" % files]
    if extra:
        lines.append("- " + extra)
    if src.get("changed"):
        lines.append("- Code changed since: " + src["changed"])
    return "\n".join(lines)


# ---- sections ---------------------------------------------------------------------------------

def gemm_section(md, headline):
    src = SOURCES["gemm"]
    runs = []
    meta = None
    for name in src["files"]:
        meta, rows = read_bench_csv(name)
        runs.append({key: (d, r) for key, d, r in gemm_pairs(rows)})
    first = runs[0]
    md.append("## GEMM: f32, f64, i32 (%s)\n" % device_name(meta))
    md.append(source_block(src, "Each file is one run (median of %s timed calls per row); "
                           "the tables show run 1's times and every run's ratio."
                           % (meta["median_of"] or "?")) + "\n")
    md.append("Ratio = cuBLAS time / duet time in the same run: **above 1, duet is faster**. "
              "cuBLAS is `cublasGemmEx` with the dtype's own compute type and no TF32. "
              "Row-major A (M x K), B (K x N), C (M x N).\n")
    md.append("![GEMM ratio to cuBLAS against problem size](img/gemm-ratio-h100.svg)\n")
    series = []
    for dtype in ("f32", "f64"):
        pts = []
        for ri, run in enumerate(runs):
            for (t, size), (d, r) in sorted(run.items(), key=lambda kv: parse_size(kv[0][1])[0]):
                if t != dtype or r is None:
                    continue
                dims, _ = parse_size(size)
                pts.append((dims[0] * dims[1] * dims[2], ratio_of(d, r), ri > 0))
        if pts:
            series.append((dtype, COLORS[dtype], pts))
    ratio_scatter(os.path.join(IMG, "gemm-ratio-h100.svg"),
                  "duet GEMM vs cuBLAS, H100 (every shape of the bench)", series,
                  "problem size m x n x k (log scale)", "cuBLAS time / duet time",
                  "run 2 (filled: run 1)" if len(runs) > 1 else None)
    for dtype in ("f32", "f64", "i32"):
        keys = [k for k in first if k[0] == dtype]
        if not keys:
            continue
        vs_peak = first[keys[0]][1] is not None and first[keys[0]][1]["algorithm"] == "imad-peak"
        rows = []
        for key in keys:
            d, r = first[key]
            ratios = " / ".join(fmt_ratio(ratio_of(*run[key])) if key in run else "-"
                                for run in runs)
            cells = [shape(key[1]), "`%s`" % d["kernel"], fmt_ms(num(d["ms"])),
                     fmt_rate(num(d["rate"]))]
            if not vs_peak:
                cells.append(fmt_ms(num(r["ms"])) if r else "-")
            rows.append(cells + [fmt_rate(num(r["rate"])) if r else "-", ratios])
            if key[1] in ("4096x4096x4096", "8192x8192x8192") and r is not None and not vs_peak:
                vals = [ratio_of(*run[key]) for run in runs if key in run]
                headline[(dtype, key[1].split("x")[0] + "^3")] = statistics.mean(vals)
        if vs_peak:
            md.append("### i32\n")
            md.append("cuBLAS has no i32 GEMM: the reference is the IMAD peak (SMs x 64 lanes "
                      "x 2 ops x clock), so the ratio is duet's share of that peak.\n")
            hdr = ["M x N x K", "duet kernel", "duet time", "duet TOPS", "IMAD peak TOPS",
                   "share of peak (%s)" % " / ".join("run %d" % (i + 1) for i in range(len(runs)))]
        else:
            md.append("### %s\n" % dtype)
            hdr = ["M x N x K", "duet kernel", "duet time", "duet TFLOP/s", "cuBLAS time",
                   "cuBLAS TFLOP/s",
                   "ratio (%s)" % " / ".join("run %d" % (i + 1) for i in range(len(runs)))]
        md.append(md_table(hdr, rows, "llrrrrr"[:len(hdr)]) + "\n")
        if not vs_peak:
            vals = [ratio_of(*first[k]) for k in keys if first[k][1] is not None]
            md.append("Run 1 over the %d %s shapes: median ratio %.2f, lowest %.2f (%s), "
                      "highest %.2f (%s).\n"
                      % (len(vals), dtype, statistics.median(vals), min(vals),
                         shape(keys[vals.index(min(vals))][1]), max(vals),
                         shape(keys[vals.index(max(vals))][1])))


def lowp_section(md, headline, key, title, img):
    src = SOURCES[key]
    meta, rows = read_bench_csv(src["files"][0])
    pairs = gemm_pairs(rows)
    md.append("## %s (%s)\n" % (title, device_name(meta)))
    md.append(source_block(src, "One run, median of %s timed calls per row."
                           % (meta["median_of"] or "?")) + "\n")
    md.append("Ratio = cuBLAS time / duet time (above 1, duet is faster). `/Bt`: B stored N x "
              "K (both operands K-contiguous), `/Bn`: B stored K x N. cuBLAS: `cublasGemmEx` "
              "with CUBLAS_COMPUTE_32F (f16, bf16), CUBLAS_COMPUTE_32F_FAST_TF32 (TF32), "
              "CUBLAS_COMPUTE_32I (i8, which cuBLAS takes as /Bt only); 3xTF32 is compared "
              "with cuBLAS's exact SGEMM, whose accuracy it matches.\n")
    if img:
        md.append("![%s ratio to cuBLAS](img/%s)\n" % (title, img))
    out = []
    bars, groups = {}, []
    for (t, size), d, r in pairs:
        out.append([dtype_label(t), shape(size), "`%s`" % d["kernel"],
                    fmt_ms(num(d["ms"])), fmt_rate(num(d["rate"])),
                    fmt_ms(num(r["ms"])) if r else "-", fmt_rate(num(r["rate"])) if r else "-",
                    fmt_ratio(ratio_of(d, r)) if r else "-"])
        dims, tag = parse_size(size)
        if r is not None and len(set(dims)) == 1 and tag in ("Bt", ""):
            label = dtype_label(t)
            if label not in groups:
                groups.append(label)
            bars[(label, "%d\u00b3" % dims[0])] = ratio_of(d, r)
            if headline is not None and t in ("bf16>f32", "f16>f32", "f32>f32+tf32",
                                              "f32>f32+3xtf32", "i8>i32"):
                headline[(dtype_label(t), "%d^3" % dims[0])] = ratio_of(d, r)
    md.append(md_table(["A, B > C", "M x N x K", "duet kernel", "duet time",
                        "duet TFLOP/s (TOPS)", "cuBLAS time", "cuBLAS TFLOP/s (TOPS)", "ratio"],
                       out, "lllrrrrr") + "\n")
    if img:
        sizes = sorted({s for _, s in bars}, key=lambda s: int(s.rstrip("\u00b3")))
        pal = ["#9ecae1", "#3182bd", "#08519c"]
        bar_chart(os.path.join(IMG, img), "%s vs cuBLAS, H100 (B stored N x K)" % title, groups,
                  [(s, pal[i % len(pal)]) for i, s in enumerate(sizes)], bars,
                  "cuBLAS time / duet time", 1.0, "parity")


ALGO_LABEL = {"naive": "naive", "tiled32": "tiled32", "tiled_padded": "tiled_padded",
              "auto": "AUTO", "cublas": "cuBLAS geam"}


def transpose_section(md):
    src = SOURCES["transpose"]
    meta, rows = read_bench_csv(src["files"][0])
    copy = [r for r in rows if r["op"] == "copy"]
    copy_rate = num(copy[0]["rate"]) if copy else None
    md.append("## Transpose, out of place (%s)\n" % device_name(meta))
    md.append(source_block(src, "One run, median of %s timed calls per row."
                           % (meta["median_of"] or "?")) + "\n")
    md.append("GB/s counts the bytes read plus the bytes written. \"of copy\" = the rate over "
              "that of a 1 GiB device copy in the same run (%s GB/s), the practical ceiling. "
              "\"vs cuBLAS\" = `cublasSgeam`/`cublasDgeam` time / duet AUTO time (cuBLAS has "
              "no 1- or 2-byte transpose). naive, tiled32 and tiled_padded are the teaching "
              "kernels (`DUET_ALGO_*`); AUTO is what a caller gets by default.\n"
              % fmt_rate(copy_rate))
    md.append("![Transpose rate as a share of a device copy](img/transpose-h100.svg)\n")
    table, bars, groups = [], {}, []
    algos = ["naive", "tiled32", "tiled_padded", "auto", "cublas"]
    by = {}
    for r in rows:
        if r["op"] == "transpose":
            by[(r["type"], r["size"], r["algorithm"])] = r
    shapes = []
    for r in rows:
        if r["op"] == "transpose" and (r["type"], r["size"]) not in shapes:
            shapes.append((r["type"], r["size"]))
    for t, size in shapes:
        cells = [t, shape(size)]
        for a in algos:
            r = by.get((t, size, a))
            cells.append(fmt_rate(num(r["rate"])) if r else "-")
        auto, ref = by.get((t, size, "auto")), by.get((t, size, "cublas"))
        cells.append(fmt_ratio(num(ref["ms"]) / num(auto["ms"])) if auto and ref else "-")
        cells.append(fmt_ratio(num(auto["rate"]) / copy_rate) if auto and copy_rate else "-")
        cells.append("`%s`" % auto["kernel"] if auto else "-")
        table.append(cells)
        if size.startswith("16384"):
            g = "%s elements" % t.replace("B", " bytes").replace("1 bytes", "1 byte")
            groups.append(g)
            for a in algos:
                r = by.get((t, size, a))
                if r and copy_rate:
                    bars[(g, a)] = num(r["rate"]) / copy_rate
    md.append(md_table(["element", "n x n", "naive", "tiled32", "tiled_padded", "AUTO",
                        "cuBLAS geam", "AUTO vs cuBLAS", "AUTO of copy", "AUTO kernel"],
                       table, "llrrrrrrrl") + "\n")
    bar_chart(os.path.join(IMG, "transpose-h100.svg"),
              "Transpose 16384 x 16384, H100: rate as a share of a device copy", groups,
              [(ALGO_LABEL[a], COLORS[a]) for a in algos],
              {(g, ALGO_LABEL[a]): v for (g, a), v in bars.items()},
              "GB/s / copy GB/s", 1.0, "device copy", ymax=1.2)


def inplace_section(md):
    src = SOURCES["inplace"]
    meta, rows = read_bench_csv(src["files"][0])
    md.append("## Transpose in place (%s)\n" % device_name(meta))
    md.append(source_block(src, "One run, median of %s timed calls per row."
                           % (meta["median_of"] or "?")) + "\n")
    md.append("\"of copy\" = time of a device copy of the same bytes in the same run / time of "
              "the transpose. The out-of-place AUTO transpose of the same matrix is shown "
              "beside it; in place needs no second matrix (a rectangle uses O(max(P, Q)) "
              "elements of workspace).\n")
    md.append("![In-place transpose as a share of a device copy](img/transpose-inplace-h100.svg)\n")
    shapes, by = [], {}
    for r in rows:
        if r["op"] in ("transpose", "transp_inpl", "copy") and "x" in r["size"]:
            key = (r["type"], r["size"])
            if key not in shapes:
                shapes.append(key)
            by[key + (r["op"],)] = r
    table, bars, groups = [], {}, []
    for t, size in shapes:
        c, o, i = (by.get((t, size, op)) for op in ("copy", "transpose", "transp_inpl"))
        if not i:
            continue

        def share(r):
            return num(c["ms"]) / num(r["ms"]) if c and r else None

        table.append([shape(size), t, fmt_rate(num(c["rate"])) if c else "-",
                      fmt_rate(num(o["rate"])) if o else "-", fmt_ratio(share(o)),
                      fmt_rate(num(i["rate"])), fmt_ratio(share(i)), "`%s`" % i["kernel"]])
        g = "%s\n%s" % (shape(size), t.replace("B", " bytes"))
        groups.append(g)
        if share(o) is not None:
            bars[(g, "out of place")] = share(o)
        bars[(g, "in place")] = share(i)
    md.append(md_table(["shape", "element", "copy GB/s", "out of place GB/s", "of copy",
                        "in place GB/s", "of copy", "in-place kernel (/launches)"],
                       table, "llrrrrrl") + "\n")
    bar_chart(os.path.join(IMG, "transpose-inplace-h100.svg"),
              "Transpose in place, H100: share of a device copy's rate", groups,
              [("out of place", COLORS["out of place"]), ("in place", COLORS["in place"])],
              bars, "copy time / transpose time", 1.0, "device copy", ymax=1.2)


def read_bandwidth_log(name):
    """large_check's bandwidth table: 'op size ms GB/s pct%' rows after a 'bandwidth' line."""
    rows, inside = [], False
    with open(os.path.join(RESULTS, name), encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("bandwidth"):
                inside = True
                continue
            if inside and line and not line.startswith(" "):
                break
            parts = line.split()
            if not inside or len(parts) < 5 or not parts[-1].endswith("%"):
                continue
            op, size = " ".join(parts[:-4]), parts[-4]
            rows.append({"op": op, "size": size, "ms": num(parts[-3]), "rate": num(parts[-2]),
                         "of_copy": num(parts[-1].rstrip("%")) / 100.0})
    return rows


def elementwise_section(md):
    src = SOURCES["elementwise"]
    rows = read_bandwidth_log(src["files"][0])
    md.append("## Elementwise ops (NVIDIA H100 80GB HBM3, sm_90)\n")
    md.append(source_block(src, "The bandwidth table of that run's `large_check`: median of 20 "
                           "after 3 warm-ups, hashed (non-constant) data.") + "\n")
    md.append("GB/s counts the bytes read plus the bytes written (scale: x = alpha x reads and "
              "writes x; add: c = alpha a + beta b reads two and writes one; fill only writes). "
              "\"of copy\" = the rate over that of a device-to-device copy of the same matrix "
              "in the same run. add and fill pass 1.0; the likely reason (not verified with "
              "counters) is that a copy reads as much as it writes, and a stream of more "
              "writes than reads, or of writes only, turns the memory bus around less often.\n")
    table = []
    for r in rows:
        m = re.match(r"(scale|add|fill)_auto_(\w+)$", r["op"])
        if m:
            table.append([m.group(1), m.group(2), shape(r["size"]), fmt_ms(r["ms"]),
                          fmt_rate(r["rate"]), "%.3f" % r["of_copy"]])
    md.append(md_table(["op", "dtype", "matrix", "time", "GB/s", "of copy"], table, "lllrrr")
              + "\n")


def cpu_section(md):
    src, src2 = SOURCES["cpu"], SOURCES["cpu-inplace"]
    runs = read_bench_text(src["files"][0], src["blocks"])
    runs2 = read_bench_text(src2["files"][0], src2["blocks"])
    md.append("## cpu backend (a 2-core host)\n")
    md.append(source_block(src, "%d runs of this build (the log's set 2, \"after\"); the "
                           "tables give each row's median over them." % len(runs)) + "\n")
    md.append("The host was a VM shared with other work, so single runs moved by up to 2x; "
              "medians over several runs are what holds. GEMM ratio = OpenBLAS time / duet "
              "time on the same threads (above 1, duet is faster); transpose \"of copy\" = copy "
              "time / transpose time for the same bytes.\n")

    def medians(runs, op):
        keys, vals = [], {}
        for run in runs:
            for r in run:
                if r["op"] != op:
                    continue
                k = (r["type"], r["size"], r["algorithm"])
                if k not in keys:
                    keys.append(k)
                vals.setdefault(k, []).append(r)
        out = {}
        for k in keys:
            rs = vals[k]
            out[k] = {"n": len(rs), "kernel": rs[0]["kernel"],
                      "ms": statistics.median(num(r["ms"]) for r in rs),
                      "rate": statistics.median(num(r["rate"]) for r in rs),
                      "vs_vend": (statistics.median(num(r["vs_vend"]) for r in rs)
                                  if num(rs[0]["vs_vend"]) is not None else None),
                      "vs_copy": (statistics.median(num(r["vs_copy"]) for r in rs)
                                  if num(rs[0]["vs_copy"]) is not None else None)}
        return keys, out

    keys, g = medians(runs, "gemm")
    table = []
    for t, size, a in keys:
        if a != "auto":
            continue
        ref = g.get((t, size, "openblas"))
        dims, _ = parse_size(size)
        flop = 2.0 * dims[0] * dims[1] * dims[2]

        def gflops(ms):
            return "%.0f" % (flop / (ms * 1e-3) / 1e9)

        table.append([t, shape(size), fmt_ms(g[(t, size, a)]["ms"]), gflops(g[(t, size, a)]["ms"]),
                      fmt_ms(ref["ms"]) if ref else "-", gflops(ref["ms"]) if ref else "-",
                      fmt_ratio(g[(t, size, a)]["vs_vend"])])
    md.append("### GEMM beside OpenBLAS\n")
    md.append(md_table(["dtype", "M x N x K", "duet time", "duet GFLOP/s", "OpenBLAS time",
                        "OpenBLAS GFLOP/s", "ratio (median)"], table, "llrrrrr") + "\n")
    keys, tr = medians(runs, "transpose")
    table = [[t, shape(size), "%.1f" % tr[(t, size, a)]["rate"],
              fmt_ratio(tr[(t, size, a)]["vs_copy"]), "`%s`" % tr[(t, size, a)]["kernel"]]
             for t, size, a in keys]
    md.append("### Transpose beside a copy\n")
    md.append(md_table(["element", "shape", "GB/s", "of copy (median)", "kernel"], table,
                       "llrrl") + "\n")
    keys, ip = medians(runs2, "transp_inpl")
    md.append("### Transpose in place beside a copy\n")
    md.append(source_block(src2, "%d runs back to back; medians." % len(runs2)) + "\n")
    table = [[shape(size), t, "%.1f" % ip[(t, size, a)]["rate"],
              fmt_ratio(ip[(t, size, a)]["vs_copy"]), "`%s`" % ip[(t, size, a)]["kernel"]]
             for t, size, a in keys]
    md.append(md_table(["shape", "element", "GB/s", "of copy (median)", "kernel"], table,
                       "llrrl") + "\n")


def narrow_taken(kernel):
    """Whether the row ran on the memory-bound family (dt_gemm_plan_skinny in
    src/common/gemm_plan.c): its kernels are named gemm_skinny_{form}_n{N}_..."""
    return re.match(r"gemm_skinny_(kmajor_mma|kmajor|mmajor)_n(\d+)_", kernel) is not None


def narrow_section(md):
    src = SOURCES["narrow"]
    path = os.path.join(RESULTS, src["files"][0])
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    md.append("## GEMM of a narrow C (n or m <= 64)\n")
    md.append("duet_gemm beside `cublasGemmEx` in one process on one stream (L2 flushed before "
              "every call, median of 20), row-major A (k-contiguous unless the case says "
              "m-major), B column-major unless the case says n-major, C row-major; `%copy` is A, "
              "B and C's bytes over the time, against the measured device-to-device copy "
              "bandwidth (4,239 GB/s).\n")
    md.append(source_block(src) + "\n")
    table = []
    for r in rows:
        table.append([esc(r["case"]), "%s x %s x %s" % (r["m"], r["n"], r["k"]),
                      r["duet_us"], r["cublas_us"], r["ratio"], r["pct_copy"] + "%",
                      "`%s`" % r["kernel"], "yes" if narrow_taken(r["kernel"]) else "no"])
    md.append(md_table(["case", "m x n x k", "duet us", "cuBLAS us", "cuBLAS/duet", "%copy",
                        "kernel", "narrow family"], table,
                       ["l", "r", "r", "r", "r", "r", "l", "l"]))
    md.append("")
    md.append("Every row's result matches cuBLAS's (bf16 relative difference below 3.2e-3, f32 "
              "below 1e-6, f64 below 1e-15, i8 exact) and is bitwise repeatable. The family "
              "reaches 0.78-0.88x of cuBLAS on the 16-bit decode shapes (B k- or n-major), "
              "0.78x on i8 (0.98x in an earlier run of the same loop), 1.00-1.23x on f32 and "
              "0.66-0.98x on f64; it is latency-bound (34-53% of the copy bandwidth on the "
              "16-bit rows): each warp holds two chunks of A in registers, 8 KiB, and a slice "
              "is a few chunks long. 16-bit A with rows off 16 bytes takes its SIMT K-major "
              "form, FMA-bound at 16 columns (k 700: 0.28x). The 16-bit rows it does not take "
              "(32 and 64 columns, A m-major) run on the swizzled tensor-core kernel split "
              "along k (`_splitk`; operands it cannot copy packed first, `_packed`) at "
              "0.58-0.65x; so does TF32 with 16 columns whose operands that kernel reads as "
              "they lie (0.80x; as exact f32 on the f32 tiles, the planner's narrow TF32 rule "
              "where they are not, it ran 0.44x). `warm` columns: the same calls without the "
              "L2 flush. 8-bit float inputs of a narrow C take the family's MMA form on sm_89+ "
              "(the FP8 section below).\n\n")


def epilogue_section(md):
    src = SOURCES["epilogue"]
    if not os.path.exists(os.path.join(RESULTS, src["files"][0])):
        return
    md.append("## GEMM with a fused epilogue (%s)\n" % src["machine"].split(" (")[0])
    md.append("D = act(A B^T + bias) in bf16 with a bias per column, act GELU (tanh) or ReLU, "
              "through `duet_gemm_ex`, beside cuBLASLt's `CUBLASLT_EPILOGUE_GELU_BIAS` / "
              "`_RELU_BIAS` and beside duet's own `duet_gemm` without the epilogue, in one "
              "process; two runs of one build. vs cuBLASLt = cuBLASLt's time / duet's; cost of "
              "the epilogue = duet_gemm_ex's time / duet_gemm's.\n")
    table = []
    for run, name in enumerate(src["files"], 1):
        # Each case's rows: cuBLASLt's and duet_gemm_ex's (op gemm+bias+<act>), then the plain
        # GEMM's (op "gemm (no epilogue)"), which belongs to the case before it.
        by, act = {}, None
        for r in read_bench_csv(name)[1]:
            op = r.get("op", "")
            if op.startswith("gemm+bias+"):
                act = op[len("gemm+bias+"):]
            elif not op.startswith("gemm") or act is None:
                continue
            by.setdefault((act, r["size"]), {})[r["algorithm"]] = r
        for (act, size), got in by.items():
            if not {"cublaslt", "auto-ex", "auto"} <= set(got):
                continue
            ex, lt, plain = got["auto-ex"], got["cublaslt"], got["auto"]
            table.append([size.split("/")[0], "bias + " + act, str(run),
                          ex["kernel"].split("+")[0], "%.3f" % float(lt["ms"]),
                          "%.3f" % float(ex["ms"]), "%.3f" % float(plain["ms"]),
                          "%.2f" % (float(lt["ms"]) / float(ex["ms"])),
                          "%.2f" % (float(ex["ms"]) / float(plain["ms"]))])
    table.sort(key=lambda row: (row[1], int(row[0].split("x")[0]), row[2]))
    md.append(md_table(["m x n x k", "epilogue", "run", "duet kernel", "cuBLASLt ms",
                        "duet_gemm_ex ms", "duet_gemm ms", "vs cuBLASLt",
                        "cost of the epilogue"], table, "llrlrrrrr") + "\n")
    md.append(source_block(src) + "\n")
    md.append("The Hopper kernel applies a bias + activation epilogue to its accumulators in "
              "registers and stores D as it stores a plain C; no MMA runs meanwhile, which is "
              "the gap to cuBLASLt (GELU: two special-function instructions an element). "
              "8192^3 with the epilogue ran near 1.40 ms in run 1 and near 1.55 ms in run 2: "
              "in repeated runs of one process duet's plain kernel too moves between about "
              "1.33 and 1.48-1.53 ms at this size (Nsight Compute, single launches: plain 1.33, "
              "bias + GELU 1.39, bias + ReLU 1.35 ms). Epilogues with C, a residual or aux "
              "stage the results in shared memory and are slower (not in this table).\n")


def fp8_section(md):
    src = SOURCES["fp8"]
    if not os.path.exists(os.path.join(RESULTS, src["files"][0])):
        return
    md.append("## FP8 GEMM (%s)\n" % src["machine"].split(" (")[0])
    md.append("D = sa sb A B in bf16 with e4m3 A and B and device scales sa, sb "
              "(`duet_gemm_ex`'s `epi.scale_a`, `scale_b`) on Hopper's FP8 tensor cores, in the "
              "four layouts (cuBLAS's names of the column-major view: TN is A and B both "
              "k-major; the others copy an operand k-major first) and TN with "
              "`DUET_MATH_FAST_ACCUM`, beside cuBLASLt's FP8 `cublasLtMatmul` in TN (the only "
              "layout it takes; its scales in alpha, as cuBLASLt 13.1 refused its scale "
              "pointers) without and with `CUBLASLT_MATMUL_DESC_FAST_ACCUM`. vs cuBLASLt = "
              "cuBLASLt's time / duet's (the fast row against cuBLASLt's fast one); error: the "
              "largest |D - exact| - 2^-8 |D| over sum |sa sb a b| of 1024 sampled elements.\n")
    rows = read_bench_csv(src["files"][0])[1]
    lt = {}
    for r in rows:
        if r.get("op") == "gemm fp8 scaled" and r["algorithm"].startswith("cublaslt"):
            lt[(r["size"], r["algorithm"])] = r
    table = []
    for r in rows:
        if r.get("op") != "gemm fp8 scaled" or not r["algorithm"].startswith("auto-ex"):
            continue
        size, layout = r["size"].split(" ")
        fast = r["algorithm"] == "auto-ex-fast"
        ref = lt.get((size, "cublaslt-fast" if fast else "cublaslt"))
        acc = r["check"].split("acc ")[-1] if "acc " in r["check"] else "-"
        table.append([size, layout + (" fast" if fast else ""), r["kernel"].split("+")[0],
                      "%.3f" % float(ref["ms"]) if ref else "-", "%.3f" % float(r["ms"]),
                      "%.0f" % float(r["rate"]),
                      "%.2f" % (float(ref["ms"]) / float(r["ms"])) if ref else "-", acc])
    md.append(md_table(["m x n x k", "layout", "duet kernel", "cuBLASLt ms", "duet ms",
                        "duet TFLOP/s", "vs cuBLASLt", "error"], table, "lllrrrrr") + "\n")
    md.append(source_block(src) + "\n")
    md.append("The kernel is the 16-bit one's (128 x 256 tiles, two consumer warpgroups, TMA "
              "loads) with FP8 instructions; by default each 128 values of k are summed by the "
              "tensor core and added in f32 (its own sums keep about 13 fraction bits), which "
              "costs issue slots and waits cuBLASLt hides better; the fast rows keep all of k "
              "in the tensor core. No MMA overlaps the store, and the other layouts pay for "
              "copying one operand (two for NT). cuBLASLt's sampled error was the same as "
              "duet's in both modes. The decode-like rows with 16 rows of A (16 x 4096 x 4096, "
              "16 x 7168 x 8192) run in TN and TT, where the wide operand is K-major, on the "
              "memory-bound narrow-C kernel with mma.sync FP8 instructions (`gemm_skinny_"
              "kmajor_mma_n16_...`), the scales and the bf16 D applied in its split's "
              "reduction: 0.58-0.74x of cuBLASLt (the Hopper tiles ran them at 0.32-0.43x); "
              "it reads the wide operand at 0.9-1.6 TB/s, latency-bound like the 16-bit decode "
              "rows of the narrow section. In NN and NT the wide operand is M-major and they stay on the "
              "128 x 256 tiles with a K-major copy (0.19-0.28x), as do 64 rows (0.18-0.32x) "
              "and the short prefill of 128 rows (0.26-0.44x): 16 to 56 tiles on 132 SMs. "
              "Smaller FP8 tiles or split k over the wgmma tiles for those are open work.\n")
    blk = [r for r in rows if r.get("op") == "gemm fp8 block-scaled"]
    if not blk:
        return
    md.append("Block scales (DeepSeek-V3's recipe): `epi.scale_a` m x ceil(k / 128), one f32 per "
              "row of A and 128 values of k, `epi.scale_b` ceil(k / 128) x ceil(n / 128), one "
              "per 128 x 128 block of B; D = sum over k blocks of sa sb A_q B_q^T in bf16, e4m3, "
              "TN. cuBLASLt: `CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F` on its A (duet's B, "
              "the weights) and `VEC128_32F` on its B (duet's A), the same scale values (its "
              "order of each array found by checking its result: `order` in its check column); "
              "both checked against the exact block-scaled sum.\n")
    ltb = {r["size"]: r for r in blk if r["algorithm"] == "cublaslt"}
    table = []
    for r in blk:
        if r["algorithm"] != "auto-ex":
            continue
        ref = ltb.get(r["size"])
        acc = r["check"].split("acc ")[-1] if "acc " in r["check"] else "-"
        table.append([r["size"], r["kernel"].split("+")[0],
                      "%.3f" % float(ref["ms"]) if ref else "-", "%.3f" % float(r["ms"]),
                      "%.0f" % float(ref["rate"]) if ref else "-", "%.0f" % float(r["rate"]),
                      "%.2f" % (float(ref["ms"]) / float(r["ms"])) if ref else "-", acc])
    md.append(md_table(["m x n x k", "duet kernel", "cuBLASLt ms", "duet ms",
                        "cuBLASLt TFLOP/s", "duet TFLOP/s", "vs cuBLASLt", "error"], table,
                       "llrrrrrr") + "\n")
    md.append("The Hopper kernel multiplies each stage's f32 sums (128 values of k) by the "
              "thread's row scale and the tile half's column scale as it adds them, the scales "
              "loaded while the previous stage runs: the same speed as the per-tensor rows "
              "above (its default math). The 128-row shape runs on the 128 x 256 tiles. The "
              "16-row one ran there when this file was measured; it now runs on the narrow "
              "kernel's mma.sync form (`gemm_skinny_kmajor_mma_n16_e4m3_bf16_splitk_"
              "blockscaled`), which in a later run of the same day, in a form that loaded the "
              "scales every step, took 0.0594 ms beside cuBLASLt's 0.0304 (0.51x; the wgmma "
              "tiles 0.0699 ms, 0.44x); the shipped form loads them once per block and was not "
              "timed.\n")


def sweep_section(md, paths):
    md.append("## GEMM sweep\n")
    md.append("From %s (`duet-bench --sweep`): one row per problem, ratio = vendor time / duet "
              "time (above 1, duet is faster; from the two time columns where the file has them, "
              "else from its ratio column). p10: the ratio that 90%% of the problems of that "
              "dtype meet or beat.\n"
              % ", ".join("[%s](results/%s)" % (os.path.basename(p), os.path.basename(p))
                          for p in paths))
    for p in paths:
        note = SWEEP_NOTES.get(os.path.basename(p))
        if note:
            md.append("- %s: %s" % (os.path.basename(p), note))
    md.append("")
    rows = []
    for p in paths:
        rows += read_sweep_csv(p)
    if not rows:
        md.append("The sweep file holds no row with a dtype, m, n, k and both times.\n")
        return
    by = {}
    for r in rows:
        by.setdefault(r["dtype"], []).append(r)
    table = []
    for dt in sorted(by):
        vals = sorted(r["ratio"] for r in by[dt])
        p10 = vals[int(math.floor(0.1 * (len(vals) - 1)))]
        worst = min(by[dt], key=lambda r: r["ratio"])
        table.append([dt, str(len(vals)), "%.2f" % statistics.median(vals), "%.2f" % p10,
                      "%.2f" % vals[0],
                      "%d x %d x %d%s" % (worst["m"], worst["n"], worst["k"],
                                          " %s%s" % (worst["transa"], worst["transb"])
                                          if worst["transa"] or worst["transb"] else ""),
                      "%.2f" % vals[-1]])
    md.append(md_table(["dtype", "problems", "median ratio", "p10", "min", "min at (m x n x k)",
                        "max"], table, "lrrrrlr") + "\n")
    series, used = [], set()
    for i, dt in enumerate(sorted(by)):
        color = COLORS.get(series_of(dt))
        if color is None or color in used:  # bf16 > f32 and bf16 > bf16 get colours of their own
            color = EXTRA_COLORS[i % len(EXTRA_COLORS)]
        used.add(color)
        pts = sorted((r["m"] * r["n"] * r["k"] * r["batch"], r["ratio"], False) for r in by[dt])
        series.append((dt, color, pts))
    ratio_scatter(os.path.join(IMG, "gemm-sweep.svg"), "GEMM sweep: duet vs the vendor library",
                  series, "m x n x k x batch (log scale)", "vendor time / duet time")
    md.append("![GEMM sweep ratio against problem size](img/gemm-sweep.svg)\n")


def headline_chart(headline):
    order = ["f32", "f64", "bf16 > f32", "f16 > f32", "f32 TF32", "i8 > i32", "f32 3xTF32"]
    groups = [g for g in order if any(k[0] == g for k in headline)]
    relabel = {"f32 3xTF32": "3xTF32\n(vs SGEMM)", "f32 TF32": "TF32", "i8 > i32": "i8 > i32"}
    groups = [relabel.get(g, g) for g in groups]
    vals = {(relabel.get(g, g), s.replace("^3", "\u00b3")): v for (g, s), v in headline.items()}
    bar_chart(os.path.join(IMG, "gemm-headline-h100.svg"),
              "duet GEMM vs cuBLAS on large squares, H100 (higher is better for duet)", groups,
              [("4096\u00b3", "#9ecae1"), ("8192\u00b3", "#3182bd")], vals,
              "cuBLAS time / duet time", 1.0, "parity", xlabel="A, B dtype (> C dtype)")


def build_page():
    md = []
    md.append("# duet performance\n")
    md.append("<!-- Generated by `python3 %s` from docs/results/: edit the script, not this "
              "page. -->\n" % SCRIPT)
    md.append("This page is generated by `python3 %s` from the measurement files in "
              "[results/](results/README.md) and shows the current library only: each table "
              "names the date, the machine, the commit and the command of its run. How duet "
              "got here (the lab journal of 2026-11-21 to 2026-11-25: what was tried, kept and "
              "dropped) is in [history/performance-journal.md](history/performance-journal.md)."
              " Several GPUs: [dist.md](dist.md) (duet_group_gemm and duet_dist on two H200s).\n"
              % SCRIPT)
    md.append("## How it is measured\n")
    md.append("- One op between two events on one stream; before each timed call a 256 MiB "
              "scratch buffer is written outside the events, so every call starts with a cold "
              "L2.\n"
              "- 3 untimed warm-up calls, then the median of the timed calls (10 or 20: each "
              "table says).\n"
              "- Random non-zero inputs, outputs poisoned before the first call, and **every "
              "timed result checked**, duet's and the vendor's alike: GEMM by Freivalds' test "
              "in long double on the host (the CSV's `check` column, in units of eps; a correct "
              "product sits near 0.01-1), transposes bit for bit, elementwise ops against the "
              "host.\n"
              "- GEMM TFLOP/s = 2 M N K / time; memory ops GB/s = (bytes read + bytes written) "
              "/ time.\n"
              "- Ratios put the other library's time over duet's: **above 1, duet is "
              "faster**.\n")
    md.append("## Summary\n")
    md.append("![duet GEMM vs cuBLAS on large squares](img/gemm-headline-h100.svg)\n")
    md.append("The large squares of the GEMM tables below, per dtype (f32 and f64: the mean of "
              "the two runs; 3xTF32 against cuBLAS's exact SGEMM). Sections: @TOC@.\n")
    headline = {}
    gemm_section(md, headline)
    lowp_section(md, headline, "lowp", "Tensor-core GEMM, Hopper kernels", "gemm-lowp-h100.svg")
    md.append("The `_packed` rows (4095 x 4097 x 4093: leading dimensions that are not multiples "
              "of 8 elements, which neither TMA nor cuBLAS's fast kernels take) run on K-major "
              "copies of A and B made in the stream's workspace; their time includes the "
              "copies.\n")
    lowp_section(md, None, "lowp-portable",
                 "Tensor-core GEMM, portable kernels (what sm_80-sm_89 run)", None)
    md.append("These are the `mma.sync` kernels that GPUs before Hopper run, forced on the H100 "
              "with `DUET_GEMM_PORTABLE=1` and compared with cuBLAS's Hopper kernels; they were "
              "not measured on an sm_80-sm_89 GPU.\n")
    transpose_section(md)
    inplace_section(md)
    narrow_section(md)
    elementwise_section(md)
    epilogue_section(md)
    fp8_section(md)
    cpu_section(md)
    md.append("## Not measured on the current library\n")
    for what, cmd, why in NOT_MEASURED:
        md.append("- **%s.** %s To measure: `%s`." % (what, why, cmd))
    md.append("")
    sweeps = sorted(glob.glob(os.path.join(RESULTS, "gemm-sweep-*.csv")))
    if sweeps:
        sweep_section(md, sweeps)
    headline_chart(headline)
    text = "\n".join(md).rstrip("\n") + "\n"
    heads = re.findall(r"^## (.+)$", text, re.M)
    toc = ", ".join("[%s](#%s)" % (h, slug(h)) for h in heads[heads.index("Summary") + 1:])
    write_file(PAGE, text.replace("@TOC@", toc))


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def main(argv):
    check = "--check" in argv[1:]
    try:
        build_page()
    except OSError as e:  # a file named in SOURCES is missing or unreadable
        print("gen-performance-docs: %s" % e, file=sys.stderr)
        return 1
    changed = []
    for path in sorted(glob.glob(os.path.join(IMG, "*.svg"))):
        if path not in WRITTEN:  # a plot no section draws any more (e.g. the sweep's)
            changed.append(rel(path))
            if not check:
                os.remove(path)
    for path in sorted(WRITTEN):
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                old = fh.read()
        if old != WRITTEN[path]:
            changed.append(rel(path))
            if not check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8", newline="\n") as fh:
                    fh.write(WRITTEN[path])
    if check:
        if changed:
            print("out of date (run python3 %s): %s" % (SCRIPT, " ".join(changed)))
            return 1
        print("docs/performance.md and docs/img/ match docs/results/")
        return 0
    print("wrote %d file(s), %d changed: %s" % (len(WRITTEN), len(changed), " ".join(changed)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
