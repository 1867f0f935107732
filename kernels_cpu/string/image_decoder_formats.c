/* TIFF (libtiff), WebP (libwebp) and JPEG 2000 (OpenJPEG) for ImageDecoder, each read from
 * memory with the library's messages captured instead of printed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openjpeg.h>
#include <tiffio.h>
#include <webp/decode.h>

#include "kernels_cpu/string/image_decoder.h"

/* ---- bytes in memory, read through a library's stream callbacks */

typedef struct mem_stream {
    const uint8_t *data;
    uint64_t len, pos;
    char msg[256]; /* the library's first error message */
} mem_stream;

static void keep_message(mem_stream *m, const char *fmt, va_list ap) {
    if (!m->msg[0]) vsnprintf(m->msg, sizeof m->msg, fmt, ap);
}

/* ---- TIFF */

static tmsize_t tiff_read(thandle_t h, void *buf, tmsize_t n) {
    mem_stream *m = h;
    if (n < 0) return -1;
    uint64_t left = m->len - m->pos, k = (uint64_t)n < left ? (uint64_t)n : left;
    memcpy(buf, m->data + m->pos, (size_t)k);
    m->pos += k;
    return (tmsize_t)k;
}

static tmsize_t tiff_write(thandle_t h, void *buf, tmsize_t n) {
    (void)h;
    (void)buf;
    (void)n;
    return -1;
}

static toff_t tiff_seek(thandle_t h, toff_t off, int whence) {
    mem_stream *m = h;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->len;
    /* seeking past the end is allowed (reads there return nothing), wrapping around is not */
    if (off > UINT64_MAX - base) return (toff_t)-1;
    m->pos = base + off;
    if (m->pos > m->len) m->pos = m->len;
    return m->pos;
}

static int tiff_close(thandle_t h) {
    (void)h;
    return 0;
}

static toff_t tiff_size(thandle_t h) { return ((mem_stream *)h)->len; }

static int tiff_map(thandle_t h, void **base, toff_t *size) {
    (void)h;
    (void)base;
    (void)size;
    return 0;
}

static void tiff_unmap(thandle_t h, void *base, toff_t size) {
    (void)h;
    (void)base;
    (void)size;
}

static int tiff_on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    (void)module;
    keep_message(user, fmt, ap);
    return 1; /* handled: libtiff's global handler (which prints) is not called */
}

static int tiff_on_warning(TIFF *tif, void *user, const char *module, const char *fmt,
                           va_list ap) {
    (void)tif;
    (void)user;
    (void)module;
    (void)fmt;
    (void)ap;
    return 1;
}

onyx_status cpu_img_decode_tiff(const uint8_t *data, size_t len, cpu_image *img) {
    mem_stream m = {data, len, 0, ""};
    onyx_status st = ONYX_OK;
    TIFF *tif = NULL;
    uint32_t *raster = NULL;
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) return onyx_oom("TIFF decoder");
    TIFFOpenOptionsSetErrorHandlerExtR(opts, tiff_on_error, &m);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, tiff_on_warning, &m);
    /* "m": no memory mapping; the bytes are already in memory */
    tif = TIFFClientOpenExt("image", "rm", &m, tiff_read, tiff_write, tiff_seek, tiff_close,
                            tiff_size, tiff_map, tiff_unmap, opts);
    if (!tif) {
        st = onyx_error(ONYX_ERR_RUNTIME, "cannot decode the TIFF image: %s",
                        m.msg[0] ? m.msg : "not a readable TIFF");
        goto done;
    }
    uint32_t w = 0, h = 0;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h)) {
        st = onyx_error(ONYX_ERR_RUNTIME, "cannot decode the TIFF image: no image size");
        goto done;
    }
    CHECK(cpu_img_check_size("TIFF", w, h));
    char why[1024] = "";
    if (!TIFFRGBAImageOK(tif, why)) {
        st = onyx_error(ONYX_ERR_RUNTIME, "cannot decode the TIFF image: %s", why);
        goto done;
    }
    if (!(raster = malloc((size_t)w * (size_t)h * sizeof *raster))) {
        st = onyx_oom("decoded TIFF image");
        goto done;
    }
    /* stop at the first error, so that a damaged strip is an error rather than a hole */
    if (!TIFFReadRGBAImageOriented(tif, w, h, raster, ORIENTATION_TOPLEFT, 1)) {
        st = onyx_error(ONYX_ERR_RUNTIME, "cannot decode the TIFF image: %s",
                        m.msg[0] ? m.msg : "reading the pixels failed");
        goto done;
    }
    CHECK(cpu_img_alloc(img, w, h));
    for (size_t i = 0; i < (size_t)w * h; i++) {
        img->rgb[3 * i] = (uint8_t)TIFFGetR(raster[i]);
        img->rgb[3 * i + 1] = (uint8_t)TIFFGetG(raster[i]);
        img->rgb[3 * i + 2] = (uint8_t)TIFFGetB(raster[i]);
    }
