"""DSparseTensor.eigsh's eigenvector gradients and the generalized problem (M) under mpirun:
gradients of gauge-invariant losses equal the serial SparseTensor.eigsh's (1e-10), standard
and generalized (A's and M's values), gradcheck of a gauge-invariant loss, a tie the loss
depends on raises the same ValueError on every rank, and M's partition is checked."""
import pytest
import torch
from conftest import agree_all, grid_matrix, max_err
from test_dsparse import _Replicated, _size, distribute, serial_from_slots

from torch_sla import SparseTensor
from torch_sla.distributed import DSparseTensor


def _weights(idx):
    return 1.0 + (idx % 3).to(torch.float64) / 2


def _local_loss(D, lam, V):
    """Σ_r w_r Σ_i V[r, i]² over this rank's rows (sign-invariant; the ranks' terms add up)
    + Σ_i (i+1) λ_i, the same on every rank (the replicated eigenvalues count once)."""
    w = _weights(D.owned_rows).reshape(-1, 1)
    return (w * V ** 2).sum() + (lam * torch.arange(1, lam.shape[-1] + 1, dtype=lam.dtype)).sum()


def _serial_loss(lam, V):
    w = _weights(torch.arange(V.shape[-2])).reshape(-1, 1)
    return (w * V ** 2).sum() + (lam * torch.arange(1, lam.shape[-1] + 1, dtype=lam.dtype)).sum()


def _mass(comm, D, S):
    """A diagonal SPD M 1 + (g mod 5)/4 as a DSparseTensor on D's rows (grad on its local
    values) and as a serial SparseTensor (grad)."""
    N = D.shape[0]
    g = D.owned_rows
    vm = (1 + (g % 5).to(torch.float64) / 4).requires_grad_()
    Md = DSparseTensor.from_sparse_local(vm, g, g, (N, N), comm=comm, owned_rows=g)
    i = torch.arange(N)
    vs = (1 + (i % 5).to(torch.float64) / 4).requires_grad_()
    Ms = SparseTensor(vs, i, i, (N, N))
    return Md, vm, Ms, vs


@pytest.mark.parametrize("which,generalized", [("SA", False), ("LA", False), ("SA", True)])
def test_eigenvector_gradients_equal_serial(comm, which, generalized):
    A, D, S = distribute(comm, "metis", n=8, symmetric=True)
    k, rank = 3, comm.Get_rank()
    Md = Ms = None
    if generalized:
        Md, vm, Ms, vs = _mass(comm, D, S)
    lam, V = D.eigsh(k, which=which, M=Md, tol=1e-13)
    _local_loss(D, lam, V).backward()
    ls, Vs = S.eigsh(k, which=which, M=Ms, method="dense")
    _serial_loss(ls, Vs).backward()
    agree_all(comm, max_err(lam, ls.detach()) <= 1e-10 * float(ls.abs().max()), "eigenvalues")
    if rank == 0:
        e = max_err(A.values.grad, S.values.grad) / float(S.values.grad.abs().max())
        agree_all(comm, e <= 1e-10, f"{which}: dA vs serial {e:.2e}")
        print(f"\n{which} generalized={generalized}: dA vs serial {e:.2e}")
    else:
        agree_all(comm, True)
    if generalized:
        ref = vs.grad[D.owned_rows]
        e = max_err(vm.grad, ref) / float(vs.grad.abs().max())
        agree_all(comm, e <= 1e-10, f"dM vs serial {e:.2e}")
        if rank == 0:
            print(f"dM vs serial {e:.2e}")


