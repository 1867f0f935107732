#!/usr/bin/env python3
"""Model zoo exporter: modern CNNs and transformers with RANDOM weights (built from configs, a fixed
seed, nothing downloaded), exported to ONNX by both torch exporters, for benchmarking onyx.

For each model it writes into the output folder (default zoo/ at the repository root):
  <name>.onnx         TorchScript exporter (torch.onnx.export(dynamo=False), opset 17)
  <name>.dynamo.onnx  dynamo exporter (torch.onnx.export(dynamo=True), opset 18)
  <name>.json         the inputs: name, dtype, benchmark shape, dynamic dims, how to fill them
A model or exporter that fails prints a one-line reason and the run goes on.

  tools/zoo/export.py [--out DIR] [--models a,b] [--exporters ts,dynamo] [--force] [--check]
  tools/zoo/export.py --list
  tools/zoo/export.py --tiny [--out DIR]   # tiny models + inputs + onnxruntime outputs
                                           # into tests/models/tiny/
"""
import os

# Never reach a model hub: every model is built from an explicit config with random weights.
os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Callable, Optional  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
SEED = 0
OPSET = {'ts': 17, 'dynamo': 18}
SUFFIX = {'ts': '.onnx', 'dynamo': '.dynamo.onnx'}


# ---------------------------------------------------------------- the declarative table

@dataclass
class In:
    """One graph input. `shape` is the benchmark shape; `dynamic` maps an axis to its symbolic
    name; `fill` says how to make data: uniform floats in [-1, 1], tokens in [0, high), ones
    (attention masks), zeros (token type ids)."""
    name: str
    dtype: str
    shape: tuple
    dynamic: dict = field(default_factory=dict)
    fill: str = 'uniform'
    high: int = 1000


@dataclass
class Spec:
    name: str
    build: Optional[Callable]   # () -> torch.nn.Module in eval mode, forward(*inputs in order)
    inputs: list
    outputs: list
    family: str                 # cnn | transformer | detection | tiny
    dim_max: dict = field(default_factory=dict)  # symbolic dim -> upper bound for torch.export
    fp16_of: Optional[str] = None  # built by converting this model's exports to float16
    note: str = ''


def _tv(ctor, **kw):
    def build():
        import torchvision.models as tvm
        return getattr(tvm, ctor)(weights=None, **kw)
    return build


def _segmentation(ctor):
    """A torchvision segmentation model with its dict output reduced to the mask logits."""
    def build():
        import torch
        import torchvision.models.segmentation as seg
        model = getattr(seg, ctor)(weights=None, weights_backbone=None, aux_loss=False)

        class Segment(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = model

            def forward(self, x):
                return self.m(x)['out']
        return Segment()
    return build


def _positional(model, input_names, output_fields):
    """A transformers model with a positional forward(input_names...) returning a tuple of the
    given output fields, so that both exporters see the same input names and outputs. torch.export
    matches dynamic_shapes to forward's parameters, so forward gets a real signature."""
    import torch

    def call(self, *args):
        out = self.m(**dict(zip(input_names, args)))
        return tuple(getattr(out, f) for f in output_fields)

    ns = {'call': call}
    exec('def forward(self, {0}):\n    return call(self, {0})\n'.format(', '.join(input_names)), ns)
    wrapped = type('Positional', (torch.nn.Module,), {'forward': ns['forward']})()
    wrapped.m = model
    return wrapped.eval()


def _hf(config_cls, model_cls, config, input_names, output_fields, encoder=False):
    def build():
        import transformers
        cfg = getattr(transformers, config_cls)(**config)
        model = getattr(transformers, model_cls)(cfg).eval()
        if encoder:
            model = model.get_encoder()
        return _positional(model, input_names, output_fields)
    return build


def _image(size=224, name='input'):
    return [In(name, 'float32', (1, 3, size, size), {0: 'batch'})]


def _tokens(names, seq=128, batch=1, high=1000):
    fills = {'attention_mask': 'ones', 'token_type_ids': 'zeros'}
    return [In(n, 'int64', (batch, seq), {0: 'batch', 1: 'sequence'}, fills.get(n, 'tokens'), high)
            for n in names]


BERT_IN = ['input_ids', 'attention_mask', 'token_type_ids']
BERT_OUT = ['last_hidden_state', 'pooler_output']
BERT_BASE = dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512)
MINILM = dict(BERT_BASE, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
              intermediate_size=1536)