done:
    free(raster);
    if (tif) TIFFClose(tif);
    TIFFOpenOptionsFree(opts);
    return st;
}

/* ---- WebP */

static const char *vp8_status(VP8StatusCode s) {
    switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "the data ends early (truncated image)";
    default: return "unknown error";
    }
}

onyx_status cpu_img_decode_webp(const uint8_t *data, size_t len, cpu_image *img) {
    WebPDecoderConfig cfg;
    if (!WebPInitDecoderConfig(&cfg)) return onyx_error(ONYX_ERR_RUNTIME, "libwebp version mismatch");
    VP8StatusCode s = WebPGetFeatures(data, len, &cfg.input);
    if (s != VP8_STATUS_OK)
        return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the WebP image: %s", vp8_status(s));
    if (cfg.input.has_animation)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "animated WebP images are not supported");
    TRY(cpu_img_check_size("WebP", cfg.input.width, cfg.input.height));
    TRY(cpu_img_alloc(img, cfg.input.width, cfg.input.height));
    cfg.output.colorspace = MODE_RGB;
    cfg.output.is_external_memory = 1;
    cfg.output.u.RGBA.rgba = img->rgb;
    cfg.output.u.RGBA.stride = cfg.input.width * 3;
    cfg.output.u.RGBA.size = (size_t)img->width * (size_t)img->height * 3;
    s = WebPDecode(data, len, &cfg);
    WebPFreeDecBuffer(&cfg.output);
    if (s != VP8_STATUS_OK) {
        free(img->rgb);
        img->rgb = NULL;
        return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the WebP image: %s", vp8_status(s));
    }
    return ONYX_OK;
}

/* ---- JPEG 2000 */

static OPJ_SIZE_T opj_read(void *buf, OPJ_SIZE_T n, void *user) {
    mem_stream *m = user;
    if (m->pos >= m->len) return (OPJ_SIZE_T)-1;
    uint64_t left = m->len - m->pos, k = n < left ? n : left;
    memcpy(buf, m->data + m->pos, (size_t)k);
    m->pos += k;
    return (OPJ_SIZE_T)k;
}

static OPJ_OFF_T opj_skip(OPJ_OFF_T n, void *user) {
    mem_stream *m = user;
    if (n < 0) {
        if ((uint64_t)-(n + 1) + 1 > m->pos) return -1;
        m->pos -= (uint64_t)-(n + 1) + 1;
        return n;
    }
    uint64_t left = m->len - m->pos, k = (uint64_t)n < left ? (uint64_t)n : left;
    m->pos += k;
    return (OPJ_OFF_T)k;
}

static OPJ_BOOL opj_seek(OPJ_OFF_T off, void *user) {
    mem_stream *m = user;
    if (off < 0 || (uint64_t)off > m->len) return OPJ_FALSE;
    m->pos = (uint64_t)off;
    return OPJ_TRUE;
}

static void opj_on_error(const char *msg, void *user) {
    mem_stream *m = user;
    if (!m->msg[0]) {
        snprintf(m->msg, sizeof m->msg, "%s", msg);
        size_t n = strlen(m->msg);
        if (n && m->msg[n - 1] == '\n') m->msg[n - 1] = 0;
    }
}

static void opj_quiet(const char *msg, void *user) {
    (void)msg;
    (void)user;
}

