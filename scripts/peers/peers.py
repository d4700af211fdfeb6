#!/usr/bin/python3
"""Times the "framework peers" that speedlab's issues quote: the same maths as four of the suite's
studies, written the way NumPy / SciPy / PyTorch users write it, on the suite's inputs and sizes.

Peers (name/form; scripts/peers/README.md says what each form computes and where in the suite the
definition comes from):

  entropy_mi/torch, entropy_mi/numpy     factorised H and MI of row softmaxes, B = 16384, D = 256
  tensor_mean/numpy-kr                   tanh, the N x D^2 Khatri-Rao product, one sgemm; N = 8192, D = 32
  tensor_mean/torch-einsum               tanh, torch.einsum('ni,nj,nk->ijk'); N = 8192, D = 32
  galaxy/numpy, galaxy/torch             matrix-form cost and gradient of the 1024-8-3 network under
                                         scipy.optimize.fmin_cg, maxiter = 300 (float64)
  galaxy/numpy-hstack                    (only when named in --only) as galaxy/numpy but building
                                         [1 X] with np.hstack on every call, as Mocz's code does
  mlp/numpy, mlp/torch                   one epoch of minibatch SGD at batch 64 (784-128-128-10,
                                         float32) on Fashion-MNIST; steps only, as the suite's epoch_s
  cnn/torch                              one epoch of seed 004's CNN (torch.nn, SGD momentum 0.9,
                                         lr 0.01, batch 512, the partial last batch kept); steps only

Every form is first checked against an independent double-precision reference (rel. error <= the
suite's tolerance); a form that fails its check is reported as failed and not timed.

Run it with /usr/bin/python3 (Debian's python3-numpy 1.24, python3-scipy 1.10, python3-torch 1.13):
another python3 first on PATH may lack them.

This file is the command line, the run of each form and the table; beside it, common.py (library
loading, sizes, the suite's generator, checks, timing harness, environment), kernels.py (entropy_mi,
tensor_mean), galaxy.py, mlp.py and cnn.py (each study's forms and their checks).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

# The other modules of this folder (common.py, kernels.py, galaxy.py, mlp.py), whatever the current
# directory and however Python was started.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import (EXTRA_FORMS, MNIST_DIR, PEERS, SIZES, CheckFailed, Skipped, blas_libs,  # noqa: E402
                    environment, load_libraries, time_it)


def run_one(name, form, ctx, reps, warmup, min_time):
    """Sets up, checks and times one form; returns its record (status ok, failed or skipped)."""
    size = SIZES[name]["quick" if ctx.quick else "full"]
    if name == "galaxy" and ctx.max_iter:
        size = ctx.max_iter
    rec = {"name": name, "form": form, "threads": ctx.threads, "quick": ctx.quick}
    try:
        if form.startswith("torch") and common.torch is None:
            raise Skipped("torch is not importable")
        p = peer_functions()[name](form, size, ctx)
    except Skipped as e:
        return dict(rec, status="skipped", why=str(e), size=str(size))
    except CheckFailed as e:
        return dict(rec, status="failed", why="check: " + str(e), size=str(size))
    w = p.get("warmup", warmup)
    times = time_it(p["fn"], reps, w, min_time, p.get("prepare"))
    extra, check = dict(p["extra"]), p["check"]
    if "after" in p:
        try:
            more, check = p["after"]()
            extra.update(more)
        except CheckFailed as e:
            return dict(rec, status="failed", why="check after the run: " + str(e), size=p["size"])
    if "nfev" in extra:  # galaxy: forms follow different CG trajectories, so give the time per call too
        extra["median_s_per_call"] = statistics.median(times) / (extra["nfev"] + extra["ngev"])
    return dict(rec, status="ok", size=p["size"], size_value=p["size_value"], median_s=statistics.median(times),
                min_s=min(times), reps=len(times), warmup=w, times_s=times, check=check, extra=extra)


def peer_functions():
    """peer -> its set-up function. The study modules take np and torch from common when they are
    imported, so they are imported here, after load_libraries() has set the thread environment."""
    import cnn
    import galaxy
    import kernels
    import mlp
    return {"entropy_mi": kernels.peer_entropy_mi, "tensor_mean": kernels.peer_tensor_mean,
            "galaxy": galaxy.peer_galaxy, "mlp": mlp.peer_mlp, "cnn": cnn.peer_cnn}


def fmt_s(x):
    return f"{x * 1e3:.2f} ms" if x < 1 else f"{x:.3f} s"


def print_table(records, out=sys.stdout):
    rows = [("peer", "form", "size", "thr", "median", "min", "reps", "check / note")]
    for r in records:
        if r["status"] == "ok":
            rows.append((r["name"], r["form"], r["size"], str(r["threads"]), fmt_s(r["median_s"]), fmt_s(r["min_s"]),
                         str(r["reps"]), r["check"]))
        else:
            rows.append((r["name"], r["form"], r["size"], str(r["threads"]), "-", "-", "-",
                         r["status"].upper() + ": " + r["why"]))
    w = [max(len(row[i]) for row in rows) for i in range(7)]
    for k, row in enumerate(rows):
        print("  ".join(c.ljust(w[i]) if i < 3 else c.rjust(w[i]) for i, c in enumerate(row[:7])) + "  " + row[7],
              file=out)
        if k == 0:
            print("-" * (sum(w) + 2 * 7 + len(row[7])), file=out)


def selected(only):
    """[(peer, form)] from --only (peer or peer/form, comma-separated; default: every default form)."""
    if not only:
        return [(p, f) for p in PEERS for f in PEERS[p]]
    out = []
    for item in only.split(","):
        name, _, form = item.strip().partition("/")
        if name not in PEERS:
            sys.exit(f"peers.py: --only {item!r}: no peer {name!r} (want one of {', '.join(PEERS)})")
        forms = PEERS[name] + EXTRA_FORMS.get(name, [])
        if form and form not in forms:
            sys.exit(f"peers.py: --only {item!r}: {name} has forms {', '.join(forms)}")
        out += [(name, f) for f in ([form] if form else PEERS[name])]
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=textwrap.fill(
            "Full sizes (the suite's): entropy_mi B=16384, tensor_mean N=8192, galaxy max_iter=300, mlp one epoch "
            "of 60000 rows at batch 64, cnn one epoch at batch 512. --quick: B=1024, N=256, max_iter=20, 3000 rows (the suite's quick sizes). "
            "Repetitions as the suite's runner: kernels 1 warm-up, 5 reps and at least 0.2 s of timed reps; galaxy "
            "5 reps, mlp 3, no warm-up run (a few untimed calls instead); --quick at most 2 reps.", 100) + "\n\n" +
            "forms:\n" + "\n".join(f"  {p}: {', '.join(PEERS[p] + EXTRA_FORMS.get(p, []))}" for p in PEERS) +
            "\n\nexamples:\n  /usr/bin/python3 scripts/peers/peers.py --quick\n"
            "  /usr/bin/python3 scripts/peers/peers.py --threads 1,2 --json peers.json\n"
            "  /usr/bin/python3 scripts/peers/peers.py --only entropy_mi/torch,galaxy --reps 3\n\n"
            "See scripts/peers/README.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", metavar="LIST", help="comma-separated peers or peer/form, e.g. "
                    "'entropy_mi,galaxy/numpy' (default: every peer's default forms)")
    ap.add_argument("--reps", type=int, metavar="N", help="timed repetitions (default: kernels 5, galaxy 5, mlp 3)")
    ap.add_argument("--warmup", type=int, default=1, metavar="N",
                    help="untimed calls before timing, kernels only (default 1)")
    ap.add_argument("--min-time", type=float, metavar="S",
                    help="kernels: repeat until the timed reps add up to S seconds (default 0.2; --quick 0)")
    ap.add_argument("--threads", default="1", metavar="N[,M]",
                    help="threads for OpenBLAS/OpenMP (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS "
                         "set before NumPy is imported) and torch.set_num_threads (default 1). A list runs "
                         "one child process per count, one after the other")
    ap.add_argument("--quick", action="store_true", help="the suite's quick sizes and at most 2 reps (a smoke check)")
    ap.add_argument("--max-iter", type=int, metavar="N", help="galaxy: CG iterations (default 300, --quick 20)")
    ap.add_argument("--seed", type=int, default=42, help="the suite's --seed: inputs, weights, shuffle (default 42)")
    ap.add_argument("--galaxy-data", metavar="DIR", help="directory with train.csv[.gz] (and test.csv[.gz]) "
                    "(default the repository's data/galaxy)")
    ap.add_argument("--mnist-data", metavar="DIR", help=f"Fashion-MNIST IDX files (default {MNIST_DIR})")
    ap.add_argument("--json", metavar="FILE", help="also write the records and the environment as JSON")
    a = ap.parse_args(argv)
    try:
        a.thread_list = [int(t) for t in a.threads.split(",")]
        assert all(t >= 1 for t in a.thread_list)
    except (ValueError, AssertionError):
        ap.error(f"--threads {a.threads!r}: want positive integers, comma-separated")
    if a.reps is not None and a.reps < 1:
        ap.error("--reps: want >= 1")
    return a



def sweep_threads(args, argv):
    """One child per thread count, one after the other (OpenBLAS fixes its pool at load time)."""
    records, envs = [], []
    base = []
    skip = False
    for a in argv:  # argv without --threads and --json
        if skip:
            skip = False
            continue
        if a in ("--threads", "--json"):
            skip = True
            continue
        if a.startswith(("--threads=", "--json=")):
            continue
        base.append(a)
    for t in args.thread_list:
        with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
            rc = subprocess.call([sys.executable, os.path.abspath(__file__)] + base + ["--threads", str(t), "--json", tmp.name])
            if rc != 0:
                sys.exit(f"peers.py: the run with --threads {t} exited with {rc}")
            with open(tmp.name) as f:
                doc = json.load(f)
        records += doc["records"]
        envs.append(doc["environment"])
        print()
    print("all thread counts:")
    print_table(records)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": envs[0], "environments": envs, "records": records}, f, indent=1)


class Ctx:
    pass


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if len(args.thread_list) > 1:
        return sweep_threads(args, argv)
    load_libraries(args.thread_list[0])
    ctx = Ctx()
    ctx.threads, ctx.quick, ctx.seed, ctx.max_iter = args.thread_list[0], args.quick, args.seed, args.max_iter
    ctx.galaxy_data, ctx.mnist_data = args.galaxy_data, args.mnist_data
    env = environment()
    print(f"peers: {env['cpu']['model']} ({env['cpu'].get('logical_cpus')} CPUs, {' '.join(env['cpu'].get('flags', []))}); "
          f"numpy {env['numpy']}, scipy {env['scipy']}, torch {env['torch']} "
          f"({(env['torch_build'] or {}).get('cpu_capability', '-')} kernels); threads {ctx.threads}; {env['date']}",
          flush=True)
    records = []
    for name, form in selected(args.only):
        kernel = name in ("entropy_mi", "tensor_mean")
        reps = args.reps or {"entropy_mi": 5, "tensor_mean": 5, "galaxy": 5, "mlp": 3, "cnn": 3}[name]
        if args.quick:
            reps = min(reps, 2)
        min_time = args.min_time if args.min_time is not None else (0.2 if kernel and not args.quick else 0.0)
        t0 = time.perf_counter()
        r = run_one(name, form, ctx, reps, args.warmup if kernel else 0, min_time if kernel else 0.0)
        r["wall_s"] = time.perf_counter() - t0  # set-up, checks and timing together
        records.append(r)
        status = fmt_s(r["median_s"]) if r["status"] == "ok" else r["status"] + ": " + r["why"]
        print(f"  {name}/{form}: {status}  ({r['wall_s']:.1f} s in all)", flush=True)
    env["blas_libs"] = blas_libs()  # again: torch and SciPy load theirs lazily
    print()
    print_table(records)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "records": records}, f, indent=1)
    return 1 if any(r["status"] == "failed" for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