WHISPER_TINY = dict(d_model=384, encoder_layers=4, decoder_layers=4, encoder_attention_heads=6,
                    decoder_attention_heads=6, encoder_ffn_dim=1536, decoder_ffn_dim=1536,
                    num_mel_bins=80, max_source_positions=1500, vocab_size=51865)


def _ssdlite():
    import torch
    import torchvision.models.detection as det
    model = det.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None).eval()

    class Detect(torch.nn.Module):
        """One image in, the detections of that image out (boxes, scores, labels)."""

        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, images):
            d = self.m(list(images))[0]  # the batch is 1 but for BatchNorm calibration
            return d['boxes'], d['scores'], d['labels']
    return Detect().eval()


MODELS = [
    Spec('resnet18', _tv('resnet18'), _image(), ['logits'], 'cnn'),
    Spec('resnet50', _tv('resnet50'), _image(), ['logits'], 'cnn'),
    Spec('mobilenet_v2', _tv('mobilenet_v2'), _image(), ['logits'], 'cnn'),
    Spec('mobilenet_v3_small', _tv('mobilenet_v3_small'), _image(), ['logits'], 'cnn'),
    Spec('mobilenet_v3_large', _tv('mobilenet_v3_large'), _image(), ['logits'], 'cnn'),
    Spec('efficientnet_b0', _tv('efficientnet_b0'), _image(), ['logits'], 'cnn'),
    Spec('convnext_tiny', _tv('convnext_tiny'), _image(), ['logits'], 'cnn'),
    Spec('regnety_400mf', _tv('regnet_y_400mf'), _image(), ['logits'], 'cnn'),
    Spec('vit_b_16', _tv('vit_b_16'), _image(), ['logits'], 'cnn'),
    Spec('deeplabv3_mobilenet_v3_large', _segmentation('deeplabv3_mobilenet_v3_large'),
         _image(520), ['out'], 'cnn', note='segmentation, 21 classes at 520x520'),
    Spec('ssdlite320_mobilenet_v3_large', _ssdlite,
         [In('images', 'float32', (1, 3, 320, 320))], ['boxes', 'scores', 'labels'], 'detection',
         note='one image, fixed shape; post-processing (NMS) inside'),
    Spec('bert_base', _hf('BertConfig', 'BertModel', BERT_BASE, BERT_IN, BERT_OUT),
         _tokens(BERT_IN), BERT_OUT, 'transformer', {'sequence': 512}),
    Spec('distilbert', _hf('DistilBertConfig', 'DistilBertModel', {},
                           BERT_IN[:2], ['last_hidden_state']),
         _tokens(BERT_IN[:2]), ['last_hidden_state'], 'transformer', {'sequence': 512}),
    Spec('gpt2', _hf('GPT2Config', 'GPT2Model', dict(use_cache=False),
                     BERT_IN[:2], ['last_hidden_state']),
         _tokens(BERT_IN[:2]), ['last_hidden_state'], 'transformer', {'sequence': 1024},
         note='no past key/values'),
    Spec('whisper_tiny_encoder', _hf('WhisperConfig', 'WhisperModel', WHISPER_TINY,
                                     ['input_features'], ['last_hidden_state'], encoder=True),
         [In('input_features', 'float32', (1, 80, 3000), {0: 'batch'})], ['last_hidden_state'],
         'transformer', note='encoder only; 3000 frames (30 s) are required by the model'),
    Spec('all_minilm_l6', _hf('BertConfig', 'BertModel', MINILM, BERT_IN, BERT_OUT),
         _tokens(BERT_IN), BERT_OUT, 'transformer', {'sequence': 512}),
    Spec('resnet18_fp16', None, _image(), ['logits'], 'cnn', fp16_of='resnet18',
         note='float16 weights and compute, float32 inputs/outputs'),
    Spec('resnet50_fp16', None, _image(), ['logits'], 'cnn', fp16_of='resnet50',
         note='float16 weights and compute, float32 inputs/outputs'),
    Spec('bert_base_fp16', None, _tokens(BERT_IN), BERT_OUT, 'transformer', fp16_of='bert_base',
         note='float16 weights and compute, float32 outputs'),
]


# ---------------------------------------------------------------- tiny models (tests/models/tiny)

