"""What instruction-set level each loaded framework says it runs at (docs/baselines.md, "Instruction-set
level").

report() returns one entry per framework that is loaded, each with "isa": the widest instructions it
reports using, in the kernels' names (kernels/isa.h: "sse2", "sse4.2", "avx", "avx2", "avx512", and
"avx512+" for instructions beyond x86-64-v4), or None when its answer has no known level; and "env": the
variables that set the levels (experiments/external_isa.c sets them when the kernels' level is held).
speedlab compares each "isa" with the kernels' level and records a mismatch.
"""
import ctypes
import os
import re
import sys

VARS = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "OPENBLAS_CORETYPE",
        "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NPY_DISABLE_CPU_FEATURES", "XLA_FLAGS", "SPEEDLAB_ISA")

ORDER = ("generic", "sse2", "sse4.2", "avx", "avx2", "avx512", "avx512+")

# openblas_get_corename() (OpenBLAS's driver/others/dynamic.c names), lower case
OPENBLAS_CORES = {
    "katmai": "sse2", "coppermine": "sse2", "northwood": "sse2", "prescott": "sse2", "banias": "sse2",
    "atom": "sse2", "core2": "sse2", "penryn": "sse2", "dunnington": "sse2", "athlon": "sse2",
    "opteron": "sse2", "opteron_sse3": "sse2", "barcelona": "sse2", "nano": "sse2",
    "nehalem": "sse4.2",
    "sandybridge": "avx", "bulldozer": "avx", "piledriver": "avx", "steamroller": "avx",
    "haswell": "avx2", "zen": "avx2", "excavator": "avx2",
    "skylakex": "avx512", "cooperlake": "avx512+", "sapphirerapids": "avx512+",
}

# NumPy's x86 feature names (1.x each feature, 2.4 groups X86_V2 ...)
NUMPY_FEATURES = {
    "SSE": "sse2", "SSE2": "sse2", "SSE3": "sse2",
    "SSSE3": "sse4.2", "SSE41": "sse4.2", "POPCNT": "sse4.2", "SSE42": "sse4.2", "X86_V2": "sse4.2",
    "AVX": "avx", "F16C": "avx", "XOP": "avx", "FMA4": "avx",
    "FMA3": "avx2", "AVX2": "avx2", "X86_V3": "avx2",
    "AVX512F": "avx512", "AVX512CD": "avx512", "AVX512_SKX": "avx512", "X86_V4": "avx512",
    "AVX512_KNL": "avx512+", "AVX512_KNM": "avx512+", "AVX512_CLX": "avx512+", "AVX512_CNL": "avx512+",
    "AVX512_ICL": "avx512+", "AVX512_SPR": "avx512+",
}

TORCH_CAPABILITIES = {"default": "sse2", "no avx": "sse2", "avx": "avx", "avx2": "avx2",
                      "avx512": "avx512", "avx512_vnni": "avx512+", "avx512_bf16": "avx512+",
                      "amx": "avx512+"}

# the LLVM CPUs speedlab names for Numba, by their own features (NUMBA_CPU_FEATURES empty)
NUMBA_CPUS = {"": "sse2", "generic": "sse2", "nehalem": "sse4.2", "sandybridge": "avx", "haswell": "avx2", "skylake-avx512": "avx512"}
# LLVM's feature names, widest first
LLVM_FEATURES = (("avx512f", "avx512"), ("avx2", "avx2"), ("avx", "avx"), ("sse4.2", "sse4.2"),
                 ("sse2", "sse2"))

XLA_ISAS = {"sse4_2": "sse4.2", "avx": "avx", "avx2": "avx2", "avx512": "avx512"}


def widest(levels):
    known = [x for x in levels if x in ORDER]
    return max(known, key=ORDER.index) if known else None


def _symbol(lib, names):
    for n in names:
        try:
            f = getattr(lib, n)
        except AttributeError:
            continue
        f.restype = ctypes.c_char_p
        return f().decode()
    return None


