"""Einsum equations that are batched matrix products run through BLAS
(kernels_cpu/math/einsum_matmul.c); the others stay on the generic loop nest. Both against numpy,
in the forms exporters write (torch.einsum attention, MaxViT's spaced upper-case labels) and the
layouts the product reads in place, transposed or copies."""
import numpy as np
import pytest
from onnx import helper as h

import onyx.backend as backend

# (equation, input shapes): products in every operand layout, with batch, row, column and summed
# labels in various places, ellipses, outer products and plain dot products
PRODUCTS = [
    ('ij,jk->ik', [(5, 7), (7, 3)]),
    ('ij,kj->ik', [(5, 7), (3, 7)]),             # B transposed, read in place
    ('ji,jk->ik', [(7, 5), (7, 3)]),             # A transposed, read in place
    ('ij,jk->ki', [(5, 7), (7, 3)]),             # the result scattered back
    ('bhid,bhjd->bhij', [(2, 3, 9, 8), (2, 3, 11, 8)]),
    ('bhij,bhjd->bhid', [(2, 3, 9, 11), (2, 3, 11, 8)]),
    ('B G H I D, B G H J D -> B G H I J', [(1, 4, 2, 49, 32), (1, 4, 2, 49, 32)]),
    ('bid,bjd->bij', [(64, 12, 16), (64, 20, 16)]),  # many small batches, shared out
    ('bhqd,bkhd->bhqk', [(2, 3, 5, 4), (2, 6, 3, 4)]),  # B's labels in another order: copied
    ('ibh,hnd->ibnd', [(5, 2, 8), (8, 3, 4)]),   # rows and columns of two labels each
    ('...ij,...jk->...ik', [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ('abc,cd->abd', [(3, 4, 5), (5, 2)]),
    ('i,j->ij', [(6,), (4,)]),                   # outer product: nothing summed
    ('i,i->', [(9,), (9,)]),                     # dot product: one summed label
    ('bij,bij->b', [(3, 4, 5), (3, 4, 5)]),      # batched dot over two labels
    ('ij,ij->ij', [(4, 5), (4, 5)]),             # elementwise: every label a batch label
]
# the generic loop nest: diagonals, broadcasting, sums within one operand, three operands
GENERIC = [
    ('ii->i', [(5, 5)]),
    ('ij,jk->ik', [(1, 7), (7, 3)]),
    ('...ij,...jk->...ik', [(1, 3, 4, 5), (2, 3, 5, 6)]),  # a broadcast batch dim
    ('ijk,jl->il', [(3, 4, 5), (4, 6)]),         # k summed within A alone
    ('ij,jk,kl->il', [(3, 4), (4, 5), (5, 2)]),
    ('iij,jk->ik', [(3, 3, 4), (4, 2)]),
]


def run(eq, arrays):
    node = h.make_node('Einsum', [f'x{i}' for i in range(len(arrays))], ['y'], equation=eq)
    return backend.run_node(node, arrays)[0]


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('eq,shapes', PRODUCTS + GENERIC)
def test_einsum_against_numpy(eq, shapes, dtype):
    g = np.random.default_rng(len(eq))
    arrays = [g.standard_normal(s).astype(dtype) for s in shapes]
    want = np.einsum(eq.replace(' ', ''), *[a.astype(np.float64) for a in arrays])
    got = run(eq, arrays)
    assert got.dtype == dtype and got.shape == want.shape
    # float32 products sum in float32, as MatMul: a few ulps of the sums' magnitude
    scale = np.einsum(eq.replace(' ', ''), *[np.abs(a.astype(np.float64)) for a in arrays])
    tol = 1e-6 if dtype == np.float32 else 1e-14
    assert np.all(np.abs(got - want) <= tol * (scale + 1)), np.max(np.abs(got - want))


def rounded_double_share(eq, shapes):
    """The share of outputs equal to the double-precision result rounded once: ~1 for the loop
    nest (it sums in double), well under 1 for a float32 product over 512 terms."""
    g = np.random.default_rng(1)
    arrays = [g.standard_normal(s).astype(np.float32) for s in shapes]
    want = np.einsum(eq, *[a.astype(np.float64) for a in arrays]).astype(np.float32)
    return float(np.mean(run(eq, arrays) == want))


def test_products_take_blas_and_others_the_loop():
    assert rounded_double_share('bid,bjd->bij', [(2, 8, 512), (2, 8, 512)]) < 0.9
    assert rounded_double_share('ij,kj->ik', [(8, 512), (8, 512)]) < 0.9
    # a broadcast batch dim and a sum within one operand stay on the loop nest
    assert rounded_double_share('...id,...jd->...ij', [(1, 8, 512), (2, 8, 512)]) > 0.99
    assert rounded_double_share('bidk,bjd->bij', [(2, 8, 512, 2), (2, 8, 512)]) > 0.99