def _tiny_cnn():
    import torch
    from torch import nn

    class SE(nn.Module):
        def __init__(self, c, r=4):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(c, c // r, 1)
            self.fc2 = nn.Conv2d(c // r, c, 1)

        def forward(self, x):
            s = torch.sigmoid(self.fc2(nn.functional.silu(self.fc1(self.pool(x)))))
            return x * s

    class Block(nn.Module):
        """Inverted residual: expand 1x1, depthwise 3x3, squeeze-excitation, project 1x1."""

        def __init__(self, cin, cout, stride, expand=4):
            super().__init__()
            mid = cin * expand
            self.body = nn.Sequential(
                nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU(),
                nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid),
                nn.SiLU(), SE(mid), nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.residual else y

    return nn.Sequential(
        nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU(),
        Block(16, 16, 1), Block(16, 24, 2), Block(24, 24, 1),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(24, 10))


def _tiny_vit():
    import torchvision.models as tvm
    return tvm.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                 hidden_dim=64, mlp_dim=128, num_classes=10).eval()


TINY_BERT = dict(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=128, max_position_embeddings=64, type_vocab_size=2)

TINY = [
    Spec('tiny_bert', _hf('BertConfig', 'BertModel', TINY_BERT, BERT_IN, BERT_OUT),
         _tokens(BERT_IN, seq=16, batch=2, high=256), BERT_OUT, 'tiny', {'sequence': 64},
         note='2 layers, hidden 64, 2 heads'),
    Spec('tiny_cnn', _tiny_cnn, [In('input', 'float32', (2, 3, 32, 32), {0: 'batch'})], ['logits'],
         'tiny', note='SiLU, depthwise convs, squeeze-excitation, BatchNorm'),
    Spec('tiny_vit', _tiny_vit, [In('input', 'float32', (2, 3, 32, 32), {0: 'batch'})], ['logits'],
         'tiny', note='2 layers, hidden 64, patch 8, image 32'),
]


# ---------------------------------------------------------------- inputs

def make_inputs(spec, shapes=None, seed=SEED, masked_tail=False):
    """Deterministic numpy inputs at `shapes` (name -> shape; default the benchmark shapes).
    masked_tail: attention masks get zeros at the end of every row but the first, so that a
    tracer cannot take an all-ones mask for a constant."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in spec.inputs:
        shape = tuple((shapes or {}).get(i.name, i.shape))
        if i.fill == 'uniform':
            a = rng.uniform(-1, 1, shape).astype(i.dtype)
        elif i.fill == 'tokens':
            a = rng.integers(0, i.high, shape).astype(i.dtype)
        elif i.fill == 'ones':
            a = np.ones(shape, i.dtype)
            if masked_tail and len(shape) == 2:
                a[1:, shape[1] - max(1, shape[1] // 4):] = 0
        elif i.fill == 'zeros':
            a = np.zeros(shape, i.dtype)
        else:
            raise ValueError('unknown fill ' + i.fill)
        out[i.name] = a
    return out


def export_shapes(spec):
    """Shapes of the examples given to the exporters: a dynamic batch of 2, since torch.export
    specializes a dim whose example is 1."""
    shapes = {}
    for i in spec.inputs:
        s = list(i.shape)
        for axis, dim in i.dynamic.items():
            if dim == 'batch':
                s[axis] = max(2, s[axis])
        shapes[i.name] = tuple(s)
    return shapes


def alt_shapes(spec):
    """Another shape for each dynamic dim (batch 3, sequence halved), to check dynamic axes."""
    shapes = {}
    for i in spec.inputs:
        s = list(i.shape)
        for axis, dim in i.dynamic.items():
            s[axis] = 3 if dim == 'batch' else max(1, s[axis] // 2)
        shapes[i.name] = tuple(s)
    return shapes


# ---------------------------------------------------------------- export

@contextlib.contextmanager
def quiet(enabled=True):
    """The exporters print pages of progress, warnings and (from C++, on file descriptor 2) whole
    graphs when they fail: send file descriptors 1 and 2 to /dev/null meanwhile. A failure still
    surfaces as its exception."""
    if not enabled:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter('ignore')
            os.dup2(null, 1)
            os.dup2(null, 2)
            yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def one_line(exc):
    """The innermost cause of an exception on one line (the exporters wrap the real reason in
    pages of advice), without terminal colours."""
    import re
    while exc.__cause__ is not None:
        exc = exc.__cause__
    msg = ' '.join(re.sub(r'\x1b\[[0-9;]*m', '', str(exc)).split())
    return '%s: %s' % (type(exc).__name__, msg[:300] + ('...' if len(msg) > 300 else ''))


def export(spec, module, exporter, path, verbose=False):
    import torch
    example = make_inputs(spec, export_shapes(spec), masked_tail=True)
    args = tuple(torch.from_numpy(example[i.name]) for i in spec.inputs)
    names = [i.name for i in spec.inputs]
    tmp = path + '.tmp'
    # The TorchScript exporter has no symbolic for nn.MultiheadAttention's fused inference path.
    torch.backends.mha.set_fastpath_enabled(exporter != 'ts')
    with quiet(not verbose), torch.no_grad():
        if exporter == 'ts':
            axes = {i.name: dict(i.dynamic) for i in spec.inputs if i.dynamic}
            torch.onnx.export(module, args, tmp, dynamo=False, opset_version=OPSET['ts'],
                              input_names=names, output_names=spec.outputs,
                              dynamic_axes=axes or None, do_constant_folding=True)
        else:
            dims = {}
            for i in spec.inputs:
                for dim in i.dynamic.values():
                    if dim not in dims:
                        dims[dim] = torch.export.Dim(dim, min=1, max=spec.dim_max.get(dim, 4096))
            shapes = tuple({a: dims[d] for a, d in i.dynamic.items()} or None for i in spec.inputs)
            prog = torch.onnx.export(module, args, None, dynamo=True, opset_version=OPSET['dynamo'],
                                     input_names=names, output_names=spec.outputs,
                                     dynamic_shapes=shapes if any(shapes) else None,
                                     external_data=False)
            prog.save(tmp, external_data=False)
    os.replace(tmp, path)


def detach_outputs(graph):
    """Graph outputs that other nodes also read (BERT's last_hidden_state feeds the pooler) get
    their own Identity: keep_io_types casts such an output back to float32, and the converter
    then leaves its readers on the float32 tensor while typing it float16."""
    import onnx
    read = {name for node in graph.node for name in node.input}
    for out in graph.output:
        if out.name not in read:
            continue
        inner = out.name + '_fp'
        for node in graph.node:
            node.output[:] = [inner if o == out.name else o for o in node.output]
            node.input[:] = [inner if i == out.name else i for i in node.input]
        graph.node.append(onnx.helper.make_node('Identity', [inner], [out.name],
                                                name=out.name + '_identity'))


def convert_fp16(src, dst):
    import onnx
    from onnxconverter_common import float16
    model = onnx.load(src)
    detach_outputs(model.graph)
    with quiet():
        model = float16.convert_float_to_float16(model, keep_io_types=True)
    onnx.save(model, dst + '.tmp')
    os.replace(dst + '.tmp', dst)


def strip_metadata(path):
    """Drops the per-node metadata (source locations, module stacks) that the dynamo exporter
    writes, a third of a tiny model's bytes; the graph is unchanged."""
    import onnx
    model = onnx.load(path)
    for node in model.graph.node:
        del node.metadata_props[:]
        node.doc_string = ''
    onnx.save(model, path)


def write_json(spec, out_dir):
    """<name>.json: one input per line, so that it reads well and a small C reader copes."""
    files = {e: spec.name + SUFFIX[e] for e in SUFFIX
             if os.path.exists(os.path.join(out_dir, spec.name + SUFFIX[e]))}
    inputs = [{'name': i.name, 'dtype': i.dtype, 'shape': list(i.shape),
               'dynamic': {str(a): d for a, d in sorted(i.dynamic.items())},
               'fill': i.fill, **({'high': i.high} if i.fill == 'tokens' else {})}
              for i in spec.inputs]
    head = {'name': spec.name, 'family': spec.family, 'note': spec.note, 'files': files,
            'outputs': spec.outputs}
    lines = ['  %s: %s,' % (json.dumps(k), json.dumps(v)) for k, v in head.items()]
    lines.append('  "inputs": [\n%s\n  ]' % ',\n'.join('    ' + json.dumps(i) for i in inputs))
    with open(os.path.join(out_dir, spec.name + '.json'), 'w') as f:
        f.write('{\n%s\n}\n' % '\n'.join(lines))


# ---------------------------------------------------------------- onnxruntime check

def ort_run(path, feeds, optimize=True):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
    names = [o.name for o in sess.get_outputs()]
    return names, sess.run(None, feeds)


def torch_outputs(module, feeds, spec):
    import torch
    with torch.no_grad():
        out = module(*(torch.from_numpy(feeds[i.name]) for i in spec.inputs))
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [o.numpy() for o in out]


def check(spec, path, reference=None):
    """Runs the model in onnxruntime at the benchmark shapes (and at other shapes when it has
    dynamic dims). With `reference` (module), compares with torch at the export example shapes.
    Returns a short report string; raises on failure."""
    parts = []
    feeds = make_inputs(spec)
    t0 = time.perf_counter()
    _, outs = ort_run(path, feeds)
    parts.append('ort %.0f ms, out %s' % ((time.perf_counter() - t0) * 1e3,
                                          ' '.join('x'.join(map(str, o.shape)) for o in outs)))
    if any(i.dynamic for i in spec.inputs):
        alt = make_inputs(spec, alt_shapes(spec), seed=SEED + 1)
        _, outs = ort_run(path, alt)
        parts.append('alt shape out %s' % ' '.join('x'.join(map(str, o.shape)) for o in outs))
    if reference is not None:
        feeds = make_inputs(spec, export_shapes(spec), seed=SEED + 2, masked_tail=True)
        _, got = ort_run(path, feeds)
        want = torch_outputs(reference, feeds, spec)
        worst = 0.0
        for g, w in zip(got, want):
            if g.shape != w.shape:
                raise RuntimeError('output shape %s, torch %s' % (g.shape, w.shape))
            if g.size:  # error relative to the output's largest magnitude
                scale = float(np.abs(w.astype(np.float64)).max()) or 1.0
                worst = max(worst, float(np.abs(g.astype(np.float64) - w).max()) / scale)
        parts.append('vs torch: max rel err %.1e' % worst)
        if worst > (5e-2 if spec.fp16_of else 1e-3):
            raise RuntimeError('outputs differ from torch: ' + '; '.join(parts))
    return '; '.join(parts)


# ---------------------------------------------------------------- driver

def calibrate_batchnorm(spec, module):
    """Sets every BatchNorm's running statistics from one random batch. With random weights and
    the default statistics (mean 0, variance 1) eval-mode activations shrink or grow layer after
    layer: outputs near 0 (or denormal floats, which distort timings) instead of a trained
    network's scale. Only the BatchNorm layers run in training mode, so detection models keep
    their eval path."""
    import torch
    bns = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.train()
        bn.momentum = None  # cumulative average: exactly this batch's statistics
        bn.reset_running_stats()
    # A batch of 4, since a BatchNorm after global pooling needs more than one value per channel.
    shapes = {i.name: (4,) + tuple(i.shape[1:]) for i in spec.inputs}
    feeds = make_inputs(spec, shapes, seed=SEED + 3)
    with torch.no_grad():
        module(*(torch.from_numpy(feeds[i.name]) for i in spec.inputs))
    for bn in bns:
        bn.eval()


def revive_zero_layers(module):
    """Gives a normal(0, 0.02) init to Linear and Conv weights that start at zero (the ViT head):
    a zero layer makes the outputs constant and the comparison with torch meaningless."""
    import torch
    for m in module.modules():
        if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)) and not m.weight.detach().any():
            torch.nn.init.normal_(m.weight, std=0.02)


