"""onyx.genai: text generation with the decoder models onnxruntime-genai's model builder writes
(a folder with genai_config.json, the decoder's model.onnx and the tokenizer's tokenizer.json), on
onyx. The names follow onnxruntime-genai's Python API, so that its loop runs unchanged:

    import onyx.genai as og
    model = og.Model("qwen2-int4")
    tokenizer = og.Tokenizer(model)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=64, do_sample=False)
    generator = og.Generator(model, params)
    generator.append_tokens(tokenizer.encode("Hello"))
    stream = tokenizer.create_stream()
    while not generator.is_done():
        generator.generate_next_token()
        print(stream.decode(generator.get_next_tokens()[0]), end="")

Search: greedy (do_sample False) or sampling with temperature, top_k and top_p, a repetition
penalty and min_length, as onnxruntime-genai applies them; several sequences at once (a 2-D
append_tokens, prompts of one length). The cache is the model's past/present key-value inputs and
outputs: with past_present_share_buffer (genai_config.json's search option, which the builder sets
for GroupQueryAttention models) one buffer per layer of max_length positions is bound as both and
appended in place (Session.run_into), as onnxruntime-genai binds them; otherwise each step's
present becomes the next step's past. Tokenizing needs the `tokenizers` package.
"""
import json
import os

import numpy as np

from .session import Session

SEARCH_DEFAULTS = {'max_length': None, 'min_length': 0, 'do_sample': False, 'top_k': 50,
                   'top_p': 1.0, 'temperature': 1.0, 'repetition_penalty': 1.0,
                   'random_seed': -1, 'num_beams': 1, 'num_return_sequences': 1,
                   'batch_size': 1, 'past_present_share_buffer': False, 'early_stopping': True,
                   'length_penalty': 1.0, 'diversity_penalty': 0.0, 'no_repeat_ngram_size': 0}


class GenaiError(RuntimeError):
    """A model folder, option or call onyx.genai does not take, named in the message."""


class Config:
    """What genai_config.json says about the decoder and the search defaults."""

    def __init__(self, folder):
        path = os.path.join(folder, 'genai_config.json')
        try:
            with open(path, encoding='utf-8') as f:
                raw = json.load(f)
        except OSError as e:
            raise GenaiError(f'{path}: cannot read it ({e.strerror})') from None
        except ValueError as e:
            raise GenaiError(f'{path}: not JSON ({e})') from None
        model = raw.get('model', {})
        dec = model.get('decoder')
        if not isinstance(dec, dict) or 'filename' not in dec:
            raise GenaiError(f'{path}: model.decoder.filename is missing')
        for key in ('encoder', 'vision', 'speech', 'embedding'):
            if key in model:
                raise GenaiError(f'{path}: model.{key} (a multi-part model) is not supported')
        self.folder = folder
        self.type = model.get('type', '')
        self.decoder_path = os.path.join(folder, dec['filename'])
        self.layers = int(dec['num_hidden_layers'])
        self.kv_heads = int(dec['num_key_value_heads'])
        self.head_size = int(dec['head_size'])
        names = {'input_ids': 'input_ids', 'attention_mask': 'attention_mask',
                 'position_ids': 'position_ids', 'past_key_names': 'past_key_values.%d.key',
                 'past_value_names': 'past_key_values.%d.value'}
        names.update(dec.get('inputs', {}))
        self.inputs = names
        outs = {'logits': 'logits', 'present_key_names': 'present.%d.key',
                'present_value_names': 'present.%d.value'}
        outs.update(dec.get('outputs', {}))
        self.outputs = outs
        self.context_length = int(model.get('context_length', 0)) or None
        # layers whose cache is window-sized (GroupQueryAttention sliding_window_cache=1): a
        # buffer of the window plus the slack, fed back as it comes out
        window = dec.get('sliding_window') or {}
        self.window_layers = set(window.get('layers', []))
        self.window_capacity = int(window.get('window_size', 0)) + int(window.get('cache_slack', 0))
        eos = model.get('eos_token_id', [])
        self.eos = set(eos if isinstance(eos, list) else [eos])
        self.pad = int(model.get('pad_token_id', next(iter(self.eos), 0)))
        self.vocab_size = int(model.get('vocab_size', 0))
        self.search = dict(SEARCH_DEFAULTS)
        for key, value in raw.get('search', {}).items():
            if key in self.search:
                self.search[key] = value


