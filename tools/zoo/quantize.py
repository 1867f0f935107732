#!/usr/bin/env python3
"""The quantized zoo: int8 variants of float zoo models (tools/zoo/export.py's TorchScript exports),
made the way a user makes them with onnxruntime.quantization, for benchmarking onyx (issue 32).

From zoo/<model>.onnx it writes zoo/<model>.<variant>.onnx and zoo/<model>.<variant>.json (the float
model's input description under the variant's name, plus a "quantized" entry saying how it was made):
  CNNs (quantize_static, MinMax calibration over random inputs, int8 weights):
    qop     QOperator (QLinearConv, QLinearAdd, ...), per-tensor weights, uint8 activations
    qop_pc  QOperator, per-channel weights, uint8 activations
    qdq     QDQ (QuantizeLinear/DequantizeLinear around float ops), per-tensor, uint8 activations
    qdq_pc  QDQ, per-channel, uint8 activations
    qdq_s8  QDQ, per-channel, int8 activations
  transformers (quantize_dynamic, int8 weights, activations quantized per run):
    dyn     at the float model's sequence length (128), and dyn.s12 (the same file) at 12
Each model first goes through quant_pre_process (shape inference, onnxruntime's basic graph
optimizations) as onnxruntime's documentation recommends; the result is kept as <model>.pre.onnx,
where, for the static variants, each reader of a shared initializer gets its own copy (see
unshare_initializers).
A model or variant that fails prints one line and the run goes on; existing files are kept unless
--force.

  tools/zoo/quantize.py [--zoo DIR] [--models resnet50,bert_base] [--variants qop,qdq] [--force]
  tools/zoo/quantize.py --list
"""
import argparse
import json
import os
import sys
import time

from onnxruntime.quantization import CalibrationDataReader

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tools', 'bench'))
from zoo_bench import make_feeds  # noqa: E402  (calibration inputs made as the benchmark's are)

CALIBRATION_SAMPLES = 8
CALIBRATION_SEED = 2000  # the benchmark's own input is seed 1000: calibrate on other samples

# variant -> how it is made. Weights are int8 throughout (onnxruntime's default and the form its
# VNNI u8s8 / s8s8 kernels take).
STATIC = {
    'qop': dict(fmt='QOperator', per_channel=False, activation='QUInt8'),
    'qop_pc': dict(fmt='QOperator', per_channel=True, activation='QUInt8'),
    'qdq': dict(fmt='QDQ', per_channel=False, activation='QUInt8'),
    'qdq_pc': dict(fmt='QDQ', per_channel=True, activation='QUInt8'),
    'qdq_s8': dict(fmt='QDQ', per_channel=True, activation='QInt8'),
}
DYNAMIC = {'dyn': dict(per_channel=False)}
SEQUENCES = {'dyn': 128, 'dyn.s12': 12}  # benchmark sequence lengths of the dynamic variants

MODELS = {
    'resnet18': STATIC, 'resnet50': STATIC, 'mobilenet_v2': STATIC, 'efficientnet_b0': STATIC,
    'convnext_tiny': STATIC,
    'bert_base': DYNAMIC, 'distilbert': DYNAMIC, 'all_minilm_l6': DYNAMIC,
}


class RandomReader(CalibrationDataReader):
    """A few random feeds at batch 1, then None."""

    def __init__(self, spec, samples=CALIBRATION_SAMPLES):
        self.feeds = iter([make_feeds(spec, 1, seed=CALIBRATION_SEED + 100 * s)
                           for s in range(samples)])

    def get_next(self):
        return next(self.feeds, None)


