"""The cnn peer: torch (one epoch of the seed-004 network on Fashion-MNIST, SGD with momentum).

Imported by peers.py only after common.load_libraries(): np and torch are taken from common, which
loads them once the thread environment is set."""
import resource

from common import CNN_BATCH, CNN_LR, CNN_MOMENTUM, MLP_QUICK_TEST, Skipped, max_rel, np, require, torch
from mlp import mlp_data, train_shuffle


# ---- 5. cnn (experiments/studies/cnn, kernels/cnn/cnn_kernels.h) -------------------------------------
# conv 1->8 3x3 + ReLU, max-pool 2x2, conv 8->16 3x3 + ReLU, max-pool 2x2, dense 400->128 + ReLU,
# dense 128->10, softmax cross-entropy; float32; SGD lr 0.01 momentum 0.9 at batch 512, the last
# partial batch trained as a smaller batch (as the suite does; 60000 = 117 x 512 + 96). The network is
# torch.nn, autograd and torch.optim.SGD: what a PyTorch user writes (the write-up's own PyTorch CPU
# code). Weights: He normal from torch.manual_seed(seed) (the suite draws its own; the time does not
# depend on the values). A step = gather the batch (uint8 -> float32 / 255), forward, backward, update;
# the epoch's time is its steps only (the suite's epoch_s), the evaluation after it is not timed.

def cnn_model():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 128), nn.ReLU(), nn.Linear(128, 10))


class CnnTorch:
    def __init__(self, seed, images, labels):
        torch.manual_seed(seed)
        self.model = cnn_model()
        for m in self.model:
            if hasattr(m, "weight"):
                torch.nn.init.kaiming_normal_(m.weight, nonlinearity="relu")  # N(0, 2 / fan_in)
                torch.nn.init.zeros_(m.bias)
        self.P0 = [p.detach().clone() for p in self.model.parameters()]
        self.images = torch.from_numpy(images.reshape(-1, 1, 28, 28))
        self.labels = torch.from_numpy(labels.astype(np.int64))

    def reset(self):
        with torch.no_grad():
            for p, p0 in zip(self.model.parameters(), self.P0):
                p.copy_(p0)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=CNN_LR, momentum=CNN_MOMENTUM)

    def batch(self, idx):
        return self.images[idx].float().mul_(1.0 / 255.0), self.labels[idx]

    def step(self, idx):
        X, y = self.batch(idx)
        self.opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(self.model(X), y)
        loss.backward()
        self.opt.step()
        return loss.item()

    def loss_grad(self, model, X, y):
        model.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        return loss.item(), torch.cat([p.grad.reshape(-1) for p in model.parameters()]).numpy().astype(np.float64)


def double_copy(net, bias_shift=0.0):
    m64 = cnn_model().double()
    with torch.no_grad():
        for p64, p in zip(m64.parameters(), net.model.parameters()):
            p64.copy_(p.double())
            if p64.dim() == 1:
                p64.add_(bias_shift)
    return m64


def fd_error(net, m64, X64, y):
    """The float64 autograd gradient against central differences at three entries of every parameter
    tensor. The biases are shifted off zero first: with zero biases the background pixels put units
    exactly on the ReLU kink (and pool windows on ties), where a difference quotient is not a derivative."""
    _, G = net.loss_grad(m64, X64, y)
    params = list(m64.parameters())
    offsets = np.cumsum([0] + [p.numel() for p in params])
    err, gmax, h = 0.0, np.max(np.abs(G)), 1e-6
    for k, p in enumerate(params):
        flat = p.data.view(-1)
        for j in (0, p.numel() // 2, p.numel() - 1):
            keep = flat[j].item()
            with torch.no_grad():
                flat[j] = keep + h
                up = torch.nn.functional.cross_entropy(m64(X64), y).item()
                flat[j] = keep - h
                down = torch.nn.functional.cross_entropy(m64(X64), y).item()
                flat[j] = keep
            err = max(err, abs((up - down) / (2 * h) - G[offsets[k] + j]) / gmax)
    return err


def check_gradient(net, X, y):
    """The float32 network's loss and gradient on one batch against the same network in float64, whose
    autograd gradient is first checked against central differences (fd_error)."""
    X64 = X.double()
    fd_err = fd_error(net, double_copy(net, bias_shift=0.01), X64, y)
    require(fd_err <= 1e-6, f"float64 gradient vs central differences: {fd_err:.3g}")
    loss64, G64 = net.loss_grad(double_copy(net), X64, y)
    loss32, G32 = net.loss_grad(net.model, X, y)
    err = max(abs(loss32 - loss64) / abs(loss64), max_rel(G32, G64))
    require(err <= 1e-3, f"loss/gradient of the first batch differ from float64 by {err:.3g} (> 1e-3)")
    return err, fd_err


def peer_cnn(form, n_train, ctx):
    if form != "torch" or torch is None:
        raise Skipped("cnn: only the torch form exists, and torch is not importable")
    tr_img, tr_lab, te_img, te_lab = mlp_data(ctx)
    if tr_img.shape[1] != 784:
        raise Skipped(f"cnn: images of {tr_img.shape[1]} pixels; the network is for 28 x 28")
    n_test = MLP_QUICK_TEST if ctx.quick else te_img.shape[0]
    n_train = min(n_train, tr_img.shape[0])
    net = CnnTorch(ctx.seed, tr_img, tr_lab)
    perm = torch.from_numpy(train_shuffle(tr_img.shape[0], ctx.seed, 0))
    batches = [perm[s:min(s + CNN_BATCH, n_train)] for s in range(0, n_train, CNN_BATCH)]  # partial last kept
    net.reset()
    err, fd_err = check_gradient(net, *net.batch(batches[0]))
    out = {}

    def epoch():
        out["loss_sum"] = sum(net.step(b) for b in batches)

    def after():  # evaluated after the epoch, untimed (train.c's evaluate)
        with torch.no_grad():
            X = torch.from_numpy(te_img[:n_test].reshape(-1, 1, 28, 28)).float().mul_(1.0 / 255.0)
            acc = float((net.model(X).argmax(dim=1).numpy() == te_lab[:n_test]).mean())
        train_loss = out["loss_sum"] / len(batches)
        floor = 0.15 if ctx.quick else 0.5  # --quick: 6 steps at lr 0.01, barely above chance (0.1)
        require(np.isfinite(train_loss) and acc >= floor,
                f"after one epoch: loss {train_loss}, test accuracy {acc} (want >= {floor})")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
        return ({"train_loss": train_loss, "test_acc": acc, "steps": len(batches), "train_rows": n_train,
                 "test_rows": n_test, "check_rel_err": err, "fd_rel_err": fd_err, "peak_rss_bytes": peak},
                f"rel_err {err:.0e}, acc {acc:.3f}, peak RSS {peak / 2**20:.0f} MiB (whole process)")

    for b in batches[:5]:  # first-call set-up (oneDNN primitives, the allocator) untimed, then fresh weights
        net.step(b)
    return dict(fn=epoch, prepare=net.reset, after=after, size=f"batch={CNN_BATCH} rows={n_train}",
                size_value=n_train, check=f"rel_err {err:.1e}", extra={}, warmup=0)