/* Component value at image pixel (x, y), scaled to 8 bits as Pillow does (by shifting). */
static uint8_t opj_sample(const opj_image_t *im, const opj_image_comp_t *c, int64_t x, int64_t y) {
    /* a subsampled component covers dx x dy image pixels with each of its samples */
    int64_t cx = (x + im->x0) / c->dx - (int64_t)c->x0, cy = (y + im->y0) / c->dy - (int64_t)c->y0;
    if (cx < 0) cx = 0;
    if (cy < 0) cy = 0;
    if (cx >= c->w) cx = c->w - 1;
    if (cy >= c->h) cy = c->h - 1;
    int64_t v = c->data[cy * c->w + cx];
    if (c->sgnd) v += (int64_t)1 << (c->prec - 1);
    if (v < 0) return 0;
    int shift = 8 - (int)c->prec;
    v = shift < 0 ? v >> -shift : v << shift;
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

onyx_status cpu_img_decode_jpeg2000(const uint8_t *data, size_t len, int codestream,
                                    cpu_image *img) {
    mem_stream m = {data, len, 0, ""};
    onyx_status st = ONYX_OK;
    opj_image_t *im = NULL;
    opj_stream_t *s = NULL;
    opj_codec_t *codec = opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
    if (!codec) return onyx_oom("JPEG 2000 decoder");
    opj_set_error_handler(codec, opj_on_error, &m);
    opj_set_warning_handler(codec, opj_quiet, &m);
    opj_set_info_handler(codec, opj_quiet, &m);
    opj_dparameters_t params;
    opj_set_default_decoder_parameters(&params);
    if (!opj_setup_decoder(codec, &params)) {
        st = onyx_error(ONYX_ERR_RUNTIME, "cannot set up the JPEG 2000 decoder: %s", m.msg);
        goto done;
    }
    if (!(s = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE))) {
        st = onyx_oom("JPEG 2000 stream");
        goto done;
    }
    opj_stream_set_user_data(s, &m, NULL);
    opj_stream_set_user_data_length(s, len);
    opj_stream_set_read_function(s, opj_read);
    opj_stream_set_skip_function(s, opj_skip);
    opj_stream_set_seek_function(s, opj_seek);
    if (!opj_read_header(s, codec, &im)) {
        st = onyx_error(ONYX_ERR_RUNTIME, "cannot decode the JPEG 2000 image: %s",
                        m.msg[0] ? m.msg : "bad header");
        goto done;
    }
    int64_t w = (int64_t)im->x1 - im->x0, h = (int64_t)im->y1 - im->y0;
    CHECK(cpu_img_check_size("JPEG 2000", w, h));
    if (!opj_decode(codec, s, im) || !opj_end_decompress(codec, s)) {
        st = onyx_error(ONYX_ERR_RUNTIME, "cannot decode the JPEG 2000 image: %s",
                        m.msg[0] ? m.msg : "decoding failed");
        goto done;
    }
    if (im->numcomps < 1 || im->numcomps > 4) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "JPEG 2000 image with %u components, expected 1 "
                        "to 4 (gray, gray + alpha, RGB, RGBA)", im->numcomps);
        goto done;
    }
    if (im->color_space == OPJ_CLRSPC_SYCC || im->color_space == OPJ_CLRSPC_EYCC ||
        im->color_space == OPJ_CLRSPC_CMYK) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "JPEG 2000 image in a YCC or CMYK color space");
        goto done;
    }
    int colors = im->numcomps >= 3 ? 3 : 1; /* a 2nd or 4th component is alpha: dropped */
    for (int k = 0; k < colors; k++) {
        const opj_image_comp_t *c = &im->comps[k];
        if (!c->data || c->w == 0 || c->h == 0 || c->dx == 0 || c->dy == 0 || c->prec < 1 ||
            c->prec > 31) {
            st = onyx_error(ONYX_ERR_RUNTIME, "cannot decode the JPEG 2000 image: component %d "
                            "has no samples or a precision of %u bits", k, c->prec);
            goto done;
        }
    }
    CHECK(cpu_img_alloc(img, w, h));
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++)
            for (int ch = 0; ch < 3; ch++)
                img->rgb[(y * w + x) * 3 + ch] =
                    opj_sample(im, &im->comps[colors == 3 ? ch : 0], x, y);
done:
    if (im) opj_image_destroy(im);
    if (s) opj_stream_destroy(s);
    opj_destroy_codec(codec);
    return st;
}