def test_eigenvector_gradcheck(comm):
    """gradcheck of w ∘ V² (gathered, gauge-invariant) in the parameters of a symmetric matrix
    (one per stored pair, so perturbations stay symmetric)."""
    _size[0] = comm.Get_size()
    _, D0, _ = distribute(comm, "metis", n=4, seed=3, symmetric=True)
    S, (a, b) = serial_from_slots(comm, D0)
    r, c = S.row_indices, S.col_indices
    key = torch.minimum(r, c) * S.shape[0] + torch.maximum(r, c)
    uniq, inv = torch.unique(key, return_inverse=True)
    # both slots of a pair hold the same value (symmetric)
    p0 = torch.zeros(uniq.numel(), dtype=torch.float64).scatter_(0, inv, S.values.detach())
    p = p0.clone().requires_grad_()
    layout = D0._pattern.rows_ptr
    w = _weights(D0.owned_rows).reshape(-1, 1)

    def f(p):
        vals = _Replicated.apply(p, layout)[inv][a:b]
        lam, V = D0.with_values(vals).eigsh(2, which="SA", tol=1e-14)
        return D0.gather(w * V ** 2)

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # LOBPCG may stop just above 1e-14
        ok = torch.autograd.gradcheck(f, (p,), eps=1e-6, atol=1e-6, rtol=1e-5,
                                      raise_exception=False)
    agree_all(comm, ok, "gradcheck failed")


def test_tie_raises_on_every_rank(comm):
    """6 × 6 Laplacian: λ(1,2) = λ(2,1). k = 2 splits the pair: a loss on the second
    eigenvector depends on the basis → the same ValueError on every rank; a loss on the first
    only is fine."""
    n = 6
    row, col, val, _ = grid_matrix(n, symmetric=True)
    val = torch.where(row == col, torch.full_like(val, 4.0), torch.full_like(val, -1.0))
    A = SparseTensor(val.clone().requires_grad_(), row, col, (n * n, n * n))
    D = DSparseTensor.partition(A if comm.Get_rank() == 0 else None, comm=comm,
                                partition_method="contiguous")
    lam, V = D.eigsh(2, which="SA", tol=1e-13)
    R = torch.randn(V.shape, generator=torch.Generator().manual_seed(comm.Get_rank()),
                    dtype=V.dtype)
    with pytest.raises(ValueError, match="eigenvector gradient undefined") as e:
        (V * R).sum().backward()
    msgs = comm.allgather(str(e.value))
    agree_all(comm, len(set(msgs)) == 1, "different messages on the ranks")
    lam, V = D.eigsh(2, which="SA", tol=1e-13)
    (V[:, 0] ** 2 * _weights(D.owned_rows)).sum().backward()
    agree_all(comm, A.values.grad is None or bool(torch.isfinite(A.values.grad).all()))


def test_mass_on_another_partition_raises(comm):
    _, D, _ = distribute(comm, "metis", n=6, symmetric=True)
    N, size = D.shape[0], comm.Get_size()
    if size == 1:
        pytest.skip("one rank: every partition is the same")
    # M's rows: a cyclic ownership that differs from METIS's
    g = torch.arange(comm.Get_rank(), N, size)
    vm = torch.ones(g.numel(), dtype=torch.float64)
    Md = DSparseTensor.from_sparse_local(vm, g, g, (N, N), comm=comm, owned_rows=g)
    same = comm.allreduce(int(torch.equal(Md.owned_rows, D.owned_rows)))
    if same == size:
        pytest.skip("the partitions happen to agree")
    with pytest.raises(ValueError, match="partitioned unlike"):
        D.eigsh(2, M=Md)


def test_list_eigsh_with_mass_and_eigenvector_gradients(comm):
    """DSparseTensorList.eigsh per item (serial on the owner) with M as a list: gradients of
    a gauge-invariant loss of the eigenvectors equal the serial ones item by item."""
    from test_dsparse import _items
    from torch_sla.distributed import DSparseTensorList
    items = _items(5)
    mats = [SparseTensor(v.clone().requires_grad_(), r, c, (m, m)) for r, c, v, m in items]

    def mass(m):
        i = torch.arange(m)
        return SparseTensor((1 + (i % 5).to(torch.float64) / 4).requires_grad_(), i, i, (m, m))

    masses = [mass(m) for _, _, _, m in items]
    L = DSparseTensorList.partition(mats, comm=comm)
    out = L.eigsh(2, which="SA", M=masses, method="dense")
    ok = True
    for (lam, V), i in zip(out, L.local_indices):
        _serial_loss(lam, V).backward()
        r, c, v, m = items[i]
        S, Ms = SparseTensor(v.clone().requires_grad_(), r, c, (m, m)), mass(m)
        ls, Vs = S.eigsh(2, which="SA", M=Ms, method="dense")
        _serial_loss(ls, Vs).backward()
        A = L.local[L.local_indices.index(i)]
        ok &= max_err(A.values.grad, S.values.grad) <= 1e-12 * float(S.values.grad.abs().max())
        ok &= max_err(masses[i].values.grad, Ms.values.grad) <= \
            1e-12 * float(Ms.values.grad.abs().max())
    agree_all(comm, ok)


