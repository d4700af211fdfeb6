"""cnn baselines (docs/study-cnn.md, docs/baselines.md): the write-up's PyTorch CPU code, torch.nn's
Conv2d 1->8 3x3, ReLU, MaxPool2d 2, Conv2d 8->16 3x3, ReLU, MaxPool2d 2, Flatten (400), Linear 400->128,
ReLU, Linear 128->10, F.cross_entropy, autograd, torch.optim.SGD with momentum (V = mu V + G, P -= lr V,
the study's form), on the suite's batches: every epoch's shuffle, the last partial batch a smaller step.

Inputs: images, labels, test_images, test_labels (bytes, scaled by 1/255 as train_gather does), P0 (the
suite's He weights in its layout: conv weights OIHW as PyTorch's, dense weights input-first, so
transposed for Linear), perms, rows, cols, batch, n_train, lr, momentum. One call = one whole training;
the check step is the first SGD step (its loss and update). Forms: eager (the write-up's),
channels-last, compile.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, training_probe  # noqa: E402


def torch_training(inp, channels_last=False, compiled=False, device="cpu"):
    """The torch forms' training. channels_last: model and batches in NHWC memory; compiled: the network
    under torch.compile, one network whose weights each training resets, so its graph is compiled once;
    device: where model and data live (on a GPU the training set is copied there once, as bytes, each
    batch is gathered there and the losses are summed there, read once an epoch, as the suite's cuda
    variant does)."""
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    B, n_train, lr, mu = int(inp["batch"]), int(inp["n_train"]), float(inp["lr"]), float(inp["momentum"])
    hw = (int(inp["rows"]), int(inp["cols"]))
    images, labels = inp["images"], inp["labels"]
    scale = np.float32(1.0 / 255.0)
    memory = torch.channels_last if channels_last else torch.contiguous_format
    Xt = torch.from_numpy(inp["test_images"].astype(np.float32) * scale).reshape(-1, 1, *hw).contiguous(
        memory_format=memory).to(device)
    yt = torch.from_numpy(inp["test_labels"].astype(np.int64)).to(device)
    if device != "cpu":  # resident: the bytes once, each batch gathered and scaled on the device
        images, labels = torch.tensor(images, device=device), torch.tensor(labels.astype(np.int64), device=device)

    def layers(net):  # the parameters in the suite's order, with their shapes there
        c1, c2, d1, d2 = net[0], net[3], net[7], net[9]
        return [(c1.weight, False), (c1.bias, False), (c2.weight, False), (c2.bias, False),
                (d1.weight, True), (d1.bias, False), (d2.weight, True), (d2.bias, False)]

    def new_net():
        net = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3), nn.ReLU(),
                            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 128), nn.ReLU(), nn.Linear(128, 10))
        net = net.to(device)
        return net.to(memory_format=memory) if channels_last else net

    if compiled:
        from torch_compile import torch_compile
        the_net = new_net()
        run = torch_compile(torch, the_net)

    def new_model():
        net = the_net if compiled else new_net()
        at = 0
        with torch.no_grad():
            for p, transposed in layers(net):
                shape = tuple(reversed(p.shape)) if transposed else tuple(p.shape)
                size = int(np.prod(shape))
                w = torch.tensor(inp["P0"][at:at + size].reshape(shape)).to(device)
                p.copy_(w.T if transposed else w)
                at += size
        return net, torch.optim.SGD(net.parameters(), lr=lr, momentum=mu), run if compiled else net

    def flat(net):
        return np.concatenate([(p.detach().T if t else p.detach()).cpu().numpy().ravel() for p, t in layers(net)])

    def order(perm):  # on a device, the epoch's shuffle there at once: a copy per step would wait for it
        return perm if device == "cpu" else torch.tensor(perm, dtype=torch.int64).to(device)  # int64: older torch

    def batch(idx):
        if device != "cpu":  # idx: a slice of order(perm), on the device
            X = (images[idx].float() * float(scale)).reshape(-1, 1, *hw)
            return X.contiguous(memory_format=memory), labels[idx]
        X = torch.from_numpy(images[idx].astype(np.float32) * scale).reshape(-1, 1, *hw)
        return X.contiguous(memory_format=memory), torch.from_numpy(labels[idx].astype(np.int64))

    def step(model, X, y):
        _, opt, forward = model
        opt.zero_grad()
        loss = F.cross_entropy(forward(X), y)
        loss.backward()
        opt.step()
        # on a device the loss stays there, summed, and is read once an epoch: no wait per step
        return loss.item() if device == "cpu" else loss.detach().double()

    def accuracy(net):
        with torch.no_grad():
            return float(sum(int((net(Xt[i:i + B]).argmax(dim=1) == yt[i:i + B]).sum())
                             for i in range(0, len(yt), B)) / len(yt))

    steps = -(-n_train // B)  # an epoch's: the last partial batch is a smaller step

    def run_steps(model, rows, n):  # the first n of an epoch's steps, their loss sum
        losses = 0.0
        for s in range(0, min(n * B, n_train), B):
            losses += step(model, *batch(rows[s:min(s + B, n_train)]))
        return losses

    def call():
        model, t0 = new_model(), time.perf_counter()
        out = {"train_loss": [], "test_acc_series": [], "epoch_s": []}
        for perm in inp["perms"]:
            e0 = time.perf_counter()
            losses = float(run_steps(model, order(perm), steps))  # a device sum: read here (epoch_s includes the wait)
            out["epoch_s"].append(time.perf_counter() - e0)
            out["train_loss"].append(losses / steps)
            out["test_acc_series"].append(accuracy(model[0]))
        out.update(epochs=len(inp["perms"]), train_time_s=time.perf_counter() - t0)
        return out

    def check():  # the first step from P0 with zero momentum: update = -lr G
        model = new_model()
        loss = float(step(model, *batch(order(inp["perms"][0])[:B])))
        return {"loss0": loss, "update0": flat(model[0]).astype(np.float64) - inp["P0"].astype(np.float64)}
    return call, (lambda r: r), check, training_probe(new_model, lambda: order(inp["perms"][0]), run_steps)


def torch_eager(inp, settings):
    """The write-up's PyTorch CPU code: torch.nn layers, autograd, torch.optim.SGD with momentum, eager."""
    return torch_training(inp)


