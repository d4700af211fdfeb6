"""galaxy baselines (docs/study-galaxy.md, docs/baselines.md): Mocz's 1024-8-3 network trained by
SciPy's own fmin_cg for max_iter iterations, on the matrix ("data layout") cost and gradient.

Inputs: X (m x 1024 float64, pixel / 255), y (m labels), X_test, y_test, theta0 (the suite's seeded
initial weights), hidden, lambda, max_iter. One call = one whole training from theta0.
J = sum(-y log a3 - (1-y) log(1-a3))/m + lambda/(2m)(sum Theta1[:,1:]^2 + sum Theta2[:,1:]^2).
Mocz's code rebuilds [1 X] with np.hstack in every cost and gradient call (the numpy row's `hstack`
form); the `matrix` forms build it once, as the suite's layout variant does. speedlab checks each form's
cost and gradient at theta0 against its own default variant before any time counts.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main  # noqa: E402

K = 3  # classes


class NumpyNet:
    """The matrix form: Z2 = [1 X] Theta1', one-hot labels by indexing, [1 X] built once."""

    def __init__(self, np, X, y, H, lam):
        self.np, self.m, self.N, self.H, self.lam = np, X.shape[0], X.shape[1], H, lam
        self.X = X
        self.X1 = np.hstack((np.ones((self.m, 1)), X))
        self.Y = np.zeros((self.m, K))
        self.Y[np.arange(self.m), y] = 1.0
        self.ones = np.ones((self.m, 1))

    def unpack(self, theta):
        n1 = self.H * (self.N + 1)
        return theta[:n1].reshape(self.H, self.N + 1), theta[n1:].reshape(K, self.H + 1)

    def sigmoid(self, z):
        return 1.0 / (1.0 + self.np.exp(-z))

    def a1(self):
        """[1 X], the input layer with its bias column."""
        return self.X1

    def cost(self, theta):
        np, (T1, T2) = self.np, self.unpack(theta)
        a2 = np.hstack((self.ones, self.sigmoid(self.a1() @ T1.T)))
        a3 = self.sigmoid(a2 @ T2.T)
        J = np.sum(-self.Y * np.log(a3) - (1.0 - self.Y) * np.log(1.0 - a3)) / self.m
        return J + self.lam / (2.0 * self.m) * (np.sum(T1[:, 1:] ** 2) + np.sum(T2[:, 1:] ** 2))

    def forward(self, T1, T2):
        a1 = self.a1()
        g2 = self.sigmoid(a1 @ T1.T)
        a2 = self.np.hstack((self.ones, g2))
        return a1, g2, a2, self.sigmoid(a2 @ T2.T)

    def backward(self, T1, T2, a1, g2, a2, a3):
        d3 = a3 - self.Y
        d2 = (d3 @ T2[:, 1:]) * g2 * (1.0 - g2)
        G1, G2 = d2.T @ a1 / self.m, d3.T @ a2 / self.m
        G1[:, 1:] += self.lam / self.m * T1[:, 1:]
        G2[:, 1:] += self.lam / self.m * T2[:, 1:]
        return self.np.concatenate((G1.ravel(), G2.ravel()))

    def grad(self, theta):
        T1, T2 = self.unpack(theta)
        return self.backward(T1, T2, *self.forward(T1, T2))

    def cost_grad(self, theta):
        """Both from one forward pass (the suite's valgrad row does the same in C)."""
        np, (T1, T2) = self.np, self.unpack(theta)
        a1, g2, a2, a3 = self.forward(T1, T2)
        J = np.sum(-self.Y * np.log(a3) - (1.0 - self.Y) * np.log(1.0 - a3)) / self.m
        J += self.lam / (2.0 * self.m) * (np.sum(T1[:, 1:] ** 2) + np.sum(T2[:, 1:] ** 2))
        return J, self.backward(T1, T2, a1, g2, a2, a3)


class NumpyHstackNet(NumpyNet):
    """Mocz's own spelling of the matrix form: [1 X] rebuilt by np.hstack in every cost and every gradient
    call (an m x 1025 copy each time), as the write-up's code reads."""

    def __init__(self, np, X, y, H, lam):
        super().__init__(np, X, y, H, lam)
        self.X1 = None

    def a1(self):
        return self.np.hstack((self.ones, self.X))


