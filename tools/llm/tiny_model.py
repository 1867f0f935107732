"""Random decoder models exported by onnxruntime-genai's model builder: tiny ones for tests, and
full-size ones (--preset) for `make bench-llm`. A byte-level BPE tokenizer trained on a few
sentences, a transformers model of the architecture asked for with random weights (fixed seed;
the tiny ones' weights large enough that greedy search does not repeat one token), then
onnxruntime-genai's model builder (genai_builder.py; int4 for the CPU by default). No model hub
is needed.

    python tools/llm/tiny_model.py OUT_DIR [--arch ARCH] [--precision int4|fp32|fp16]
        [--preset qwen2-0.5b|llama-3.2-1b] [--untied] [--extra-options KEY=VALUE ...]
        [--hidden 64] [--layers 2] [--ep cpu|cuda]

--ep cuda writes the builder's CUDA export (float16 activations; onnxruntime-genai's cuda
provider in genai_config.json), which tools/bench/llm_bench.py --device cuda times.

ARCH: qwen2, llama, mistral, qwen3, phi3, phi3.5 (longrope), phi4 (longrope, partial rotary),
gemma2, gemma3 (ARCHS below says which options each has).

Needs torch, transformers, tokenizers and onnxruntime-genai (tools/zoo/requirements.txt's
environment, .venv-zoo).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SENTENCES = ['the quick brown fox jumps over the lazy dog ' * 4,
             'hello world, onyx runs language models on the cpu']


# the shapes of the models the issue names (their configs, random weights)
PRESETS = {
    'qwen2-0.5b': dict(arch='qwen2', hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                       num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                       max_position_embeddings=4096, tie=True),
    'llama-3.2-1b': dict(arch='llama', hidden_size=2048, intermediate_size=8192,
                         num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                         vocab_size=128256, max_position_embeddings=4096, tie=True),
}


# Longrope as Phi-3.5-mini and Phi-4-mini have it: a short and a long factor per rotary frequency,
# the long ones used past original_max_position_embeddings (here 64 positions, so a test reaches it)
def longrope(rotary_dim):
    half = rotary_dim // 2
    return {'rope_type': 'longrope', 'type': 'longrope', 'rope_theta': 10000.0,
            'short_factor': [1.0 + 0.1 * i for i in range(half)],
            'long_factor': [1.0 + 0.5 * i for i in range(half)]}


# per architecture: the transformers model and config classes, and what the tiny config sets
# beyond the common shape (each option as the real model of that family has it); head_dim 16
ARCHS = {
    'qwen2': ('Qwen2ForCausalLM', 'Qwen2Config', dict(tie_word_embeddings=True)),
    'llama': ('LlamaForCausalLM', 'LlamaConfig', dict(tie_word_embeddings=False)),
    # Mistral 7B v0.1: sliding-window attention on every layer
    'mistral': ('MistralForCausalLM', 'MistralConfig', dict(tie_word_embeddings=False,
                                                            sliding_window=8)),
    # Qwen3: RMS norms on queries and keys, tied embeddings (0.6B)
    'qwen3': ('Qwen3ForCausalLM', 'Qwen3Config', dict(tie_word_embeddings=True, head_dim=16)),
    # Phi-3-mini-4k: plain rotary, untied
    'phi3': ('Phi3ForCausalLM', 'Phi3Config', dict(tie_word_embeddings=False, pad_token_id=0,
                                                    original_max_position_embeddings=256)),
    # Phi-3.5-mini: longrope (two cos/sin caches), untied
    'phi3.5': ('Phi3ForCausalLM', 'Phi3Config', dict(tie_word_embeddings=False, pad_token_id=0,
                                                      original_max_position_embeddings=64,
                                                      rope_scaling=longrope(16))),
    # Phi-4-mini: longrope on 3/4 of each head, tied; heads of 64 (with --hidden 128) as
    # onnxruntime wants the rotary half-width a multiple of 8
    'phi4': ('Phi3ForCausalLM', 'Phi3Config', dict(tie_word_embeddings=True, pad_token_id=0,
                                                    num_attention_heads=2, num_key_value_heads=1,
                                                    original_max_position_embeddings=64,
                                                    partial_rotary_factor=0.75,
                                                    rope_scaling=longrope(48))),
    # Gemma 2: soft-capping of attention and logits, query_pre_attn_scalar, local/global layers
    'gemma2': ('Gemma2ForCausalLM', 'Gemma2Config', dict(tie_word_embeddings=True, head_dim=16,
                                                          query_pre_attn_scalar=32,
                                                          sliding_window=8)),
    # Gemma 3 text: q/k norms, local layers with their own rotary base, 1 global in 2 here.
    # Exported through genai_builder.py, which gives onnxruntime-genai 0.18's builder the rotary
    # fields transformers 5 no longer keeps where the builder reads them
    'gemma3': ('Gemma3ForCausalLM', 'Gemma3TextConfig', dict(tie_word_embeddings=True,
                                                              head_dim=16,
                                                              query_pre_attn_scalar=32,
                                                              sliding_window=8,
                                                              sliding_window_pattern=2)),
}


def hf_folder(folder, arch, hidden, layers, preset=None, untied=False):
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    torch.manual_seed(0)
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(SENTENCES * 50, trainers.BpeTrainer(
        vocab_size=400, special_tokens=['<|endoftext|>'],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token='<|endoftext|>',
                                                pad_token='<|endoftext|>')
    fast.save_pretrained(folder)
    common = dict(vocab_size=len(fast), hidden_size=hidden, intermediate_size=2 * hidden,
                  num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                  max_position_embeddings=256, initializer_range=0.4, eos_token_id=0,
                  bos_token_id=0)
    if preset:
        p = dict(PRESETS[preset])
        arch = p.pop('arch')
        p.pop('tie')
        common.update(p, initializer_range=0.02)
    if arch not in ARCHS:
        raise SystemExit(f'unknown architecture {arch!r} ({", ".join(sorted(ARCHS))})')
    cls, cfg_cls, extra = ARCHS[arch]
    config = dict(common, **extra)
    if preset:
        config['tie_word_embeddings'] = PRESETS[preset]['tie']
    if untied:
        config['tie_word_embeddings'] = False
    model = getattr(transformers, cls)(getattr(transformers, cfg_cls)(**config))
    model.save_pretrained(folder)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out')
    ap.add_argument('--arch', default='qwen2')
    ap.add_argument('--precision', default='int4')
    ap.add_argument('--hidden', type=int, default=64)
    ap.add_argument('--layers', type=int, default=2)
    ap.add_argument('--preset', choices=sorted(PRESETS))
    ap.add_argument('--untied', action='store_true', help='separate embeddings and lm_head')
    ap.add_argument('--extra-options', nargs='*', default=[])
    ap.add_argument('--ep', choices=['cpu', 'cuda'], default='cpu', help="the builder's target")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix='tiny-llm-')
    try:
        hf = os.path.join(work, 'hf')
        hf_folder(hf, a.arch, a.hidden, a.layers, a.preset, a.untied)
        cmd = [sys.executable, os.path.join(HERE, 'genai_builder.py'), '-i', hf, '-o', a.out,
               '-p', a.precision, '-e', a.ep, '-c', os.path.join(work, 'cache')]
        if a.extra_options:
            cmd += ['--extra_options'] + a.extra_options
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