def build(spec):
    import torch
    torch.manual_seed(SEED)
    with quiet():
        module = spec.build().eval()  # torchvision constructors return training-mode modules
        revive_zero_layers(module)
        calibrate_batchnorm(spec, module)
    return module


def run_zoo(args, specs):
    import torch
    torch.set_num_threads(os.cpu_count() or 2)
    os.makedirs(args.out, exist_ok=True)
    by_name = {s.name: s for s in MODELS}
    failures = []
    for spec in specs:
        files = {}
        module = None
        for exporter in args.exporters:
            path = os.path.join(args.out, spec.name + SUFFIX[exporter])
            tag = '%-32s %-6s' % (spec.name, exporter)
            done = os.path.exists(path) and not args.force
            t0 = time.perf_counter()
            try:
                if not done:
                    if spec.fp16_of:
                        src = os.path.join(args.out, spec.fp16_of + SUFFIX[exporter])
                        if not os.path.exists(src):
                            raise RuntimeError('needs %s first' % os.path.relpath(src, ROOT))
                        convert_fp16(src, path)
                    else:
                        module = module or build(spec)
                        export(spec, module, exporter, path, args.verbose)
                files[exporter] = os.path.basename(path)
                size = os.path.getsize(path) / 2**20
                msg = '%s %s %7.1f MB  %s' % (tag, 'kept    ' if done else 'exported',
                                               size, '%.0f s' % (time.perf_counter() - t0))
                if args.check:
                    # An fp16 model is compared with the float32 torch model it came from.
                    module = module or build(by_name[spec.fp16_of] if spec.fp16_of else spec)
                    msg += '  check: ' + check(spec, path, module)
                print(msg, flush=True)
            except Exception as e:  # one model or exporter failing must not stop the others
                failures.append((spec.name, exporter, one_line(e)))
                print('%s FAILED  %s' % (tag, one_line(e)), flush=True)
        if files:
            write_json(spec, args.out)
    return failures


