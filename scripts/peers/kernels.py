"""The kernel peers: entropy_mi (torch, numpy) and tensor_mean (numpy-kr, torch-einsum).

Imported by peers.py only after common.load_libraries(): np and torch are taken from common, which
loads them once the thread environment is set (None here means load_libraries() has not run yet)."""
from common import EM_D, TM_D, np, rel_err, require, sn_normals, torch


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
