"""DSparseTensor.slogdet/logdet/det gradients (sla_dist_lu_logdet_grad) under mpirun: equal to
the serial SparseTensor.logdet gradients (1e-10), gradcheck, batches, transpose, a rank
without rows, a singular matrix raising on every rank; DSparseTensorList per-item logdet
gradients; the distributed LSQR VJP through D.solve(method='lsqr') of a rectangular matrix;
partition_graph_metis / partition_coordinates with num_parts ≠ the rank count."""
import pytest
import torch
from conftest import agree_all, grid_matrix, max_err
from torch.autograd import Function

import torch_sla
from torch_sla import SparseTensor
from torch_sla import _dist_functions as DF
from torch_sla._mpi_capi import mlib
from torch_sla.distributed import DSparseTensor, DSparseTensorList

HAVE_GRAD = (mlib.has("sla_dist_lu_create") and bool(mlib.sla_dist_have_superlu())
             and mlib.has("sla_dist_lu_logdet_grad"))
needs_grad = pytest.mark.skipif(not HAVE_GRAD, reason="libsla_mpi without the logdet gradient")


def distribute(comm, n, seed, method="metis", symmetric=False):
    row, col, val, xy = grid_matrix(n, torch.float64, seed, symmetric)
    A = SparseTensor(val.clone(), row, col, (n * n, n * n))
    try:
        D = DSparseTensor.partition(A if comm.Get_rank() == 0 else None, comm=comm,
                                    partition_method=method)
    except torch_sla.UnsupportedError as e:
        pytest.skip(str(e))
    return D


def serial_from_slots(comm, D):
    F = D.full_tensor()
    counts = comm.allgather(D.nnz)
    a = sum(counts[:comm.Get_rank()])
    S = SparseTensor(F.values.detach().clone().requires_grad_(), F.row_indices, F.col_indices,
                     F.shape)
    return S, (a, a + D.nnz)


class _Copy(Function):
    """Identity on an input held identically on every rank, whose gradient is the sum of the
    ranks' gradients: each rank's local slots get the whole gradient of the replicated loss
    (log|det| is the same on every rank and each rank's slots receive its own cotangent), so
    the parts add up to the full gradient."""

    @staticmethod
    def forward(ctx, t, layout):
        ctx.layout = layout
        return t.clone()

    @staticmethod
    def backward(ctx, g):
        return DF.allsum(ctx.layout, g), None


@needs_grad
@pytest.mark.parametrize("transpose", [False, True])
def test_logdet_gradient_equals_serial(comm, transpose):
    D0 = distribute(comm, 6, 41)
    S, (a, b) = serial_from_slots(comm, D0)
    v = D0.values.detach().clone().requires_grad_()
    D = D0.with_values(v)
    D = D.T if transpose else D
    ld = D.logdet()
    ld.backward()
    ls = S.logdet()
    ls.backward()
    scale = float(S.values.grad.abs().max())
    e = max_err(v.grad, S.values.grad[a:b]) / scale
    agree_all(comm, abs(float(ld) - float(ls)) <= 1e-10 * abs(float(ls)), f"logdet {ld} vs {ls}")
    agree_all(comm, e <= 1e-10, f"gradient vs serial {e:.2e}")
    # slogdet and det alike
    v2 = v.detach().clone().requires_grad_()
    sign, lad = D0.with_values(v2).slogdet()
    (2.5 * lad).backward()
    agree_all(comm, max_err(v2.grad, 2.5 * S.values.grad[a:b]) <= 1e-10 * 2.5 * scale)
    v3 = v.detach().clone().requires_grad_()
    S3 = SparseTensor(S.values.detach().clone().requires_grad_(), S.row_indices, S.col_indices,
                      S.shape)
    det = D0.with_values(v3).det()
    (det / det.detach()).backward()                # d det / det = A⁻ᵀ: scale-free
    (S3.det() / S3.det().detach()).backward()
    agree_all(comm, max_err(v3.grad, S3.values.grad[a:b]) <= 1e-10 * scale)
    if comm.Get_rank() == 0:
        print(f"\nlogdet gradient vs serial at {comm.Get_size()} ranks (transpose={transpose}):"
              f" {e:.2e}")


