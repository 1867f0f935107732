"""Writes tests/models/contrib/: tiny models whose com.microsoft ops were written by onnxruntime's
own tools, each beside the outputs onnxruntime gives for fixed inputs (<name>.npz: inputs as
in.<name>, outputs as out.<name>). tests/python/test_contrib_tool_models.py checks onyx on them.

Run once, with the zoo venv (torch, transformers, onnxruntime) and, for the genai_* models, a
throwaway venv holding onnxruntime-genai:
    python -m venv /tmp/venv-genai
    echo $PWD/.venv-zoo/lib/python3.11/site-packages > /tmp/venv-genai/lib/python3.11/site-packages/zoo.pth
    /tmp/venv-genai/bin/pip install --no-deps onnxruntime-genai
    GENAI_PYTHON=/tmp/venv-genai/bin/python .venv-zoo/bin/python tools/contrib_models/make_contrib_models.py

Generated with torch 2.15.0, transformers 5.24.0, onnxruntime 1.32.0, onnxruntime-genai 0.18.0;
random weights from fixed seeds (no model hub). Name parts on the command line to rewrite only those
(fused_matmul, clip_t5, bert_mha, bert_gelu, genai, genai_hunyuan; default all):
- genai_llama_fp32 / genai_llama_int4: a 2-layer LlamaForCausalLM (hidden 64, 4 heads, 2 KV
  heads, head 16) through `python -m onnxruntime_genai.models.builder -p fp32|int4 -e cpu`:
  GroupQueryAttention with do_rotary (cos/sin caches), SimplifiedLayerNormalization,
  SkipSimplifiedLayerNormalization, and (int4) MatMulNBits with accuracy_level 4.
- genai_hunyuan_rotary: a 2-layer HunYuanDenseV1ForCausalLM (hidden 32, 4 heads, 2 KV heads,
  head 8) through `python -m onnxruntime_genai.models.builder -p fp32 -e cpu` (no extra options): the
  builder's HunYuan model applies RoPE before its Q/K norms, so it never fuses the rotary into
  GroupQueryAttention (HunyuanDenseV1Model.is_fused_rope_supported is False): standalone
  RotaryEmbedding (3-D [batch, seq, heads*head] input, position_ids input, cos/sin caches,
  num_heads 0, interleaved 0), then SimplifiedLayerNormalization q/k norms and GroupQueryAttention
  with do_rotary 0. Fed position_ids as onnxruntime-genai makes them (left padding in one row).
  (The builder has no option to unfuse the rotary of a Llama at fp32 on the CPU; `-p fp16 -e cpu`
  writes RotaryEmbedding + MultiHeadAttention, but in float16, and `-e dml -p fp32` a RotaryEmbedding
  with no input before packed Attention.)
- bert_mha: a 2-layer BertModel (hidden 32, 4 heads, attn_implementation='eager': the optimizer
  matches neither the SDPA export of transformers 5 nor ViT's) exported with torch.onnx.export
  (TorchScript exporter, opset 17), then optimize_model(model_type='bert', opt_level=0) with
  FusionOptions('bert').use_multi_head_attention = True: MultiHeadAttention (separate Q/K/V
  MatMuls, packed qkv bias input, key_padding_mask = EmbedLayerNormalization's 1-D mask_index),
  EmbedLayerNormalization, SkipLayerNormalization, BiasGelu. Right padding in two rows.
- bert_gelu: the same recipe (another seed) with also FusionOptions.enable_bias_gelu = False: the
  optimizer still fuses the erf-form GELU but leaves its bias Add, so com.microsoft Gelu (one input)
  after the intermediate dense Add, beside MultiHeadAttention, EmbedLayerNormalization and
  SkipLayerNormalization. Right padding in one row.
- clip_text: a 2-layer CLIPTextModel (hidden 32, 4 heads) exported with torch.onnx.export
  (TorchScript exporter, opset 17), then onnxruntime.transformers.optimizer.optimize_model
  (model_type='clip', opt_level=0): QuickGelu, SkipLayerNormalization.
- t5_encoder: a 2-layer T5EncoderModel (d_model 32, 4 heads) the same way with model_type='t5':
  SkipSimplifiedLayerNormalization.
- fused_matmul: MatMul(Transpose(A), B) * 0.125 and MatMul(A, Transpose(B)) graphs saved by
  onnxruntime's own graph optimizer (SessionOptions.optimized_model_filepath, ORT_ENABLE_EXTENDED,
  CPU): FusedMatMul with transA / transB / alpha.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers as T
from onnx import TensorProto as TP
from onnx import helper as h
from onnxruntime.transformers.fusion_options import FusionOptions
from onnxruntime.transformers.optimizer import optimize_model

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'models', 'contrib')


def ort_run(path, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    s = ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def save(name, model, feeds):
    path = os.path.join(OUT, name + '.onnx')
    # onnxruntime 1.32 saves IR version 14, which the test venv's onnxruntime 1.30 refuses; these
    # models need nothing past IR 10
    model.ir_version = min(model.ir_version, 10)
    onnx.save(model, path)  # weights inline: one file each
    outs = ort_run(path, feeds)
    np.savez(os.path.join(OUT, name + '.npz'), **{f'in.{k}': v for k, v in feeds.items()},
             **{f'out.{k}': v for k, v in outs.items()})
    print(name, os.path.getsize(path), sorted({n.op_type for n in model.graph.node if n.domain == 'com.microsoft'}))


def export(module, args, names, path, dyn, out_names=None):
    module.eval()
    torch.onnx.export(module, args, path, input_names=names, output_names=out_names, opset_version=17,
                      dynamo=False, dynamic_axes=dyn)


def optimized(path, model_type, heads, hidden, options=None):
    opt = optimize_model(path, model_type=model_type, num_heads=heads, hidden_size=hidden, opt_level=0,
                         use_gpu=False, optimization_options=options)
    out = path + '.opt.onnx'
    opt.save_model_to_file(out)
    return onnx.load(out)


def genai_build(py, tmp, name, model, vocab, precision):
    """Saves `model` (a transformers causal LM) with a word-level tokenizer over its `vocab` ids (the
    builder copies a tokenizer), runs onnxruntime-genai's builder on it for the CPU and returns the
    ModelProto it wrote."""
    src = os.path.join(tmp, name)
    model.save_pretrained(src)
    from tokenizers import Tokenizer, models, pre_tokenizers
    tok = Tokenizer(models.WordLevel({f't{i}': i for i in range(vocab)}, unk_token='t0'))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    T.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token='t0', bos_token='t1',
                              eos_token='t2').save_pretrained(src)
    out = os.path.join(tmp, f'{name}-{precision}')
    subprocess.run([py, '-m', 'onnxruntime_genai.models.builder', '-i', src, '-o', out, '-p', precision,
                    '-e', 'cpu', '-c', os.path.join(tmp, 'cache')], check=True, stdout=subprocess.DEVNULL)
    return onnx.load(os.path.join(out, 'model.onnx'))


def genai_models(tmp):
    py = os.environ.get('GENAI_PYTHON')
    if not py:
        print('GENAI_PYTHON not set: the GroupQueryAttention models are not rewritten')
        return
    torch.manual_seed(0)
    cfg = T.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                        max_position_embeddings=64, tie_word_embeddings=False)
    llama = T.LlamaForCausalLM(cfg)
    rng = np.random.default_rng(7)
    b, s = 2, 5
    feeds = {'input_ids': rng.integers(0, 128, (b, s)).astype(np.int64),
             'attention_mask': np.ones((b, s), np.int64)}
    feeds['attention_mask'][1, :2] = 0  # left padding in the second row
    for layer in range(2):
        for kind in ('key', 'value'):
            feeds[f'past_key_values.{layer}.{kind}'] = np.zeros((b, 2, 0, 16), np.float32)
    for precision in ('fp32', 'int4'):
        save(f'genai_llama_{precision}', genai_build(py, tmp, 'tiny-llama', llama, 128, precision), feeds)


def genai_hunyuan(tmp):
    py = os.environ.get('GENAI_PYTHON')
    if not py:
        print('GENAI_PYTHON not set: the RotaryEmbedding model is not rewritten')
        return
    torch.manual_seed(4)
    cfg = T.HunYuanDenseV1Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                                 max_position_embeddings=32, tie_word_embeddings=False,
                                 bos_token_id=1, eos_token_id=2, eod_token_id=2, pad_token_id=0)
    model = genai_build(py, tmp, 'tiny-hunyuan', T.HunYuanDenseV1ForCausalLM(cfg), 64, 'fp32')
    rng = np.random.default_rng(17)
    b, s = 2, 6
    mask = np.ones((b, s), np.int64)
    mask[1, :3] = 0  # left padding in the second row
    feeds = {'input_ids': rng.integers(0, 64, (b, s)).astype(np.int64), 'attention_mask': mask,
             # as onnxruntime-genai feeds them: positions count the unpadded tokens
             'position_ids': np.maximum(np.cumsum(mask, 1) - 1, 0).astype(np.int64)}
    for layer in range(2):
        for kind in ('key', 'value'):
            feeds[f'past_key_values.{layer}.{kind}'] = np.zeros((b, 2, 0, 8), np.float32)
    save('genai_hunyuan_rotary', model, feeds)


def bert_optimized(tmp, name, seed, opts):
    """A 2-layer BertModel (hidden 32, 4 heads, intermediate 64) from torch.manual_seed(seed), exported
    and run through optimize_model(model_type='bert', opt_level=0) with `opts`."""
    torch.manual_seed(seed)
    cfg = T.BertConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, max_position_embeddings=16,
                       attn_implementation='eager')  # the optimizer does not match the SDPA export

    class Bert(torch.nn.Module):  # BertModel.forward's positional order changed in transformers 5
        def __init__(self):
            super().__init__()
            self.bert = T.BertModel(cfg, add_pooling_layer=False)

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    p = os.path.join(tmp, name + '.onnx')
    names = ['input_ids', 'attention_mask']
    export(Bert(), (torch.randint(0, 100, (2, 8)), torch.ones(2, 8, dtype=torch.int64)), names, p,
           {n: {0: 'b', 1: 's'} for n in names}, ['last_hidden_state'])
    return optimized(p, 'bert', 4, 32, opts)


def bert_mha(tmp):
    rng = np.random.default_rng(13)
    opts = FusionOptions('bert')
    opts.use_multi_head_attention = True
    model = bert_optimized(tmp, 'bert', 3, opts)
    mask = np.ones((3, 7), np.int64)
    mask[1, 4:] = 0  # right padding (EmbedLayerNormalization's mask_index counts the ones)
    mask[2, 6:] = 0
    save('bert_mha', model,
         {'input_ids': rng.integers(0, 100, (3, 7)).astype(np.int64), 'attention_mask': mask})


def bert_gelu(tmp):
    rng = np.random.default_rng(19)
    opts = FusionOptions('bert')
    opts.use_multi_head_attention = True
    opts.enable_bias_gelu = False  # the erf GELU stays a Gelu after its bias Add
    model = bert_optimized(tmp, 'bert_gelu', 6, opts)
    mask = np.ones((2, 9), np.int64)
    mask[1, 5:] = 0  # right padding
    save('bert_gelu', model,
         {'input_ids': rng.integers(0, 100, (2, 9)).astype(np.int64), 'attention_mask': mask})


def clip_t5(tmp):
    rng = np.random.default_rng(11)
    torch.manual_seed(1)
    cfg = T.CLIPTextConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, max_position_embeddings=16, bos_token_id=0,
                           eos_token_id=1, pad_token_id=1)
    p = os.path.join(tmp, 'clip.onnx')
    export(T.CLIPTextModel(cfg), (torch.randint(0, 100, (2, 8)),), ['input_ids'], p,
           {'input_ids': {0: 'b', 1: 's'}})
    save('clip_text', optimized(p, 'clip', 4, 32), {'input_ids': rng.integers(2, 100, (2, 7)).astype(np.int64)})
    torch.manual_seed(2)
    cfg = T.T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                     relative_attention_num_buckets=8)
    p = os.path.join(tmp, 't5.onnx')
    export(T.T5EncoderModel(cfg), (torch.randint(0, 100, (2, 8)),), ['input_ids'], p,
           {'input_ids': {0: 'b', 1: 's'}})
    save('t5_encoder', optimized(p, 't5', 4, 32), {'input_ids': rng.integers(0, 100, (2, 9)).astype(np.int64)})


def fused_matmul(tmp):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((24, 16)).astype(np.float32)
    nodes = [h.make_node('Transpose', ['a'], ['at'], perm=[0, 2, 1]),
             h.make_node('MatMul', ['at', 'b'], ['m1']),
             h.make_node('Mul', ['m1', 'alpha'], ['y1']),
             h.make_node('Transpose', ['w'], ['wt'], perm=[1, 0]),
             h.make_node('MatMul', ['b', 'wt'], ['y2'])]
    g = h.make_graph(nodes, 'fused_matmul',
                     [h.make_tensor_value_info('a', TP.FLOAT, ['n', 12, 10]),
                      h.make_tensor_value_info('b', TP.FLOAT, ['n', 12, 16])],
                     [h.make_tensor_value_info('y1', TP.FLOAT, None), h.make_tensor_value_info('y2', TP.FLOAT, None)],
                     [onnx.numpy_helper.from_array(np.array(0.125, np.float32), 'alpha'),
                      onnx.numpy_helper.from_array(w, 'w')])
    src = os.path.join(tmp, 'fm.onnx')
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 17)]), src)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = os.path.join(tmp, 'fm.opt.onnx')
    ort.InferenceSession(src, so, providers=['CPUExecutionProvider'])
    save('fused_matmul', onnx.load(so.optimized_model_filepath),
         {'a': rng.standard_normal((3, 12, 10)).astype(np.float32),
          'b': rng.standard_normal((3, 12, 16)).astype(np.float32)})


PARTS = {'fused_matmul': fused_matmul, 'clip_t5': clip_t5, 'bert_mha': bert_mha, 'bert_gelu': bert_gelu,
         'genai': genai_models, 'genai_hunyuan': genai_hunyuan}


def main():
    parts = sys.argv[1:] or list(PARTS)  # e.g. `make_contrib_models.py bert_mha` rewrites that one alone
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp()
    try:
        for part in parts:
            PARTS[part](tmp)
    finally:
        shutil.rmtree(tmp)


if __name__ == '__main__':
    sys.exit(main())
