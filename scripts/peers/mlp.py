"""The mlp peer: numpy and torch (one epoch of minibatch SGD on Fashion-MNIST).

Imported by peers.py only after common.load_libraries(): np and torch are taken from common, which
loads them once the thread environment is set."""
import gzip
import os

from common import (GOLDEN, M64, MLP_BATCH, MLP_LR, MLP_QUICK_TEST, MNIST_DIR, Skipped, max_rel, np, require,
                    splitmix_draws, torch)


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