@needs_grad
def test_logdet_gradient_batched_and_negative_det(comm):
    D0 = distribute(comm, 5, 43)
    S, (a, b) = serial_from_slots(comm, D0)
    base = D0.values.detach()
    vals = torch.stack([base, 1.3 * base, -base])        # det(−A) = −det A for n = 25 (odd)
    v = vals.clone().requires_grad_()
    sign, lad = D0.with_values(v).slogdet()
    (torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64) * lad).sum().backward()
    ok = True
    for i, w in enumerate((0.5, -1.0, 2.0)):
        Si = SparseTensor((S.values.detach() * [1, 1.3, -1][i]).requires_grad_(), S.row_indices,
                          S.col_indices, S.shape)
        ss, ls = Si.slogdet()
        (w * ls).backward()
        ok &= float(ss) == float(sign[i]) and abs(float(ls) - float(lad[i])) <= 1e-10 * abs(float(ls))
        ok &= max_err(v.grad[i], Si.values.grad[a:b]) <= 1e-10 * float(Si.values.grad.abs().max())
    agree_all(comm, ok and float(sign[2]) == -float(sign[0]), f"batched slogdet: sign {sign}")
    # logdet of a negative determinant is NaN, as torch.logdet, with a zero gradient
    v2 = vals[2].clone().requires_grad_()
    ld = D0.with_values(v2).logdet()
    ld.backward()
    agree_all(comm, bool(torch.isnan(ld)) and float(v2.grad.abs().max()) == 0)


@needs_grad
def test_logdet_gradcheck(comm):
    D0 = distribute(comm, 3, 45)
    S, (a, b) = serial_from_slots(comm, D0)
    layout = D0._pattern.rows_ptr
    vg = S.values.detach().clone().requires_grad_()

    def f(vg):
        return D0.with_values(_Copy.apply(vg, layout)[a:b]).logdet()

    ok = torch.autograd.gradcheck(f, (vg,), eps=1e-6, atol=1e-7, rtol=1e-5,
                                  raise_exception=False)
    agree_all(comm, ok, "gradcheck of DSparseTensor.logdet failed")


@needs_grad
def test_logdet_gradient_rank_without_rows(comm):
    """from_sparse_local with every row on the ranks below the last: the last rank has no rows
    and no slots, and still takes part (an empty gradient)."""
    p, r = comm.Get_size(), comm.Get_rank()
    n = 5
    row, col, val, _ = grid_matrix(n, torch.float64, 47)
    N = n * n
    q = max(p - 1, 1)
    owned = torch.arange(N)[torch.arange(N) % q == r] if r < q else torch.zeros(0, dtype=torch.int64)
    mine = torch.arange(row.numel()) % p == r                # entries handed in by this rank
    v = val[mine].clone().requires_grad_()
    D = DSparseTensor.from_sparse_local(v, row[mine], col[mine], (N, N), comm=comm,
                                        owned_rows=owned)
    ld = D.logdet()
    ld.backward()
    S = SparseTensor(val.clone().requires_grad_(), row, col, (N, N))
    S.logdet().backward()
    e = max_err(v.grad, S.values.grad[mine]) / float(S.values.grad.abs().max())
    agree_all(comm, (r < q or D.nnz == 0) and e <= 1e-10, f"rank without rows: {e:.2e}")


@needs_grad
def test_singular_logdet_gradient_raises_everywhere(comm):
    n = 4
    row, col, val, _ = grid_matrix(n, torch.float64, 49, symmetric=True)
    off = row != col
    val = torch.where(off, val, torch.zeros_like(val))
    rowsum = torch.zeros(n * n, dtype=torch.float64).index_add_(0, row, val)
    val = torch.where(off, val, -rowsum[row])               # rows sum to zero: singular
    A = SparseTensor(val, row, col, (n * n, n * n))
    D = DSparseTensor.partition(A if comm.Get_rank() == 0 else None, comm=comm,
                                partition_method="contiguous")
    v = D.values.detach().clone().requires_grad_()
    sign, lad = D.with_values(v).slogdet()
    agree_all(comm, float(sign) == 0 and float(lad) == float("-inf"))
    with pytest.raises(Exception, match="singular"):
        lad.backward()


def test_list_logdet_gradients_per_item(comm):
    items = []
    for i in range(5):
        m = 3 + i % 3
        row, col, val, _ = grid_matrix(m, seed=500 + i)
        items.append((row, col, val, m * m))
    mats = [SparseTensor(v.clone().requires_grad_(), r, c, (m, m)) for r, c, v, m in items]
    L = DSparseTensorList.partition(mats, comm=comm)
    for ld in L.logdet():
        ld.backward()
    ok = True
    for A, i in zip(L.local, L.local_indices):
        r, c, v, m = items[i]
        S = SparseTensor(v.clone().requires_grad_(), r, c, (m, m))
        S.logdet().backward()
        ok &= max_err(A.values.grad, S.values.grad) <= 1e-10 * float(S.values.grad.abs().max())
    agree_all(comm, ok, "DSparseTensorList logdet gradients differ from serial")


