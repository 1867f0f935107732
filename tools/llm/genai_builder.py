"""onnxruntime-genai's model builder (`python -m onnxruntime_genai.models.builder`, same arguments),
with Gemma 3's rotary fields put back where the builder reads them.

onnxruntime-genai 0.18's builder (the newest on PyPI) cannot export Gemma 3 with transformers 5:
transformers 5 folds Gemma 3's `rope_theta` (global layers) and `rope_local_base_freq` (sliding
layers) into a per-layer-type `rope_parameters` dict, while the builder's Gemma3Model reads
`config.rope_local_base_freq`, its base class `config.rope_theta` (else 10000) and a flat
`rope_parameters['rope_type']` (KeyError). Before Gemma3Model (not its Gemma 4 subclass, which
reads the nested form itself) builds anything, this gives the config the flat fields transformers
4 had, from the same values; nothing else changes, so the graph is the builder's own Gemma 3 graph.
Other architectures pass through untouched.
"""
import runpy

import onnxruntime_genai.models  # noqa: F401  puts the builder's folder on sys.path
from builders import gemma  # the module the builder imports (as `builders`, not by package)


def flatten_gemma3_rope(config):
    """transformers 4's Gemma 3 rotary fields from transformers 5's per-layer-type dict."""
    rope = getattr(config, 'rope_parameters', None)
    if not isinstance(rope, dict) or 'full_attention' not in rope:
        return
    full, sliding = rope['full_attention'], rope['sliding_attention']
    for name, params in (('full_attention', full), ('sliding_attention', sliding)):
        kind = params.get('rope_type', 'default')
        if kind != 'default':
            raise SystemExit(f"Gemma 3 {name} rope_type {kind!r}: only 'default' is restored here")
    config.rope_theta = full['rope_theta']
    config.rope_local_base_freq = sliding['rope_theta']
    config.rope_parameters = dict(full)


builder_init = gemma.Gemma3Model.__init__


def gemma3_init(self, config, *args, **kwargs):
    if type(self) is gemma.Gemma3Model:
        flatten_gemma3_rope(config)
    builder_init(self, config, *args, **kwargs)


gemma.Gemma3Model.__init__ = gemma3_init

if __name__ == '__main__':
    runpy.run_module('onnxruntime_genai.models.builder', run_name='__main__', alter_sys=True)
