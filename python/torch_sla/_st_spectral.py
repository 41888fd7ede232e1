"""Singular values of sparse matrices, composed from differentiable torch_sla operations:
the Gram matrix G = AᵀA (or AAᵀ, the smaller) by libsla's SpGEMM, its eigenpairs by libsla's
eigsh, σ = √λ and the other singular vectors by one SpMV each (U = AV/σ). Gradients flow
through all three (SpGEMM's and eigsh's VJPs), so svd(), condition_number() and norm(2) are
differentiable in the values.

Accuracy: eigsh on the Gram matrix squares the condition number, so a singular value σ is
accurate to about ε·σmax²/σ (relative): fine for the largest ones and for κ up to ~1e6 in
float64; Golub–Kahan–Lanczos on A itself would avoid the squaring (not done).
"""
import torch

_EIGS_WHICH = ("LM", "SM", "LR", "SR", "LI", "SI")


class _NoGrad(torch.autograd.Function):
    """Passes eigs' results through and refuses a backward (no non-symmetric eigenvalue
    adjoint yet) instead of returning a silent zero."""

    @staticmethod
    def forward(ctx, vals, *outs):
        return tuple(o.clone() for o in outs)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("eigs of a non-symmetric matrix is not differentiable in torch_sla "
                           "yet (symmetric matrices: eigsh is)")


