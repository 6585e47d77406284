#!/usr/bin/env bash
# hip-resources.sh - regenerates docs/hip-resources.md: registers, LDS, scratch, occupancy per HIP target.
#
# Usage: scripts/hip-resources.sh [TARGETS]        e.g. scripts/hip-resources.sh "gfx90a;gfx940"
#   TARGETS   ;-separated gfx targets (default gfx908;gfx90a;gfx940;gfx1030)
# Environment:
#   DUET_HIP_RESOURCES_BUILD  scratch build directory (default ${TMPDIR:-/tmp}/duet-hip-resources)
#   DUET_HIP_RESOURCES_OUT    the document to write (default docs/hip-resources.md)
#   JOBS                      targets compiled at once (default: the number of cores)
#   DUET_HIP_RESOURCES_REUSE  1: keep the device assembly of the previous run (report only)
#
# How: CMake configures a HIP build (nothing is built) and exports its compile commands; the
# backend's one translation unit, src/hip/backend_hip.hip, which instantiates every kernel, is
# compiled once per target to device assembly (--cuda-device-only -S) with exactly the build's
# flags. The code-object metadata the compiler writes at the end of each .s (.vgpr_count,
# .agpr_count, .sgpr_count, .group_segment_fixed_size, .private_segment_fixed_size,
# .vgpr_spill_count, .sgpr_spill_count, .max_flat_workgroup_size, .wavefront_size) is what the
# loader will allocate; the occupancy rule applied to it is written into the document.
# Exit status: 0, or 1 when an AUTO kernel (an AUTO GEMM shape the target's tuning row picks, or
# AUTO transpose) uses scratch on any target built, which the document then names.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGETS=${1:-"gfx908;gfx90a;gfx940;gfx1030"}
BUILD=${DUET_HIP_RESOURCES_BUILD:-${TMPDIR:-/tmp}/duet-hip-resources}
OUT=${DUET_HIP_RESOURCES_OUT:-$ROOT/docs/hip-resources.md}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

command -v python3 >/dev/null || { echo "hip-resources.sh: needs python3" >&2; exit 2; }
DEMANGLE=$(command -v llvm-cxxfilt || command -v c++filt || true)
[ -n "$DEMANGLE" ] || { echo "hip-resources.sh: needs c++filt or llvm-cxxfilt" >&2; exit 2; }

mkdir -p "$BUILD/asm"
echo "-- configuring $BUILD for $TARGETS"
cmake -S "$ROOT" -B "$BUILD" -DBACKEND=hip -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DCMAKE_HIP_ARCHITECTURES="$TARGETS" -DDUET_BUILD_TESTS=OFF -DDUET_BUILD_EXAMPLES=OFF \
    -DDUET_BUILD_BENCH=OFF >"$BUILD/configure.log" 2>&1 || {
    cat "$BUILD/configure.log" >&2
    exit 2
}

# One shell command per target: the build's own compile line for backend_hip.hip, its
# --offload-arch, -c, -o and dependency flags replaced by a device-only assembly output.
python3 - "$BUILD" "$TARGETS" >"$BUILD/commands.sh" <<'EOF'
import json, shlex, sys
build, targets = sys.argv[1], sys.argv[2].split(";")
entries = [e for e in json.load(open(f"{build}/compile_commands.json"))
           if e["file"].endswith(".hip")]
if not any(e["file"].endswith("src/hip/backend_hip.hip") for e in entries):
    sys.exit("hip-resources.sh: backend_hip.hip is not in compile_commands.json")
# Every HIP translation unit (the backend, the tensor-core GEMM, the in-place transpose), each
# to its own assembly per target; the report reads them together.
for e in entries:
    unit = e["file"].rsplit("/", 1)[-1].rsplit(".", 1)[0]
    args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
    keep, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("--offload-arch=") or a.startswith("--cuda-gpu-arch="):
            continue
        keep.append(a)
    for t in targets:
        cmd = keep + [f"--offload-arch={t}", "--cuda-device-only", "-S", "-o",
                      f"{build}/asm/{t}.{unit}.s"]
        print(f"cd {shlex.quote(e['directory'])} && {shlex.join(cmd)}")