HAVE_LSQR_VJP = mlib.has("sla_dist_solver_lstsq_vjp")


@pytest.mark.skipif(not HAVE_LSQR_VJP, reason="libsla_mpi without sla_dist_solver_lstsq_vjp")
@pytest.mark.parametrize("transpose", [False, True])
def test_lsqr_rectangular_gradients_equal_serial(comm, transpose):
    """D.solve(method='lsqr') of a 30 × 17 matrix (transposed: 17 × 30, the minimum-norm
    solution) from each rank's entries: x, db and dvalues equal the serial LSQR ones."""
    g = torch.Generator().manual_seed(61)
    M, N = 30, 17
    dense = torch.randn(M, N, generator=g, dtype=torch.float64) * \
        (torch.rand(M, N, generator=g) < 0.3)
    dense[torch.arange(M), torch.arange(M) % N] += 2.0     # no empty row or column
    row, col = dense.nonzero(as_tuple=True)
    val = dense[row, col]
    p, r = comm.Get_size(), comm.Get_rank()
    mine = torch.arange(row.numel()) % p == r
    v = val[mine].clone().requires_grad_()
    D = DSparseTensor.from_sparse_local(v, row[mine], col[mine], (M, N), comm=comm)
    S0 = SparseTensor(val.clone().requires_grad_(), row, col, (M, N))
    S = S0.T() if transpose else S0                    # values shared: S0 gets the gradient
    if transpose:
        D = D.T
    m, n = D.shape
    bg = torch.randn(m, generator=g, dtype=torch.float64)
    wg = torch.randn(n, generator=g, dtype=torch.float64)
    bl = D.scatter_rows(bg).clone().requires_grad_()
    x = D.solve(bl, method="lsqr", rtol=1e-14)
    (D.T.scatter_rows(wg) * x).sum().backward()
    bs = bg.clone().requires_grad_()
    xs = S.solve(bs, method="lsqr", rtol=1e-14)
    (wg * xs).sum().backward()
    ex = max_err(D.T.gather(x), xs) / float(xs.abs().max())
    eb = max_err(D.gather(bl.grad), bs.grad) / float(bs.grad.abs().max())
    ref = S0.values.grad
    ev = max_err(v.grad, ref[mine]) / float(ref.abs().max())
    agree_all(comm, ex <= 1e-10 and eb <= 1e-10 and ev <= 1e-10,
              f"lsqr (transpose={transpose}): x {ex:.2e}, db {eb:.2e}, dvalues {ev:.2e}")
    if comm.Get_rank() == 0:
        print(f"\nlsqr VJP vs serial at {p} ranks (transpose={transpose}): x {ex:.2e}, "
              f"db {eb:.2e}, dvalues {ev:.2e}")



@pytest.mark.skipif(not mlib.has("sla_dist_partition_parts"),
                    reason="libsla_mpi without sla_dist_partition_parts")
@pytest.mark.parametrize("num_parts", [1, 3, 5, 8])
def test_partition_functions_any_num_parts(comm, num_parts):
    """partition_graph_metis / partition_coordinates with num_parts ≠ ranks: a part in range
    for every node, the same vector on every rank, balanced; RCB and Hilbert equal the
    partition computed by one rank alone (MPI.COMM_SELF)."""
    from mpi4py import MPI
    from torch_sla.distributed import partition_coordinates, partition_graph_metis
    row, col, _, xy = grid_matrix(9)
    N = 81
    for name, part, slack in (
            ("metis", partition_graph_metis(row, col, N, num_parts=num_parts, comm=comm), 1.35),
            ("rcb", partition_coordinates(xy, num_parts=num_parts, comm=comm), 1.05),
            ("hilbert", partition_coordinates(xy, num_parts, "hilbert", comm=comm), 1.05)):
        ok = part.shape == (N,) and int(part.min()) >= 0 and int(part.max()) < num_parts
        sizes = torch.bincount(part, minlength=num_parts)
        ok &= int(sizes.max()) <= slack * N / num_parts + 2
        every = comm.allgather(part)
        ok &= all(torch.equal(q, part) for q in every)
        if name != "metis":            # METIS sees the graph in the ranks' order
            alone = partition_coordinates(xy, num_parts, name, comm=MPI.COMM_SELF)
            ok &= torch.equal(alone, part)
        agree_all(comm, ok, f"{name}, {num_parts} parts: sizes {sizes.tolist()}")
