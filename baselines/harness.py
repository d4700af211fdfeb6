"""The protocol between speedlab and a baseline program (docs/baselines.md, "Protocol").

A study's program (entropy_mi.py, ...) defines its rows' forms and calls main(ROWS): ROWS maps a row's
name (the C variant's: numpy, torch ...) to its forms, {form name -> make}. A form is one way a user of
the framework writes the study's computation; make(inputs, settings) -> (call, outputs), (call,
outputs, check) or (call, outputs, check, probe): call() does the study's work once on the inputs (the
timed part); outputs(result) turns its result into numbers for speedlab. A kernel study's outputs of the
first call are what speedlab checks. A training study's call is a whole training, so it gives check():
its cheap first step (galaxy: cost and gradient at the initial weights) whose outputs speedlab checks
before the first training runs; probe(), where given, is a few steps of the first epoch as the
training runs them, and stands for the call when the form and the thread count are picked (else the
check does): one step cannot show a cost that a form pays per step and another per epoch.

speedlab writes one line of settings on stdin. We make every form of the row (or the one --param
form=NAME names), call each once and answer with one JSON line: each form's outputs, or why it could
not run. speedlab checks each form's outputs and answers "go" and the names of the forms that passed
(or "stop"). We time those briefly at each thread count, run the fastest form at its fastest count, and
answer with one line of repetition times. Tracebacks go to stderr, which speedlab keeps in the case's
folder.
"""
import ctypes
import importlib
import json
import os
import platform
import re
import statistics
import sys
import time
import traceback

import numpy as np

import isa as isa_levels  # baselines/isa.py: what each framework runs at

FORM_NAME = re.compile(r"[a-z0-9-]+\Z")  # the "go" line lists names separated by spaces
_protocol = None  # the pipe to speedlab; the program's own fd 1 goes to stderr (see main)


def send(obj):
    # JSON has no NaN: a NaN output becomes null, which fails speedlab's check as it should
    _protocol.write(json.dumps(obj, allow_nan=False, default=float) + "\n")
    _protocol.flush()


def keep_protocol_pipe():
    """A form or library that prints (print(), a verbose oneDNN) would write into the protocol's pipe:
    the pipe gets a descriptor of its own, and descriptor 1 becomes stderr."""
    global _protocol
    _protocol = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)


def clean(x):
    """Outputs as JSON numbers: NaN and infinities as None, arrays as lists."""
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [clean(v) for v in np.asarray(x, dtype=np.float64).ravel().tolist()]
    x = float(x)
    return x if np.isfinite(x) else None


def load_inputs(path):
    """inputs.json: name -> {"file", "dtype", "shape"} for an array speedlab wrote (read-only), or a
    plain value."""
    with open(path) as f:
        manifest = json.load(f)
    out = {}
    for name, v in manifest.items():
        if isinstance(v, dict) and "file" in v:
            a = np.fromfile(v["file"], dtype=v["dtype"])
            # every form gets the same arrays: one that wrote into them would change the others' inputs
            # (read-only at the base: a view of it cannot be made writable again)
            a.flags.writeable = False
            out[name] = a.reshape(v["shape"])
        else:
            out[name] = v
    return out


# ---- threads: each framework at the count that is fastest for it (docs/baselines.md, "Threads") ----

class _Blas:
    """OpenBLAS's thread calls under whichever names the loaded library exports: Debian's
    openblas_set_num_threads, or PyPI numpy's scipy-openblas build with its symbols renamed
    (scipy_openblas_set_num_threads64_)."""
    PREFIXES = ("openblas_", "scipy_openblas_")
    SUFFIXES = ("", "64_")

    def __init__(self, lib):
        for pre in self.PREFIXES:
            for suf in self.SUFFIXES:
                try:
                    self.set = getattr(lib, f"{pre}set_num_threads{suf}")
                    self.get = getattr(lib, f"{pre}get_num_threads{suf}")
                    return
                except AttributeError:
                    continue
        raise AttributeError("no openblas_set_num_threads under any known name")