def torch_channels_last(inp, settings):
    """The same with model and batches in torch.channels_last (NHWC), PyTorch's advice for convolutions
    on a CPU: oneDNN's convolutions run NHWC without reordering each call."""
    return torch_training(inp, channels_last=True)


def torch_compile_form(inp, settings):
    """The same with the network under torch.compile (PyTorch 2's one-line speed-up; Inductor fuses the
    ReLUs and pools around the convolutions and matmuls); compiled in the first step."""
    return torch_training(inp, compiled=True)


def torch_cuda(benchmark):
    def make(inp, settings):
        """The eager training on the GPU (settings' device), the training set resident there, cuDNN's
        algorithm search (torch.backends.cudnn.benchmark) off or on: off takes cuDNN's heuristic choice,
        on times the candidates at each new shape (the suite's cudnn and cudnn-heuristic rows)."""
        import torch
        call, outputs, check, probe = torch_training(inp, device=settings.get("device") or "cuda")

        def with_flag(f):  # one flag for the process: set by each call, since both forms are made first
            def run():
                torch.backends.cudnn.benchmark = benchmark
                return f()
            return run
        return with_flag(call), outputs, with_flag(check), with_flag(probe)
    return make


if __name__ == "__main__":
    main({"torch": {"eager": torch_eager, "channels-last": torch_channels_last, "compile": torch_compile_form},
          "torch-cuda": {"cudnn-heuristic": torch_cuda(False), "cudnn-benchmark": torch_cuda(True)}})
