"""tensor_mean baselines (docs/study-tensor_mean.md, docs/baselines.md).

Inputs X, Y, Z: N x 32 float32. Output A[i,j,k] = (1/N) sum_n tanh(x_ni) tanh(y_nj) tanh(z_nk), with
tanh inside the timed call as in the C variants.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main  # noqa: E402


def numpy_form(inp, settings):
    """The write-up's einsum; optimize=True lets NumPy contract pairwise through BLAS."""
    import numpy as np
    X, Y, Z = inp["X"], inp["Y"], inp["Z"]

    def call():
        return np.einsum("ni,nj,nk->ijk", np.tanh(X), np.tanh(Y), np.tanh(Z), optimize=True) / X.shape[0]
    return call, lambda A: {"A": A}


def torch_form(inp, settings):
    """The same einsum in PyTorch (it contracts pairwise through bmm)."""
    import torch
    X, Y, Z = (torch.from_numpy(inp[k]) for k in "XYZ")

    def call():
        with torch.no_grad():
            return torch.einsum("ni,nj,nk->ijk", X.tanh(), Y.tanh(), Z.tanh()) / X.shape[0]
    return call, lambda A: {"A": A.numpy()}


def numba_form(inp, settings):
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


def jax_form(inp, settings):
    """The einsum under jax.jit (XLA contracts it as one dot)."""
    import jax
    import jax.numpy as jnp
    X, Y, Z = (jnp.asarray(inp[k]) for k in "XYZ")
    f = jax.jit(lambda X, Y, Z: jnp.einsum("ni,nj,nk->ijk", jnp.tanh(X), jnp.tanh(Y), jnp.tanh(Z)) / X.shape[0])
    return (lambda: f(X, Y, Z).block_until_ready()), lambda A: {"A": jax.device_get(A)}


if __name__ == "__main__":
    main({"numpy": {"einsum-optimize": numpy_form}, "torch": {"einsum": torch_form}, "numba": {"loops": numba_form},
          "jax": {"einsum": jax_form}})
