"""tensor_mean baselines (docs/study-tensor_mean.md, docs/baselines.md).

Inputs X, Y, Z: N x 32 float32. Output A[i,j,k] = (1/N) sum_n tanh(x_ni) tanh(y_nj) tanh(z_nk), with
tanh inside the timed call as in the C variants.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main  # noqa: E402


def numpy_einsum_optimize(inp, settings):
    """The write-up's einsum; optimize=True lets NumPy contract pairwise through BLAS."""
    import numpy as np
    X, Y, Z = inp["X"], inp["Y"], inp["Z"]

    def call():
        return np.einsum("ni,nj,nk->ijk", np.tanh(X), np.tanh(Y), np.tanh(Z), optimize=True) / X.shape[0]
    return call, lambda A: {"A": A}


def numpy_einsum(inp, settings):
    """The definition written as one einsum, without optimize (NumPy's default): einsum's own loop over
    n, i, j, k, what a user gets who writes the formula and nothing more."""
    import numpy as np
    X, Y, Z = inp["X"], inp["Y"], inp["Z"]

    def call():
        return np.einsum("ni,nj,nk->ijk", np.tanh(X), np.tanh(Y), np.tanh(Z)) / X.shape[0]
    return call, lambda A: {"A": A}


def numpy_khatri_rao(inp, settings):
    """A NumPy user who knows BLAS: the row-wise Khatri-Rao product of tanh Y and tanh Z (N x D*D, by
    broadcasting), then one sgemm tanh(X).T @ KR / N, reshaped to D x D x D (the C blas variant's way)."""
    import numpy as np
    X, Y, Z = inp["X"], inp["Y"], inp["Z"]
    N, D = X.shape

    def call():
        b, c = np.tanh(Y), np.tanh(Z)
        kr = (b[:, :, None] * c[:, None, :]).reshape(N, D * D)
        return (np.tanh(X).T @ kr).reshape(D, D, D) / N
    return call, lambda A: {"A": A}


def torch_einsum(inp, settings):
    """The same einsum in PyTorch (it contracts pairwise through bmm)."""
    import torch
    X, Y, Z = (torch.tensor(inp[k]) for k in "XYZ")

    def call():
        with torch.no_grad():
            return torch.einsum("ni,nj,nk->ijk", X.tanh(), Y.tanh(), Z.tanh()) / X.shape[0]
    return call, lambda A: {"A": A.numpy()}


def torch_kr(torch, X, Y, Z):
    """tanh(X).T @ KR(tanh Y, tanh Z) / N in torch: the Khatri-Rao product by broadcasting, one matmul."""
    N, D = X.shape
    kr = (Y.tanh().unsqueeze(2) * Z.tanh().unsqueeze(1)).reshape(N, D * D)
    return torch.matmul(X.tanh().T, kr).reshape(D, D, D) / N


def torch_khatri_rao(inp, settings):
    """The Khatri-Rao form in PyTorch: the N x D*D product by broadcasting, then one torch.matmul (one
    sgemm), what a PyTorch user who knows the contraction writes instead of einsum."""
    import torch
    X, Y, Z = (torch.tensor(inp[k]) for k in "XYZ")

    def call():
        with torch.no_grad():
            return torch_kr(torch, X, Y, Z)
    return call, lambda A: {"A": A.numpy()}


def torch_compile_form(inp, settings):
    """The Khatri-Rao form under torch.compile (PyTorch 2's answer to a slow eager graph: Inductor fuses
    the tanh and the broadcast product, the matmul stays a BLAS call); compiled in the first call."""
    import torch
    from torch_compile import torch_compile
    X, Y, Z = (torch.tensor(inp[k]) for k in "XYZ")
    f = torch_compile(torch, lambda X, Y, Z: torch_kr(torch, X, Y, Z))

    def call():
        with torch.no_grad():
            return f(X, Y, Z)
    return call, lambda A: {"A": A.numpy()}


def numba_loops(inp, settings):
    """A Numba user's loops: each thread owns rows i of A and sums the outer products over n."""
    import numba
    import numpy as np
    X, Y, Z = inp["X"], inp["Y"], inp["Z"]

    @numba.njit(parallel=True, fastmath=True, cache=True)  # compiled once, reused by later sizes and runs
    def mean_outer(X, Y, Z):
        a, b, c = np.tanh(X), np.tanh(Y), np.tanh(Z)
        N, D = a.shape
        A = np.zeros((D, D, D), dtype=np.float32)
        for i in numba.prange(D):
            for n in range(N):
                for j in range(D):
                    ab = a[n, i] * b[n, j]
                    for k in range(D):
                        A[i, j, k] += ab * c[n, k]
        return A / N

    return (lambda: mean_outer(X, Y, Z)), lambda A: {"A": A}


