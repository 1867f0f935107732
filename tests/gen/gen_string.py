# String family cases (StringConcat, StringSplit, StringNormalizer, RegexFullMatch,
# TfIdfVectorizer, ImageDecoder) for what the node tests miss: non-ASCII text, whitespace and
# maxsplit corners, IDF/TFIDF weighting, string pools, and image kinds the node tests do not use.
# Where onnx's reference differs from the spec (StringNormalizer strips accents and splits on
# spaces; RegexFullMatch uses Python's re, not RE2; ImageDecoder needs Pillow) the expected values
# are written by hand.
import struct
import zlib

import numpy as np

from common import case, node_model, reference


def S(*v):  # noqa: N802
    return np.array(v, dtype=object)


def both(s, name, op, inputs, **kw):
    case(s, f'test_str_{name}', op, inputs, **kw)
    case(s, f'test_str_{name}_sym', op, inputs, sym=True, **kw)


# ---- tiny image writers (no Pillow here): PNG, BMP and PNM from a uint8 array


def _png_chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))


def png_bytes(rows, color_type, bit_depth=8, palette=None):
    """rows: list of raw (unfiltered) scanline bytes; written with filter 0."""
    h = len(rows)
    w_bytes = len(rows[0])
    ch = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    width = w_bytes * 8 // (bit_depth * ch)
    ihdr = struct.pack('>IIBBBBB', width, h, bit_depth, color_type, 0, 0, 0)
    out = b'\x89PNG\r\n\x1a\n' + _png_chunk(b'IHDR', ihdr)
    if palette is not None:
        out += _png_chunk(b'PLTE', bytes(np.asarray(palette, np.uint8).ravel()))
    raw = b''.join(b'\x00' + bytes(r) for r in rows)
    return out + _png_chunk(b'IDAT', zlib.compress(raw)) + _png_chunk(b'IEND', b'')