EOF

if [ "${DUET_HIP_RESOURCES_REUSE:-0}" = 1 ]; then
    echo "-- reusing the device assembly in $BUILD/asm"
else
    echo "-- compiling src/hip/backend_hip.hip to device assembly ($JOBS at a time)"
    t0=$SECONDS
    # Each line is one complete command; xargs runs them JOBS at a time.
    tr '\n' '\0' <"$BUILD/commands.sh" | xargs -0 -P "$JOBS" -I{} bash -c '{}'
    echo "-- compiled in $((SECONDS - t0)) s"
fi
# One assembly per target holding every unit's kernels (the parser reads each metadata block).
for t in ${TARGETS//;/ }; do
    cat "$BUILD"/asm/"$t".*.s >"$BUILD/asm/$t.s"
done

COMPILER=$(python3 -c 'import json,sys; e=[x for x in json.load(open(sys.argv[1])) if x["file"].endswith("backend_hip.hip")][0]; print((e.get("arguments") or e["command"].split())[0])' "$BUILD/compile_commands.json")
CVERSION=$("$COMPILER" --version | head -n1)
HIPVERSION=$(hipconfig --version 2>/dev/null | sed 's/-.*//' || true)

python3 - "$BUILD/asm" "$TARGETS" "$OUT" "$DEMANGLE" "$ROOT" "$CVERSION" "${HIPVERSION:-unknown}" <<'EOF'
import os, re, subprocess, sys

asm_dir, targets, out, demangle, root, cversion, hipversion = sys.argv[1:8]
targets = targets.split(";")

# ---- hardware facts, as LLVM's AMDGPU backend models them (AMDGPUBaseInfo.cpp) -------------
# vgprs: registers per lane in one SIMD's file; granule: allocation unit of a wave; max_waves:
# wave slots per SIMD; sgprs: SGPR file per SIMD (0: not an occupancy limit, gfx10+); simds:
# SIMDs per CU; lds: LDS a CU's workgroups share (CU mode on RDNA).
HW = {
    "gfx908":  dict(vgprs=256, granule=4, max_waves=10, sgprs=800, simds=4, lds=65536, wave=64),
    "gfx90a":  dict(vgprs=512, granule=8, max_waves=8, sgprs=800, simds=4, lds=65536, wave=64),
    "gfx940":  dict(vgprs=512, granule=8, max_waves=8, sgprs=800, simds=4, lds=65536, wave=64),
    "gfx941":  dict(vgprs=512, granule=8, max_waves=8, sgprs=800, simds=4, lds=65536, wave=64),
    "gfx942":  dict(vgprs=512, granule=8, max_waves=8, sgprs=800, simds=4, lds=65536, wave=64),
    "gfx1030": dict(vgprs=1024, granule=16, max_waves=16, sgprs=0, simds=2, lds=65536, wave=32),
    "gfx1100": dict(vgprs=1536, granule=24, max_waves=16, sgprs=0, simds=2, lds=65536, wave=32),
}
LDS_GRANULE = 512  # bytes: LDS is allocated to a workgroup in blocks of 128 dwords

# Launch geometry duet uses for kernels without __launch_bounds__ (docs/internals.md): threads
# per block and dynamic LDS bytes as a function of the element size, for the default plan.
DEFAULT_LAUNCH = [
    (r"^gemm_tiled_kernel", 256, lambda e: 2 * 16 * 16 * e),          # TILED, tile 16
    (r"^transpose_tiled_kernel", 1024, lambda e: 32 * 32 * e),        # TILED, tile 32
    (r"^transpose_tiled_padded_kernel", 256, lambda e: 32 * 33 * e),  # 32x8, 32 x 33 tile
    (r"", 256, lambda e: 0),
]
ELEM = {"float": 4, "double": 8, "int": 4, "unsigned int": 4, "unsigned char": 1,
        "unsigned short": 2, "unsigned long": 8, "unsigned long long": 8}

def align(x, g):
    return (x + g - 1) // g * g

def parse_metadata(path):
    kernels, cur, inside, in_kernels = [], None, False, False
    for line in open(path):
        if line.strip() == ".amdgpu_metadata":
            inside = True
            continue
        if line.strip() == ".end_amdgpu_metadata":
            inside = in_kernels = False  # the next unit's block may follow
            continue
        if not inside:
            continue
        if line.startswith("amdhsa.kernels:"):
            in_kernels = True
            continue
        if in_kernels and re.match(r"^\S", line):
            in_kernels = False
        if not in_kernels:
            continue
        m = re.match(r"^  - \.(\w+):\s*(.*)$", line)
        if m:
            cur = {}
            kernels.append(cur)
            cur[m.group(1)] = m.group(2).strip()
            continue
        m = re.match(r"^    \.(\w+):\s*(.*)$", line)
        if m and cur is not None:
            cur[m.group(1)] = m.group(2).strip()
    return kernels

def compiler_occupancy(path):
    """LLVM's own estimate per kernel symbol: the '; Occupancy: N' comment after each body."""
    occ, cur = {}, None
    for line in open(path):
        m = re.match(r"^(_Z\w+|\w+):\s*;\s*@", line)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r"^; Occupancy: (\d+)", line)
        if m and cur:
            occ[cur] = int(m.group(1))
    return occ

