"""mlp baselines (docs/study-mlp.md, docs/baselines.md): the 784-128-128-10 ReLU network with softmax
cross-entropy (mean over the batch), trained by minibatch SGD on the suite's batches.

Inputs: images, labels (the training set, bytes), test_images, test_labels, P0 (the suite's He weights
in its layout: W1 n0 x n1, b1, W2 n1 x n2, b2, W3 n2 x n3, b3, float32), perms (every epoch's shuffle:
the C variants' batches in their order), lr (every epoch's rate), n0..n3, batch, n_train (rows per epoch).
One call = one whole training from P0; the check step is the first SGD step, whose loss and update
speedlab compares with its double-precision reference.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, training_probe  # noqa: E402


def shapes(inp):
    n = [int(inp[k]) for k in ("n0", "n1", "n2", "n3")]
    return [(n[0], n[1]), (n[1],), (n[1], n[2]), (n[2],), (n[2], n[3]), (n[3],)]


def split(P, inp):
    """Views of W1, b1, W2, b2, W3, b3 in the flat parameter vector P (no copies)."""
    out, at = [], 0
    for shp in shapes(inp):
        size = 1
        for s in shp:
            size *= s
        out.append(P[at:at + size].reshape(shp))
        at += size
    return out


def make_training(inp, np, new_model, step, accuracy, flat, batch=None, order=None):
    """The shared schedule: epochs of the given shuffles, the C variants' steps, test accuracy per epoch.
    order: an epoch's shuffle as the steps slice it (default: the host array itself); batch: a slice of
    it as (X, y) (default: gathered and scaled on the host, as train_gather). A step returns its loss
    as a number, or as a device tensor, summed there and read once an epoch."""
    B, n_train = int(inp["batch"]), int(inp["n_train"])
    images, labels = inp["images"], inp["labels"]
    scale = np.float32(1.0 / 255.0)  # as train_gather scales a byte

    def host_batch(idx):
        return images[idx].astype(np.float32) * scale, labels[idx].astype(np.int64)
    batch, order = batch or host_batch, order or (lambda perm: perm)

    def run_steps(model, rows, n, lr):  # the first n of an epoch's steps (whole batches), their loss sum
        losses = 0.0
        for s in range(min(n, n_train // B)):
            losses += step(model, *batch(rows[s * B:(s + 1) * B]), lr)
        return losses

    def call():
        model, t0 = new_model(), time.perf_counter()
        out = {"train_loss": [], "test_acc_series": [], "epoch_s": []}
        for perm, lr in zip(inp["perms"], inp["lr"]):
            e0 = time.perf_counter()
            # a device sum: read here, once an epoch (epoch_s includes the wait)
            losses = float(run_steps(model, order(perm), n_train // B, float(lr)))
            out["epoch_s"].append(time.perf_counter() - e0)
            out["train_loss"].append(losses / (n_train // B))
            out["test_acc_series"].append(accuracy(model))
        out.update(epochs=len(inp["lr"]), test_acc=out["test_acc_series"][-1],
                   train_time_s=time.perf_counter() - t0)
        return out

    def check():  # the first step of epoch 0 from P0: its loss and its update
        model = new_model()
        loss = float(step(model, *batch(order(inp["perms"][0])[:B]), float(inp["lr"][0])))
        return {"loss0": loss, "update0": flat(model).astype(np.float64) - inp["P0"].astype(np.float64)}
    probe = training_probe(new_model, lambda: order(inp["perms"][0]),
                           lambda model, rows, n: run_steps(model, rows, n, float(inp["lr"][0])))
    return call, (lambda r: r), check, probe


def numpy_by_hand(inp, settings):
    """The write-up's NumPy MLP: matrix forward and backward by hand, SGD in place."""
    import numpy as np
    Xt = inp["test_images"].astype(np.float32) * np.float32(1.0 / 255.0)
    yt = inp["test_labels"]

    def forward(P, X):
        W1, b1, W2, b2, W3, b3 = split(P, inp)
        a1 = np.maximum(X @ W1 + b1, 0)
        a2 = np.maximum(a1 @ W2 + b2, 0)
        return a1, a2, a2 @ W3 + b3

    def step(P, X, y, lr):
        W1, b1, W2, b2, W3, b3 = split(P, inp)
        a1, a2, z3 = forward(P, X)
        z3 -= z3.max(axis=1, keepdims=True)
        p = np.exp(z3)
        p /= p.sum(axis=1, keepdims=True)
        rows = np.arange(len(y))
        loss = -np.log(p[rows, y]).mean()
        d3 = p
        d3[rows, y] -= 1
        d3 /= len(y)
        d2 = (d3 @ W3.T) * (a2 > 0)
        d1 = (d2 @ W2.T) * (a1 > 0)
        lr = np.float32(lr)
        W3 -= lr * (a2.T @ d3); b3 -= lr * d3.sum(axis=0)
        W2 -= lr * (a1.T @ d2); b2 -= lr * d2.sum(axis=0)
        W1 -= lr * (X.T @ d1); b1 -= lr * d1.sum(axis=0)
        return float(loss)

    def accuracy(P):
        hits = sum(int((forward(P, Xt[i:i + 1000])[2].argmax(axis=1) == yt[i:i + 1000]).sum())
                   for i in range(0, len(yt), 1000))
        return hits / len(yt)
    return make_training(inp, np, lambda: inp["P0"].copy(), step, accuracy, lambda P: P)