class SpectralMixin:
    def eigs(self, k=6, which="LM", sigma=None, return_eigenvectors=True):
        """k eigenpairs of a general matrix. A symmetric matrix (or which 'LA'/'SA') goes to
        eigsh (real results, differentiable; 'LR'/'SR' read as 'LA'/'SA'). Otherwise libsla's
        sla_eigs (ARPACK dnaupd, implicitly restarted Arnoldi): complex128 eigenvalues
        [*batch, k] sorted by the criterion (LM/LR/LI descending, SM/SR/SI ascending) and
        complex eigenvectors [*batch, N, k] (unit norm); not differentiable (a backward
        raises); k ≤ N − 2; sigma (shift-invert) is not offered for non-symmetric matrices."""
        import ctypes
        from ._capi import SLA_NOT_CONVERGED, check, lib, require
        from ._functions import matrix_view
        if which not in _EIGS_WHICH + ("LA", "SA"):
            raise ValueError(f"which = {which!r}: use one of {', '.join(_EIGS_WHICH)}, LA, SA")
        if not self.is_square:
            raise ValueError(f"eigs needs a square matrix, A has shape {tuple(self.shape)}")
        if which in ("LA", "SA") or bool(self.is_symmetric().all()):
            w = {"LR": "LA", "SR": "SA", "LI": "LM", "SI": "SM"}.get(which, which)
            return self.eigsh(k=k, which=w, sigma=sigma, return_eigenvectors=return_eigenvectors)
        if sigma is not None:
            raise NotImplementedError("eigs(sigma=) of a non-symmetric matrix: shift-invert "
                                      "is not offered; use which=")
        require("sla_eigs", "eigs")
        if self.dtype.is_complex:
            raise TypeError(f"eigs of a {self.dtype} matrix is not supported yet (ARPACK's "
                            f"real driver; the imaginary part is never dropped)")
        N = self.sparse_shape[0]
        vals = self._csr().detach().to(torch.float64).contiguous()
        if not 1 <= k <= N - 2:
            raise ValueError(f"eigs: k = {k} must be in [1, N − 2 = {N - 2}] (ARPACK)")
        kk = min(k + 1, N - 2)          # one more, so that a conjugate pair is never cut
        lams, vecs = [], []
        for b in range(vals.shape[0]):
            wr, wi = torch.empty(kk, dtype=torch.float64), torch.empty(kk, dtype=torch.float64)
            V = torch.empty(N, kk, dtype=torch.float64)
            nconv = ctypes.c_int64()
            A = matrix_view(self._pattern, vals[b:b + 1])
            st = check(lib.sla_eigs(ctypes.byref(A), kk, _EIGS_WHICH.index(which), 0.0, 0, 0,
                                    wr.data_ptr(), wi.data_ptr(), V.data_ptr(),
                                    ctypes.byref(nconv)))
            if st == SLA_NOT_CONVERGED:
                import warnings
                from .errors import ConvergenceWarning
                warnings.warn(f"eigs: {nconv.value} of {kk} eigenvalues converged",
                              ConvergenceWarning, stacklevel=2)
            lam = torch.complex(wr, wi)
            X = V.to(torch.complex128)
            j = 0
            while j < kk:                      # a pair: columns j, j+1 = re, im of v_j
                if wi[j] != 0 and j + 1 < kk:
                    re, im = V[:, j].clone(), V[:, j + 1].clone()
                    X[:, j] = torch.complex(re, im)
                    X[:, j + 1] = torch.complex(re, -im)
                    j += 2
                else:
                    j += 1
            X = X / X.abs().pow(2).sum(0).sqrt()
            key = {"LM": -lam.abs(), "SM": lam.abs(), "LR": -lam.real, "SR": lam.real,
                   "LI": -lam.imag, "SI": lam.imag}[which]
            order = torch.argsort(key, stable=True)
            lams.append(lam[order][:k])
            vecs.append(X[:, order][:, :k])
        lam = self._unflatten(torch.stack(lams), (k,))
        X = self._unflatten(torch.stack(vecs), (N, k))
        if self.values.requires_grad and torch.is_grad_enabled():
            lam, X = _NoGrad.apply(self.values, lam, X)
        return (lam, X) if return_eigenvectors else (lam, None)


    def _gram(self):
        """(G, tall): G = AᵀA if N ≤ M (tall), else AAᵀ. Complex A is refused here, by name:
        its Gram matrix AᴴA needs a complex sparse product, which libsla does not have."""
        if self.values.is_complex():
            raise TypeError("svd / svds / norm(2) / cond of a complex SparseTensor: not "
                            "supported (the Gram matrix AᴴA would need a complex SpGEMM, which "
                            "libsla does not have); use eigsh for a Hermitian A")
        M, N = self.sparse_shape
        tall = N <= M
        return (self.T() @ self if tall else self @ self.T()), tall

    def svd(self, k=6):
        """Truncated SVD: (U [*batch, M, k], S [*batch, k] descending, Vt [*batch, k, N]) of the
        k largest singular values, differentiable in the values (see the module docstring for
        the method and its accuracy). k ≤ min(M, N)."""
        M, N = self.sparse_shape
        if not 1 <= k <= min(M, N):
            raise ValueError(f"svd: k = {k} must be in [1, {min(M, N)}] for a {M}×{N} matrix")
        G, tall = self._gram()
        lam, W = G.eigsh(k=k, which="LA")                  # ascending
        lam, W = lam.flip(-1), W.flip(-1)
        S = lam.clamp(min=0).sqrt()
        X = (self @ W) if tall else (self.T() @ W)         # [*, M, k] or [*, N, k]
        X = X / S.unsqueeze(-2)
        U, V = (X, W) if tall else (W, X)
        return U, S, V.transpose(-1, -2)

    def svds(self, k=6):
        return self.svd(k)

    def _sigma_extreme(self, which):
        G, _ = self._gram()
        lam, _ = G.eigsh(k=1, which=which)
        return lam[..., 0].clamp(min=0).sqrt()

    def condition_number(self, ord=2):
        """κ₂(A) = σmax/σmin of a square matrix (eigsh on AᵀA: accurate to about ε·κ²;
        differentiable). Other orders are refused: the factorizations' rcond is a pivot
        ratio, not a norm estimate (on a 20×20 test it read κ₁ 1031 for 3203)."""
        if not self.is_square:
            raise ValueError(f"condition_number needs a square matrix, A has shape "
                             f"{tuple(self.shape)}")
        if ord != 2:
            raise ValueError(f"condition_number: ord = {ord!r}; torch_sla computes κ₂ "
                             f"(ord=2) only")
        return self._sigma_extreme("LA") / self._sigma_extreme("SA")

    def _spectral_norm(self):
        """‖A‖₂ = σmax (any shape; eigsh LM for symmetric matrices, the Gram matrix else)."""
        if self._shape[-1] == 0 or self._shape[-2] == 0 or self.values.numel() == 0:
            return self.values.new_zeros(tuple(self.batch_shape))
        # Hermitian (real: symmetric) A: ‖A‖₂ = max |λ|; complex non-Hermitian A is refused
        # by _gram
        if self.is_square and bool(self.is_hermitian(atol=0.0, rtol=1e-10).all()):
            lam, _ = self.eigsh(k=1, which="LM")
            return lam[..., 0].abs()
        return self._sigma_extreme("LA")
