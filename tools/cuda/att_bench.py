"""The CUDA tensor-core attention kernel's variants side by side, run on a GPU machine by
tools/cuda/check.sh (step `attention`): for float16 attention spelled out as exporters write it
(Q K^T scaled, Softmax, P V: the planner fuses it into one kernel step), at the shapes of ViT-B/16,
BERT-base, a 128-wide head and a long sequence, each variant of ONYX_CUDA_ATTENTION ("" the
default, "pipe", "p16", "pipe,p16"; kernels_cuda/attention/attention.cu) is checked against a
float64 reference and timed by `onyx bench --device-io`, beside PyTorch's scaled_dot_product_attention
on the same GPU (CUDA events). Prints one table: median ms, TFLOP/s (4 B H S^2 D), worst error."""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

SHAPES = {'vit': (32, 12, 197, 64), 'bert': (32, 12, 128, 64), 'head128': (16, 8, 512, 128),
          'long': (4, 12, 1024, 64)}
VARIANTS = ['', 'pipe', 'p16', 'pipe,p16']


def model(b, h, s, d):
    from onnx import TensorProto, helper, numpy_helper
    N = helper.make_node
    nodes = [N('Transpose', ['k'], ['kt'], perm=[0, 1, 3, 2]), N('MatMul', ['q', 'kt'], ['sc']),
             N('Mul', ['sc', 'f'], ['ss']), N('Softmax', ['ss'], ['p'], axis=-1),
             N('MatMul', ['p', 'v'], ['y'])]
    t = TensorProto.FLOAT16
    ins = [helper.make_tensor_value_info(n, t, [b, h, s, d]) for n in 'qkv']
    g = helper.make_graph(nodes, 'attention', ins, [helper.make_tensor_value_info('y', t, None)],
                          [numpy_helper.from_array(np.array(d ** -0.5, np.float16), 'f')])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]).SerializeToString()


def inputs(b, h, s, d):
    rng = np.random.default_rng(0)
    return {n: rng.standard_normal((b, h, s, d)).astype(np.float16) for n in 'qkv'}


def reference(feed, d):
    q, k, v = (feed[n].astype(np.float64) for n in 'qkv')
    sc = q @ k.transpose(0, 1, 3, 2) * float(np.float16(d ** -0.5))
    p = np.exp(sc - sc.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def check(mdir):
    """In a process of its own (the variant is read once per process): each shape's worst error
    against the float64 reference, in units of float16's epsilon relative to the output's scale."""
    import onyx.ort as ort
    out = {}
    for name, (b, h, s, d) in SHAPES.items():
        sess = ort.InferenceSession(os.path.join(mdir, name + '.onnx'),
                                    providers=['CUDAExecutionProvider'])
        feed = inputs(b, h, s, d)
        (y,) = sess.run(None, feed)
        want = reference(feed, d)
        out[name] = float(np.abs(y.astype(np.float64) - want).max() / np.abs(want).max() / 2 ** -10)
    print(json.dumps(out))


def torch_ms(b, h, s, d, runs):
    import torch
    import torch.nn.functional as F
    q, k, v = (torch.randn(b, h, s, d, device='cuda', dtype=torch.float16) for _ in range(3))
    for _ in range(3):
        F.scaled_dot_product_attention(q, k, v)
    times = []
    for _ in range(runs):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        F.scaled_dot_product_attention(q, k, v)
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    return sorted(times)[runs // 2]


def onyx_ms(cli, path, variant, runs):
    env = dict(os.environ, ONYX_CUDA_ATTENTION=variant)
    r = subprocess.run([cli, 'bench', path, '-d', 'CUDA', '--device-io', '-n', str(runs), '-w',
                        '5'], capture_output=True, text=True, env=env, timeout=300)
    m = re.search(r'median ([\d.]+) (ms|us)', r.stdout)
    if not m:
        return None
    return float(m.group(1)) / (1000 if m.group(2) == 'us' else 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--check', help='(internal) check the variant in ONYX_CUDA_ATTENTION')
    ap.add_argument('--runs', type=int, default=50)
    args = ap.parse_args()
    mdir = '/tmp/onyx-att-models'
    if args.check:
        return check(mdir)
    os.makedirs(mdir, exist_ok=True)
    for name, shape in SHAPES.items():
        with open(os.path.join(mdir, name + '.onnx'), 'wb') as f:
            f.write(model(*shape))
    cli = os.environ.get('ONYX_CLI', 'build/onyx')
    errs = {}
    for var in VARIANTS:
        r = subprocess.run([sys.executable, __file__, '--check', mdir],
                           env=dict(os.environ, ONYX_CUDA_ATTENTION=var), capture_output=True,
                           text=True, timeout=600)
        errs[var] = json.loads(r.stdout) if r.returncode == 0 else {'error': r.stderr[-300:]}
    print('| shape | B, H, S, D | variant | onyx ms | TFLOP/s | worst error (fp16 eps) | torch ms |')
    print('|' + ' --- |' * 7)
    for name, (b, h, s, d) in SHAPES.items():
        flops = 4.0 * b * h * s * s * d
        ref = torch_ms(b, h, s, d, args.runs)
        for var in VARIANTS:
            ms = onyx_ms(cli, os.path.join(mdir, name + '.onnx'), var, args.runs)
            tf = f'{flops / ms / 1e9:.1f}' if ms else '-'
            err = errs[var].get(name, errs[var].get('error', '-'))
            err = f'{err:.2f}' if isinstance(err, float) else str(err)[:60]
            print(f'| {name} | {b}, {h}, {s}, {d} | {var or "default"} | '
                  f'{ms if ms is None else round(ms, 4)} | {tf} | {err} | {ref:.4f} |', flush=True)


if __name__ == '__main__':
    sys.exit(main())