def numpy_out_buffers(inp, settings):
    """The same by-hand MLP with every activation, delta and gradient in a buffer allocated once
    (np.matmul(..., out=), ufuncs in place): the NumPy user's remedy for allocation in a training loop."""
    import numpy as np
    B = int(inp["batch"])
    n = [int(inp[k]) for k in ("n0", "n1", "n2", "n3")]
    Xt = inp["test_images"].astype(np.float32) * np.float32(1.0 / 255.0)
    yt = inp["test_labels"]
    buffers = ([np.empty((B, k), dtype=np.float32) for k in (n[1], n[2], n[3], n[1], n[2])] +
               [np.empty((n[i], n[i + 1]), dtype=np.float32) for i in range(3)])
    rows = np.arange(B)

    def step(P, X, y, lr):
        W1, b1, W2, b2, W3, b3 = split(P, inp)
        a1, a2, p, d1, d2, G1, G2, G3 = buffers
        np.matmul(X, W1, out=a1); a1 += b1; np.maximum(a1, 0, out=a1)
        np.matmul(a1, W2, out=a2); a2 += b2; np.maximum(a2, 0, out=a2)
        np.matmul(a2, W3, out=p); p += b3
        p -= p.max(axis=1, keepdims=True)
        np.exp(p, out=p)
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.log(p[rows, y]).mean()
        p[rows, y] -= 1
        p /= B  # p is d3 now
        np.matmul(p, W3.T, out=d2); d2 *= a2 > 0
        np.matmul(d2, W2.T, out=d1); d1 *= a1 > 0
        lr = np.float32(lr)
        np.matmul(a2.T, p, out=G3); G3 *= lr; W3 -= G3; b3 -= lr * p.sum(axis=0)
        np.matmul(a1.T, d2, out=G2); G2 *= lr; W2 -= G2; b2 -= lr * d2.sum(axis=0)
        np.matmul(X.T, d1, out=G1); G1 *= lr; W1 -= G1; b1 -= lr * d1.sum(axis=0)
        return float(loss)

    def accuracy(P):
        W1, b1, W2, b2, W3, b3 = split(P, inp)
        hits = 0
        for i in range(0, len(yt), 1000):
            h = np.maximum(Xt[i:i + 1000] @ W1 + b1, 0)
            h = np.maximum(h @ W2 + b2, 0)
            hits += int(((h @ W3 + b3).argmax(axis=1) == yt[i:i + 1000]).sum())
        return hits / len(yt)
    return make_training(inp, np, lambda: inp["P0"].copy(), step, accuracy, lambda P: P)


def torch_net(torch, inp):
    n = [int(inp[k]) for k in ("n0", "n1", "n2", "n3")]
    return torch.nn.Sequential(torch.nn.Linear(n[0], n[1]), torch.nn.ReLU(), torch.nn.Linear(n[1], n[2]),
                               torch.nn.ReLU(), torch.nn.Linear(n[2], n[3]))