def preprocess(src, dst):
    """quant_pre_process. Its symbolic shape inference gives up on the transformers exports
    ("Incomplete symbolic shape inference"); merging symbolic dims (auto_merge) gets through, and
    failing that the step is skipped. Returns what was given up, or ''."""
    import tempfile
    from onnxruntime.quantization import quant_pre_process
    tries = [({}, ''), ({'auto_merge': True}, 'symbolic dims merged (auto_merge)'),
             ({'skip_symbolic_shape': True}, 'no symbolic shape inference')]
    src, dst, cwd = os.path.abspath(src), os.path.abspath(dst), os.getcwd()
    # A failed symbolic shape inference dumps its model (sym_shape_infer_temp.onnx and a weights
    # file as large as the model's) into the current folder: let that be a temporary one.
    with tempfile.TemporaryDirectory(prefix='quantize.') as tmp:
        os.chdir(tmp)
        try:
            for k, (kw, note) in enumerate(tries):
                try:
                    quant_pre_process(src, dst, **kw)
                    return note
                except Exception:  # noqa: BLE001
                    if k == len(tries) - 1:
                        raise
        finally:
            os.chdir(cwd)
    return ''


def unshare_initializers(path):
    """Gives each reader of a shared initializer its own copy; returns how many copies. The torch
    exporter merges equal initializers (ConvNeXt's all-zero biases feed a Conv, LayerNorms and
    Adds), and onnxruntime 1.32's QOperator quantizer then hands the Conv's int32-quantized bias
    to a QLinearAdd: a graph that neither onnxruntime nor onyx loads."""
    import onnx
    model = onnx.load(path)
    inits = {t.name: t for t in model.graph.initializer}
    seen, copies = set(), 0
    for node in model.graph.node:
        for k, name in enumerate(node.input):
            if name not in inits:
                continue
            if name in seen:
                copy = onnx.TensorProto()
                copy.CopyFrom(inits[name])
                copy.name = '%s_copy%d' % (name, copies)
                model.graph.initializer.append(copy)
                node.input[k] = copy.name
                copies += 1
            seen.add(name)
    if copies:
        onnx.save(model, path)
    return copies


def quantize(model, variant, pre, dst, spec):
    from onnxruntime.quantization import (QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)
    how = (STATIC if variant in STATIC else DYNAMIC)[variant]
    if variant in DYNAMIC:
        quantize_dynamic(pre, dst, per_channel=how['per_channel'], weight_type=QuantType.QInt8)
        return 'quantize_dynamic, int8 weights' + (', per-channel' if how['per_channel'] else '')
    quantize_static(pre, dst, RandomReader(spec), quant_format=getattr(QuantFormat, how['fmt']),
                    per_channel=how['per_channel'], activation_type=getattr(QuantType, how['activation']),
                    weight_type=QuantType.QInt8)
    return 'quantize_static %s, %s, %s activations, int8 weights, MinMax over %d random inputs' % (
        how['fmt'], 'per-channel' if how['per_channel'] else 'per-tensor',
        'uint8' if how['activation'] == 'QUInt8' else 'int8', CALIBRATION_SAMPLES)


def write_json(zoo, spec, name, onnx_file, made_from, how, seq=None):
    """<name>.json: the float model's description under the variant's name (sequence length `seq`
    for token models), in export.py's line-per-input form, which build/core_bench's small reader
    expects."""
    inputs = []
    for i in spec['inputs']:
        i = dict(i)
        if seq and '1' in i.get('dynamic', {}):
            i['shape'] = [i['shape'][0], seq] + list(i['shape'][2:])
        inputs.append(i)
    head = {'name': name, 'family': spec['family'], 'note': spec.get('note', ''),
            'files': {'ts': onnx_file}, 'outputs': spec['outputs'],
            'quantized': {'from': made_from, 'how': how}}
    lines = ['  %s: %s,' % (json.dumps(k), json.dumps(v)) for k, v in head.items()]
    lines.append('  "inputs": [\n%s\n  ]' % ',\n'.join('    ' + json.dumps(i) for i in inputs))
    with open(os.path.join(zoo, name + '.json'), 'w') as f:
        f.write('{\n%s\n}\n' % '\n'.join(lines))


