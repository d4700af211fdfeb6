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

Every form is first checked against an independent double-precision reference (rel. error <= the
suite's tolerance); a form that fails its check is reported as failed and not timed.

Run it with /usr/bin/python3 (Debian's python3-numpy 1.24, python3-scipy 1.10, python3-torch 1.13):
another python3 first on PATH may lack them.
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

# numpy, scipy and torch are imported in load_libraries(), after the thread environment is set:
# OpenBLAS and OpenMP read OMP_NUM_THREADS / OPENBLAS_NUM_THREADS once, when they are loaded.
np = None
torch = None
fmin_cg = None

PEERS = {  # peer -> the forms run by default, in order
    "entropy_mi": ["torch", "numpy"],
    "tensor_mean": ["numpy-kr", "torch-einsum"],
    "galaxy": ["numpy", "torch"],
    "mlp": ["numpy", "torch"],
}
EXTRA_FORMS = {"galaxy": ["numpy-hstack"]}  # run only when named in --only

# The suite's sizes (experiments/studies/*/*.c): full, and --quick (the suite's quick sizes).
EM_D, TM_D = 256, 32
SIZES = {
    "entropy_mi": {"full": 16384, "quick": 1024},   # B
    "tensor_mean": {"full": 8192, "quick": 256},    # N
    "galaxy": {"full": 300, "quick": 20},           # max_iter
    "mlp": {"full": 60000, "quick": 3000},          # training rows per epoch (batch 64)
}
MLP_BATCH, MLP_LR = 64, 0.1       # the study's batch and its first epoch's learning rate
MLP_QUICK_TEST = 2000             # the suite's --quick test rows
GALAXY_HIDDEN, GALAXY_LAMBDA = 8, 1.0

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GALAXY_DIRS = [os.path.join(REPO, "..", "shared", "data", "galaxy"), "/work/shared/data/galaxy"]
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


# ---- 1. entropy_mi (kernels/entropy_mi/em_factorized.c, experiments/studies/entropy_mi) -----------------
# H = -(1/B) sum_b sum_i p_bi^2, MI = (1/B) sum_b (sum_i p_bi^2)(sum_j q_bj^2), p, q row softmaxes (stable).
# Row sums in float32, the mean over rows in float64, as em_factorized does.

def em_numpy(X, Y):
    def sum_sq_softmax(Z):
        e = np.exp(Z - Z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        return (p * p).sum(axis=1)
    sp, sq = sum_sq_softmax(X), sum_sq_softmax(Y)
    sp64 = sp.astype(np.float64)
    return -sp64.mean(), (sp64 * sq).mean()


def em_torch(X, Y):
    p, q = torch.softmax(X, dim=1), torch.softmax(Y, dim=1)
    sp, sq = (p * p).sum(dim=1).double(), (q * q).sum(dim=1).double()
    return -sp.mean().item(), (sp * sq).mean().item()


def em_reference(X, Y, direct=False):
    """In float64. direct=True does the D x D pair sum in full (the definition; small B only)."""
    X, Y = X.astype(np.float64), Y.astype(np.float64)
    p = np.exp(X - X.max(axis=1, keepdims=True)); p /= p.sum(axis=1, keepdims=True)
    q = np.exp(Y - Y.max(axis=1, keepdims=True)); q /= q.sum(axis=1, keepdims=True)
    H = -(p * p).sum(axis=1).mean()
    if direct:
        MI = ((p[:, :, None] * q[:, None, :]) ** 2).sum(axis=(1, 2)).mean()
    else:
        MI = ((p * p).sum(axis=1) * (q * q).sum(axis=1)).mean()
    return H, MI


def peer_entropy_mi(form, B, ctx):
    seed = ctx.seed
    # the identity itself, against the full D x D sum, at a small B (rows 0..63 of the suite's B = 64 inputs)
    Xs, Ys = sn_normals(seed, 64, 0, 64 * EM_D).reshape(64, EM_D), sn_normals(seed, 64, 1, 64 * EM_D).reshape(64, EM_D)
    _, fmi = em_reference(Xs, Ys)
    dh, dmi = em_reference(Xs, Ys, direct=True)
    require(abs(fmi - dmi) <= 1e-12 * abs(dmi), "factorisation != direct D x D sum at B = 64")
    X = sn_normals(seed, B, 0, B * EM_D).reshape(B, EM_D)
    Y = sn_normals(seed, B, 1, B * EM_D).reshape(B, EM_D)
    rh, rmi = em_reference(X, Y)
    if form == "numpy":
        fn = lambda: em_numpy(X, Y)
    else:
        Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)
        fn = lambda: em_torch(Xt, Yt)
    h, mi = fn()
    # the form's own code at the small size as well, against the direct D x D sum
    if form == "numpy":
        sh, smi = em_numpy(Xs, Ys)
    else:
        sh, smi = em_torch(torch.from_numpy(Xs), torch.from_numpy(Ys))
    err_small = max(abs(sh - dh) / abs(dh), abs(smi - dmi) / abs(dmi))
    err = max(abs(h - rh) / abs(rh), abs(mi - rmi) / abs(rmi))
    require(err <= 1e-3 and err_small <= 1e-3, f"rel_err {err:.3g} (B = 64: {err_small:.3g}) > 1e-3")
    return dict(fn=fn, size=f"B={B}", size_value=B, check=f"rel_err {err:.1e}",
                extra={"rel_err": err, "H": h, "MI": mi, "D": EM_D})


# ---- 2. tensor_mean (kernels/tensor_mean/tm_blas.c, experiments/studies/tensor_mean) --------------------
# A[i,j,k] = (1/N) sum_n tanh(x_ni) tanh(y_nj) tanh(z_nk); tanh is part of the timed work (as in tm_blas).

def tm_numpy_kr(X, Y, Z):
    N, D = X.shape
    a, b, c = np.tanh(X), np.tanh(Y), np.tanh(Z)
    kr = (a[:, :, None] * b[:, None, :]).reshape(N, D * D)  # Khatri-Rao product, KR[n, i*D + j] = a_ni b_nj
    A = kr.T @ c                                             # one sgemm (kr.T is a view: no copy)
    A *= np.float32(1.0 / N)                                 # tm_blas folds 1/N into sgemm's alpha
    return A.reshape(D, D, D)


def tm_torch_einsum(X, Y, Z):
    return torch.einsum("ni,nj,nk->ijk", torch.tanh(X), torch.tanh(Y), torch.tanh(Z)) / X.shape[0]


def tm_inputs(seed, N):
    return [sn_normals(seed, N, 10 + s, N * TM_D).reshape(N, TM_D) for s in range(3)]


def tm_reference(X, Y, Z, direct=False):
    a, b, c = (np.tanh(V.astype(np.float64)) for V in (X, Y, Z))
    N, D = a.shape
    if direct:  # the definition as written, for small N
        return np.einsum("ni,nj,nk->ijk", a, b, c) / N
    return ((a[:, :, None] * b[:, None, :]).reshape(N, D * D).T @ c).reshape(D, D, D) / N


def peer_tensor_mean(form, N, ctx):
    Xs, Ys, Zs = tm_inputs(ctx.seed, 64)
    ref_small = tm_reference(Xs, Ys, Zs, direct=True)
    require(rel_err(tm_reference(Xs, Ys, Zs), ref_small) <= 1e-12, "Khatri-Rao reference != einsum at N = 64")
    X, Y, Z = tm_inputs(ctx.seed, N)
    ref = tm_reference(X, Y, Z)
    if form == "numpy-kr":
        small = tm_numpy_kr(Xs, Ys, Zs)
        fn = lambda: tm_numpy_kr(X, Y, Z)
    else:
        small = tm_torch_einsum(*(torch.from_numpy(V) for V in (Xs, Ys, Zs))).numpy()
        Xt, Yt, Zt = (torch.from_numpy(V) for V in (X, Y, Z))
        fn = lambda: tm_torch_einsum(Xt, Yt, Zt)
    A = fn()
    A = A.numpy() if hasattr(A, "numpy") else A
    require(A.dtype == np.float32, f"result is {A.dtype}, not float32")
    err, err_small = rel_err(A, ref), rel_err(small, ref_small)
    require(err <= 1e-3 and err_small <= 1e-3, f"rel_err {err:.3g} (N = 64: {err_small:.3g}) > 1e-3")
    return dict(fn=fn, size=f"N={N}", size_value=N, check=f"rel_err {err:.1e}",
                extra={"rel_err": err, "D": TM_D})


# ---- 3. galaxy (experiments/studies/galaxy/galaxy.c, kernels/galaxy/layout.c, seed 002 section 2.2) -----
# 1024-8-3, sigmoid on both layers, bias units, J = sum(-y log a3 - (1-y) log(1-a3))/m
# + lambda/(2m)(sum Theta1[:,1:]^2 + sum Theta2[:,1:]^2), lambda = 1, float64, X = pixels/255.

def galaxy_data_dir(ctx):
    for d in ([ctx.galaxy_data] if ctx.galaxy_data else GALAXY_DIRS):
        if os.path.isfile(os.path.join(d, "train.csv")):
            return d
    raise Skipped("galaxy: no train.csv in " + " or ".join(GALAXY_DIRS) + " (pass --galaxy-data DIR)")


def galaxy_load(path):
    """Rows label,p0,...,p1023 as experiments/data/galaxy_csv.c reads them: X = pixel / 255 (float64)."""
    data = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
    require(data.shape[1] == 1025, f"{path}: {data.shape[1]} columns, want 1025")
    return data[:, 1:] / 255.0, data[:, 0].astype(np.int64)


def galaxy_theta0(seed, n):
    """galaxy.c's initial weights: uniform in [-0.2, 0.2] from splitmix64 started at the seed."""
    return (splitmix_draws(seed, n) >> np.uint64(11)).astype(np.float64) / 9007199254740992.0 * 0.4 - 0.2


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


class GalaxyNumpy:
    """Matrix form (the write-up's "data layout" step): Z2 = [1 X] Theta1', one-hot labels by indexing.
    [1 X] is built once here (as the suite's layout variant, which makes no per-call copies), unless
    hstack=True, which rebuilds it on every call as Mocz's code does."""

    def __init__(self, X, y, H, K, lam, hstack=False):
        self.X, self.m, self.N, self.H, self.K, self.lam, self.hstack = X, X.shape[0], X.shape[1], H, K, lam, hstack
        self.X1 = None if hstack else np.hstack((np.ones((self.m, 1)), X))
        self.Y = np.zeros((self.m, K)); self.Y[np.arange(self.m), y] = 1.0
        self.ones = np.ones((self.m, 1))

    def unpack(self, theta):
        n1 = self.H * (self.N + 1)
        return theta[:n1].reshape(self.H, self.N + 1), theta[n1:].reshape(self.K, self.H + 1)

    def a1(self):
        return np.hstack((self.ones, self.X)) if self.hstack else self.X1

    def cost(self, theta):
        T1, T2 = self.unpack(theta)
        a2 = np.hstack((self.ones, sigmoid(self.a1() @ T1.T)))
        a3 = sigmoid(a2 @ T2.T)
        J = np.sum(-self.Y * np.log(a3) - (1.0 - self.Y) * np.log(1.0 - a3)) / self.m
        return J + self.lam / (2.0 * self.m) * (np.sum(T1[:, 1:] ** 2) + np.sum(T2[:, 1:] ** 2))

    def grad(self, theta):
        T1, T2 = self.unpack(theta)
        a1 = self.a1()
        z2 = a1 @ T1.T
        g2 = sigmoid(z2)
        a2 = np.hstack((self.ones, g2))
        a3 = sigmoid(a2 @ T2.T)
        d3 = a3 - self.Y
        d2 = (d3 @ T2[:, 1:]) * g2 * (1.0 - g2)
        G1 = d2.T @ a1 / self.m
        G2 = d3.T @ a2 / self.m
        G1[:, 1:] += self.lam / self.m * T1[:, 1:]
        G2[:, 1:] += self.lam / self.m * T2[:, 1:]
        return np.concatenate((G1.ravel(), G2.ravel()))

    def predict(self, theta, X):
        T1, T2 = self.unpack(theta)
        a2 = sigmoid(np.hstack((np.ones((X.shape[0], 1)), X)) @ T1.T)
        return np.argmax(sigmoid(np.hstack((np.ones((X.shape[0], 1)), a2)) @ T2.T), axis=1)


class GalaxyTorch(GalaxyNumpy):
    """The same matrix form in torch (float64 tensors); fmin_cg hands NumPy arrays in and out
    (torch.from_numpy shares their memory, .numpy() likewise)."""

    def __init__(self, X, y, H, K, lam):
        super().__init__(X, y, H, K, lam)
        self.X1t, self.Yt = torch.from_numpy(self.X1), torch.from_numpy(self.Y)
        self.onest = torch.ones((self.m, 1), dtype=torch.float64)

    def unpack_t(self, theta):
        n1 = self.H * (self.N + 1)
        th = torch.from_numpy(theta)
        return th[:n1].reshape(self.H, self.N + 1), th[n1:].reshape(self.K, self.H + 1)

    def cost(self, theta):
        T1, T2 = self.unpack_t(theta)
        a2 = torch.cat((self.onest, torch.sigmoid(self.X1t @ T1.T)), dim=1)
        a3 = torch.sigmoid(a2 @ T2.T)
        J = torch.sum(-self.Yt * torch.log(a3) - (1.0 - self.Yt) * torch.log(1.0 - a3)) / self.m
        J = J + self.lam / (2.0 * self.m) * (torch.sum(T1[:, 1:] ** 2) + torch.sum(T2[:, 1:] ** 2))
        return J.item()

    def grad(self, theta):
        T1, T2 = self.unpack_t(theta)
        g2 = torch.sigmoid(self.X1t @ T1.T)
        a2 = torch.cat((self.onest, g2), dim=1)
        d3 = torch.sigmoid(a2 @ T2.T) - self.Yt
        d2 = (d3 @ T2[:, 1:]) * g2 * (1.0 - g2)
        G1 = d2.T @ self.X1t / self.m
        G2 = d3.T @ a2 / self.m
        G1[:, 1:] += self.lam / self.m * T1[:, 1:]
        G2[:, 1:] += self.lam / self.m * T2[:, 1:]
        return torch.cat((G1.reshape(-1), G2.reshape(-1))).numpy()


def galaxy_cost_loop(X, y, theta, H, K, lam):
    """Mocz's original per-example cost (the suite's `default`), an independent reference."""
    m, N = X.shape
    T1 = theta[:H * (N + 1)].reshape(H, N + 1)
    T2 = theta[H * (N + 1):].reshape(K, H + 1)
    J = 0.0
    for t in range(m):
        a2 = sigmoid(T1[:, 0] + T1[:, 1:] @ X[t])
        a3 = sigmoid(T2[:, 0] + T2[:, 1:] @ a2)
        yv = np.zeros(K); yv[y[t]] = 1.0
        J += np.sum(-yv * np.log(a3) - (1.0 - yv) * np.log(1.0 - a3))
    return J / m + lam / (2.0 * m) * (np.sum(T1[:, 1:] ** 2) + np.sum(T2[:, 1:] ** 2))


def peer_galaxy(form, maxiter, ctx):
    d = galaxy_data_dir(ctx)
    X, y = galaxy_load(os.path.join(d, "train.csv"))
    test = galaxy_load(os.path.join(d, "test.csv")) if os.path.isfile(os.path.join(d, "test.csv")) else None
    H, K, lam = GALAXY_HIDDEN, 3, GALAXY_LAMBDA
    nt = H * (X.shape[1] + 1) + K * (H + 1)
    theta0 = galaxy_theta0(ctx.seed, nt)
    ref = GalaxyNumpy(X, y, H, K, lam)
    # the matrix-form cost against the per-example loop; its gradient against central differences
    c0 = ref.cost(theta0)
    c_loop = galaxy_cost_loop(X, y, theta0, H, K, lam)
    require(abs(c0 - c_loop) <= 1e-12 * abs(c_loop), f"matrix cost {c0!r} != loop cost {c_loop!r}")
    g0 = ref.grad(theta0)
    rng = np.random.default_rng(0)
    idx = np.concatenate(([0, 1, nt - 1, nt - H - 1], rng.integers(0, nt, 6)))  # biases, Theta2, random
    fd = []
    for i in idx:
        e = np.zeros(nt); e[i] = 1e-5
        fd.append((ref.cost(theta0 + e) - ref.cost(theta0 - e)) / 2e-5)
    fd_err = float(np.max(np.abs(np.array(fd) - g0[idx])) / np.max(np.abs(g0)))
    require(fd_err <= 1e-6, f"gradient vs central differences: {fd_err:.3g}")
    if form == "numpy":
        model = ref
    elif form == "numpy-hstack":
        model = GalaxyNumpy(X, y, H, K, lam, hstack=True)
    else:
        model = GalaxyTorch(X, y, H, K, lam)
    err = max(abs(model.cost(theta0) - c0) / abs(c0), max_rel(model.grad(theta0), g0))
    require(err <= 1e-10, f"cost/gradient differ from the NumPy reference by {err:.3g} (> 1e-10)")
    out = {}

    def train():
        xopt, fopt, nfev, ngev, warn = fmin_cg(model.cost, theta0.copy(), fprime=model.grad, maxiter=maxiter,
                                               full_output=True, disp=False)
        out.update(theta=xopt, final_cost=float(fopt), nfev=int(nfev), ngev=int(ngev), warnflag=int(warn))

    def after():  # the training must have lowered a finite cost
        require(np.isfinite(out["final_cost"]) and out["final_cost"] < c0,
                f"final cost {out['final_cost']} not finite or not below the initial {c0}")
        ex = {k: out[k] for k in ("final_cost", "nfev", "ngev", "warnflag")}
        ex.update(initial_cost=c0, check_rel_err=err, fd_rel_err=fd_err, max_iter=maxiter, m=int(X.shape[0]))
        ex["train_acc"] = float(np.mean(ref.predict(out["theta"], X) == y))
        if test is not None:
            ex["test_acc"] = float(np.mean(ref.predict(out["theta"], test[0]) == test[1]))
        return ex, f"cost {c0:.4f}->{out['final_cost']:.4f}, {out['nfev']}/{out['ngev']} calls"

    # one cost and one gradient call before timing (BLAS and torch first-call set-up), not a whole run
    model.cost(theta0); model.grad(theta0)
    return dict(fn=train, after=after, size=f"max_iter={maxiter}", size_value=maxiter, check=f"rel_err {err:.1e}",
                extra={"check_rel_err": err, "fd_rel_err": fd_err}, warmup=0)


# ---- 4. mlp (experiments/studies/mlp, kernels/mlp/mlp_common.c, experiments/train/train.c) ---------------
# 784-128-128-10, ReLU, softmax cross-entropy (mean over the batch), He initialisation, float32,
# minibatch SGD at batch 64, lr 0.1 (the first epoch of the study's schedule), the suite's shuffle.
# A step = gather the batch (uint8 -> float32 / 255), forward, backward, update; the epoch's time is
# its steps only (train.c's epoch_s), the evaluation after it is not timed.

def idx_load(path, magic):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        raw = bytearray(f.read())  # writable, so torch.from_numpy can share it without a warning
    got = int.from_bytes(raw[0:4], "big")
    require(got == magic, f"{path}: magic {got:#x}, want {magic:#x}")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    require(data.size == int(np.prod(dims)), f"{path}: {data.size} bytes of data, header says {dims}")
    return data.reshape(dims[0], -1)


def mlp_data(ctx):
    d = ctx.mnist_data or MNIST_DIR
    files = {}
    for split in ("train", "t10k"):
        for kind, magic in (("images-idx3-ubyte", 0x803), ("labels-idx1-ubyte", 0x801)):
            name = next((os.path.join(d, f"{split}-{kind}{gz}") for gz in (".gz", "")
                         if os.path.isfile(os.path.join(d, f"{split}-{kind}{gz}"))), None)
            if name is None:
                raise Skipped(f"mlp: no {split}-{kind}[.gz] in {d} (install Debian's dataset-fashion-mnist "
                              "or pass --mnist-data DIR)")
            files[split, kind] = idx_load(name, magic)
    return (files["train", "images-idx3-ubyte"], files["train", "labels-idx1-ubyte"].ravel(),
            files["t10k", "images-idx3-ubyte"], files["t10k", "labels-idx1-ubyte"].ravel())


def mlp_init_he(seed, dims):
    """kernels/mlp/mlp_common.c's mlp_init_he: W ~ N(0, 2/fan_in) by Box-Muller on splitmix64 (two draws
    per weight, W1 then W2 then W3 from one stream), biases 0. W is fan_in x fan_out (Z = X W + b)."""
    sizes = [(dims[i], dims[i + 1]) for i in range(3)]
    n = sum(a * b for a, b in sizes)
    u = ((splitmix_draws(seed ^ 0x6D6C7000, 2 * n) >> np.uint64(11)).astype(np.float64) + 1.0) / 9007199254740992.0
    u = u.reshape(n, 2)
    w = np.sqrt(-2.0 * np.log(u[:, 0])) * np.cos(6.283185307179586 * u[:, 1])
    P, at = [], 0
    for a, b in sizes:
        P += [(np.sqrt(2.0 / a) * w[at:at + a * b]).astype(np.float32).reshape(a, b), np.zeros(b, np.float32)]
        at += a * b
    return P  # [W1, b1, W2, b2, W3, b3]


def train_shuffle(n, seed, epoch):
    """experiments/train/train.c's Fisher-Yates from splitmix64 (draw k picks j for i = n-1-k)."""
    state = (seed * 0x100000001B3 + epoch * GOLDEN + 0x73687566) & M64
    i = np.arange(n - 1, 0, -1, dtype=np.uint64)
    js = (splitmix_draws(state, n - 1) % (i + np.uint64(1))).tolist()
    perm = list(range(n))
    for k, j in enumerate(js):  # the swaps are sequential; the draws did not depend on them
        a = n - 1 - k
        perm[a], perm[j] = perm[j], perm[a]
    return np.array(perm, dtype=np.int64)


def mlp_loss_grad_numpy(P, X, y):
    """Mean cross-entropy of the batch and its gradient, by hand, in P's dtype (float32 for the timed
    form, float64 for the reference)."""
    W1, b1, W2, b2, W3, b3 = P
    B = X.shape[0]
    a1 = np.maximum(X @ W1 + b1, 0)
    a2 = np.maximum(a1 @ W2 + b2, 0)
    z3 = a2 @ W3 + b3
    e = np.exp(z3 - z3.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    rows = np.arange(B)
    loss = -np.log(np.maximum(p[rows, y], 1e-30)).mean()
    d3 = p
    d3[rows, y] -= 1
    d3 /= B
    d2 = (d3 @ W3.T) * (a2 > 0)
    d1 = (d2 @ W2.T) * (a1 > 0)
    return loss, [X.T @ d1, d1.sum(axis=0), a1.T @ d2, d2.sum(axis=0), a2.T @ d3, d3.sum(axis=0)]


class MlpNumpy:
    def __init__(self, P0, images, labels):
        self.P0, self.images, self.labels = P0, images, labels

    def reset(self):
        self.P = [w.copy() for w in self.P0]

    def batch(self, idx):
        return self.images[idx].astype(np.float32) * np.float32(1.0 / 255.0), self.labels[idx]

    def loss_grad(self, X, y):
        return mlp_loss_grad_numpy(self.P, X, y)

    def step(self, idx, lr):
        loss, G = mlp_loss_grad_numpy(self.P, *self.batch(idx))
        for w, g in zip(self.P, G):
            w -= lr * g  # lr is a float32 scalar: the update stays float32, in place
        return float(loss)

    def logits(self, X):
        W1, b1, W2, b2, W3, b3 = self.P
        return np.maximum(np.maximum(X @ W1 + b1, 0) @ W2 + b2, 0) @ W3 + b3


class MlpTorch:
    """nn.Linear layers (weight = W', so Z = X W + b as the suite's), F.cross_entropy, autograd and
    torch.optim.SGD: the way a PyTorch user writes it."""

    def __init__(self, P0, images, labels):
        nn = torch.nn
        self.P0 = P0
        self.images, self.labels = torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64))
        self.model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
        self.linears = [self.model[0], self.model[2], self.model[4]]

    def reset(self, lr=MLP_LR):
        with torch.no_grad():
            for k, lin in enumerate(self.linears):
                lin.weight.copy_(torch.from_numpy(self.P0[2 * k].T.copy()))
                lin.bias.copy_(torch.from_numpy(self.P0[2 * k + 1]))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr)

    def batch(self, idx):
        return self.images[idx].float().mul_(1.0 / 255.0), self.labels[idx]

    def loss_grad(self, X, y):
        self.model.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(self.model(torch.as_tensor(X)), torch.as_tensor(y).long())
        loss.backward()
        G = []
        for lin in self.linears:
            G += [lin.weight.grad.T.numpy(), lin.bias.grad.numpy()]
        return loss.item(), G

    def step(self, idx, lr):
        X, y = self.batch(idx)
        self.opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(self.model(X), y)
        loss.backward()
        self.opt.step()
        return loss.item()

    def logits(self, X):
        with torch.no_grad():
            return self.model(torch.from_numpy(X)).numpy()


