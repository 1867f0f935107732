"""Large external-data tensors are mapped from their file, not read (core/tensor_proto.c): the
pages nothing touches take no memory. An embedding of 64 MiB of which a Gather reads three rows
adds a few MiB to the process's peak, where reading the file would add all of it; the rows
gathered are the file's; and unaligned or small tensors, read the old way, are right too."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx

ROWS, DIM = 16384, 1024   # 64 MiB of float


def embedding_model(folder, table):
    g = h.make_graph([h.make_node('Gather', ['table', 'ids'], ['y'])], 'g',
                     [h.make_tensor_value_info('ids', TP.INT64, [3])],
                     [h.make_tensor_value_info('y', TP.FLOAT, [3, table.shape[1]])],
                     [nh.from_array(table, 'table')])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
    path = os.path.join(folder, 'model.onnx')
    # the only tensor: at offset 0 of model.data
    onnx.save_model(m, path, save_as_external_data=True, location='model.data',
                    size_threshold=0, all_tensors_to_one_file=True)
    return path


PEAK_SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import onyx
    def peak_kib():
        for line in open('/proc/self/status'):
            if line.startswith('VmHWM:'):
                return int(line.split()[1])
    before = peak_kib()
    s = onyx.Session(sys.argv[1], threads=1)
    y = s.run(None, {'ids': np.array([5, 9000, 16383], np.int64)})[0]
    print(peak_kib() - before, float(y.sum()))
''')


def test_untouched_rows_take_no_memory(tmp_path):
    table = np.arange(ROWS * DIM, dtype=np.float32).reshape(ROWS, DIM) / 1e6
    path = embedding_model(str(tmp_path), table)
    script = tmp_path / 'peak.py'
    script.write_text(PEAK_SCRIPT)
    out = subprocess.run([sys.executable, str(script), path], capture_output=True, text=True,
                         env=dict(os.environ), check=True).stdout.split()
    grown_kib, total = int(out[0]), float(out[1])
    assert np.isclose(total, table[[5, 9000, 16383]].sum(dtype=np.float64), rtol=1e-6)
    assert grown_kib < 64 * 1024 / 4, grown_kib   # far from the table's 64 MiB


def test_small_and_unaligned_tensors_are_read(tmp_path):
    rng = np.random.default_rng(5)
    table = rng.standard_normal((100, 70)).astype(np.float32)   # 28 KB: read
    path = embedding_model(str(tmp_path), table)
    y = onyx.Session(path).run(None, {'ids': np.array([0, 50, 99], np.int64)})[0]
    np.testing.assert_array_equal(y, table[[0, 50, 99]])
    # a large tensor at an offset that is not a multiple of 64: read, not mapped
    big = rng.standard_normal((1024, 33)).astype(np.float32)
    raw = b'\0' * 12 + big.tobytes()
    (tmp_path / 'odd.data').write_bytes(raw)
    t = nh.from_array(big, 'table')
    t.ClearField('raw_data')
    t.data_location = TP.EXTERNAL
    for k, v in (('location', 'odd.data'), ('offset', '12'), ('length', str(big.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    g = h.make_graph([h.make_node('Gather', ['table', 'ids'], ['y'])], 'g',
                     [h.make_tensor_value_info('ids', TP.INT64, [3])],
                     [h.make_tensor_value_info('y', TP.FLOAT, [3, 33])], [t])
    odd = tmp_path / 'odd.onnx'
    odd.write_bytes(h.make_model(g, opset_imports=[h.make_opsetid('', 17)]).SerializeToString())
    y = onyx.Session(str(odd)).run(None, {'ids': np.array([1, 512, 1023], np.int64)})[0]
    np.testing.assert_array_equal(y, big[[1, 512, 1023]])
