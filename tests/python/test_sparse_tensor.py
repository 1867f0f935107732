"""onnxruntime's SparseTensor on the CPU (backend/python/onyx/_sparse.py): COO and CSR(C) made from
numpy, read back as read-only views, their checks, and an OrtValue around one."""
import gc

import numpy as np
import pytest

import onyx
import onyx.ort as ort

CPU = ort.OrtDevice.make('cpu', 0)


def test_coo_linear_and_coordinates():
    values = np.array([1.0, 2.0, 3.0], np.float32)
    linear = np.array([3, 5, 15], np.int64)
    st = ort.SparseTensor.sparse_coo_from_numpy([9, 9], values, linear, CPU)
    assert st.format() == ort.OrtSparseFormat.ORT_SPARSE_COO
    assert st.dense_shape() == [9, 9] and st.data_type() == 'sparse_tensor(float)'
    assert st.device_name() == 'cpu'
    got = st.values()
    assert not got.flags.writeable
    gc.collect()
    np.testing.assert_array_equal(got, values)
    np.testing.assert_array_equal(st.as_coo_view().indices(), linear)
    dense = st.to_dense()
    assert dense.reshape(-1)[[3, 5, 15]].tolist() == [1.0, 2.0, 3.0] and dense.sum() == 6.0
    coords = np.array([[0, 3], [0, 5], [1, 6]], np.int64).reshape(-1)
    st2 = ort.SparseTensor.sparse_coo_from_numpy([9, 9], values, coords, CPU)
    np.testing.assert_array_equal(st2.to_dense(), dense)


def test_csr_and_strings():
    values = np.array([1.0, 2.0, 3.0], np.float32)
    inner = np.array([1, 1, 1], np.int64)
    outer = np.array([0, 1, 2, 3, 3, 3, 3, 3, 3, 3], np.int64)
    st = ort.SparseTensor.sparse_csr_from_numpy([9, 9], values, inner, outer, CPU)
    assert st.format() == ort.OrtSparseFormat.ORT_SPARSE_CSRC
    view = st.as_csrc_view()
    assert not view.inner().flags.writeable and not view.outer().flags.writeable
    np.testing.assert_array_equal(view.outer(), outer)
    assert st.to_dense()[:3, 1].tolist() == [1.0, 2.0, 3.0]
    strings = ort.SparseTensor.sparse_csr_from_numpy([9, 9], np.array(['xyz', 'yxz', 'zyx']), inner, outer, CPU)
    assert strings.data_type() == 'sparse_tensor(string)'
    assert strings.values().tolist() == ['xyz', 'yxz', 'zyx']
    with pytest.raises(onyx.InvalidArgument):
        st.as_coo_view()


@pytest.mark.parametrize('make', [
    lambda: ort.SparseTensor.sparse_coo_from_numpy([3, 3], np.ones(2, np.float32), np.array([0, 9], np.int64), CPU),
    lambda: ort.SparseTensor.sparse_coo_from_numpy([3, 3], np.ones(2, np.float32), np.array([0, 1, 2], np.int64), CPU),
    lambda: ort.SparseTensor.sparse_coo_from_numpy([3, 3], np.ones(2, np.float32), np.array([0, 1], np.int32), CPU),
    lambda: ort.SparseTensor.sparse_csr_from_numpy([3, 3], np.ones(2, np.float32), np.array([0, 1], np.int64),
                                                   np.array([0, 1, 2], np.int64), CPU),
    lambda: ort.SparseTensor.sparse_csr_from_numpy([3, 3], np.ones(2, np.float32), np.array([0, 3], np.int64),
                                                   np.array([0, 1, 2, 2], np.int64), CPU),
    lambda: ort.SparseTensor.sparse_csr_from_numpy([3], np.ones(1, np.float32), np.array([0], np.int64),
                                                   np.array([0, 1], np.int64), CPU),
])
def test_bad_indices_are_refused(make):
    with pytest.raises(onyx.InvalidArgument):
        make()


def test_ortvalue_and_devices():
    st = ort.SparseTensor.sparse_coo_from_numpy([4], np.array([5], np.int64), np.array([2], np.int64), CPU)
    value = ort.OrtValue.ort_value_from_sparse_tensor(st)
    assert value.is_sparse_tensor() and not value.is_tensor()
    assert value.data_type() == 'sparse_tensor(int64)'
    assert value.as_sparse_tensor().to_dense().tolist() == [0, 0, 5, 0]
    with pytest.raises(onyx.InvalidArgument):
        ort.OrtValue.ortvalue_from_numpy(np.ones(2, np.float32)).as_sparse_tensor()
    with pytest.raises(RuntimeError):   # onnxruntime's error without CUDA
        st.to_cuda(ort.OrtDevice.make('cuda', 0))