def torch_training(inp, compiled, device="cpu", resident=False):
    """The torch forms' training. compiled: the network's forward (and so its backward) by torch.compile,
    one network whose weights each training resets, so that its graph is compiled once. resident: the
    training set on `device` once, as bytes, each epoch's shuffle copied there once, each batch gathered
    and scaled there, and the losses summed there: nothing crosses, and the host waits for nothing, in a
    step."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    Xt = torch.from_numpy(inp["test_images"].astype(np.float32) / np.float32(255.0)).to(device)
    yt = torch.from_numpy(inp["test_labels"].astype(np.int64)).to(device)
    if compiled:
        from torch_compile import torch_compile
        net = torch_net(torch, inp).to(device)
        run = torch_compile(torch, net)

    def new_model():
        model = net if compiled else torch_net(torch, inp).to(device)
        W1, b1, W2, b2, W3, b3 = split(inp["P0"], inp)
        with torch.no_grad():
            for layer, W, b in zip(model[::2], (W1, W2, W3), (b1, b2, b3)):
                layer.weight.copy_(torch.from_numpy(W.T.copy()))  # Linear keeps out x in (copy_ moves it)
                layer.bias.copy_(torch.tensor(b))
        return model, torch.optim.SGD(model.parameters(), lr=0.1), run if compiled else model

    def step(model, X, y, lr):
        _, opt, forward = model
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad()
        if not resident:
            X, y = torch.from_numpy(X).to(device), torch.from_numpy(y).to(device)
        loss = F.cross_entropy(forward(X), y)
        loss.backward()
        opt.step()
        return loss.detach().double() if resident else loss.item()  # summed in double, as the C rows

    batch = order = None
    if resident:
        images = torch.tensor(inp["images"], device=device)
        labels = torch.tensor(inp["labels"].astype(np.int64), device=device)

        def order(perm):  # the epoch's shuffle there at once: a copy per step would wait for the GPU
            return torch.tensor(perm, dtype=torch.int64).to(device)  # int64: older torch indexes with no other

        def batch(i):
            return images[i].float() * (1.0 / 255.0), labels[i]

    def accuracy(model):
        with torch.no_grad():
            return float((model[0](Xt).argmax(dim=1) == yt).double().mean())

    def flat(model):  # back to the suite's layout
        parts = []
        for layer in model[0][::2]:
            parts += [layer.weight.detach().cpu().numpy().T.ravel(), layer.bias.detach().cpu().numpy()]
        return np.concatenate(parts)
    return make_training(inp, np, new_model, step, accuracy, flat, batch, order)


def torch_eager(inp, settings):
    """A PyTorch user's form: torch.nn layers from the suite's weights, F.cross_entropy, autograd and
    torch.optim.SGD (plain, no momentum: the study's update), its rate set per epoch."""
    return torch_training(inp, compiled=False)


def torch_compile_form(inp, settings):
    """The same training with the network under torch.compile (PyTorch 2's one-line speed-up: Inductor
    fuses the bias adds and ReLUs, forward and backward); compiled in the first step."""
    return torch_training(inp, compiled=True)


def torch_cuda_eager(inp, settings):
    """The eager training on the GPU (settings' device): model there, each batch (gathered on the host by
    the study's shuffle, as the other rows) copied there, a PyTorch user's plain move to CUDA."""
    return torch_training(inp, compiled=False, device=settings.get("device") or "cuda")


def torch_cuda_resident(inp, settings):
    """The eager training with the training set resident on the GPU: the bytes copied there once, each
    batch gathered and scaled there from the study's shuffle, the loss summed there and read once an
    epoch: the feed of the suite's cuda and cublas rows (feed=resident)."""
    return torch_training(inp, compiled=False, device=settings.get("device") or "cuda", resident=True)


if __name__ == "__main__":
    main({
        "numpy": {"by-hand": numpy_by_hand, "out-buffers": numpy_out_buffers},
        "torch": {"eager": torch_eager, "compile": torch_compile_form},
        "torch-cuda": {"eager": torch_cuda_eager, "resident": torch_cuda_resident},
    })
