"""onnxruntime's SparseTensor on the CPU: a dense shape with its non-zero values in COO form (linear
indices, or one row of coordinates per value) or CSR(C) form (inner and outer indices), as
onnxruntime's Python API makes and reads them. Numeric values and indices are the caller's arrays,
shared (onnxruntime's CPU sparse tensor uses the numpy memory too) and read back as read-only views;
strings are copied. onyx's graphs take no sparse inputs (a sparse initializer is made dense at
load): such a value fed to a run is refused by name, never read as something else.
"""
import numpy as np

from . import _lib
from ._values import _find_code


def _invalid(message):
    raise _lib.InvalidArgument(1, 'ONYX_ERR_INVALID_ARGUMENT', message)


def _read_only(array):
    view = array.view()
    view.flags.writeable = False
    return view


def _indices(name, indices):
    array = np.asarray(indices)
    if array.dtype != np.int64:
        _invalid(f'SparseTensor: {name} must be int64, got {array.dtype}')
    return np.ascontiguousarray(array)


def _values(values):
    array = np.asarray(values)
    if array.ndim != 1:
        _invalid(f'SparseTensor: values must be 1-D, got shape {list(array.shape)}')
    if array.dtype.kind in 'OUS':
        return np.array([v if isinstance(v, str) else v.decode('utf-8') if isinstance(v, bytes) else str(v)
                         for v in array], dtype=object)
    return np.ascontiguousarray(array)


def _cpu_only(device, what):
    if device is not None and device.device_type() != 0:   # OrtDevice.cpu() is 0
        raise RuntimeError(f'SparseTensor.{what}: onyx keeps sparse tensors on the CPU only')