def demangle_all(names):
    p = subprocess.run([demangle], input="\n".join(names), capture_output=True, text=True, check=True)
    return p.stdout.splitlines()

def split_template(s):
    """'f<a, b<c, d>>(x)' -> ('f', ['a', 'b<c, d>'])."""
    s = re.sub(r"^void ", "", s)
    lt = s.find("<")
    if lt < 0:
        return s.split("(")[0], []
    name, depth, args, cur = s[:lt], 0, [], ""
    for ch in s[lt:]:
        if ch == "<":
            depth += 1
            if depth == 1:
                continue
        elif ch == ">":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                break
        elif ch == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    return name, args

DTYPE = {"float": "f32", "double": "f64", "unsigned int": "i32", "int": "i32"}

def label(name, args):
    """A readable row name; the AUTO GEMM's 9 operand layouts fold into one row."""
    if name == "gemm_fast_fma_kernel" and len(args) >= 8:
        t, bm, bn, bk, tm, tn, th, st = args[:8]
        return (f"gemm_fast_fma<{DTYPE.get(t, t)}> {bm}x{bn}x{bk}, {tm}x{tn}/thread, {th} thr, "
                f"{st} stages"), (DTYPE.get(t, t), int(bm), int(bn), int(bk), int(tm), int(tn), int(th), int(st))
    return (f"{name}<{', '.join(args)}>" if args else name), None

def elem_size(args):
    for a in args:
        if a in ELEM:
            return ELEM[a]
    return 4

def tuning_shapes(arch):
    """Shapes the AUTO GEMM tuning row of arch names (src/common/tuning.c), as shape tuples."""
    try:
        text = open(os.path.join(root, "src/common/tuning.c")).read()
    except OSError:
        return set()
    macros = dict(re.findall(r"#define\s+(\w+)\s+T_\(([^)]*)\)", text))
    def shape(tok):
        tok = tok.strip()
        m = re.match(r"T_\(([^)]*)\)", tok)
        vals = m.group(1) if m else macros.get(tok)
        return tuple(int(v) for v in vals.split(",")) if vals else None
    rows = re.findall(r'\{"(\w+)",\s*DUET_DTYPE_(\w+),\s*(?:DT_GEMM_ENGINE_)?(\w+),\s*'
                      r'(T_\([^)]*\)|\w+),\s*(T_\([^)]*\)|\w+)\s*[,}]', text)
    have = {r[0] for r in rows}
    key = arch if arch in have else "default"
    used = set()
    for a, dt, eng, large, small in rows:
        if a != key or eng != "FMA":
            continue
        for s in (shape(large), shape(small)):
            if s:
                used.add(({"F32": "f32", "F64": "f64", "I32": "i32"}[dt],) + s)
    return used