def bmp24_bytes(rgb):
    """Bottom-up 24-bit BMP, rows padded to 4 bytes."""
    h, w, _ = rgb.shape
    stride = (w * 3 + 3) & ~3
    pixels = b''
    for y in range(h - 1, -1, -1):
        row = bytes(rgb[y, :, ::-1].ravel())
        pixels += row + b'\x00' * (stride - len(row))
    header = struct.pack('<2sIHHI', b'BM', 54 + len(pixels), 0, 0, 54)
    info = struct.pack('<IiiHHIIiiII', 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    return header + info + pixels


def tiff_bytes(pixels, big_endian=False):
    """Uncompressed single-strip TIFF of an (h, w) gray or (h, w, 3) RGB uint8 array."""
    e = '>' if big_endian else '<'
    h, w = pixels.shape[:2]
    spp = 1 if pixels.ndim == 2 else 3
    data = pixels.tobytes()
    n_tags = 10
    ifd_at = 8
    extra_at = ifd_at + 2 + 12 * n_tags + 4  # BitsPerSample values for RGB
    data_at = extra_at + 6
    SHORT, LONG = 3, 4
    bps = (SHORT, spp, extra_at) if spp == 3 else (SHORT, 1, 8)
    tags = [(256, LONG, 1, w), (257, LONG, 1, h), (258,) + bps, (259, SHORT, 1, 1), (262, SHORT, 1, 2 if spp == 3 else 1),
            (273, LONG, 1, data_at), (277, SHORT, 1, spp), (278, LONG, 1, h), (279, LONG, 1, len(data)),
            (284, SHORT, 1, 1)]
    out = (b'MM\x00*' if big_endian else b'II*\x00') + struct.pack(e + 'I', ifd_at) + struct.pack(e + 'H', n_tags)
    for tag, typ, count, value in tags:
        # a SHORT held in the value field sits in its first two bytes
        field = struct.pack(e + 'HH', value, 0) if typ == SHORT and count == 1 else struct.pack(e + 'I', value)
        out += struct.pack(e + 'HHI', tag, typ, count) + field
    out += struct.pack(e + 'I', 0) + struct.pack(e + 'HHH', 8, 8, 8)
    return out + data


def gray(rgb):
    """Pillow's RGB -> L conversion."""
    r, g, b = (rgb[..., k].astype(np.uint32) for k in range(3))
    return ((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16).astype(np.uint8)[..., None]


def u8(data):
    return np.frombuffer(data, np.uint8).copy()


def image_cases(s):
    rng = np.random.default_rng(7)
    rgb = rng.integers(0, 256, (5, 7, 3)).astype(np.uint8)
    png_rgb = png_bytes([r.tobytes() for r in rgb], 2)
    for fmt, exp in (('RGB', rgb), ('BGR', rgb[..., ::-1]), ('Grayscale', gray(rgb))):
        case(s, f'test_str_image_png_{fmt.lower()}', 'ImageDecoder', [u8(png_rgb)],
             expected=[exp], attrs={'pixel_format': fmt})
    # 16-bit samples keep their high byte; alpha is dropped
    rgba16 = rng.integers(0, 65536, (3, 4, 4)).astype('>u2')
    case(s, 'test_str_image_png_rgba16', 'ImageDecoder',
         [u8(png_bytes([r.tobytes() for r in rgba16], 6, 16))],
         expected=[(rgba16[..., :3] >> 8).astype(np.uint8)])
    # palette, and 2-bit gray expanded to 8 bits (0, 85, 170, 255) then replicated
    pal = rng.integers(0, 256, (4, 3)).astype(np.uint8)
    idx = rng.integers(0, 4, (3, 6)).astype(np.uint8)
    case(s, 'test_str_image_png_palette', 'ImageDecoder',
         [u8(png_bytes([r.tobytes() for r in idx], 3, 8, pal))], expected=[pal[idx]])
    g2 = rng.integers(0, 4, (2, 8)).astype(np.uint8)
    packed = [bytes([(r[0] << 6) | (r[1] << 4) | (r[2] << 2) | r[3], (r[4] << 6) | (r[5] << 4) | (r[6] << 2) | r[7]])
              for r in g2]
    case(s, 'test_str_image_png_gray2', 'ImageDecoder', [u8(png_bytes(packed, 0, 2))],
         expected=[np.repeat((g2 * 85).astype(np.uint8)[..., None], 3, axis=2)])
    case(s, 'test_str_image_png_gray2_grayscale', 'ImageDecoder', [u8(png_bytes(packed, 0, 2))],
         expected=[(g2 * 85).astype(np.uint8)[..., None]], attrs={'pixel_format': 'Grayscale'})
    # BMP with row padding (width 5: 15 bytes per row, padded to 16)
    case(s, 'test_str_image_bmp_padded', 'ImageDecoder', [u8(bmp24_bytes(rgb[:, :5]))],
         expected=[rgb[:, :5]])
    # uncompressed TIFF: little-endian RGB, big-endian gray
    case(s, 'test_str_image_tiff_rgb_le', 'ImageDecoder', [u8(tiff_bytes(rgb))], expected=[rgb[..., ::-1]],
         attrs={'pixel_format': 'BGR'})
    tg = rng.integers(0, 256, (4, 6)).astype(np.uint8)
    case(s, 'test_str_image_tiff_gray_be', 'ImageDecoder', [u8(tiff_bytes(tg, big_endian=True))],
         expected=[np.repeat(tg[..., None], 3, axis=2)])
    case(s, 'test_str_image_tiff_gray_be_grayscale', 'ImageDecoder', [u8(tiff_bytes(tg, big_endian=True))],
         expected=[tg[..., None]], attrs={'pixel_format': 'Grayscale'})
    # binary graymap: gray replicated to RGB
    pgm = rng.integers(0, 256, (4, 3)).astype(np.uint8)
    case(s, 'test_str_image_pgm', 'ImageDecoder', [u8(b'P5\n# comment\n3 4\n255\n' + pgm.tobytes())],
         expected=[np.repeat(pgm[..., None], 3, axis=2)])

    # Pillow scales samples to 0..255 by round(v / maxval * 255), and a 16-bit maximum keeps the high byte
    def scale(v, maxval):
        return np.vectorize(lambda x: round(x / maxval * 255))(v).astype(np.uint8)

    ppm15 = rng.integers(0, 16, (3, 2, 3)).astype(np.uint8)
    case(s, 'test_str_image_ppm_maxval15', 'ImageDecoder', [u8(b'P6 2 3 15\n' + ppm15.tobytes())],
         expected=[scale(ppm15, 15)])
    ppm16 = rng.integers(0, 65536, (2, 3, 3)).astype('>u2')
    case(s, 'test_str_image_ppm_16bit', 'ImageDecoder', [u8(b'P6 3 2 65535\n' + ppm16.tobytes())],
         expected=[(ppm16 >> 8).astype(np.uint8)])
    pgm1000 = rng.integers(0, 1001, (2, 2)).astype('>u2')
    case(s, 'test_str_image_pgm_maxval1000', 'ImageDecoder', [u8(b'P5 2 2 1000\n' + pgm1000.tobytes())],
         expected=[np.repeat(scale(pgm1000, 1000)[..., None], 3, axis=2)], attrs={'pixel_format': 'BGR'})
    # plain (ASCII) formats and bitmaps, where 1 is black
    bits = rng.integers(0, 2, (3, 10)).astype(np.uint8)
    white = np.repeat(((1 - bits) * 255).astype(np.uint8)[..., None], 3, axis=2)
    p1 = b'P1\n# bitmap\n10 3\n' + b'\n'.join(b''.join(b'%d' % v for v in r) for r in bits) + b'\n'
    case(s, 'test_str_image_pbm_plain', 'ImageDecoder', [u8(p1)], expected=[white])
    p4 = b'P4\n10 3\n' + b''.join(np.packbits(r).tobytes() for r in bits)
    case(s, 'test_str_image_pbm_raw', 'ImageDecoder', [u8(p4)], expected=[white])
    case(s, 'test_str_image_pbm_raw_gray', 'ImageDecoder', [u8(p4)], expected=[white[..., :1]],
         attrs={'pixel_format': 'Grayscale'})
    g = rng.integers(0, 101, (2, 3))
    p2 = b'P2 3 2 100\n' + b' '.join(b'%d' % v for v in g.ravel()) + b'\n'
    case(s, 'test_str_image_pgm_plain', 'ImageDecoder', [u8(p2)],
         expected=[np.repeat(scale(g, 100)[..., None], 3, axis=2)])
    c = rng.integers(0, 256, (2, 2, 3))
    p3 = b'P3\n2 2\n255\n' + b'\n'.join(b' '.join(b'%d' % v for v in px) for px in c.reshape(-1, 3))
    case(s, 'test_str_image_ppm_plain', 'ImageDecoder', [u8(p3)], expected=[c.astype(np.uint8)])


def generate(s):
    # ---- StringConcat
    both(s, 'concat_bcast_2d', 'StringConcat', [S('a', 'bé', '').reshape(3, 1), S('x', 'ÿz', '中')])
    both(s, 'concat_empty', 'StringConcat', [np.zeros((0, 2), object), S('x', 'y')])

    # ---- StringSplit (the reference is Python's str.split)
    both(s, 'split_multichar', 'StringSplit', [S('a<>b<><>c', '<>', 'none', '')], attrs={'delimiter': '<>'},
         n_out=2)
    both(s, 'split_maxsplit0', 'StringSplit', [S('a b c', '  x y ')], attrs={'maxsplit': 0}, n_out=2)
    both(s, 'split_maxsplit_delim', 'StringSplit', [S('a,b,c,d', ',,', 'x')],
         attrs={'delimiter': ',', 'maxsplit': 2}, n_out=2)
    # Unicode whitespace (ideographic space, no-break space, 0x1f) separates too
    both(s, 'split_unicode_space', 'StringSplit', [S('a\u3000b', 'c\xa0 d\x1fe', 'é\tü\n')], n_out=2)
    both(s, 'split_all_space', 'StringSplit', [S(' ', '', '\t\n').reshape(1, 3)], n_out=2)
    both(s, 'split_utf8_delim', 'StringSplit', [S('一的二的的三', '的')], attrs={'delimiter': '的'}, n_out=2)
    # a scalar splits into a vector (the reference cannot pad 0-d input: by hand)
    both(s, 'split_scalar', 'StringSplit', [np.array('x  yz ', dtype=object)],
         expected=[S('x', 'yz'), np.array(2, np.int64)], n_out=2)
    case(s, 'test_str_split_2d_maxsplit1', 'StringSplit', [S('a b c', 'd', 'e f', ' ').reshape(2, 2)],
         attrs={'maxsplit': 1}, n_out=2)

    # ---- StringNormalizer: non-ASCII case changes through the C library's wide-char mappings
    words = S('éCOLE', 'ärger', 'ñandú', 'Ωmega', 'Привет', 'abc')
    case(s, 'test_str_norm_upper_utf8', 'StringNormalizer', [words],
         expected=[S('ÉCOLE', 'ÄRGER', 'ÑANDÚ', 'ΩMEGA', 'ПРИВЕТ', 'ABC')],
         attrs={'case_change_action': 'UPPER'})
    case(s, 'test_str_norm_lower_utf8_2d', 'StringNormalizer', [words.reshape(1, 6)],
         expected=[S('école', 'ärger', 'ñandú', 'ωmega', 'привет', 'abc').reshape(1, 6)],
         attrs={'case_change_action': 'LOWER'})
    # a locale that is not installed falls back to C.UTF-8's mappings
    case(s, 'test_str_norm_locale_fallback', 'StringNormalizer', [S('straat', 'Ärger')],
         expected=[S('STRAAT', 'ÄRGER')], attrs={'case_change_action': 'UPPER', 'locale': 'de_DE'})
    # case-insensitive stopwords match whole elements in any case, non-ASCII too
    case(s, 'test_str_norm_stop_insensitive_utf8', 'StringNormalizer', [S('été', 'Hiver', 'ÉTÉ', 'été x')],
         expected=[S('hiver', 'été x')], attrs={'case_change_action': 'LOWER', 'stopwords': ['ÉtÉ']})
    case(s, 'test_str_norm_stop_insensitive_none', 'StringNormalizer', [S('MONDAY', 'Tuesday')],
         expected=[S('Tuesday')], attrs={'stopwords': ['monday']})
    case(s, 'test_str_norm_stop_sensitive', 'StringNormalizer', [S('Monday', 'monday', 'x')],
         expected=[S('MONDAY', 'X')],
         attrs={'case_change_action': 'UPPER', 'is_case_sensitive': 1, 'stopwords': ['monday']})
    both(s, 'norm_stop_upper', 'StringNormalizer', [S('Monday', 'ab', 'MONDAY', 'é').reshape(1, 4)],
         expected=[S('AB', 'É').reshape(1, 2)], attrs={'case_change_action': 'UPPER', 'stopwords': ['monday']})
    case(s, 'test_str_norm_all_dropped_2d', 'StringNormalizer', [S('a', 'A').reshape(1, 2)],
         expected=[S('').reshape(1, 1)], attrs={'stopwords': ['a']})
    case(s, 'test_str_norm_empty_input', 'StringNormalizer', [np.zeros((0,), object)],
         expected=[S('')], attrs={'case_change_action': 'LOWER'})

    # ---- RegexFullMatch: RE2 syntax (Unicode classes Python's re lacks), expected by hand
    both(s, 'regex_unicode_class', 'RegexFullMatch', [S('αβγ', 'abc', 'αb', '')],
         expected=[np.array([True, False, False, False])], attrs={'pattern': r'\p{Greek}+'})
    both(s, 'regex_case_insensitive', 'RegexFullMatch', [S('HeLLo', 'hello!', 'hello').reshape(3, 1)],
         expected=[np.array([[True], [False], [True]])], attrs={'pattern': '(?i)hello'})
    both(s, 'regex_empty_pattern', 'RegexFullMatch', [S('', 'a')], expected=[np.array([True, False])],
         attrs={'pattern': ''})
    both(s, 'regex_dot_utf8', 'RegexFullMatch', [S('中', 'ab', '中文')], expected=[np.array([True, False, False])],
         attrs={'pattern': '.'})

    # ---- TfIdfVectorizer (the reference follows onnxruntime)
    pool = dict(ngram_counts=[0, 4, 7], ngram_indexes=list(range(7)),
                pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 5, 6, 7])
    rows = np.array([[1, 2, 3, 5, 4, 5], [5, 6, 7, 8, 6, 7]], np.int64)
    w = [0.5, 1.5, 2.0, 1.0, 0.25, 3.0, 4.0, 9.0]
    tf_attrs = dict(pool, mode='TF', min_gram_length=1, max_gram_length=3, max_skip_count=2)
    tf = reference(*node_model('TfIdfVectorizer', [rows], tf_attrs))[0]
    both(s, 'tfidf_tf', 'TfIdfVectorizer', [rows], attrs=tf_attrs)
    # the reference cannot weigh without weights: there IDF is 0/1 and TFIDF the counts
    both(s, 'tfidf_idf', 'TfIdfVectorizer', [rows], attrs=dict(tf_attrs, mode='IDF'),
         expected=[(tf > 0).astype(np.float32)])
    both(s, 'tfidf_tfidf', 'TfIdfVectorizer', [rows], attrs=dict(tf_attrs, mode='TFIDF'), expected=[tf])
    for mode in ('IDF', 'TFIDF'):
        both(s, f'tfidf_{mode.lower()}_w', 'TfIdfVectorizer', [rows],
             attrs=dict(tf_attrs, mode=mode, ngram_indexes=[0, 1, 2, 3, 4, 5, 7],
                        weights=[0.5, 1.5, 2.0, 1.0, 0.25, 3.0, 4.0, 9.0]))
    both(s, 'tfidf_strings', 'TfIdfVectorizer',
         [S('the', 'cat', 'sat', 'on', 'the', 'cat', 'mat').reshape(1, 7)],
         attrs=dict(mode='TF', min_gram_length=1, max_gram_length=2, max_skip_count=1, ngram_counts=[0, 3],
                    ngram_indexes=[2, 0, 1, 3, 4], pool_strings=['cat', 'the', 'mat', 'the', 'cat', 'cat', 'sat']))
    both(s, 'tfidf_big_skip', 'TfIdfVectorizer', [np.array([1, 2, 1, 2, 2, 1], np.int32)],
         attrs=dict(mode='TF', min_gram_length=2, max_gram_length=2, max_skip_count=1000, ngram_counts=[0, 0],
                    ngram_indexes=[0, 1], pool_int64s=[1, 2, 2, 1]))
    both(s, 'tfidf_empty_row', 'TfIdfVectorizer', [np.zeros((2, 0), np.int64)],
         attrs=dict(mode='TF', min_gram_length=1, max_gram_length=1, max_skip_count=0, ngram_counts=[0],
                    ngram_indexes=[0, 1], pool_int64s=[1, 2]))

    # large: the row and element loops split across threads
    rng = np.random.default_rng(3)
    letters = np.array(list('abcd1'))
    many = np.array([''.join(rng.choice(letters, rng.integers(0, 6))) for _ in range(35000)], dtype=object)
    case(s, 'test_str_regex_many', 'RegexFullMatch', [many], attrs={'pattern': '[a-c]+[0-9]*'})
    case(s, 'test_str_tfidf_many_rows', 'TfIdfVectorizer', [rng.integers(0, 6, (1600, 20)).astype(np.int64)],
         attrs=dict(mode='TFIDF', min_gram_length=1, max_gram_length=2, max_skip_count=1, ngram_counts=[0, 3],
                    ngram_indexes=[0, 1, 2, 3, 4, 5], pool_int64s=[0, 3, 5, 1, 2, 2, 2, 4, 0],
                    weights=[1.0, 0.5, 2.0, 3.0, 0.25, 4.0]))

    image_cases(s)