class Model:
    """A builder's model folder on onyx: the decoder prepared once, on the CPU."""

    def __init__(self, folder, threads=None):
        self.config = Config(folder)
        self.session = Session(self.config.decoder_path, threads=threads)
        self._input_names = {i.name for i in self.session.get_inputs()}
        c = self.config
        wanted = [c.inputs['input_ids']]
        wanted += [c.inputs['past_key_names'] % i for i in range(c.layers)]
        wanted += [c.inputs['past_value_names'] % i for i in range(c.layers)]
        missing = [n for n in wanted if n not in self._input_names]
        if missing:
            raise GenaiError(f'{c.decoder_path}: the decoder has no input(s) {missing} that '
                             'genai_config.json names')
        known = set(wanted) | {c.inputs['attention_mask'], c.inputs['position_ids']}
        extra = sorted(self._input_names - known)
        if extra:
            raise GenaiError(f'{c.decoder_path}: decoder input(s) {extra} are not supported')
        dtypes = {i.name: i.type for i in self.session.get_inputs()}
        # the cache as the builder writes it: float, float16, or quantized (GroupQueryAttention's
        # kv_cache_bit_width: int8 codes, or int4 pairs in uint8, half a head's columns a row)
        kinds = {'tensor(float)': np.float32, 'tensor(float16)': np.float16,
                 'tensor(int8)': np.int8, 'tensor(uint8)': np.uint8}
        if dtypes[wanted[1]] not in kinds:
            raise GenaiError(f'{c.decoder_path}: a KV cache of {dtypes[wanted[1]]} is not '
                             'supported')
        self.cache_dtype = kinds[dtypes[wanted[1]]]
        self.cache_columns = (c.head_size + 1) // 2 if self.cache_dtype == np.uint8 else c.head_size
        self.type = c.type

    def has_input(self, name):
        return name in self._input_names


class TokenizerStream:
    """Decodes one token at a time into the text it adds (empty while a character is
    incomplete)."""

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer
        self._tokens = []
        self._text = ''

    def decode(self, token):
        self._tokens.append(int(token))
        text = self._tokenizer.decode(self._tokens)
        if text.endswith('\ufffd'):   # a character split between tokens: wait for the rest
            return ''
        new = text[len(self._text):] if text.startswith(self._text) else text
        self._text = text
        return new


class Tokenizer:
    """The model folder's tokenizer.json, through the `tokenizers` package."""

    def __init__(self, model):
        try:
            from tokenizers import Tokenizer as HfTokenizer
        except ImportError:
            raise GenaiError('onyx.genai.Tokenizer needs the tokenizers package '
                             '(pip install tokenizers)') from None
        folder = model.config.folder if isinstance(model, Model) else str(model)
        path = os.path.join(folder, 'tokenizer.json')
        if not os.path.isfile(path):
            raise GenaiError(f'{path}: no tokenizer.json in the model folder')
        self._tok = HfTokenizer.from_file(path)
        self._add_special = self._adds_special_tokens(folder)

    @staticmethod
    def _adds_special_tokens(folder):
        """tokenizer_config.json's add_bos_token: whether encoding adds the special tokens."""
        path = os.path.join(folder, 'tokenizer_config.json')
        try:
            with open(path, encoding='utf-8') as f:
                return bool(json.load(f).get('add_bos_token', False))
        except (OSError, ValueError):
            return False

    def encode(self, text):
        return np.array(self._tok.encode(text, add_special_tokens=self._add_special).ids,
                        dtype=np.int32)

    def encode_batch(self, texts):
        rows = [self.encode(t) for t in texts]
        if len({len(r) for r in rows}) > 1:
            raise GenaiError('encode_batch: prompts of different lengths in tokens are not '
                             'supported (onyx.genai runs a batch without padding)')
        return np.stack(rows)

    def decode(self, tokens):
        return self._tok.decode([int(t) for t in np.asarray(tokens).reshape(-1)],
                                skip_special_tokens=True)

    def decode_batch(self, rows):
        return [self.decode(r) for r in rows]

    def create_stream(self):
        return TokenizerStream(self)


