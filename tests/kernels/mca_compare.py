#!/usr/bin/env python3
"""tests/kernels/mca_compare.py: the AVX-512 (x86-64-v4) and AVX2 (x86-64-v3) inner loops of the kernels
with a tile per width (cnn, mlp), compared per FLOP by llvm-mca's throughput model for named CPUs.

Each kernel file is compiled to assembly at both levels with the kernels' flags. In every function
present at both levels, the inner loop (a backward jump with no label inside its body) with the most
floating-point work per iteration is the function's main tile; its FLOPs per iteration are counted from
its vector instructions (an FMA 2 per lane, a dot product of bf16 pairs 4, an add or multiply 1; zmm 16
lanes, ymm 8, xmm 4), and llvm-mca predicts its cycles per iteration on each target. The table gives
cycles per iteration and per FLOP for each (function, level, target). The test fails when, on an Intel
target, a v4 main loop is predicted slower per FLOP than the v3 one (beyond TOLERANCE): full-width
AVX-512 must not lose to AVX2. AMD targets are printed, not judged (Zen 4 splits a zmm instruction in
two 256-bit halves, so its v4 loops are at best even). A target this llvm-mca does not know is named and
left out. Exit 77 (a skip) when llvm-mca is absent: Debian's package `llvm` provides it.

usage: mca_compare.py --cc CC... --flags="FLAGS" -I DIR... [--mca PATH] FILE...
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

TARGETS = [("sapphirerapids", "intel", ["v4", "v3"]), ("znver4", "amd", ["v4", "v3"]), ("znver3", "amd", ["v3"])]
TOLERANCE = 0.02  # a v4 loop may be 2 % slower per FLOP than v3 (the model's rounding), no more


def functions_loops(asm_text):
    """{function: [loop body lines]} for the inner loops of each function."""
    out, fn, lines = {}, None, []
    for line in asm_text.splitlines():
        m = re.match(r"^([A-Za-z_][\w.]*):", line)
        if m and not m.group(1).startswith(".L"):
            fn, lines = m.group(1), []
            continue
        if fn is None:
            continue
        lines.append(line)
        m = re.match(r"^\s+j[a-z]+\s+(\.L\w+)\s*$", line)
        if not m:
            continue
        label = m.group(1) + ":"
        starts = [i for i, x in enumerate(lines) if x.strip() == label]
        if not starts:
            continue  # a forward jump
        body = lines[starts[-1] + 1:]
        if any(re.match(r"^\.L\w+:", x) for x in body):
            continue  # another label inside: not an inner loop
        out.setdefault(fn, []).append([x for x in body if x.startswith("\t") and not x.strip().startswith(".")])
    return out


def flops(body):
    n = 0
    for line in body:
        op = line.split()[0]
        lanes = 16 if "%zmm" in line else 8 if "%ymm" in line else 4 if "%xmm" in line else 0
        if re.match(r"^vf(n?m)(add|sub)\d+ps$", op) or re.match(r"^vfn?m(add|sub)\d+ps$", op):
            n += 2 * lanes
        elif op == "vdpbf16ps":
            n += 4 * lanes
        elif re.match(r"^v(add|sub|mul)ps$", op):
            n += lanes
    return n


def main_loops(asm_text):
    """{function: (flops per iteration, body)} of each function's heaviest inner loop."""
    best = {}
    for fn, loops in functions_loops(asm_text).items():
        for body in loops:
            f = flops(body)
            if f > 0 and (fn not in best or f > best[fn][0]):
                best[fn] = (f, body)
    return best


def mca(tool, cpu, body):
    """Predicted cycles per iteration of body on cpu, or None when this llvm-mca does not know cpu."""
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(body) + "\n")
        path = f.name
    try:
        r = subprocess.run([tool, "-mtriple=x86_64-unknown-unknown", "-mcpu=" + cpu, "-iterations=200", path],
                           capture_output=True, text=True)
    finally:
        os.unlink(path)
    if "not a recognized processor" in r.stderr:
        return None
    if r.returncode != 0:
        raise RuntimeError("llvm-mca -mcpu=%s failed: %s" % (cpu, r.stderr.strip()[:400]))
    it = re.search(r"^Iterations:\s+(\d+)", r.stdout, re.M)
    cyc = re.search(r"^Total Cycles:\s+(\d+)", r.stdout, re.M)
    return int(cyc.group(1)) / int(it.group(1))


def compile_asm(cc, flags, incs, src, level):
    with tempfile.NamedTemporaryFile(suffix=".s", delete=False) as f:
        out = f.name
    try:
        cmd = cc + flags + ["-march=x86-64-" + level] + ["-I" + i for i in incs] + ["-S", src, "-o", out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("compiling %s at %s failed:\n%s" % (src, level, r.stderr[-2000:]))
        with open(out) as f:
            return f.read()
    finally:
        os.unlink(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", nargs="+", required=True, help="the C compiler command")
    ap.add_argument("--flags", default="", help="the kernels' flags, one string (no -march)")
    ap.add_argument("-I", dest="incs", action="append", default=[], help="an include directory")
    ap.add_argument("--mca", default=None, help="llvm-mca to use (default: the newest llvm-mca-N on PATH, else llvm-mca)")
    ap.add_argument("files", nargs="+", help="kernel files with a tile per vector width")
    a = ap.parse_args()
    # the newest on PATH: Debian's llvm (14) has no znver4 model, llvm-16 has
    tool = a.mca or next((t for t in ["llvm-mca-%d" % v for v in range(20, 13, -1)] + ["llvm-mca"]
                          if shutil.which(t)), None)
    if not tool:
        print("SKIP: llvm-mca not found: install Debian's package llvm (scripts/setup.sh does)")
        return 77
    flags = [f for f in a.flags.split() if not f.startswith("-march=")]
    bad, absent = [], set()
    print("%-34s %-5s %-15s %8s %8s %12s" % ("kernel file: function", "level", "target", "FLOP/it", "cyc/it",
                                              "cyc/kFLOP"))
    for src in a.files:
        loops = {lv: main_loops(compile_asm(a.cc, flags, a.incs, src, lv)) for lv in ("v4", "v3")}
        for fn in sorted(set(loops["v4"]) & set(loops["v3"])):
            per = {}
            for cpu, vendor, levels in TARGETS:
                for lv in levels:
                    f, body = loops[lv][fn]
                    c = mca(tool, cpu, body)
                    if c is None:
                        absent.add(cpu)
                        continue
                    per[(cpu, lv)] = c / f
                    print("%-34s %-5s %-15s %8d %8.2f %12.2f" % (os.path.basename(os.path.dirname(src)) + "/" +
                          os.path.basename(src) + ": " + fn[:18], lv, cpu, f, c, 1000 * c / f))
                if vendor == "intel" and (cpu, "v4") in per and (cpu, "v3") in per and \
                        per[(cpu, "v4")] > per[(cpu, "v3")] * (1 + TOLERANCE):
                    bad.append("%s %s on %s: v4 %.2f cycles per kFLOP, v3 %.2f" % (src, fn, cpu,
                               1000 * per[(cpu, "v4")], 1000 * per[(cpu, "v3")]))
    for cpu in sorted(absent):
        print("# %s: not known to this llvm-mca (%s): left out" % (cpu, tool))
    for b in bad:
        print("FAIL: " + b)
    if bad:
        print("A v4 inner loop predicted slower per FLOP than its v3 counterpart on an Intel target: a tile that "
              "does not suit 32 zmm registers or full-width loads (docs/isa-levels.md)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
