"""The galaxy peer: numpy, numpy-valgrad, torch and numpy-hstack (the 1024-8-3 network trained by SciPy's CG).

Imported by peers.py only after common.load_libraries(): np, torch and fmin_cg are taken from common,
which loads them once the thread environment is set."""
import gzip
import os

from common import (GALAXY_DIR, GALAXY_HIDDEN, GALAXY_LAMBDA, Skipped, fmin_cg, max_rel, minimize, np, require,
                    splitmix_draws, torch)


# ---- 3. galaxy (experiments/studies/galaxy/galaxy.c, kernels/galaxy/layout.c, seed 002 section 2.2) -----
# 1024-8-3, sigmoid on both layers, bias units, J = sum(-y log a3 - (1-y) log(1-a3))/m
# + lambda/(2m)(sum Theta1[:,1:]^2 + sum Theta2[:,1:]^2), lambda = 1, float64, X = pixels/255.

def galaxy_file(d, name):
    """DIR/NAME.csv, else DIR/NAME.csv.gz (the plain file wins, as galaxy_csv_find decides), or None."""
    for path in (os.path.join(d, name + ".csv"), os.path.join(d, name + ".csv.gz")):
        if os.path.isfile(path):
            return path
    return None


def galaxy_data_dir(ctx):
    d = ctx.galaxy_data or GALAXY_DIR
    if galaxy_file(d, "train"):
        return d
    raise Skipped(f"galaxy: no train.csv[.gz] in {d} (the repository's data/galaxy, or pass --galaxy-data DIR)")


def galaxy_load(path):
    """Rows label,p0,...,p1023 as experiments/data/galaxy_csv.c reads them, from a .csv or a .csv.gz:
    X = pixel / 255 (float64)."""
    if path.endswith(".gz"):
        with gzip.open(path, "rt") as f:
            data = np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2)
    else:
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

    def forward(self, T1, T2):
        a1 = self.a1()
        g2 = sigmoid(a1 @ T1.T)
        a2 = np.hstack((self.ones, g2))
        return a1, g2, a2, sigmoid(a2 @ T2.T)

    def backward(self, T1, T2, a1, g2, a2, a3):
        d3 = a3 - self.Y
        d2 = (d3 @ T2[:, 1:]) * g2 * (1.0 - g2)
        G1 = d2.T @ a1 / self.m
        G2 = d3.T @ a2 / self.m
        G1[:, 1:] += self.lam / self.m * T1[:, 1:]
        G2[:, 1:] += self.lam / self.m * T2[:, 1:]
        return np.concatenate((G1.ravel(), G2.ravel()))

    def grad(self, theta):
        T1, T2 = self.unpack(theta)
        return self.backward(T1, T2, *self.forward(T1, T2))

    def cost_grad(self, theta):
        """Cost and gradient from one forward pass (the suite's valgrad row; SciPy's minimize with
        jac=True asks for both at each point and keeps the gradient for the call that follows)."""
        T1, T2 = self.unpack(theta)
        a1, g2, a2, a3 = self.forward(T1, T2)
        reg = self.lam / (2.0 * self.m) * (np.sum(T1[:, 1:] ** 2) + np.sum(T2[:, 1:] ** 2))
        J = np.sum(-self.Y * np.log(a3) - (1.0 - self.Y) * np.log(1.0 - a3)) / self.m + reg
        return J, self.backward(T1, T2, a1, g2, a2, a3)

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
    X, y = galaxy_load(galaxy_file(d, "train"))
    test_path = galaxy_file(d, "test")
    test = galaxy_load(test_path) if test_path else None
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
    if form in ("numpy", "numpy-valgrad"):
        model = ref
    elif form == "numpy-hstack":
        model = GalaxyNumpy(X, y, H, K, lam, hstack=True)
    else:
        model = GalaxyTorch(X, y, H, K, lam)
    if form == "numpy-valgrad":
        J0, G0 = model.cost_grad(theta0)
        err = max(abs(J0 - c0) / abs(c0), max_rel(G0, g0))
    else:
        err = max(abs(model.cost(theta0) - c0) / abs(c0), max_rel(model.grad(theta0), g0))
    require(err <= 1e-10, f"cost/gradient differ from the NumPy reference by {err:.3g} (> 1e-10)")
    out = {}

    def train_valgrad():  # fmin_cg's own algorithm (_minimize_cg), fed cost and gradient together
        r = minimize(model.cost_grad, theta0.copy(), jac=True, method="CG",
                     options={"maxiter": maxiter, "gtol": 1e-5, "disp": False})
        out.update(theta=r.x, final_cost=float(r.fun), nfev=int(r.nfev), ngev=int(r.njev), warnflag=int(r.status))

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
    return dict(fn=train_valgrad if form == "numpy-valgrad" else train, after=after, size=f"max_iter={maxiter}", size_value=maxiter, check=f"rel_err {err:.1e}",
                extra={"check_rel_err": err, "fd_rel_err": fd_err}, warmup=0)
