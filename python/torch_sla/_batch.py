"""torch-sla's batch solve functions on libsla: one pattern and many value sets is one
batched libsla solve (one symbolic analysis, one call); different patterns are solved one by
one."""
import torch

from ._solve_api import spsolve


def _check_batch(val_batch, b_batch, what):
    if not isinstance(val_batch, torch.Tensor) or val_batch.dim() != 2:
        raise ValueError(f"{what}: val_batch must be a [batch, nnz] tensor, got "
                         f"{tuple(getattr(val_batch, 'shape', ()))}")
    if not isinstance(b_batch, torch.Tensor) or b_batch.dim() not in (2, 3) or \
            b_batch.shape[0] != val_batch.shape[0]:
        raise ValueError(f"{what}: b_batch must be [batch, m] (or [batch, m, K]) with the "
                         f"batch of val_batch ({val_batch.shape[0]}), got "
                         f"{tuple(getattr(b_batch, 'shape', ()))}")


def spsolve_batch_same_layout(val_batch, row, col, shape, b_batch, method="bicgstab",
                              atol=None, maxiter=None, **kwargs):
    """A_i x_i = b_i for matrices sharing one pattern: val_batch [batch, nnz], b_batch
    [batch, m] → x [batch, n]. One batched libsla solve (differentiable in val_batch and
    b_batch). method: torch-sla's default 'bicgstab'; 'auto' lets libsla choose."""
    _check_batch(val_batch, b_batch, "spsolve_batch_same_layout")
    m, n = tuple(shape)[-2:]
    return spsolve(val_batch, row, col, (val_batch.shape[0], m, n), b_batch, method=method,
                   atol=atol, maxiter=maxiter, **kwargs)


def spsolve_batch_different_layout(matrices, b_list, method="bicgstab", atol=None,
                                   maxiter=None, **kwargs):
    """[x_i] for [(val_i, row_i, col_i, shape_i)] and [b_i] (each pattern its own solve)."""
    matrices, b_list = list(matrices), list(b_list)
    if len(matrices) != len(b_list):
        raise ValueError(f"{len(matrices)} matrices but {len(b_list)} right-hand sides")
    return [spsolve(v, r, c, s, b, method=method, atol=atol, maxiter=maxiter, **kwargs)
            for (v, r, c, s), b in zip(matrices, b_list)]


def _coo_parts(A, what):
    if not isinstance(A, torch.Tensor) or A.layout != torch.sparse_coo:
        raise TypeError(f"{what} needs torch sparse COO tensors, got "
                        f"{getattr(A, 'layout', type(A).__name__)}")
    A = A.coalesce()
    return A.indices()[0], A.indices()[1], tuple(A.shape), A.values()


def spsolve_batch_coo_same_layout(A_template, val_batch, b_batch, method="bicgstab", **kwargs):
    """spsolve_batch_same_layout with the pattern of a torch sparse COO template (the
    values of val_batch follow the template's stored order: coalesced, row-major)."""
    row, col, shape, _ = _coo_parts(A_template, "spsolve_batch_coo_same_layout")
    return spsolve_batch_same_layout(val_batch, row, col, shape, b_batch, method, **kwargs)


def spsolve_batch_coo_different_layout(A_list, b_list, method="bicgstab", **kwargs):
    """spsolve_batch_different_layout for torch sparse COO tensors."""
    mats = []
    for A in A_list:
        row, col, shape, val = _coo_parts(A, "spsolve_batch_coo_different_layout")
        mats.append((val, row, col, shape))
    return spsolve_batch_different_layout(mats, b_list, method, **kwargs)


class ParallelBatchSolver:
    """Solves batches on one fixed pattern: ``solver = ParallelBatchSolver(row, col, shape,
    method)``, then ``solver.solve(val_batch, b_batch)`` or ``solver(val_batch, b_batch)``.
    The pattern is analysed once (torch_sla's pattern cache) and the libsla solver of the
    previous batch is refactored with the new values (the solver cache): later batches do
    numeric work only. device: 'cpu' (or None)."""

    def __init__(self, row, col, shape, method="bicgstab", device=None):
        if device is not None and torch.device(device).type != "cpu":
            raise ValueError("ParallelBatchSolver: torch_sla runs on the CPU (libsla); "
                             "device must be 'cpu'")
        self.row = torch.as_tensor(row)
        self.col = torch.as_tensor(col)
        self.shape = tuple(shape)
        self.method = method
        self.device = "cpu"

    def solve(self, val_batch, b_batch, atol=None, maxiter=None, **kwargs):
        return spsolve_batch_same_layout(val_batch, self.row, self.col, self.shape, b_batch,
                                         method=self.method, atol=atol, maxiter=maxiter,
                                         **kwargs)

    def __call__(self, val_batch, b_batch, **kwargs):
        return self.solve(val_batch, b_batch, **kwargs)

    def __repr__(self):
        return f"ParallelBatchSolver(shape={self.shape}, nnz={self.row.numel()}, " \
               f"method={self.method!r})"