def run(args, models, variants):
    failures = []
    for model in models:
        src = os.path.join(args.zoo, model + '.onnx')
        spec_path = os.path.join(args.zoo, model + '.json')
        if not os.path.exists(src) or not os.path.exists(spec_path):
            failures.append((model, '-', 'no float model: tools/zoo/export.py --models %s --exporters ts'
                             % model))
            print('%-28s needs %s first' % (model, os.path.relpath(src, ROOT)), flush=True)
            continue
        with open(spec_path) as f:
            spec = json.load(f)
        pre = os.path.join(args.zoo, model + '.pre.onnx')
        mine = [v for v in MODELS[model] if not variants or v in variants]
        fresh_pre = False  # pre-processed in this run (once per model)
        for variant in mine:
            name = '%s.%s' % (model, variant)
            dst = os.path.join(args.zoo, name + '.onnx')
            t0 = time.perf_counter()
            try:
                kept = os.path.exists(dst) and not args.force
                how = ''
                if not kept:
                    if not fresh_pre and (args.force or not os.path.exists(pre)):
                        note = preprocess(src, pre)
                        copies = unshare_initializers(pre) if MODELS[model] is STATIC else 0
                        if copies:
                            note = ', '.join(filter(None, [note, '%d shared initializers copied'
                                                           % copies]))
                        print('%-28s pre-processed%s' % (model, ': ' + note if note else ''),
                              flush=True)
                    fresh_pre = True
                    how = quantize(model, variant, pre, dst + '.tmp', spec)
                    os.replace(dst + '.tmp', dst)
                else:
                    old = os.path.join(args.zoo, name + '.json')
                    if os.path.exists(old):
                        with open(old) as f:
                            how = json.load(f).get('quantized', {}).get('how', '')
                for seq_name, seq in SEQUENCES.items():
                    if seq_name.split('.')[0] == variant:
                        write_json(args.zoo, spec, '%s.%s' % (model, seq_name), name + '.onnx',
                                  model + '.onnx', how, seq)
                if variant not in SEQUENCES:
                    write_json(args.zoo, spec, name, name + '.onnx', model + '.onnx', how)
                print('%-28s %s %7.1f MB  %.0f s  %s' % (
                    name, 'kept     ' if kept else 'quantized', os.path.getsize(dst) / 2**20,
                    time.perf_counter() - t0, how), flush=True)
            except Exception as e:  # one variant failing must not stop the others
                msg = ' '.join(str(e).split())[:300]
                failures.append((name, variant, '%s: %s' % (type(e).__name__, msg)))
                print('%-28s FAILED  %s: %s' % (name, type(e).__name__, msg), flush=True)
                if os.path.exists(dst + '.tmp'):
                    os.remove(dst + '.tmp')
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--zoo', default=os.path.join(ROOT, 'zoo'), help='the float zoo, and the output')
    ap.add_argument('--models', help='comma-separated float model names (default: all listed)')
    ap.add_argument('--variants', help='comma-separated variants (default: each model\'s all)')
    ap.add_argument('--force', action='store_true', help='pre-process and quantize again')
    ap.add_argument('--list', action='store_true', help='list models and variants and exit')
    args = ap.parse_args()
    if args.list:
        for model, table in MODELS.items():
            names = [s for s in SEQUENCES] if table is DYNAMIC else list(table)
            print('%-18s %s' % (model, ' '.join('%s.%s' % (model, v) for v in names)))
        return 0
    models = [m.strip() for m in (args.models or ','.join(MODELS)).split(',') if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        ap.error('unknown model(s) %s; --list shows them' % ', '.join(unknown))
    variants = {v.strip() for v in (args.variants or '').split(',') if v.strip()}
    bad = variants - set(STATIC) - set(DYNAMIC)
    if bad:
        ap.error('unknown variant(s) %s; --list shows them' % ', '.join(sorted(bad)))
    failures = run(args, models, variants)
    if failures:
        print('%d failed:' % len(failures))
        for name, _, why in failures:
            print('  %s: %s' % (name, why))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