class TorchNet(NumpyNet):
    """The same matrix form in torch (float64); fmin_cg hands NumPy arrays in and out (from_numpy and
    .numpy() share memory, so nothing is copied). On a GPU (device), X and Y are uploaded once and each
    call copies the weights there and the gradient back, as the suite's cuda row does."""

    def __init__(self, np, X, y, H, lam, device="cpu"):
        import torch
        super().__init__(np, X, y, H, lam)
        self.t, self.device = torch, device
        self.X1t, self.Yt = torch.tensor(self.X1, device=device), torch.tensor(self.Y, device=device)
        self.onest = torch.ones((self.m, 1), dtype=torch.float64, device=device)

    def unpack(self, theta):
        return NumpyNet.unpack(self, self.t.from_numpy(theta).to(self.device))

    def cost(self, theta):
        t, (T1, T2) = self.t, self.unpack(theta)
        a2 = t.cat((self.onest, t.sigmoid(self.X1t @ T1.T)), dim=1)
        a3 = t.sigmoid(a2 @ T2.T)
        J = t.sum(-self.Yt * t.log(a3) - (1.0 - self.Yt) * t.log(1.0 - a3)) / self.m
        return (J + self.lam / (2.0 * self.m) * (t.sum(T1[:, 1:] ** 2) + t.sum(T2[:, 1:] ** 2))).item()

    def grad(self, theta):
        t, (T1, T2) = self.t, self.unpack(theta)
        g2 = t.sigmoid(self.X1t @ T1.T)
        a2 = t.cat((self.onest, g2), dim=1)
        d3 = t.sigmoid(a2 @ T2.T) - self.Yt
        d2 = (d3 @ T2[:, 1:]) * g2 * (1.0 - g2)
        G1, G2 = d2.T @ self.X1t / self.m, d3.T @ a2 / self.m
        G1[:, 1:] += self.lam / self.m * T1[:, 1:]
        G2[:, 1:] += self.lam / self.m * T2[:, 1:]
        return t.cat((G1.reshape(-1), G2.reshape(-1))).cpu().numpy()


def form(Net, valgrad=False, on_device=False):
    """valgrad: SciPy's minimize(method="CG", jac=True), fmin_cg's own algorithm fed cost and gradient
    from one pass (it keeps the gradient for the call at the same point that follows). on_device: the
    net on the settings' device (a GPU row)."""
    def make(inp, settings):
        import numpy as np
        from scipy.optimize import fmin_cg, minimize
        H, lam, max_iter = int(inp["hidden"]), inp["lambda"], int(inp["max_iter"])
        kw = {"device": settings.get("device") or "cuda"} if on_device else {}
        net = Net(np, inp["X"], inp["y"].astype(np.int64), H, lam, **kw)
        reference = NumpyNet(np, inp["X"], inp["y"].astype(np.int64), H, lam)  # for the accuracies
        theta0 = inp["theta0"]

        def accuracy(theta, X, y):
            T1, T2 = reference.unpack(theta)
            a2 = reference.sigmoid(np.hstack((np.ones((X.shape[0], 1)), X)) @ T1.T)
            a3 = reference.sigmoid(np.hstack((np.ones((X.shape[0], 1)), a2)) @ T2.T)
            return float(np.mean(np.argmax(a3, axis=1) == y))

        def call_valgrad():
            t0 = time.perf_counter()
            r = minimize(net.cost_grad, theta0.copy(), jac=True, method="CG",
                         options={"maxiter": max_iter, "gtol": 1e-5, "disp": False})
            return dict(theta=r.x, final_cost=r.fun, cost_calls=r.nfev, grad_calls=r.njev, warnflag=r.status,
                        iterations=r.nit, train_time_s=time.perf_counter() - t0)

        def call():  # one whole training: SciPy's fmin_cg from the suite's initial weights
            t0 = time.perf_counter()
            x, f, nfev, ngev, warn, allvecs = fmin_cg(net.cost, theta0.copy(), fprime=net.grad,
                                                      maxiter=max_iter, full_output=True, disp=False,
                                                      retall=True)
            return dict(theta=x, final_cost=f, cost_calls=nfev, grad_calls=ngev, warnflag=warn,
                        iterations=len(allvecs) - 1, train_time_s=time.perf_counter() - t0)

        def outputs(r):
            out = {k: v for k, v in r.items() if k != "theta"}
            out["train_acc"] = accuracy(r["theta"], inp["X"], inp["y"])
            out["test_acc"] = accuracy(r["theta"], inp["X_test"], inp["y_test"])
            return out

        def check():  # cost and gradient at theta0, which speedlab compares with its default variant,
            # from the functions the timed training calls (valgrad: the one pass giving both)
            t = theta0.copy()  # the inputs are read-only; a form may unpack its weights as views
            cost0, grad0 = net.cost_grad(t) if valgrad else (net.cost(t), net.grad(t))
            return {"cost0": cost0, "grad0": grad0}
        return call_valgrad if valgrad else call, outputs, check
    return make


if __name__ == "__main__":
    main({
        "numpy": {"matrix": form(NumpyNet), "hstack": form(NumpyHstackNet)},
        "numpy-valgrad": {"matrix": form(NumpyNet, valgrad=True)},
        "torch": {"matrix": form(TorchNet)},
        "torch-cuda": {"matrix": form(TorchNet, on_device=True)},
    })