class SparseTensor:
    """onnxruntime.SparseTensor (CPU)."""

    def __init__(self, fmt, dense_shape, values, indices):
        self._format = fmt
        self._dense_shape = [int(d) for d in dense_shape]
        self._values = values
        self._indices = indices   # COO: (indices,); CSR: (inner, outer)

    @staticmethod
    def sparse_coo_from_numpy(dense_shape, values, coo_indices, ort_device):
        """COO: `coo_indices` are nnz linear indices into the dense shape, or nnz x rank coordinates
        (flat, 2 * nnz for a matrix)."""
        from .ort import OrtSparseFormat
        _cpu_only(ort_device, 'sparse_coo_from_numpy')
        shape = [int(d) for d in dense_shape]
        if any(d < 0 for d in shape):
            _invalid(f'SparseTensor: dense shape {shape} has a negative dimension')
        vals, idx = _values(values), _indices('coo indices', coo_indices)
        nnz, numel, rank = len(vals), int(np.prod(shape, dtype=np.int64)), len(shape)
        if idx.size == nnz and (idx.ndim == 1 or nnz == 0):
            if nnz and (idx.min() < 0 or idx.max() >= numel):
                _invalid(f'SparseTensor: a COO index is outside the dense shape {shape} ({numel} elements)')
        elif rank and idx.size == nnz * rank:
            coords = idx.reshape(nnz, rank)
            if nnz and ((coords < 0).any() or (coords >= np.array(shape)).any()):
                _invalid(f'SparseTensor: a COO coordinate is outside the dense shape {shape}')
        else:
            _invalid(f'SparseTensor: {idx.size} COO indices for {nnz} values of a rank-{rank} shape '
                     f'(expected {nnz} linear indices or {nnz * rank} coordinates)')
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_COO, shape, vals, (idx,))

    @staticmethod
    def sparse_csr_from_numpy(dense_shape, values, inner_indices, outer_indices, ort_device):
        """CSR(C) of a matrix: inner_indices are the nnz column indices, outer_indices the rows + 1
        offsets where each row's values start."""
        from .ort import OrtSparseFormat
        _cpu_only(ort_device, 'sparse_csr_from_numpy')
        shape = [int(d) for d in dense_shape]
        if len(shape) != 2 or any(d < 0 for d in shape):
            _invalid(f'SparseTensor: CSR needs a 2-D dense shape, got {shape}')
        vals = _values(values)
        inner, outer = _indices('inner indices', inner_indices), _indices('outer indices', outer_indices)
        nnz = len(vals)
        if inner.ndim != 1 or len(inner) != nnz:
            _invalid(f'SparseTensor: {inner.size} inner indices for {nnz} values')
        if outer.ndim != 1 or len(outer) != shape[0] + 1:
            _invalid(f'SparseTensor: {outer.size} outer indices for {shape[0]} rows (expected {shape[0] + 1})')
        if outer[0] != 0 or outer[-1] != nnz or (np.diff(outer) < 0).any():
            _invalid('SparseTensor: outer indices must rise from 0 to the number of values')
        if nnz and (inner.min() < 0 or inner.max() >= shape[1]):
            _invalid(f'SparseTensor: an inner index is outside the {shape[1]} columns')
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_CSRC, shape, vals, (inner, outer))

    def format(self):
        return self._format

    def dense_shape(self):
        return list(self._dense_shape)

    def data_type(self):
        code = _find_code(self._values.dtype) if self._values.dtype != object else 8
        from ._lib import lib
        return f'sparse_tensor({lib.onyx_dtype_name(code).decode()})'

    def element_type(self):
        return 8 if self._values.dtype == object else _find_code(self._values.dtype)

    def device_name(self):
        return 'cpu'

    def values(self):
        """The non-zero values: a read-only view for numbers, a copy for strings (as onnxruntime)."""
        if self._values.dtype == object:
            return self._values.astype(str) if len(self._values) else np.array([], dtype=str)
        return _read_only(self._values)

    def as_coo_view(self):
        from .ort import OrtSparseFormat
        if self._format != OrtSparseFormat.ORT_SPARSE_COO:
            _invalid(f'SparseTensor: as_coo_view of a {self._format.name} tensor')
        return _CooView(self._indices[0])

    def as_csrc_view(self):
        from .ort import OrtSparseFormat
        if self._format != OrtSparseFormat.ORT_SPARSE_CSRC:
            _invalid(f'SparseTensor: as_csrc_view of a {self._format.name} tensor')
        return _CsrView(*self._indices)

    def as_blocksparse_view(self):
        _invalid(f'SparseTensor: as_blocksparse_view of a {self._format.name} tensor')

    def to_cuda(self, ort_device):   # noqa: ARG002
        raise RuntimeError('SparseTensor.to_cuda: onyx keeps sparse tensors on the CPU only')

    def to_dense(self):
        """The dense array (onyx's own helper; onnxruntime's Python API has none)."""
        from .ort import OrtSparseFormat
        dense = np.zeros(self._dense_shape, dtype=self._values.dtype if self._values.dtype != object else object)
        if self._values.dtype == object:
            dense[...] = ''
        flat = dense.reshape(-1)
        if self._format == OrtSparseFormat.ORT_SPARSE_CSRC:
            inner, outer = self._indices
            rows = np.repeat(np.arange(self._dense_shape[0]), np.diff(outer))
            flat[rows * self._dense_shape[1] + inner] = self._values
        else:
            idx = self._indices[0]
            if idx.size and (idx.ndim > 1 or idx.size != len(self._values)):
                idx = np.ravel_multi_index(tuple(idx.reshape(len(self._values), -1).T), self._dense_shape)
            flat[idx] = self._values
        return dense

    def __repr__(self):
        return f'SparseTensor({self._format.name}, {self.data_type()}, dense_shape={self._dense_shape})'


class _CooView:
    def __init__(self, indices):
        self._indices_array = indices

    def indices(self):
        return _read_only(self._indices_array)


class _CsrView:
    def __init__(self, inner, outer):
        self._inner, self._outer = inner, outer

    def inner(self):
        return _read_only(self._inner)

    def outer(self):
        return _read_only(self._outer)


__all__ = ['SparseTensor']