@pytest.mark.parametrize("generalized", [False, True])
def test_sigma_interior_equal_serial(comm, generalized):
    """eigsh(sigma=...): the k eigenvalues nearest an interior shift (distributed LU of
    A − σM, LOBPCG on the inverse) and their gradients (eigenvalues and eigenvectors) equal the
    serial shift-invert eigsh's."""
    from torch_sla._mpi_capi import mlib
    if not bool(mlib.sla_dist_have_superlu()):
        pytest.skip("no SuperLU_DIST")
    A, D, S = distribute(comm, "metis", n=8, symmetric=True)
    N, k, rank = D.shape[0], 3, comm.Get_rank()
    dense = torch.zeros(N, N, dtype=torch.float64)
    dense.index_put_((S.row_indices, S.col_indices), S.values.detach(), accumulate=True)
    ev = torch.linalg.eigvalsh(dense)
    sigma = float(0.6 * ev[N // 2] + 0.4 * ev[N // 2 + 1])     # interior, not an eigenvalue
    Md = Ms = None
    if generalized:
        Md, vm, Ms, vs = _mass(comm, D, S)
    lam, V = D.eigsh(k, M=Md, sigma=sigma, tol=1e-12)
    ls, Vs = S.eigsh(k, sigma=sigma, M=Ms, tol=1e-13)
    order = torch.argsort(ls.detach())
    agree_all(comm, max_err(lam, ls.detach()[order]) <= 1e-10 * float(ls.abs().max()),
              "eigenvalues")
    if not generalized:
        near = ev[torch.argsort((ev - sigma).abs())[:k]].sort().values
        agree_all(comm, max_err(lam, near) <= 1e-10 * float(ev.abs().max()), "vs dense")
    # an order- and sign-invariant loss on eigenvalues and eigenvectors
    w = _weights(D.owned_rows).reshape(-1, 1)
    ((w * V ** 2).sum() + (lam ** 2).sum()).backward()
    ws = _weights(torch.arange(N)).reshape(-1, 1)
    ((ws * Vs ** 2).sum() + (ls ** 2).sum()).backward()
    if rank == 0:
        e = max_err(A.values.grad, S.values.grad) / float(S.values.grad.abs().max())
        agree_all(comm, e <= 1e-8, f"sigma: dA vs serial {e:.2e}")
        print(f"\nsigma generalized={generalized}: dA vs serial {e:.2e}")
    else:
        agree_all(comm, True)
    if generalized:
        e = max_err(vm.grad, vs.grad[D.owned_rows]) / float(vs.grad.abs().max())
        agree_all(comm, e <= 1e-8, f"sigma: dM vs serial {e:.2e}")


def test_sigma_eigenvalue_raises_on_every_rank(comm):
    from torch_sla._mpi_capi import mlib
    if not bool(mlib.sla_dist_have_superlu()):
        pytest.skip("no SuperLU_DIST")
    A, D, S = distribute(comm, "metis", n=8, symmetric=True)
    N = D.shape[0]
    dense = torch.zeros(N, N, dtype=torch.float64)
    dense.index_put_((S.row_indices, S.col_indices), S.values.detach(), accumulate=True)
    ev = torch.linalg.eigvalsh(dense)
    # not exactly singular in floating point: push σ onto the eigenvalue to working accuracy
    raised = 0
    try:
        D.eigsh(3, sigma=float(ev[10]))
    except Exception as e:          # noqa: BLE001 - the library's singular error
        raised = int("singular" in str(e))
    agree_all(comm, comm.allreduce(raised, op=__import__("mpi4py").MPI.MIN) == 1,
              "sigma = eigenvalue did not raise a singular error on every rank")
