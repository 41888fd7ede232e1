"""Public arguments of the wrong type or value raise a message naming them (nothing is
rounded, wrapped or ignored), and shapes in messages print symbolic sizes without quotes."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import torch_sla
from torch_sla import SparseTensor, SparseTensorList
from conftest import needs_method, poisson2d

f64 = torch.float64


@pytest.fixture
def A():
    row, col, val = poisson2d(3)
    return SparseTensor(val, row, col, (9, 9))


# --- shapes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3.5, 3), (3, 3.0), (True, 3), ("3", 3), (3, None)])
def test_non_integer_shape_is_refused(shape):
    v = torch.ones(2, dtype=f64)
    with pytest.raises(ValueError, match=r"shape\[\d\] = .* is not an integer"):
        SparseTensor(v, torch.tensor([0, 1]), torch.tensor([0, 1]), shape)


def test_shape_not_a_tuple_and_integer_like_sizes():
    v = torch.ones(2, dtype=f64)
    r = c = torch.tensor([0, 1])
    with pytest.raises(TypeError, match="shape must be a tuple"):
        SparseTensor(v, r, c, 3)
    # integer types that are not int: numpy integers, 0-d integer tensors, torch.Size
    A = SparseTensor(v, r, c, (np.int64(3), torch.tensor(3)))
    assert A.shape == (3, 3) and all(type(s) is int for s in A.shape)
    assert SparseTensor(v, r, c, torch.Size([2, 2])).shape == (2, 2)


# --- solve options ------------------------------------------------------------------------------
@pytest.mark.parametrize("kw, match", [
    ({"maxiter": 2.5}, r"maxiter = 2.5 is not an integer"),
    ({"maxiter": 10.0}, r"maxiter = 10.0 is not an integer"),
    ({"maxiter": -1}, r"maxiter = -1 must be ≥ 1"),
    ({"maxiter": 0}, r"maxiter = 0 must be ≥ 1"),
    ({"maxiter": 2**70}, r"maxiter = \d+ must be ≤"),
    ({"maxiter": True}, r"maxiter = True is not an integer"),
    ({"restart": 0}, r"restart = 0 must be ≥ 1"),
    ({"restart": 1.5}, r"restart = 1.5 is not an integer"),
    ({"rtol": -1e-3}, r"rtol = -0.001 must be ≥ 0"),
    ({"rtol": math.nan}, r"rtol = nan must be finite"),
    ({"atol": math.inf}, r"atol = inf must be finite"),
    ({"atol": -1}, r"atol = -1 must be ≥ 0"),
    ({"tol": math.nan}, r"tol = nan must be finite"),
    ({"method": "chol"}, r"method = 'chol' is not one of"),
    ({"method": ""}, r"method = '' is not one of"),
    ({"preconditioner": "ilu9"}, r"preconditioner = 'ilu9' is not one of"),
    ({"preconditioner": "user"}, r"preconditioner = 'user' needs a C callback"),
    ({"ordering": "rcm"}, r"ordering = 'rcm' is not one of"),
    ({"backend": ""}, r"backend = ''"),
])
def test_solve_refuses_bad_options(A, kw, match):
    with pytest.raises(ValueError, match=match):
        A.solve(torch.ones(9, dtype=f64), **({"method": "cg"} | kw))


@pytest.mark.parametrize("kw", [{"rtol": "1e-3"}, {"maxiter": "10"}, {"method": 3},
                                {"backend": 1}, {"atol": None, "maxiter": [3]}])
def test_solve_refuses_wrong_types(A, kw):
    with pytest.raises(TypeError, match="must be"):
        A.solve(torch.ones(9, dtype=f64), **kw)


@needs_method("cg")
def test_solve_accepts_integer_like_options(A):
    b = torch.ones(9, dtype=f64)
    x, info = A.solve(b, method="CG", maxiter=np.int64(50), rtol=torch.tensor(1e-12),
                      atol=0, return_info=True)
    assert info.method == "cg" and info.converged
    assert torch.allclose(A @ x, b, atol=1e-10)


@needs_method("auto")
def test_solve_with_no_right_hand_side_is_empty(A):
    x, info = A.solve(torch.ones(9, 0, dtype=f64), return_info=True)
    assert x.shape == (9, 0) and info.converged
    B = SparseTensor(A.values.repeat(2, 1), A.row_indices, A.col_indices, (2, 9, 9))
    assert B.solve(torch.ones(9, 0, dtype=f64)).shape == (2, 9, 0)


# --- caches -------------------------------------------------------------------------------------
@pytest.mark.parametrize("n, exc", [(-1, ValueError), (2.5, ValueError), ("8", TypeError),
                                    (None, TypeError)])
def test_set_solver_cache_size_refuses_bad_sizes(n, exc):
    before = torch_sla.solver_cache_info()[1]
    with pytest.raises(exc, match="set_solver_cache_size: n"):
        torch_sla.set_solver_cache_size(n)
    assert torch_sla.solver_cache_info()[1] == before
    assert torch_sla.set_solver_cache_size(np.int32(before)) == before


# --- eigsh --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw, match", [
    ({"k": 2.5}, r"k = 2.5 is not an integer"),
    ({"k": 0}, r"k = 0 must be in \[1, 9\] for a 9×9 matrix"),
    ({"k": 2, "sigma": math.nan}, r"sigma = nan must be finite"),
    ({"k": 2, "tol": -1.0}, r"tol = -1.0 must be ≥ 0"),
    ({"k": 2, "maxiter": 0}, r"maxiter = 0 must be ≥ 1"),
    ({"k": 2, "maxiter": 1.5}, r"maxiter = 1.5 is not an integer"),
    ({"k": 2, "method": None}, r"method = None is not one of"),
])
def test_eigsh_refuses_bad_arguments(A, kw, match):
    with pytest.raises(ValueError, match=match):
        A.eigsh(**kw)


def test_eigsh_of_empty_matrix_says_so():
    E = SparseTensor(torch.zeros(0, dtype=f64), torch.zeros(0, dtype=torch.long),
                     torch.zeros(0, dtype=torch.long), (0, 0))
    with pytest.raises(ValueError, match="0×0 matrix: there are no eigenpairs"):
        E.eigsh(k=1)


# --- determinants -------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["cg", "CG", "gmres", "minres", "bicgstab"])
def test_determinant_refuses_iterative_methods_in_any_case(A, method):
    with pytest.raises(ValueError, match="determinants need a direct method"):
        A.slogdet(method=method)


# --- properties and norms -----------------------------------------------------------------------
@pytest.mark.parametrize("kw, match", [({"atol": -1}, "atol = -1 must be ≥ 0"),
                                       ({"rtol": math.nan}, "rtol = nan must be finite")])
def test_is_symmetric_refuses_bad_tolerances(A, kw, match):
    with pytest.raises(ValueError, match=match):
        A.is_symmetric(**kw)


@pytest.mark.parametrize("ord", [True, "nuc", -math.inf, 3, [1]])
def test_norm_refuses_unknown_orders(A, ord):
    with pytest.raises(ValueError, match="ord = "):
        A.norm(ord)


def test_norm_orders_against_dense(A):
    D = A.to_dense()
    assert float(A.norm(1)) == float(D.abs().sum(0).max()) == 8.0
    assert float(A.norm(math.inf)) == float(D.abs().sum(1).max())
    assert float(A.norm("max")) == 4.0
    assert torch.allclose(A.norm(), torch.linalg.norm(D))


def test_spectral_norm():
    """norm(2) of symmetric matrices = max |λ| (dense reference), batched, differentiable
    (gradcheck), zero for the empty matrix; a non-symmetric matrix is refused with a pointer to
    the other norms."""
    from torch.autograd import gradcheck
    row, col, val = poisson2d(4)
    vals = torch.stack([val, -2.0 * val])                     # batch 2, second negative definite
    S = SparseTensor(vals, row, col, (2, 16, 16))
    ref = torch.stack([torch.linalg.matrix_norm(S.to_dense()[b], 2) for b in range(2)])
    assert torch.allclose(S.norm(2), ref, rtol=1e-12)
    # gradcheck perturbs one entry at a time: symmetrize (a_ij and a_ji move together)
    where = {(int(r), int(c)): q for q, (r, c) in enumerate(zip(row, col))}
    mirror = torch.tensor([where[(int(c), int(r))] for r, c in zip(row, col)])
    assert gradcheck(lambda v: SparseTensor((v + v[mirror]) / 2, row, col, (16, 16)).norm(2),
                     (val.clone().requires_grad_(),), eps=1e-6, atol=1e-6)
    E = SparseTensor(torch.zeros(0, dtype=torch.float64), torch.zeros(0, dtype=torch.long),
                     torch.zeros(0, dtype=torch.long), (3, 3))
    assert float(E.norm(2)) == 0.0
    U = SparseTensor(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),
                     torch.tensor([0, 0, 1]), torch.tensor([0, 1, 1]), (2, 2))
    # non-symmetric: σmax through the Gram matrix (test_compat_numerics.py)
    assert torch.allclose(U.norm(2), torch.linalg.matrix_norm(U.to_dense(), 2), rtol=1e-12)


def test_to_rejects_non_float_dtypes(A):
    with pytest.raises(TypeError, match="torch.float64, float32, complex128 or complex64, "
                                        "got torch.int64"):
        A.to(torch.int64)
    assert A.to(torch.float32).dtype == torch.float32


# --- batch indices ------------------------------------------------------------------------------
def test_to_scipy_and_save_mtx_batch_index(tmp_path):
    row, col, val = poisson2d(2)
    vals = torch.stack([val * (i + 1) for i in range(6)]).reshape(2, 3, -1)
    B = SparseTensor(vals, row, col, (2, 3, 4, 4))
    D = B.to_dense()
    assert np.array_equal(B.to_scipy(index=(1, 2)).toarray(), D[1, 2].numpy())
    assert np.array_equal(B.to_scipy(index=-1).toarray(), D[1, 2].numpy())
    assert np.array_equal(B.to_scipy(index=4).toarray(), D[1, 1].numpy())
    for bad, match in [((2, 0), r"index\[0\] = 2 is out of range for batch dimension 0"),
                       ((1,), "has 1 entries for the batch shape"),
                       (6, "index = 6 is out of range for a batch of 6"),
                       (1.0, "index = 1.0 is not an integer"),
                       (None, "needs index=")]:
        with pytest.raises(ValueError, match=match):
            B.to_scipy(index=bad)
    path = tmp_path / "b.mtx"
    B.save_mtx(path, index=(0, 1))
    assert torch.equal(torch_sla.load_mtx(path).to_dense(), D[0, 1])
    with pytest.raises(ValueError, match=r"index = 2.5 is not an integer"):
        B.save_mtx(path, index=2.5)
    A = SparseTensor(val, row, col, (4, 4))
    assert np.array_equal(A.to_scipy().toarray(), A.to_dense().numpy())
    with pytest.raises(ValueError, match="index = 1 is out of range for a batch of 1"):
        A.to_scipy(index=1)
    with pytest.raises(ValueError, match="index = 1 is out of range for a batch of 1"):
        A.save_mtx(path, index=1)


def test_save_mtx_refuses_non_sparse_tensors(tmp_path):
    with pytest.raises(TypeError, match="save_mtx writes a SparseTensor, got Tensor"):
        torch_sla.save_mtx(torch.eye(3, dtype=f64), tmp_path / "x.mtx")
    A = SparseTensor.from_dense(torch.eye(2, dtype=f64))
    with pytest.raises(TypeError, match="comment must be a string"):
        A.save_mtx(tmp_path / "x.mtx", comment=3)


# --- backends -----------------------------------------------------------------------------------
def test_method_available_refuses_unknown_names():
    with pytest.raises(ValueError, match="method = 'nope' is not one of"):
        torch_sla.method_available("nope")
    with pytest.raises(ValueError, match="backend = 'petsc' is not one of auto, "):
        torch_sla.method_available("lu", backend="petsc")
    with pytest.raises(TypeError, match="dtype must be a torch.dtype"):
        torch_sla.method_available("lu", "float64")
    assert torch_sla.method_available("lu", torch.int64) is False
    names = [b.name for b in torch_sla.backends() if b.available and "lu" in b.methods]
    for name in names:
        assert torch_sla.method_available("LU", torch.float64, backend=name)


# --- messages -----------------------------------------------------------------------------------
def test_shape_messages_print_symbolic_sizes_without_quotes():
    row, col, val = poisson2d(2)
    B = SparseTensor(val.repeat(2, 3, 1), row, col, (2, 3, 4, 4))
    with pytest.raises(ValueError) as e:
        B.solve(torch.ones(3, 2, 4, dtype=f64))
    msg = str(e.value)
    assert "(2, 3, 4, K)" in msg and "'" not in msg and "got (3, 2, 4)" in msg
    with pytest.raises(ValueError) as e:
        B @ torch.ones(1, 4, 4, dtype=f64)
    assert "(2, 3, 4, K)" in str(e.value) and "'" not in str(e.value)
    with pytest.raises(ValueError) as e:
        torch.ones(1, 3, 4, dtype=f64) @ B
    assert "(2, 3, K, 4)" in str(e.value) and "'" not in str(e.value)
    with pytest.raises(ValueError, match=r"values has shape \(2, 12\); for shape \(4, 4\) "
                                         r"with 12 entries it must be \(12,\)"):
        SparseTensor(val.repeat(2, 1), row, col, (4, 4))


# --- constructors -------------------------------------------------------------------------------
def test_from_scipy_complex_and_non_sparse():
    S = sp.csr_matrix(np.array([[1 + 2j, 0], [0, 3]]))
    assert SparseTensor.from_scipy(S).dtype == torch.complex128
    with pytest.raises(TypeError, match="complex dtype complex128 but dtype=torch.float64 is "
                                        "real"):
        SparseTensor.from_scipy(S, dtype=torch.float64)
    assert SparseTensor.from_scipy(sp.csr_matrix(np.eye(2, dtype=np.complex64))).dtype == \
        torch.complex64
    with pytest.raises(TypeError, match="scipy.sparse matrix or array, got ndarray"):
        SparseTensor.from_scipy(np.eye(2))
    with pytest.raises(TypeError, match="dtype must be torch.float64, float32, complex128 or "
                                        "complex64"):
        SparseTensor.from_scipy(sp.eye(2), dtype=torch.int64)
    A = SparseTensor.from_scipy(sp.csr_matrix(np.array([[1, 0], [2, 3]], dtype=np.int64)))
    assert A.dtype == f64 and A.to_dense().tolist() == [[1, 0], [2, 3]]


def test_from_dense_and_from_torch_sparse_refuse_bad_inputs():
    with pytest.raises(TypeError, match="from_dense: A must be float64, float32, complex128 or "
                                        "complex64, got torch.int64"):
        SparseTensor.from_dense(torch.eye(2, dtype=torch.int64))
    with pytest.raises(TypeError, match="torch sparse tensor, got ndarray"):
        SparseTensor.from_torch_sparse(np.eye(2))
    A = SparseTensor.from_dense(torch.eye(2, dtype=f64))
    with pytest.raises(TypeError, match="values must be a torch.Tensor"):
        A.with_values([1.0, 2.0])


# --- SparseTensorList ---------------------------------------------------------------------------
def _two_blocks():
    A0 = SparseTensor(torch.tensor([2.0, 3, 4, 1], dtype=f64), torch.tensor([0, 1, 2, 0]),
                      torch.tensor([0, 1, 2, 2]), (3, 3))
    A1 = SparseTensor(torch.tensor([5.0, 6], dtype=f64), torch.tensor([0, 1]),
                      torch.tensor([0, 1]), (2, 2))
    return SparseTensorList([A0, A1])


@pytest.mark.parametrize("sizes, match", [
    ([3, 2], r"sizes\[0\] = 3 must be a pair \(M, N\)"),
    ([(3, 3), (2,)], r"sizes\[1\] = \(2,\) must be a pair"),
    ([(3, 3), (2.5, 2)], r"sizes\[1\]\[0\] = 2.5 is not an integer"),
    ([(3, 3), (-1, 2)], r"sizes\[1\]\[0\] = -1 must be ≥ 0"),
    ([], "sizes is empty"),
    (5, "sizes must be a list of"),
    ([(3, 3), (3, 3)], r"block sizes sum to \(6, 6\), matrix is \(5, 5\)"),
])
def test_from_block_diagonal_refuses_bad_sizes(sizes, match):
    L = _two_blocks()
    with pytest.raises(ValueError, match=match):
        SparseTensorList.from_block_diagonal(L.to_block_diagonal(), sizes)


def test_block_diagonal_roundtrip_and_list_checks():
    L = _two_blocks()
    back = SparseTensorList.from_block_diagonal(L.to_block_diagonal(), L.block_sizes())
    assert [t.to_dense().tolist() for t in back] == [t.to_dense().tolist() for t in L]
    with pytest.raises(TypeError, match="needs a SparseTensor, got Tensor"):
        SparseTensorList.from_block_diagonal(torch.eye(5), L.block_sizes())
    with pytest.raises(TypeError, match="one tensor per matrix \\(2\\), got Tensor"):
        L.solve(torch.ones(3, dtype=f64))
    with pytest.raises(ValueError, match="1 operands for 2 matrices"):
        L.solve([torch.ones(3, dtype=f64)])
    with pytest.raises(ValueError, match=r"matrices\[0\] must be a tuple \(values, "
                                         r"row_indices, col_indices, shape\), got tuple of "
                                         r"length 3"):
        SparseTensorList.from_coo_list([(torch.ones(1), torch.tensor([0]), torch.tensor([0]))])


@needs_method("auto")
def test_list_slogdet_matches_dense():
    L = _two_blocks()
    for (sign, lad), t in zip(L.slogdet(), L):
        rs, rl = torch.linalg.slogdet(t.to_dense())
        assert float(sign) == float(rs) and torch.allclose(lad, rl, rtol=1e-14)


def test_ndarray_at_sparse_converts_reals_and_refuses_complex(A):
    x = np.linspace(1.0, 2.0, 9)
    assert torch.allclose(x @ A, torch.from_numpy(x) @ A.to_dense())
    assert torch.allclose(A.float().__rmatmul__(x), (torch.from_numpy(x) @ A.to_dense()).float())
    with pytest.raises(TypeError, match="complex128"):
        (x + 1j) @ A


@needs_method("auto")
def test_empty_batch_gives_empty_results():
    row, col, val = poisson2d(2)
    E = SparseTensor(torch.zeros(0, 2, val.numel(), dtype=f64), row, col, (0, 2, 4, 4))
    assert E.solve(torch.ones(4, dtype=f64)).shape == (0, 2, 4)
    assert E.solve(torch.ones(0, 2, 4, 3, dtype=f64)).shape == (0, 2, 4, 3)
    sign, lad = E.slogdet()
    assert sign.shape == lad.shape == E.logdet().shape == E.det().shape == (0, 2)
    for ord in ("fro", 1, math.inf, "max"):
        assert E.norm(ord).shape == (0, 2)
    lam, V = E.eigsh(k=2)
    assert lam.shape == (0, 2, 2) and V.shape == (0, 2, 4, 2)
    assert (E @ torch.ones(4, dtype=f64)).shape == (0, 2, 4)