class GeneratorParams:
    def __init__(self, model):
        self.model = model
        self.search = dict(model.config.search)

    def set_search_options(self, **options):
        for key, value in options.items():
            if key not in SEARCH_DEFAULTS:
                raise GenaiError(f'set_search_options: unknown option {key!r}')
            self.search[key] = value
        s = self.search
        if int(s['num_beams']) != 1:
            raise GenaiError(f"num_beams {s['num_beams']}: beam search is not supported")
        if int(s['num_return_sequences']) != 1:
            raise GenaiError('num_return_sequences other than 1 is not supported')
        if float(s['temperature']) <= 0:
            raise GenaiError(f"temperature {s['temperature']} must be above 0")
        if not 0 < float(s['top_p']) <= 1:
            raise GenaiError(f"top_p {s['top_p']} must be in (0, 1]")
        if int(s['top_k']) < 0:
            raise GenaiError(f"top_k {s['top_k']} must not be negative")
        if float(s['repetition_penalty']) <= 0:
            raise GenaiError(f"repetition_penalty {s['repetition_penalty']} must be above 0")
        if float(s['diversity_penalty']) != 0 or int(s['no_repeat_ngram_size']) != 0:
            raise GenaiError('diversity_penalty and no_repeat_ngram_size are not supported')


class Generator:
    """One generation: the sequences so far, the cache, and the search's next step."""

    def __init__(self, model, params):
        self.model = model
        self.config = model.config
        self.search = dict(params.search)
        limit = self.search['max_length'] or self.config.context_length
        if not limit:
            raise GenaiError('max_length is not set and genai_config.json gives no context_length')
        self.max_length = int(limit)
        seed = int(self.search['random_seed'])
        self._rng = np.random.default_rng(None if seed < 0 else seed)
        self._sequences = None        # [batch, length] int32
        self._done = None             # per sequence
        self._cache = None            # past input name -> its array
        self._share = bool(self.search['past_present_share_buffer'])
        self._pending = None          # tokens appended but not yet run
        self._logits = None           # the last step's logits, [batch, vocab]

    # ---- the sequence

    def append_tokens(self, tokens):
        t = np.asarray(tokens, dtype=np.int64)
        if t.ndim == 1:
            t = t[None, :]
        if t.ndim != 2 or t.shape[1] == 0:
            raise GenaiError(f'append_tokens: expected a non-empty 1-D or 2-D array, got shape '
                             f'{tuple(t.shape)}')
        length = t.shape[1] + (0 if self._sequences is None else self._sequences.shape[1])
        if length > self.max_length:   # refused before anything changes
            raise GenaiError(f'append_tokens: {length} tokens exceed max_length {self.max_length}')
        if self._sequences is None:
            self._sequences = t.astype(np.int32)
            self._done = np.zeros(t.shape[0], bool)
            self._pending = t
            self._cache = self._empty_cache(t.shape[0])
        else:
            if t.shape[0] != self._sequences.shape[0]:
                raise GenaiError(f'append_tokens: {t.shape[0]} rows for a batch of '
                                 f'{self._sequences.shape[0]}')
            self._sequences = np.concatenate([self._sequences, t.astype(np.int32)], axis=1)
            self._pending = t if self._pending is None else np.concatenate([self._pending, t], 1)
        self._run()

    def is_done(self):
        if self._sequences is None:
            return False
        return bool(self._done.all()) or self._sequences.shape[1] >= self.max_length

    def generate_next_token(self):
        if self._sequences is None:
            raise GenaiError('generate_next_token: append_tokens first')
        if self.is_done():
            raise GenaiError('generate_next_token: the generation is done')
        if self._pending is not None:
            self._run()
        nxt = self._choose(self._logits.astype(np.float64))
        nxt = np.where(self._done, self.config.pad, nxt)
        self._done |= np.isin(nxt, list(self.config.eos))
        if self._done.all():   # as onnxruntime-genai: the step that ends them all adds nothing
            return
        self._sequences = np.concatenate([self._sequences, nxt[:, None].astype(np.int32)], axis=1)
        self._pending = nxt[:, None].astype(np.int64)

    def get_next_tokens(self):
        return self._sequences[:, -1].copy()

    def get_sequence(self, index):
        return self._sequences[int(index)].copy()

    def get_logits(self):
        if self._pending is not None:
            self._run()
        return self._logits.copy()

    # ---- the model

    def _empty_cache(self, batch):
        c = self.config
        cache = {}
        for i in range(c.layers):
            # window-sized caches keep their capacity; shared ones hold max_length positions
            length = c.window_capacity if i in c.window_layers else self.max_length if self._share else 0
            shape = (batch, c.kv_heads, length, self.model.cache_columns)
            cache[c.inputs['past_key_names'] % i] = np.zeros(shape, self.model.cache_dtype)
            cache[c.inputs['past_value_names'] % i] = np.zeros(shape, self.model.cache_dtype)
        return cache

    def _run(self):
        c, m = self.config, self.model
        ids = self._pending
        total = self._sequences.shape[1]
        feed = {c.inputs['input_ids']: ids, **self._cache}
        batch = ids.shape[0]
        if m.has_input(c.inputs['attention_mask']):
            feed[c.inputs['attention_mask']] = np.ones((batch, total), np.int64)
        if m.has_input(c.inputs['position_ids']):
            first = total - ids.shape[1]
            feed[c.inputs['position_ids']] = np.broadcast_to(
                np.arange(first, total, dtype=np.int64), ids.shape).copy()
        presents = {}   # present output name -> the past input it continues
        for i in range(c.layers):
            presents[c.outputs['present_key_names'] % i] = c.inputs['past_key_names'] % i
            presents[c.outputs['present_value_names'] % i] = c.inputs['past_value_names'] % i
        if self._share:   # each present written into its past's buffer, appended in place
            logits, = m.session.run_into([c.outputs['logits']], feed,
                                         {out: self._cache[past] for out, past in presents.items()})
        else:
            names = [c.outputs['logits'], *presents]
            outs = m.session.run(names, feed)
            logits = outs[0]
            for out, value in zip(presents, outs[1:]):
                self._cache[presents[out]] = value
        self._logits = logits[:, -1, :] if logits.ndim == 3 else logits
        self._pending = None

    # ---- the search

    def _choose(self, logits):
        s = self.search
        penalty = float(s['repetition_penalty'])
        if penalty != 1.0:
            for b in range(logits.shape[0]):
                seen = np.unique(self._sequences[b])
                seen = seen[(seen >= 0) & (seen < logits.shape[1])]
                v = logits[b, seen]
                logits[b, seen] = np.where(v < 0, v * penalty, v / penalty)
        if self._sequences.shape[1] < int(s['min_length']):
            for e in self.config.eos:
                if 0 <= e < logits.shape[1]:
                    logits[:, e] = -np.inf
        if not s['do_sample']:
            return np.argmax(logits, axis=1)
        out = np.empty(logits.shape[0], np.int64)
        for b in range(logits.shape[0]):
            out[b] = self._sample(logits[b] / float(s['temperature']))
        return out

    def _sample(self, logits):
        s = self.search
        order = np.argsort(-logits, kind='stable')
        k = int(s['top_k'])
        if k > 0:
            order = order[:k]
        z = logits[order] - logits[order[0]]
        p = np.exp(z)
        p /= p.sum()
        top_p = float(s['top_p'])
        if top_p < 1.0:
            keep = int(np.searchsorted(np.cumsum(p), top_p) + 1)
            order, p = order[:keep], p[:keep] / p[:keep].sum()
        return int(order[self._rng.choice(len(order), p=p)])


def generate(folder, prompt, max_length=None, stream=None, threads=None, **search):
    """The prompt's continuation as text (streamed to `stream`, a callable taking text pieces,
    when given)."""
    model = Model(folder, threads=threads)
    tokenizer = Tokenizer(model)
    params = GeneratorParams(model)
    if max_length is not None:
        search['max_length'] = max_length
    params.set_search_options(**search)
    gen = Generator(model, params)
    prompt_ids = tokenizer.encode(prompt)
    gen.append_tokens(prompt_ids)
    pieces = tokenizer.create_stream()
    while not gen.is_done():
        gen.generate_next_token()
        if stream is not None:
            stream(pieces.decode(gen.get_next_tokens()[0]))
    return tokenizer.decode(gen.get_sequence(0)[len(prompt_ids):])