results, spills_bad = {}, []
for t in targets:
    path = os.path.join(asm_dir, f"{t}.s")
    ks = parse_metadata(path)
    cocc = compiler_occupancy(path)
    names = demangle_all([k["name"] for k in ks])
    hw = HW.get(t)
    rows = {}
    for k, dn in zip(ks, names):
        name, args = split_template(dn)
        lab, shape = label(name, args)
        num = lambda f: int(k.get(f.lstrip("."), "0") or 0)
        vgpr, agpr, sgpr = num(".vgpr_count"), num(".agpr_count"), num(".sgpr_count")
        lds, scratch = num(".group_segment_fixed_size"), num(".private_segment_fixed_size")
        vsp, ssp = num(".vgpr_spill_count"), num(".sgpr_spill_count")
        wg = num(".max_flat_workgroup_size") or 1024
        wave = num(".wavefront_size") or (hw["wave"] if hw else 64)
        dyn = 0
        if wg >= 1024:  # no __launch_bounds__: the default plan's geometry
            for pat, threads, dynf in DEFAULT_LAUNCH:
                if re.search(pat, name):
                    wg, dyn = (threads, dynf(elem_size(args))) if pat else (256, 0)
                    break
        if name == "gemm_tc_kernel" and len(args) >= 7:
            # Its launcher passes the staged tiles as dynamic shared memory: tc_shared_bytes()
            # in kernels/gemm_tc.cuh, STAGES * (BM + BN) rows of TC_PW = 20 words.
            bm, bn, stages = int(args[2]), int(args[3]), int(args[6])
            dyn = stages * (bm + bn) * 20 * 4
        r = dict(vgpr=vgpr, agpr=agpr, sgpr=sgpr, lds=lds, dyn=dyn, scratch=scratch, vsp=vsp,
                 ssp=ssp, wg=wg, wave=wave, shape=shape, n=1, cocc=cocc.get(k["name"], 0))
        if lab in rows:  # fold: keep the worst of each resource
            o = rows[lab]
            for f in ("vgpr", "agpr", "sgpr", "lds", "dyn", "scratch", "vsp", "ssp"):
                o[f] = max(o[f], r[f])
            o["cocc"] = min(o["cocc"], r["cocc"]) if o["cocc"] and r["cocc"] else o["cocc"] or r["cocc"]
            o["n"] += 1
        else:
            rows[lab] = r
    for lab, r in rows.items():
        if hw:
            lim = {"hw": hw["max_waves"]}
            lim["VGPR"] = hw["vgprs"] // align(max(r["vgpr"], 1), hw["granule"])
            if hw["sgprs"]:
                lim["SGPR"] = hw["sgprs"] // align(max(r["sgpr"], 1), 16)
            lds_wg = align(r["lds"] + r["dyn"], LDS_GRANULE)
            if lds_wg:
                wgs = hw["lds"] // lds_wg
                waves_per_wg = -(-r["wg"] // r["wave"])
                lim["LDS"] = wgs * waves_per_wg // hw["simds"]
            limiter = min(lim, key=lambda x: (lim[x], x != "hw"))
            r["occ"], r["lim"] = lim[limiter], limiter
        else:
            r["occ"], r["lim"] = None, "no data for target"
    results[t] = rows
    # AUTO GEMM kernels are the shapes this target's tuning row picks (marked *): other shapes
    # stay compiled for other rows (the default one) and are reported, but do not fail the check.
    picked = tuning_shapes(t)
    auto = [l for l, r in rows.items()
            if ((l.startswith("gemm_fast_fma") and r["shape"] in picked)
                or l.startswith("transpose_auto_kernel")
                or l.startswith("transpose_tile_kernel")
                or l.startswith("copy2d_auto_kernel")
                or l.startswith("gemm_tc_kernel")
                or l.startswith("gemm_lowp_simt_kernel")
                or l.startswith("transpose_inplace")) and r["scratch"]]
    spills_bad += [(t, l) for l in auto]

# ---- the document ----------------------------------------------------------------------------
L = []
w = L.append
w("<!-- Generated by scripts/hip-resources.sh; do not edit by hand. -->")
w("# HIP kernel resources per AMD target")
w("")
w(f"Generated from `src/hip/backend_hip.hip` (every kernel duet instantiates) with {cversion}, "
  f"HIP {hipversion}, for {', '.join(targets)}. Regenerate with `scripts/hip-resources.sh` "
  "after changing a kernel, a tile shape or the compiler.")
w("")
w("## What the columns mean")
w("")
w("- **VGPR**: vector registers per lane the loader allocates (`.vgpr_count`). On gfx90a and "
  "gfx940 this already includes the accumulation registers (**AGPR**, `.agpr_count`), which "
  "share one 512-entry file; on gfx908 AGPRs have a file of their own.")
w("- **SGPR**: scalar registers, VCC, flat-scratch and XNACK included (`.sgpr_count`).")
w("- **LDS**: static shared memory per workgroup (`.group_segment_fixed_size`); `+N` is the "
  "dynamic shared memory of a launch: duet's default plan for kernels that size their tile at "
  "run time, `tc_shared_bytes()` (the staged A and B tiles) for `gemm_tc_kernel`.")
w("- **scratch**: private (stack) bytes per lane (`.private_segment_fixed_size`). Non-zero means "
  "register spills or a private array the compiler could not keep in registers: both go to "
  "memory at global latency. **spills** is `.vgpr_spill_count`/`.sgpr_spill_count`: with "
  "no scratch they stayed on chip (VGPRs into AGPRs on CDNA, SGPRs into VGPR lanes), which "
  "costs instructions and registers but no memory traffic.")
w("- **block**: threads per block used for the occupancy: the kernel's `__launch_bounds__` "
  "when it has one, else duet's default plan (docs/internals.md): 256 threads, 1024 for "
  "`transpose_tiled` (32 x 32).")
w("- **waves/SIMD**: the occupancy these resources allow and what limits it. **LLVM** is the "
  "compiler's own figure (the `; Occupancy:` comment it writes after each kernel), for "
  "comparison: it follows the registers and the launch bounds but leaves LDS out.")
w("")
w("## Occupancy rule")
w("")
w("Waves per SIMD = min(hardware slots, VGPR limit, SGPR limit, LDS limit), with the register "
  "files and allocation granules of LLVM's AMDGPU backend (`AMDGPUBaseInfo.cpp`: "
  "`getTotalNumVGPRs`, `getVGPRAllocGranule`, `getMaxWavesPerEU`; AMDGPUUsage, \"Code Object "
  "V3+ Metadata\"), the register and LDS sizes in AMD's CDNA1/CDNA2/CDNA3 and RDNA2 ISA guides:")
w("")
w("| target | VGPR file per SIMD lane | VGPR granule | wave slots per SIMD | SGPR file per SIMD | SIMDs per CU | LDS per CU |")
w("|---|---|---|---|---|---|---|")
for t in targets:
    hw = HW.get(t)
    if hw:
        extra = " (+256 AGPR)" if t == "gfx908" else " (VGPR+AGPR unified)" if hw["vgprs"] == 512 else " (wave32)"
        w(f"| {t} | {hw['vgprs']}{extra} | {hw['granule']} | {hw['max_waves']} | "
          f"{hw['sgprs'] or 'not limiting'} | {hw['simds']} | {hw['lds'] // 1024} KiB |")
w("")
w("- VGPR limit = floor(file / roundup(VGPR, granule)). gfx908: ArchVGPRs and AGPRs have 256 "
  "each and `.vgpr_count` is the larger of the two; gfx90a/gfx940: one 512-entry file, "
  "`.vgpr_count` = roundup(ArchVGPR, 4) + AGPR; gfx1030 in wave32: 1024 entries, granule 16.")
w("- SGPR limit (gfx9 only) = floor(800 / roundup(SGPR, 16)); RDNA gives every wave its SGPRs.")
w("- LDS limit = floor(LDS per CU / roundup(LDS per block, 512 B)) blocks per CU, times the "
  "block's waves, divided by the CU's SIMDs. RDNA2 is counted in CU mode (HIP's default), "
  "64 KiB per 2 SIMD32.")
w("")
w("Occupancy is a ceiling, not a goal: the AUTO GEMM trades waves for registers per thread by "
  "design (each thread's block of C is reused from registers), while memory-bound kernels "
  "(transpose, elementwise) want as many waves as possible to hide memory latency.")
w("")
w("## Scratch check of the AUTO kernels")
w("")
if spills_bad:
    w("**These AUTO kernels use scratch:**")
    w("")
    for t, l in spills_bad:
        w(f"- {t}: `{l}`")
else:
    w("No AUTO GEMM (`gemm_fast_fma`, the tensor-core `gemm_tc_kernel`, `gemm_lowp_simt_kernel`), "
      "AUTO transpose (`transpose_auto_kernel`, `transpose_tile_kernel`, `copy2d_auto_kernel`) "
      f"or in-place transpose (`transpose_inplace_*`) instantiation uses scratch on "
      f"{', '.join(targets)}.")
w("")
for t in targets:
    rows = results[t]
    used = tuning_shapes(t)
    w(f"## {t}")
    w("")
    w(f"Wavefront size {HW[t]['wave'] if t in HW else '?'}. Rows marked * are the AUTO GEMM shapes "
      f"the tuning table (src/common/tuning.c) picks on {t}; `gemm_fast_fma` rows fold the "
      "operand-layout variants of a shape (the worst of each column).")
    w("")
    w("| kernel | VGPR | AGPR | SGPR | LDS (B) | scratch (B) | spills v/s | block | waves/SIMD | LLVM |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    def order(item):
        lab, r = item
        return (0 if lab.startswith("gemm_fast") else 1 if lab.startswith("gemm") else
                2 if lab.startswith(("transpose", "copy2d")) else 3, lab)
    for lab, r in sorted(rows.items(), key=order):
        mark = " *" if r["shape"] and r["shape"] in used else ""
        lds = f"{r['lds']}" + (f"+{r['dyn']}" if r["dyn"] else "")
        occ = f"{r['occ']} ({r['lim']})" if r["occ"] is not None else r["lim"]
        w(f"| `{lab}`{mark} | {r['vgpr']} | {r['agpr']} | {r['sgpr']} | {lds} | {r['scratch']} | "
          f"{r['vsp']}/{r['ssp']} | {r['wg']} | {occ} | {r['cocc'] or '?'} |")
    w("")
open(out, "w").write("\n".join(L))
print(f"-- wrote {out}")
for t in targets:
    rows = results[t]
    worst = [l for l, r in rows.items() if r["scratch"]]
    print(f"-- {t}: {len(rows)} rows, {len(worst)} with scratch" + (": " + "; ".join(worst) if worst else ""))
if spills_bad:
    print("-- AUTO kernels with scratch: " + "; ".join(f"{t} {l}" for t, l in spills_bad))
    sys.exit(1)
EOF