def jax_einsum(inp, settings):
    """The einsum under jax.jit (XLA contracts it as one dot)."""
    import jax
    import jax.numpy as jnp
    X, Y, Z = (jnp.asarray(inp[k]) for k in "XYZ")
    f = jax.jit(lambda X, Y, Z: jnp.einsum("ni,nj,nk->ijk", jnp.tanh(X), jnp.tanh(Y), jnp.tanh(Z)) / X.shape[0])
    return (lambda: f(X, Y, Z).block_until_ready()), lambda A: {"A": jax.device_get(A)}


def jax_khatri_rao(inp, settings):
    """The Khatri-Rao form under jax.jit: the N x D*D product by broadcasting, one jnp matmul, as a JAX
    user who spells the contraction out writes it (XLA fuses the tanh and the product)."""
    import jax
    import jax.numpy as jnp
    X, Y, Z = (jnp.asarray(inp[k]) for k in "XYZ")

    @jax.jit
    def f(X, Y, Z):
        N, D = X.shape
        kr = (jnp.tanh(Y)[:, :, None] * jnp.tanh(Z)[:, None, :]).reshape(N, D * D)
        return (jnp.tanh(X).T @ kr).reshape(D, D, D) / N
    return (lambda: f(X, Y, Z).block_until_ready()), lambda A: {"A": jax.device_get(A)}


# ---- on the GPU: the inputs copied there and the mean back inside each call, as the cuda row times them

def torch_einsum_body(torch, X, Y, Z):
    return torch.einsum("ni,nj,nk->ijk", X.tanh(), Y.tanh(), Z.tanh()) / X.shape[0]


def torch_on_device(compute):
    def make(inp, settings):
        """A torch form on the GPU (settings' device): X, Y, Z from pinned host memory to the device and
        the mean back to the host inside the call (.cpu() waits for the GPU)."""
        import torch
        dev = settings.get("device") or "cuda"
        host = [torch.tensor(inp[k]) for k in "XYZ"]
        host = [h.pin_memory() for h in host] if dev != "cpu" else host

        def call():
            with torch.no_grad():
                return compute(torch, *(h.to(dev, non_blocking=True) for h in host)).cpu()
        return call, lambda A: {"A": A.numpy()}
    return make


def jax_einsum_body(X, Y, Z):
    import jax.numpy as jnp
    return jnp.einsum("ni,nj,nk->ijk", jnp.tanh(X), jnp.tanh(Y), jnp.tanh(Z)) / X.shape[0]


def jax_kr_body(X, Y, Z):
    import jax.numpy as jnp
    N, D = X.shape
    kr = (jnp.tanh(Y)[:, :, None] * jnp.tanh(Z)[:, None, :]).reshape(N, D * D)
    return (jnp.tanh(X).T @ kr).reshape(D, D, D) / N


def jax_on_device(body):
    def make(inp, settings):
        """A jax form under jit on the GPU (settings' device): inputs put there and the mean fetched back
        inside the call (device_get waits for the result)."""
        import jax
        dev = jax.devices(settings.get("device") or "gpu")[0]
        f = jax.jit(body)
        host = [inp[k] for k in "XYZ"]
        return (lambda: jax.device_get(f(*(jax.device_put(h, dev) for h in host)))), lambda A: {"A": A}
    return make


if __name__ == "__main__":
    main({
        "numpy": {"einsum-optimize": numpy_einsum_optimize, "einsum": numpy_einsum, "khatri-rao": numpy_khatri_rao},
        "torch": {"einsum": torch_einsum, "khatri-rao": torch_khatri_rao, "compile": torch_compile_form},
        "numba": {"loops": numba_loops},
        "jax": {"einsum": jax_einsum, "khatri-rao": jax_khatri_rao},
        "torch-cuda": {"einsum": torch_on_device(torch_einsum_body), "khatri-rao": torch_on_device(torch_kr)},
        "jax-gpu": {"einsum": jax_on_device(jax_einsum_body), "khatri-rao": jax_on_device(jax_kr_body)},
    })
