"""Random decoder models exported by onnxruntime-genai's model builder: tiny ones for tests, and
full-size ones (--preset) for `make bench-llm`. A byte-level BPE tokenizer trained on a few
sentences, a transformers model of the architecture asked for with random weights (fixed seed;
the tiny ones' weights large enough that greedy search does not repeat one token), then
`onnxruntime_genai.models.builder` (int4 for the CPU by default). No model hub is needed.

    python tools/llm/tiny_model.py OUT_DIR [--arch qwen2|llama] [--precision int4|fp32]
        [--preset qwen2-0.5b|llama-3.2-1b] [--untied] [--extra-options KEY=VALUE ...]
        [--hidden 64] [--layers 2]

Needs torch, transformers, tokenizers and onnxruntime-genai (tools/zoo/requirements.txt's
environment, .venv-zoo).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

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
    tie = arch == 'qwen2'
    if preset:
        p = dict(PRESETS[preset])
        arch, tie = p.pop('arch'), p.pop('tie')
        common.update(p, initializer_range=0.02)
    tie = tie and not untied
    if arch == 'qwen2':   # tied embeddings: the lm_head becomes GatherBlockQuantized's weight
        model = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(tie_word_embeddings=tie,
                                                                       **common))
    elif arch == 'llama':
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(tie_word_embeddings=tie,
                                                                       **common))
    else:
        raise SystemExit(f'unknown architecture {arch!r} (qwen2, llama)')
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
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix='tiny-llm-')
    try:
        hf = os.path.join(work, 'hf')
        hf_folder(hf, a.arch, a.hidden, a.layers, a.preset, a.untied)
        cmd = [sys.executable, '-m', 'onnxruntime_genai.models.builder', '-i', hf, '-o', a.out,
               '-p', a.precision, '-e', 'cpu', '-c', os.path.join(work, 'cache')]
        if a.extra_options:
            cmd += ['--extra_options'] + a.extra_options
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