def openblas():
    """The loaded OpenBLAS's core, found in our own memory map (harness._openblas's way); PyPI's NumPy
    and SciPy wheels carry scipy-openblas, whose symbols have a prefix and a suffix."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line})
    except OSError:
        return None
    for p in paths:
        try:
            lib = ctypes.CDLL(p)
        except OSError:
            continue
        name = _symbol(lib, ("openblas_get_corename", "scipy_openblas_get_corename64_",
                             "scipy_openblas_get_corename", "openblas_get_corename64_"))
        if name is None:
            continue
        out = {"corename": name, "isa": OPENBLAS_CORES.get(name.lower()), "library": p}
        config = _symbol(lib, ("openblas_get_config", "scipy_openblas_get_config64_",
                               "scipy_openblas_get_config", "openblas_get_config64_"))
        if config:
            out["config"] = config
        return out
    return None


def numpy():
    if "numpy" not in sys.modules:
        return None
    try:
        from numpy._core import _multiarray_umath as m  # NumPy 2
    except ImportError:
        from numpy.core import _multiarray_umath as m  # NumPy 1
    features = getattr(m, "__cpu_features__", {})
    baseline = list(getattr(m, "__cpu_baseline__", []))
    dispatch = list(getattr(m, "__cpu_dispatch__", []))
    enabled = [f for f in dispatch if features.get(f)]
    return {"version": sys.modules["numpy"].__version__, "baseline": baseline, "dispatch": enabled,
            "dispatch_off": [f for f in dispatch if not features.get(f)],
            "isa": widest(NUMPY_FEATURES.get(f) for f in baseline + enabled)}


def torch():
    if "torch" not in sys.modules:
        return None
    t = sys.modules["torch"]
    cap = None
    try:
        cap = t.backends.cpu.get_cpu_capability()
    except AttributeError:  # torch before 2.1: the build configuration's line
        m = re.search(r"CPU capability usage: (\S+)", t.__config__.show())
        cap = m.group(1) if m else None
    return {"capability": cap, "isa": TORCH_CAPABILITIES.get(str(cap).lower()) if cap else None}


def numba():
    if "numba" not in sys.modules:
        return None
    from numba.core import config
    import llvmlite.binding as ll
    # what Numba passes LLVM (numba/core/codegen.py): the named CPU, or this one, with the features given
    # (empty: the named CPU's own) or this CPU's
    name = ll.get_host_cpu_name() if config.CPU_NAME is None else config.CPU_NAME  # "": LLVM's generic
    feats = config.CPU_FEATURES
    if feats is None:
        feats = ll.get_host_cpu_features().flatten()
    on = {f[1:] for f in feats.split(",") if f.startswith("+")}
    isa = next((lv for f, lv in LLVM_FEATURES if f in on), None) if on else NUMBA_CPUS.get(name.lower())
    out = {"cpu_name": name, "isa": isa}
    if config.CPU_FEATURES:  # given (this CPU's own list is long and says no more than "isa")
        out["features"] = config.CPU_FEATURES
    return out


def jax():
    if "jax" not in sys.modules:
        return None
    m = re.search(r"--xla_cpu_max_isa=(\S+)", os.environ.get("XLA_FLAGS", ""))
    # XLA says nothing of what it generated; its cap is what it was told (none: the CPU's best)
    return {"max_isa": m.group(1) if m else None,
            "isa": XLA_ISAS.get(m.group(1).lower()) if m else None}


def report():
    out = {}
    for name, probe in (("openblas", openblas), ("numpy", numpy), ("torch", torch), ("numba", numba),
                        ("jax", jax)):
        try:
            r = probe()
        except Exception as e:  # a report never fails the case
            r = {"error": f"{type(e).__name__}: {e}", "isa": None}
        if r is not None:
            out[name] = r
    env = {k: os.environ[k] for k in VARS if os.environ.get(k)}
    if env:
        out["env"] = env
    return out
