"""What every peer module shares: the library handles (numpy, torch, fmin_cg, loaded after the thread
environment is set), the peers and their sizes, the suite's generator, the checks, the timing
harness and the environment recorded in the JSON. peers.py is the command line; kernels.py,
galaxy.py, mlp.py and cnn.py are the studies' forms."""
import datetime
import os
import platform
import sys
import time

# numpy, scipy and torch are imported in load_libraries(), after the thread environment is set:
# OpenBLAS and OpenMP read OMP_NUM_THREADS / OPENBLAS_NUM_THREADS once, when they are loaded.
# kernels.py, galaxy.py and mlp.py take them with `from common import np, torch`, so peers.py
# imports those modules only after load_libraries() has run (peer_functions()).
np = None
torch = None
fmin_cg = None
minimize = None  # scipy.optimize.minimize: galaxy's numpy-valgrad form (method="CG", jac=True)

PEERS = {  # peer -> the forms run by default, in order
    "entropy_mi": ["torch", "numpy"],
    "tensor_mean": ["numpy-kr", "torch-einsum"],
    "galaxy": ["numpy", "numpy-valgrad", "torch"],
    "mlp": ["numpy", "torch"],
    "cnn": ["torch"],
}
EXTRA_FORMS = {"galaxy": ["numpy-hstack"]}  # run only when named in --only

# The suite's sizes (experiments/studies/*/*.c): full, and --quick (the suite's quick sizes).
EM_D, TM_D = 256, 32
SIZES = {
    "entropy_mi": {"full": 16384, "quick": 1024},   # B
    "tensor_mean": {"full": 8192, "quick": 256},    # N
    "galaxy": {"full": 300, "quick": 20},           # max_iter
    "mlp": {"full": 60000, "quick": 3000},          # training rows per epoch (batch 64)
    "cnn": {"full": 60000, "quick": 3000},          # training rows per epoch (batch 512)
}
MLP_BATCH, MLP_LR = 64, 0.1       # the study's batch and its first epoch's learning rate
MLP_QUICK_TEST = 2000             # the suite's --quick test rows
CNN_BATCH, CNN_LR, CNN_MOMENTUM = 512, 0.01, 0.9  # the cnn study's settings (seed 004's)
GALAXY_HIDDEN, GALAXY_LAMBDA = 8, 1.0

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GALAXY_DIR = os.path.join(REPO, "data", "galaxy")   # the repository's copy (train.csv.gz, test.csv.gz)
MNIST_DIR = "/usr/share/datasets/fashion-mnist"


class CheckFailed(Exception):
    """A peer's result disagrees with its reference: it is reported, never timed."""


class Skipped(Exception):
    """A peer cannot run here (missing data or library): reported as skipped."""


# ---- the suite's generator (experiments/seeded_normal.h), so the peers see the suite's inputs ----------
M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix_draws(state, n):
    """The next n outputs of splitmix64 from `state` (sn_next), vectorised: output i mixes
    state + (i + 1) * GOLDEN (mod 2^64). NumPy's uint64 arrays wrap silently, as C does."""
    s = np.uint64(state) + np.arange(1, n + 1, dtype=np.uint64) * np.uint64(GOLDEN)
    z = (s ^ (s >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def sn_seed(seed, size, stream):
    return (seed ^ ((GOLDEN * (size + 1)) & M64) ^ ((0xBF58476D1CE4E5B9 * (stream + 1)) & M64)) & M64


def sn_normals(seed, size, stream, n):
    """sn_fill: n float32 standard normals by Box-Muller (n even here). The same values as the suite's
    up to the last bit of libm's log/cos/sin against NumPy's."""
    u = ((splitmix_draws(sn_seed(seed, size, stream), n) >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53
    rad, ang = np.sqrt(-2.0 * np.log(u[0::2])), 6.283185307179586 * u[1::2]
    out = np.empty(n, dtype=np.float32)
    out[0::2], out[1::2] = rad * np.cos(ang), rad * np.sin(ang)
    return out


def rel_err(x, ref):
    """Normwise relative error ||x - ref|| / ||ref|| (the suite's tensor_mean check)."""
    x, ref = np.asarray(x, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    return float(np.linalg.norm(x - ref) / np.linalg.norm(ref))


def max_rel(x, ref):
    """max |x - ref| / max |ref| (the suite's galaxy and mlp gradient checks)."""
    x, ref = np.asarray(x, dtype=np.float64).ravel(), np.asarray(ref, dtype=np.float64).ravel()
    return float(np.max(np.abs(x - ref)) / np.max(np.abs(ref)))


def require(ok, what):
    if not ok:
        raise CheckFailed(what)


# ---- timing, environment, output ---------------------------------------------------------------------
def time_it(fn, reps, warmup, min_time, prepare=None):
    """warmup untimed calls, then at least `reps` timed ones and until they add up to min_time
    (the suite's rule: kernels 0.2 s, training 0). prepare() runs before each call, untimed."""
    for _ in range(warmup):
        if prepare:
            prepare()
        fn()
    times = []
    while len(times) < reps or (sum(times) < min_time and len(times) < 10000):
        if prepare:
            prepare()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def cpu_info():
    info = {"model": platform.processor() or "unknown"}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return info
    first = text.split("\n\n")[0]
    fields = dict((k.strip(), v.strip()) for k, _, v in (l.partition(":") for l in first.splitlines()) if _)
    flags = set(fields.get("flags", "").split())
    info.update(model=fields.get("model name", "unknown"), family=fields.get("cpu family"),
                model_number=fields.get("model"), logical_cpus=text.count("processor\t:"),
                flags=sorted(flags & {"avx", "avx2", "fma", "f16c", "avx512f", "avx512bf16", "avx512_bf16"}))
    return info


def blas_libs():
    """The BLAS/OpenMP libraries actually loaded (Debian's alternatives decide which libblas NumPy gets)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {l.split()[-1] for l in f if "/" in l}
    except OSError:
        return []
    return sorted(p for p in paths if any(s in os.path.basename(p) for s in ("blas", "lapack", "gomp", "omp")))


def load_libraries(threads):
    global np, torch, fmin_cg, minimize
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    try:
        import numpy
        from scipy.optimize import fmin_cg as cg, minimize as mz
    except ImportError as e:
        sys.exit(f"peers.py: {e}: run with /usr/bin/python3 (apt install python3-numpy python3-scipy python3-torch)")
    np, fmin_cg, minimize = numpy, cg, mz
    try:
        import torch as t
        t.set_num_threads(threads)
        torch = t
    except ImportError:
        torch = None  # the torch forms are then reported as skipped


def torch_build():
    """ATen's CPU capability (the vector ISA its kernels dispatch to) and BLAS, from torch's build summary."""
    if not torch:
        return None
    text = torch.__config__.show()
    out = {}
    for line in text.splitlines():
        if "CPU capability usage:" in line:
            out["cpu_capability"] = line.split(":", 1)[1].strip()
    for key in ("BLAS_INFO", "LAPACK_INFO", "USE_OPENMP", "USE_MKLDNN"):
        at = text.find(key + "=")
        if at >= 0:
            out[key] = text[at + len(key) + 1:].split(",")[0].strip()
    return out


def environment():
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": platform.node(), "python": platform.python_version(), "executable": sys.executable,
        "numpy": np.__version__, "scipy": __import__("scipy").__version__,
        "torch": torch.__version__ if torch else None, "cpu": cpu_info(), "blas_libs": blas_libs(),
        "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
        "torch_threads": torch.get_num_threads() if torch else None,
        "torch_build": torch_build(),
        "command": [sys.executable] + sys.argv,
    }
