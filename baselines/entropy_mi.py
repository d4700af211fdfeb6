"""entropy_mi baselines (docs/study-entropy_mi.md, docs/baselines.md).

Inputs X, Y: B x 256 float32 logits. Outputs H = -(1/B) sum_b sum_i p_bi^2 and
MI = (1/B) sum_b sum_ij (p_bi q_bj)^2, where p, q are the row softmaxes of X and Y.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main  # noqa: E402


def numpy_einsum(inp, settings):
    """The NumPy user's form: the sums of squares of each row's softmax, then their product (the
    pair sum factorises); row sums in float32, the mean over rows in float64."""
    import numpy as np
    X, Y = inp["X"], inp["Y"]

    def sum_sq_softmax(Z):
        e = np.exp(Z - Z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        return np.einsum("bi,bi->b", p, p).astype(np.float64)

    def call():
        sp, sq = sum_sq_softmax(X), sum_sq_softmax(Y)
        return -sp.mean(), (sp * sq).mean()
    return call, lambda r: {"H": r[0], "MI": r[1]}


def numpy_square_sum(inp, settings):
    """The plainest NumPy spelling: the softmax in place in one buffer (exp, then divide by the row sum),
    each row's sum of squares as (p * p).sum(axis=1), float32 row sums, the mean over rows in float64."""
    import numpy as np
    X, Y = inp["X"], inp["Y"]

    def sum_sq_softmax(Z):
        p = np.exp(Z - Z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return (p * p).sum(axis=1).astype(np.float64)

    def call():
        sp, sq = sum_sq_softmax(X), sum_sq_softmax(Y)
        return -sp.mean(), (sp * sq).mean()
    return call, lambda r: {"H": r[0], "MI": r[1]}


def torch_bmm(inp, settings):
    """The write-up's PyTorch form: torch.bmm for each row's sum of squares of its softmax (a batch of
    1 x D by D x 1 products), the pair sum factorised. (The full D x D joint by bmm is O(B D^2): 36 s
    a call at B = 65536 here, which the C naive variant already represents.)"""
    import torch
    X, Y = torch.tensor(inp["X"]), torch.tensor(inp["Y"])

    def sum_sq(p):
        return torch.bmm(p.unsqueeze(1), p.unsqueeze(2)).flatten().double()

    def call():
        with torch.no_grad():
            sp = sum_sq(torch.softmax(X, dim=1))
            sq = sum_sq(torch.softmax(Y, dim=1))
            return -sp.mean().item(), (sp * sq).mean().item()
    return call, lambda r: {"H": r[0], "MI": r[1]}


def torch_square_sum(p):
    return (p * p).sum(dim=1).double()


def torch_entropy_mi(torch, X, Y):
    """torch.softmax per row, each row's sum of squares by (p * p).sum(1), the pair sum factorised."""
    sp = torch_square_sum(torch.softmax(X, dim=1))
    sq = torch_square_sum(torch.softmax(Y, dim=1))
    return -sp.mean(), (sp * sq).mean()


def torch_square_sum_form(inp, settings):
    """The plain PyTorch spelling: torch.softmax, then (p * p).sum(dim=1), float32 row sums, the mean
    over rows in float64 (what a user writes who does not reach for bmm)."""
    import torch
    X, Y = torch.tensor(inp["X"]), torch.tensor(inp["Y"])

    def call():
        with torch.no_grad():
            h, mi = torch_entropy_mi(torch, X, Y)
            return h.item(), mi.item()
    return call, lambda r: {"H": r[0], "MI": r[1]}


def torch_compile_form(inp, settings):
    """The square-sum form under torch.compile (PyTorch 2's way to fuse an eager graph: Inductor fuses
    softmax, square and row sum into one pass over each row); compiled in the first call."""
    import torch
    from torch_compile import torch_compile
    X, Y = torch.tensor(inp["X"]), torch.tensor(inp["Y"])
    f = torch_compile(torch, lambda X, Y: torch_entropy_mi(torch, X, Y))

    def call():
        with torch.no_grad():
            h, mi = f(X, Y)
            return h.item(), mi.item()
    return call, lambda r: {"H": r[0], "MI": r[1]}


def numba_loops(inp, settings):
    """A Numba user's form: the loops of the definition (factorised), compiled, rows in parallel."""
    import numba
    import numpy as np
    X, Y = inp["X"], inp["Y"]

    @numba.njit(parallel=True, fastmath=True, cache=True)  # compiled once, reused by later sizes and runs
    def sums(Z):
        out = np.empty(Z.shape[0], dtype=np.float64)
        for b in numba.prange(Z.shape[0]):
            m = Z[b].max()
            e = np.exp(Z[b] - m)
            p = e / e.sum()
            out[b] = (p * p).sum()
        return out

    def call():
        sp, sq = sums(X), sums(Y)
        return -sp.mean(), (sp * sq).mean()
    return call, lambda r: {"H": r[0], "MI": r[1]}


def jax_jit(inp, settings):
    """A JAX user's form: the NumPy form under jax.jit (float32, as JAX's default)."""
    import jax
    import jax.numpy as jnp
    X, Y = jnp.asarray(inp["X"]), jnp.asarray(inp["Y"])

    @jax.jit
    def f(X, Y):
        p, q = jax.nn.softmax(X, axis=1), jax.nn.softmax(Y, axis=1)
        sp, sq = (p * p).sum(axis=1), (q * q).sum(axis=1)
        return -sp.mean(), (sp * sq).mean()

    def call():
        h, mi = f(X, Y)
        return float(h.block_until_ready()), float(mi)
    return call, lambda r: {"H": r[0], "MI": r[1]}


# ---- on the GPU: X and Y copied there inside each call, as the cuda row times its copies ---------------

def torch_bmm_body(torch, X, Y):
    def sum_sq(p):
        return torch.bmm(p.unsqueeze(1), p.unsqueeze(2)).flatten().double()
    sp, sq = sum_sq(torch.softmax(X, dim=1)), sum_sq(torch.softmax(Y, dim=1))
    return -sp.mean(), (sp * sq).mean()


def torch_on_device(compute):
    def make(inp, settings):
        """A torch form on the GPU (settings' device): X and Y from pinned host memory to the device
        inside the call; .item() waits for the GPU."""
        import torch
        dev = settings.get("device") or "cuda"
        host = [torch.tensor(inp[k]) for k in "XY"]
        host = [h.pin_memory() for h in host] if dev != "cpu" else host

        def call():
            with torch.no_grad():
                h, mi = compute(torch, *(t.to(dev, non_blocking=True) for t in host))
                return h.item(), mi.item()
        return call, lambda r: {"H": r[0], "MI": r[1]}
    return make


def jax_body(X, Y):
    import jax
    p, q = jax.nn.softmax(X, axis=1), jax.nn.softmax(Y, axis=1)
    sp, sq = (p * p).sum(axis=1), (q * q).sum(axis=1)
    return -sp.mean(), (sp * sq).mean()


def jax_gpu(inp, settings):
    """The jax form under jit on the GPU (settings' device): X and Y put there inside the call."""
    import jax
    dev = jax.devices(settings.get("device") or "gpu")[0]
    f = jax.jit(jax_body)
    host = [inp[k] for k in "XY"]

    def call():
        h, mi = f(*(jax.device_put(a, dev) for a in host))
        return float(h), float(mi)
    return call, lambda r: {"H": r[0], "MI": r[1]}


if __name__ == "__main__":
    main({
        "numpy": {"einsum": numpy_einsum, "square-sum": numpy_square_sum},
        "torch": {"bmm": torch_bmm, "square-sum": torch_square_sum_form, "compile": torch_compile_form},
        "numba": {"loops": numba_loops},
        "jax": {"jit": jax_jit},
        "torch-cuda": {"bmm": torch_on_device(torch_bmm_body),
                       "square-sum": torch_on_device(lambda torch, X, Y: torch_entropy_mi(torch, X, Y))},
        "jax-gpu": {"jit": jax_gpu},
    })
