"""Singular values of sparse matrices, composed from differentiable torch_sla operations:
the Gram matrix G = AᵀA (or AAᵀ, the smaller) by libsla's SpGEMM, its eigenpairs by libsla's
eigsh, σ = √λ and the other singular vectors by one SpMV each (U = AV/σ). Gradients flow
through all three (SpGEMM's and eigsh's VJPs), so svd(), condition_number() and norm(2) are
differentiable in the values.

Accuracy: eigsh on the Gram matrix squares the condition number, so a singular value σ is
accurate to about ε·σmax²/σ (relative): fine for the largest ones and for κ up to ~1e6 in
float64; Golub–Kahan–Lanczos on A itself would avoid the squaring (not done).
"""
class SpectralMixin:
    def _gram(self):
        """(G, tall): G = AᵀA if N ≤ M (tall), else AAᵀ."""
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
        if self.is_square and bool(self.is_symmetric(atol=0.0, rtol=1e-10).all()):
            lam, _ = self.eigsh(k=1, which="LM")
            return lam[..., 0].abs()
        return self._sigma_extreme("LA")