def run_tiny(args):
    """Tiny models with their inputs and onnxruntime's outputs (no graph optimizations, so the
    reference is plain op-by-op evaluation) for tests."""
    out = args.out
    os.makedirs(out, exist_ok=True)
    failures = []
    for spec in TINY:
        module = build(spec)
        files = {}
        for exporter in args.exporters:
            stem = spec.name + SUFFIX[exporter][:-len('.onnx')]
            path = os.path.join(out, stem + '.onnx')
            try:
                npz = [os.path.join(out, stem + k) for k in ('.inputs.npz', '.expected.npz')]
                fresh = args.force or not os.path.exists(path)
                if fresh:
                    export(spec, module, exporter, path, args.verbose)
                    strip_metadata(path)
                # Rewritten only with a fresh model: npz files carry timestamps, and kept ones
                # should not show up as changed.
                if fresh or not all(os.path.exists(f) for f in npz):
                    feeds = make_inputs(spec, masked_tail=True)
                    names, outs = ort_run(path, feeds, optimize=False)
                    np.savez(npz[0], **feeds)
                    np.savez(npz[1], **dict(zip(names, outs)))
                files[exporter] = os.path.basename(path)
                print('%-24s %-6s %6.1f KB  check: %s' % (spec.name, exporter,
                      os.path.getsize(path) / 1024, check(spec, path, module)), flush=True)
            except Exception as e:
                failures.append((spec.name, exporter, one_line(e)))
                print('%-24s %-6s FAILED  %s' % (spec.name, exporter, one_line(e)), flush=True)
        if files:
            write_json(spec, out)
    total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print('%s: %.0f KB in all' % (os.path.relpath(out, ROOT), total / 1024))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', help='output folder (default zoo/, or tests/models/tiny/ with --tiny)')
    ap.add_argument('--models', help='comma-separated names (default: all)')
    ap.add_argument('--exporters', default='ts,dynamo', help='ts, dynamo or ts,dynamo')
    ap.add_argument('--list', action='store_true', help='list the models and exit')
    ap.add_argument('--force', action='store_true', help='export again what exists')
    ap.add_argument('--check', action='store_true',
                    help='run every model in onnxruntime and compare with torch')
    ap.add_argument('--tiny', action='store_true', help='the tiny test models instead')
    ap.add_argument('--verbose', action='store_true', help="show the exporters' own output")
    args = ap.parse_args()

    table = TINY if args.tiny else MODELS
    if args.list:
        for s in table:
            ins = ', '.join('%s %s[%s]%s' % (i.name, i.dtype, 'x'.join(map(str, i.shape)),
                            ' dyn ' + '/'.join(i.dynamic.values()) if i.dynamic else '')
                            for i in s.inputs)
            print('%-30s %-11s %s%s' % (s.name, s.family, ins, '  (' + s.note + ')' if s.note else ''))
        return 0
    args.exporters = [e.strip() for e in args.exporters.split(',') if e.strip()]
    bad = [e for e in args.exporters if e not in SUFFIX]
    if bad:
        ap.error('unknown exporter %s (ts, dynamo)' % ', '.join(bad))
    if args.tiny:
        args.out = os.path.abspath(args.out or os.path.join(ROOT, 'tests', 'models', 'tiny'))
        failures = run_tiny(args)
    else:
        args.out = os.path.abspath(args.out or os.path.join(ROOT, 'zoo'))
        specs = table
        if args.models:
            wanted = [m.strip() for m in args.models.split(',') if m.strip()]
            known = {s.name for s in table}
            unknown = [m for m in wanted if m not in known]
            if unknown:
                ap.error('unknown model(s) %s; --list shows them' % ', '.join(unknown))
            specs = [s for s in table if s.name in wanted]
        failures = run_zoo(args, specs)
    if failures:
        print('%d failed:' % len(failures))
        for name, exporter, why in failures:
            print('  %s (%s): %s' % (name, exporter, why))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