def peer_mlp(form, n_train, ctx):
    tr_img, tr_lab, te_img, te_lab = mlp_data(ctx)
    n_test = MLP_QUICK_TEST if ctx.quick else te_img.shape[0]
    n_train = min(n_train, tr_img.shape[0])
    P0 = mlp_init_he(ctx.seed, (784, 128, 128, 10))
    perm = train_shuffle(tr_img.shape[0], ctx.seed, 0)  # over the whole set, as train.c; the first n_train used
    steps = n_train // MLP_BATCH                          # the last partial batch dropped, as train.c
    # check: the float64 hand-written gradient against central differences, then the form's float32
    # loss and gradient (its own code: autograd for torch) against it, on the first batch
    Xb = tr_img[perm[:MLP_BATCH]].astype(np.float64) / 255.0
    yb = tr_lab[perm[:MLP_BATCH]]
    P64 = [w.astype(np.float64) for w in P0]
    loss64, G64 = mlp_loss_grad_numpy(P64, Xb, yb)
    fd_err = 0.0
    gmax = max(np.max(np.abs(g)) for g in G64)
    for k, at in [(0, (300, 5)), (1, (3,)), (2, (7, 9)), (4, (3, 2)), (5, (4,))]:  # W1, b1, W2, W3, b3
        Pp, Pm = [w.copy() for w in P64], [w.copy() for w in P64]
        Pp[k][at] += 1e-6
        Pm[k][at] -= 1e-6
        fd = (mlp_loss_grad_numpy(Pp, Xb, yb)[0] - mlp_loss_grad_numpy(Pm, Xb, yb)[0]) / 2e-6
        fd_err = max(fd_err, abs(fd - G64[k][at]) / gmax)
    require(fd_err <= 1e-6, f"float64 gradient vs central differences: {fd_err:.3g}")
    model = (MlpNumpy if form == "numpy" else MlpTorch)(P0, tr_img, tr_lab)
    model.reset()
    loss32, G32 = model.loss_grad(Xb.astype(np.float32), yb)
    err = max(abs(loss32 - loss64) / abs(loss64), max_rel(np.concatenate([g.ravel() for g in G32]),
                                                           np.concatenate([g.ravel() for g in G64])))
    require(err <= 1e-3, f"loss/gradient of the first batch differ from float64 by {err:.3g} (> 1e-3)")
    batches = [perm[s * MLP_BATCH:(s + 1) * MLP_BATCH] for s in range(steps)]
    if form == "torch":
        batches = [torch.from_numpy(b) for b in batches]
    lr = np.float32(MLP_LR)
    out = {}

    def epoch():
        out["loss_sum"] = sum(model.step(b, lr) for b in batches)

    def after():  # evaluated after the epoch, untimed (train.c's evaluate)
        acc = float(np.mean(np.argmax(model.logits(te_img[:n_test].astype(np.float32) / np.float32(255.0)), axis=1)
                            == te_lab[:n_test]))
        train_loss = out["loss_sum"] / steps
        require(np.isfinite(train_loss) and acc >= 0.5, f"after one epoch: loss {train_loss}, test accuracy {acc}")
        return ({"train_loss": train_loss, "test_acc": acc, "steps": steps, "train_rows": n_train,
                 "test_rows": n_test, "check_rel_err": err, "fd_rel_err": fd_err},
                f"rel_err {err:.0e}, acc {acc:.3f}")

    # a few steps before timing (first-call set-up of BLAS, torch's allocator), then fresh weights
    for b in batches[:10]:
        model.step(b, lr)
    return dict(fn=epoch, prepare=model.reset, after=after, size=f"batch={MLP_BATCH} rows={n_train}",
                size_value=n_train, check=f"rel_err {err:.1e}", extra={}, warmup=0)


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
    global np, torch, fmin_cg
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    try:
        import numpy
        from scipy.optimize import fmin_cg as cg
    except ImportError as e:
        sys.exit(f"peers.py: {e}: run with /usr/bin/python3 (apt install python3-numpy python3-scipy python3-torch)")
    np, fmin_cg = numpy, cg
    try:
        import torch as t
        t.set_num_threads(threads)
        torch = t
    except ImportError:
        torch = None  # the torch forms are then reported as skipped


def run_one(name, form, ctx, reps, warmup, min_time):
    """Sets up, checks and times one form; returns its record (status ok, failed or skipped)."""
    size = SIZES[name]["quick" if ctx.quick else "full"]
    if name == "galaxy" and ctx.max_iter:
        size = ctx.max_iter
    rec = {"name": name, "form": form, "threads": ctx.threads, "quick": ctx.quick}
    try:
        if form.startswith("torch") and torch is None:
            raise Skipped("torch is not importable")
        p = PEERS_FN[name](form, size, ctx)
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


PEERS_FN = {"entropy_mi": peer_entropy_mi, "tensor_mean": peer_tensor_mean, "galaxy": peer_galaxy, "mlp": peer_mlp}


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
            "of 60000 rows at batch 64. --quick: B=1024, N=256, max_iter=20, 3000 rows (the suite's quick sizes). "
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
    ap.add_argument("--galaxy-data", metavar="DIR", help="directory with train.csv (and test.csv) "
                    "(default ../shared/data/galaxy from the repository, else /work/shared/data/galaxy)")
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
        reps = args.reps or {"entropy_mi": 5, "tensor_mean": 5, "galaxy": 5, "mlp": 3}[name]
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
