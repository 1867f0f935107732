# Shared helpers of the generated op regression suite: building one-node models, computing
# expectations with onnx's reference evaluator, and writing ONNX backend-style test dirs.
import os
import re
import shutil

import numpy as np
import onnx
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

# Elements above which a case counts as large: it goes to the folder run with one test at a time,
# where the rep gets every core and parallel_for really splits (the runner gives each test one
# thread when it runs several at once).
LARGE_ELEMS = 30000
# The whole suite must stay small: a large case may hold at most this many elements per tensor.
MAX_ELEMS = 120000

_NAME = re.compile(r'^[A-Za-z0-9_]+$')


def elem_type(dtype):
    return h.np_dtype_to_tensor_dtype(np.dtype(dtype))


class Opt:
    """An optional value for an input or an expected output: Opt(None) is the empty optional."""

    def __init__(self, value):
        self.value = value


def to_proto(value, name):
    """A TensorProto, a SequenceProto (for a list) or an OptionalProto (for an Opt)."""
    if isinstance(value, Opt):
        if value.value is None:
            opt = onnx.OptionalProto()
            opt.name = name
            opt.elem_type = onnx.OptionalProto.UNDEFINED
            return opt
        return nh.from_optional(value.value, name)
    if isinstance(value, list):
        if not value:
            raise ValueError(f'{name}: an empty sequence has no element type; write it by hand')
        return nh.from_list([np.asarray(v) for v in value], name)
    return nh.from_array(np.asarray(value), name)


def _numel(value):
    if isinstance(value, Opt):
        return 0 if value.value is None else _numel(value.value)
    if isinstance(value, list):
        return max([_numel(v) for v in value] + [0])
    return int(np.asarray(value).size)


def _fix_strings(value):
    # The reference evaluator builds string results in np.empty object arrays and leaves slots it
    # did not write (padding, default values) as None or 0; ONNX means the empty string there.
    if isinstance(value, np.ndarray) and value.dtype == object and value.size:
        return np.vectorize(lambda v: v if isinstance(v, str) else '', otypes=[object])(value)
    return value


def reference(model, feeds):
    """Runs onnx's reference evaluator; feeds: (input name, value) pairs."""
    outs = ReferenceEvaluator(model).run(None, dict(feeds))
    return [_fix_strings(o) if isinstance(o, np.ndarray) else o for o in outs]


class Suite:
    """Writes test dirs under root/ok (small cases) and root/par (large ones), each once."""

    def __init__(self, root):
        self.root = root
        self.names = set()
        self.counts = {'ok': 0, 'par': 0}
        for sub in self.counts:
            shutil.rmtree(os.path.join(root, sub), ignore_errors=True)
            os.makedirs(os.path.join(root, sub))

    def write(self, name, model, inputs, outputs, check=True, rtol=None):
        """inputs, outputs: lists of (name, value) in the graph's order. check=False skips onnx's
        checker, which wants a shape on every graph output, for graphs that leave some out."""
        if not _NAME.match(name) or name in self.names:
            raise ValueError(f'case name {name!r} is malformed or used twice')
        self.names.add(name)
        if check:
            onnx.checker.check_model(model)
        size = max([_numel(v) for _, v in list(inputs) + list(outputs)] + [0])
        if size > MAX_ELEMS:
            raise ValueError(f'{name}: {size} elements in one tensor, more than {MAX_ELEMS}')
        sub = 'par' if size > LARGE_ELEMS else 'ok'
        self.counts[sub] += 1
        d = os.path.join(self.root, sub, name)
        os.makedirs(os.path.join(d, 'test_data_set_0'))
        onnx.save(model, os.path.join(d, 'model.onnx'))
        for kind, items in (('input', inputs), ('output', outputs)):
            for i, (n, v) in enumerate(items):
                with open(os.path.join(d, 'test_data_set_0', f'{kind}_{i}.pb'), 'wb') as f:
                    f.write(to_proto(v, n).SerializeToString())
        if rtol is not None:  # the runner reads a case's tolerance from data.json, as onnx's
            with open(os.path.join(d, 'data.json'), 'w') as f:
                f.write(f'{{"rtol": {rtol}}}\n')


def value_info(name, value, sym=False):
    """The graph input declaration for a numpy value: its shape, or one dim_param per axis."""
    v = np.asarray(value)
    shape = [f'{name}_d{j}' for j in range(v.ndim)] if sym else list(v.shape)
    return h.make_tensor_value_info(name, elem_type(v.dtype), shape)


def node_model(op, inputs, attrs=None, opset=21, n_out=1, consts=(), sym=False, ir_version=None):
    """A model of one node. inputs: values (None for an omitted optional input), named x0, x1, ...;
    those whose index is in consts become initializers; the rest are graph inputs, with their
    shape or (sym) one dim_param per axis. Outputs y0.. are declared without a type.
    Returns (model, feeds), feeds a list of (input name, value)."""
    in_names = ['' if v is None else f'x{i}' for i, v in enumerate(inputs)]
    out_names = [f'y{i}' for i in range(n_out)]
    node = h.make_node(op, in_names, out_names, **(attrs or {}))
    graph_inputs, inits, feeds = [], [], []
    for i, (n, v) in enumerate(zip(in_names, inputs)):
        if v is None:
            continue
        if i in consts:
            inits.append(nh.from_array(np.asarray(v), n))
            continue
        graph_inputs.append(value_info(n, v, sym))
        feeds.append((n, v))
    outs = [h.make_empty_tensor_value_info(n) for n in out_names]
    graph = h.make_graph([node], f'{op}_case', graph_inputs, outs, initializer=inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', opset)])
    if ir_version is not None:
        model.ir_version = ir_version
    return model, feeds


def declare_outputs(model, results, sym=False):
    """Declares each graph output's type (and shape, unless sym) from the expected results."""
    for o, r in zip(model.graph.output, results):
        r = np.asarray(r)
        o.CopyFrom(h.make_tensor_value_info(o.name, elem_type(r.dtype), None if sym else list(r.shape)))


def case(suite, name, op, inputs, expected=None, attrs=None, opset=21, n_out=1, consts=(), sym=False,
         ir_version=None, rtol=None):
    """Writes a one-node case. expected: the outputs when computed by hand (or with numpy), else
    onnx's reference evaluator computes them. Outputs are declared with the expected type, and
    with their shape unless sym. rtol: the case's relative tolerance, where not the runner's."""
    model, feeds = node_model(op, inputs, attrs, opset, n_out, consts, sym, ir_version)
    results = reference(model, feeds) if expected is None else list(expected)
    if len(results) != n_out:
        raise ValueError(f'{name}: {len(results)} expected outputs for {n_out} node outputs')
    declare_outputs(model, results, sym)
    # onnx's checker wants a shape on every graph output, which the symbolic variants leave out
    # on purpose; their static twins are checked.
    suite.write(name, model, feeds, [(f'y{i}', r) for i, r in enumerate(results)], check=not sym,
                rtol=rtol)