def _openblas():
    """The OpenBLAS that NumPy loaded, found in our own memory map (no threadpoolctl on Debian 12)."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line}
    for p in sorted(paths):
        try:
            return _Blas(ctypes.CDLL(p))
        except (OSError, AttributeError):
            continue
    return None


def set_threads(n):
    """Sets every thread pool the loaded frameworks have that can change after start-up."""
    blas = _openblas()
    if blas:
        blas.set(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
    if "numba" in sys.modules:
        sys.modules["numba"].set_num_threads(min(n, sys.modules["numba"].config.NUMBA_NUM_THREADS))


def thread_settings():
    """What each pool is set to now, for the record."""
    s = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                     "NUMBA_NUM_THREADS", "XLA_FLAGS") if k in os.environ}
    blas = _openblas()
    if blas:
        s["openblas_threads"] = blas.get()
    if "torch" in sys.modules:
        s["torch_threads"] = sys.modules["torch"].get_num_threads()
    if "numba" in sys.modules:
        s["numba_threads"] = sys.modules["numba"].get_num_threads()
    if "jax" in sys.modules:
        s["jax"] = "XLA's own pool (all cores; not settable after start-up)"
    return s


def timed(call):
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def pick_threads(call, candidates):
    """Times calls at each candidate count (at least 3, up to 0.2 s worth, after one untimed call:
    a compiled form specialises on the thread count); returns the fastest count and every median."""
    probe = {}
    for n in candidates:
        set_threads(n)
        warm = timed(call)
        calls = max(3, min(10, int(0.2 / max(warm, 1e-6))))
        probe[str(n)] = statistics.median(timed(call) for _ in range(calls))
    best = int(min(probe, key=probe.get))
    set_threads(best)
    return best, probe


# ---- the protocol ----------------------------------------------------------------------------------

PROTOCOL = 2

# Steps in a training form's probe: enough that a per-step wait (a loss read each step, a batch copied
# from the host) shows against a form without one, few enough that probing every form at every thread
# count stays a small part of a case at the study's sizes (under 1 %; at --quick sizes the probes can
# take longer than the one training they pick for).
PROBE_STEPS = 8


def training_probe(new_model, first_rows, run_steps):
    """A training form's probe (make()'s fourth callable): run_steps(model, rows, n) runs the first n
    steps of an epoch over rows and returns their summed loss (a number, or a device tensor); the probe
    runs PROBE_STEPS of them on one model, made on the first call with first_rows() (the epoch's shuffle
    as the steps slice it: a per-epoch cost, outside the timed calls), and reads the loss at the end, as
    an epoch does."""
    state = {}

    def probe():
        if not state:
            state.update(model=new_model(), rows=first_rows())
        return float(run_steps(state["model"], state["rows"], PROBE_STEPS))
    return probe


def make_forms(forms, names, inputs, settings):
    """Makes each named form and calls it once (untimed: JIT compilation and lazy set-up happen here).
    Returns {name: (call, outputs, probe_call)} and {name: report entry}; a form that raises is left
    out, its entry saying why."""
    made, report = {}, {}
    for name in names:
        t0 = time.perf_counter()
        try:
            call, outputs, *steps = forms[name](inputs, settings)
            check = steps[0] if steps else None
            probe = steps[1] if len(steps) > 1 else check or call
            out = clean(check() if check else outputs(call()))
        except Exception as e:  # the form cannot run here (an old framework, no compiler): say why
            traceback.print_exc()
            report[name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        if os.environ.get("SPEEDLAB_BASELINE_CORRUPT"):  # the tests' planted wrong result
            out = {k: (None if v is None else [2 * x for x in v] if isinstance(v, list) else 2 * v)
                   for k, v in out.items()}
        made[name] = (call, outputs, probe)
        report[name] = {"outputs": out, "first_call_s": time.perf_counter() - t0}
    return made, report


def device_info(settings):
    """A GPU row's device and its libraries' versions, for the record ({} on the CPU)."""
    device = settings.get("device")
    if not device or device == "cpu":
        return {"device": device} if device else {}
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        tf32 = torch.backends.cudnn.allow_tf32 or torch.backends.cuda.matmul.allow_tf32
        return {"device": device, "device_name": torch.cuda.get_device_name(0),
                "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
                "fp32_math": "tf32 allowed" if tf32 else "full"}
    if "jax" in sys.modules:
        jax = sys.modules["jax"]
        full = getattr(jax.config, "jax_default_matmul_precision", None) == "highest"
        return {"device": device, "device_name": str(jax.devices()[0]),
                "fp32_math": "full" if full else "tf32 allowed"}
    return {"device": device}


def full_fp32_on_gpu(fw, module):
    """float32 products in full FP32 on a GPU, as the suite's cuda, cublas and cudnn rows compute them.
    PyTorch lets cuDNN's convolutions use TF32 tensor cores by default (10-bit mantissas: errors near
    1e-3, and a speed the FP32 rows cannot have); JAX does the same for its matmuls and convolutions."""
    if fw == "torch":
        module.backends.cudnn.allow_tf32 = False
        module.backends.cuda.matmul.allow_tf32 = False
    elif fw == "jax":
        module.config.update("jax_default_matmul_precision", "highest")


def first_report(forms, settings):
    fw = settings["framework"]
    on_cpu = settings.get("device") in (None, "cpu")
    if fw == "jax" and on_cpu:
        # a CPU row stays on the CPU on a GPU node, where JAX would take the GPU by default
        os.environ["JAX_PLATFORMS"] = "cpu"
    t0 = time.perf_counter()
    module = importlib.import_module(fw)
    t1 = time.perf_counter()
    if not on_cpu:
        full_fp32_on_gpu(fw, module)
    if fw == "jax" and on_cpu and module.devices()[0].platform != "cpu":
        raise RuntimeError(f"a CPU row, but JAX runs on {module.devices()[0].platform}")
    inputs = load_inputs(settings["inputs"])
    t2 = time.perf_counter()
    names = [settings["form"]] if settings.get("form") else list(forms)
    made, report = make_forms(forms, names, inputs, settings)
    if not made:
        send({"status": "error", "forms": report,
              "error": "; ".join(f"form {n}: {r['error']}" for n, r in report.items())})
        sys.exit(1)
    send({"status": "checked", "forms": report, "version": getattr(module, "__version__", "?"),
          "versions": {m: sys.modules[m].__version__ for m in ("numpy", "scipy", "torch", "numba", "jax")
                       if m in sys.modules},
          "python_version": platform.python_version(), **device_info(settings),
          "import_s": t1 - t0, "load_s": t2 - t1, "isa": isa_levels.report()})
    return made, report


def pick_form(made, passed, candidates):
    """Times every passed form at every candidate thread count (its probe call); returns the fastest
    form, its fastest count and every median ({form: {threads: s}}); a form that raises here is left
    out, its probe entry saying why."""
    probe = {}
    for name in passed:
        _, _, call = made[name]
        try:
            _, probe[name] = pick_threads(call, candidates)
        except Exception as e:
            traceback.print_exc()
            probe[name] = {"error": f"{type(e).__name__}: {e}"}
    timed_ok = [n for n in passed if "error" not in probe[n]]
    if not timed_ok:
        raise RuntimeError("every form raised in its probe: " +
                           "; ".join(f"{n}: {probe[n]['error']}" for n in passed))
    best = min(timed_ok, key=lambda n: min(probe[n].values()))
    threads = int(min(probe[best], key=probe[best].get))
    return best, threads, probe


def thread_candidates(settings):
    """The counts to probe: 1 and --threads; one for JAX on the CPU, whose XLA pool is fixed at start-up
    and uses every core (so the record says that count, not one a probe could not set)."""
    if settings["framework"] == "jax":
        return [max(settings["threads"])]
    return settings["threads"]


def repetitions(made, passed, settings):
    form, threads, probe = pick_form(made, passed, thread_candidates(settings))
    call, outputs, _ = made[form]
    set_threads(threads)
    for _ in range(settings["warmup"]):
        call()
    times, result = [], None
    while (len(times) < settings["reps"] or sum(times) < settings["min_time"]) and \
            len(times) < settings["max_reps"]:
        t0 = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - t0)
    send({"times_s": times, "form": form, "threads": threads, "form_probe_s": probe,
          "thread_probe_s": probe[form], "thread_settings": thread_settings(),
          "outputs": clean(outputs(result))})


def main(rows):
    settings = json.loads(sys.stdin.readline())
    if settings.get("protocol") != PROTOCOL:
        sys.exit(f"{sys.argv[0]}: protocol {settings.get('protocol')} is not {PROTOCOL} (speedlab and "
                 f"baselines/harness.py are from different versions)")
    keep_protocol_pipe()
    row, form = settings["row"], settings.get("form")
    bad = [n for r in rows.values() for n in r if not FORM_NAME.match(n)]
    if bad:
        sys.exit(f"{sys.argv[0]}: form names are lowercase letters, digits and '-': {', '.join(bad)}")
    if row not in rows:
        sys.exit(f"{sys.argv[0]}: no row '{row}' (this program has {', '.join(rows)})")
    if form and form not in rows[row]:
        send({"status": "error", "error": f"--param form={form}: row {row} has no form '{form}' "
                                          f"(its forms: {', '.join(rows[row])})"})
        sys.exit(1)
    try:
        made, report = first_report(rows[row], settings)
    except Exception as e:
        traceback.print_exc()
        send({"status": "error", "error": f"{type(e).__name__}: {e}"})
        sys.exit(1)
    words = sys.stdin.readline().split()
    if not words or words[0] != "go":
        return  # speedlab's check failed for every form: nothing is timed
    passed = [n for n in words[1:] if n in made]
    if not passed:
        sys.exit(f"{sys.argv[0]}: speedlab said go without a form this program made ({' '.join(words)})")
    repetitions(made, passed, settings)
