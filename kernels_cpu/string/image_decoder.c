/* CPU kernel of ImageDecoder: finds the format from the leading (magic) bytes, decodes to RGB
 * with that format's library (image_decoder_*.c) and writes RGB, BGR or Pillow's "L" grayscale as
 * height x width x channels uint8. Undecodable bytes are an error naming the format and why. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if ONYX_WITH_CODECS
#include <stb/stb_image.h>
#endif

#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/string/image_decoder.h"

onyx_status cpu_img_check_size(const char *format, int64_t width, int64_t height) {
    if (width <= 0 || height <= 0)
        return onyx_error(ONYX_ERR_RUNTIME, "%s image has size %lld x %lld, expected a positive "
                          "width and height", format, (long long)width, (long long)height);
    if (width > CPU_IMG_MAX_PIXELS / height)
        return onyx_error(ONYX_ERR_RUNTIME, "%s image of %lld x %lld pixels is larger than the "
                          "limit of %lld pixels", format, (long long)width, (long long)height,
                          CPU_IMG_MAX_PIXELS);
    return ONYX_OK;
}

onyx_status cpu_img_alloc(cpu_image *img, int64_t width, int64_t height) {
    img->rgb = malloc((size_t)width * (size_t)height * 3);
    if (!img->rgb) return onyx_oom("decoded image");
    img->width = width;
    img->height = height;
    return ONYX_OK;
}

#if ONYX_WITH_CODECS
/* BMP and binary PNM through stb_image. */
static onyx_status decode_stb(const char *format, const uint8_t *data, size_t len,
                              cpu_image *img) {
    if (len > INT_MAX)
        return onyx_error(ONYX_ERR_RUNTIME, "%s image of %zu bytes is too large", format, len);
    int w, h, comp;
    if (!stbi_info_from_memory(data, (int)len, &w, &h, &comp))
        return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the %s image: %s", format,
                          stbi_failure_reason());
    TRY(cpu_img_check_size(format, w, h));
    stbi_uc *px = stbi_load_from_memory(data, (int)len, &w, &h, &comp, 3);
    if (!px)
        return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the %s image: %s", format,
                          stbi_failure_reason());
    onyx_status st = cpu_img_check_size(format, w, h);
    if (st == ONYX_OK) st = cpu_img_alloc(img, w, h);
    if (st == ONYX_OK) memcpy(img->rgb, px, (size_t)w * (size_t)h * 3);
    stbi_image_free(px);
    return st;
}

/* ---- BMP and PNM: stb_image reads past the end of the data as zeros, so a truncated file would
 * decode as a partly black image; the headers are checked here against the data's length. */

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }

static onyx_status truncated(const char *format, size_t len, uint64_t need) {
    return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the %s image: the data ends early "
                      "(truncated: %zu bytes, the header needs %llu)", format, len,
                      (unsigned long long)need);
}

static onyx_status decode_bmp(const uint8_t *d, size_t len, cpu_image *img) {
    if (len < 18) return truncated("BMP", len, 18);
    uint32_t offset = le32(d + 10), info = le32(d + 14);
    if (info != 12 && info < 40)
        return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the BMP image: info header of %u "
                          "bytes, expected 12 or at least 40", info);
    if (len < 14 + (uint64_t)info) return truncated("BMP", len, 14 + (uint64_t)info);
    int64_t w, h;
    uint32_t bpp, compression = 0;
    if (info == 12) {
        w = le16(d + 18);
        h = le16(d + 20);
        bpp = le16(d + 24);
    } else {
        w = (int32_t)le32(d + 18);
        h = (int32_t)le32(d + 22);
        bpp = le16(d + 28);
        compression = le32(d + 30);
    }
    if (h < 0) h = -h; /* top-down rows */
    TRY(cpu_img_check_size("BMP", w, h));
    /* uncompressed and bit-field pixels: whole rows padded to 4 bytes (RLE: stb refuses it) */
    if (compression == 0 || compression == 3 || compression == 6) {
        uint64_t stride = ((uint64_t)w * bpp + 31) / 32 * 4;
        if (stride > (UINT64_MAX - offset) / (uint64_t)h) return truncated("BMP", len, UINT64_MAX);
        uint64_t need = offset + stride * (uint64_t)h;
        if (need > len) return truncated("BMP", len, need);
    }
    return decode_stb("BMP", d, len, img);
}

static bool pnm_space(uint8_t c) { return c == ' ' || (c >= 9 && c <= 13); }

/* Reads one header number of a PNM file (after whitespace and # comments) at *i. */
static bool pnm_number(const uint8_t *d, size_t len, size_t *i, uint32_t *out) {
    for (;;) {
        while (*i < len && pnm_space(d[*i])) ++*i;
        if (*i < len && d[*i] == '#') {
            while (*i < len && d[*i] != '\n' && d[*i] != '\r') ++*i;
            continue;
        }
        break;
    }
    uint64_t v = 0;
    size_t start = *i;
    while (*i < len && d[*i] >= '0' && d[*i] <= '9') {
        v = v * 10 + (uint64_t)(d[*i] - '0');
        if (v > UINT32_MAX) return false;
        ++*i;
    }
    *out = (uint32_t)v;
    return *i > start;
}

/* Pillow's scaling of a sample from 0..maxval to 0..255: round(v / maxval * 255), half to even
 * as Python rounds (nearbyint in the default rounding mode). */
static uint8_t pnm_scale(uint32_t v, uint32_t maxval) {
    if (maxval == 255) return (uint8_t)v;
    return (uint8_t)nearbyint((double)(v < maxval ? v : maxval) / maxval * 255.0);
}

/* The plain (ASCII) formats P1-P3 and the packed bitmap P4, which stb_image does not read;
 * `i` is at the whitespace that ends the header. In bitmaps 1 is black. */
static onyx_status decode_pnm_plain(const uint8_t *d, size_t len, size_t i, uint32_t w,
                                    uint32_t h, uint32_t maxval, cpu_image *img) {
    char kind = (char)d[1];
    size_t n = (size_t)w * h, row = (w + 7) / 8;
    /* data starts after one whitespace; each plain sample takes at least one byte: a header
     * alone is refused before the pixels are allocated */
    uint64_t start = i + 1, least = kind == '4'   ? (uint64_t)row * h
                                   : kind == '3' ? (uint64_t)n * 3
                                                 : n;
    if (start > len || len - start < least) return truncated("PNM", len, start + least);
    i = start;
    TRY(cpu_img_alloc(img, w, h));
    onyx_status st = ONYX_OK;
    if (kind == '4') {
        for (size_t k = 0; k < n; k++) {
            size_t y = k / w, x = k % w;
            bool black = (d[i + y * row + x / 8] >> (7 - x % 8)) & 1;
            memset(img->rgb + 3 * k, black ? 0 : 255, 3);
        }
        goto done;
    }
    for (size_t k = 0; k < n * (kind == '3' ? 3 : 1); k++) {
        uint32_t v;
        if (kind == '1') {
            /* one digit per pixel, with or without whitespace between them */
            while (i < len && (pnm_space(d[i]) || d[i] == '#')) {
                if (d[i] == '#')
                    while (i < len && d[i] != '\n' && d[i] != '\r') i++;
                else i++;
            }
            if (i >= len || (d[i] != '0' && d[i] != '1')) {
                st = onyx_error(ONYX_ERR_RUNTIME, "cannot decode the PNM image: pixel %zu of "
                                "the bitmap is missing or not 0 or 1", k);
                goto done;
            }
            memset(img->rgb + 3 * k, d[i++] == '1' ? 0 : 255, 3);
            continue;
        }
        if (!pnm_number(d, len, &i, &v) || v > maxval) {
            st = onyx_error(ONYX_ERR_RUNTIME, "cannot decode the PNM image: sample %zu is "
                            "missing, malformed or above maxval %u", k, maxval);
            goto done;
        }
        if (kind == '3') img->rgb[k] = pnm_scale(v, maxval);
        else memset(img->rgb + 3 * k, pnm_scale(v, maxval), 3);
    }
done:
    if (st != ONYX_OK) {
        free(img->rgb);
        img->rgb = NULL;
    }
    return st;
}

/* Binary graymaps and pixmaps (P5, P6) of 8-bit samples decode with stb_image, samples then
 * scaled from maxval to 0..255 as Pillow does. 16-bit samples are read here: this stb_image copies
 * them in the machine's byte order, not PNM's big-endian one, and then converts channels as if
 * they were 8-bit. Pillow keeps the high byte of a 65535 maximum. P1-P4 are read here too. */
static onyx_status decode_pnm(const uint8_t *d, size_t len, cpu_image *img) {
    size_t i = 2;
    bool bitmap = d[1] == '1' || d[1] == '4';
    uint32_t w, h, maxval = 1;
    if (!pnm_number(d, len, &i, &w) || !pnm_number(d, len, &i, &h) ||
        (!bitmap && !pnm_number(d, len, &i, &maxval)) || i >= len || !pnm_space(d[i]))
        return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the PNM image: the header (width, "
                          "height%s) is malformed or truncated", bitmap ? "" : ", maxval");
    if (maxval < 1 || maxval > 65535)
        return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the PNM image: maxval %u, expected 1 "
                          "to 65535", maxval);
    TRY(cpu_img_check_size("PNM", w, h));
    if (d[1] < '5') return decode_pnm_plain(d, len, i, w, h, maxval, img);
    int ch = d[1] == '6' ? 3 : 1;
    uint64_t need = i + 1 + (uint64_t)w * h * (uint64_t)ch * (maxval > 255 ? 2 : 1);
    if (need > len) return truncated("PNM", len, need);
    if (maxval == 255) return decode_stb("PNM", d, len, img);
    if (maxval > 255) {
        TRY(cpu_img_alloc(img, w, h));
        const uint8_t *p = d + i + 1;
        for (size_t k = 0; k < (size_t)w * h; k++)
            for (int c = 0; c < 3; c++) {
                const uint8_t *q = p + 2 * (k * (size_t)ch + (size_t)(ch == 3 ? c : 0));
                uint32_t v = (uint32_t)q[0] << 8 | q[1];
                img->rgb[3 * k + (size_t)c] = maxval == 65535 ? q[0] : pnm_scale(v, maxval);
            }
        return ONYX_OK;
    }
    TRY(decode_stb("PNM", d, len, img));
    for (size_t k = 0; k < (size_t)w * h * 3; k++) img->rgb[k] = pnm_scale(img->rgb[k], maxval);
    return ONYX_OK;
}

typedef enum img_format { F_UNKNOWN, F_JPEG, F_PNG, F_TIFF, F_WEBP, F_JP2, F_J2K, F_BMP, F_PNM } img_format;

static bool starts(const uint8_t *d, size_t len, const char *magic, size_t n) {
    return len >= n && memcmp(d, magic, n) == 0;
}

static img_format detect(const uint8_t *d, size_t len) {
    if (starts(d, len, "\xFF\xD8\xFF", 3)) return F_JPEG;
    if (starts(d, len, "\x89PNG\r\n\x1A\n", 8)) return F_PNG;
    if (starts(d, len, "II*\0", 4) || starts(d, len, "MM\0*", 4) || starts(d, len, "II+\0", 4) ||
        starts(d, len, "MM\0+", 4))
        return F_TIFF;
    if (len >= 12 && starts(d, len, "RIFF", 4) && memcmp(d + 8, "WEBP", 4) == 0) return F_WEBP;
    if (starts(d, len, "\0\0\0\x0CjP  \r\n\x87\n", 12)) return F_JP2;
    if (starts(d, len, "\xFF\x4F\xFF\x51", 4)) return F_J2K;
    if (starts(d, len, "BM", 2)) return F_BMP;
    if (len >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6') return F_PNM;
    return F_UNKNOWN;
}

onyx_status cpu_img_decode(const uint8_t *d, size_t len, cpu_image *img) {
    switch (detect(d, len)) {
    case F_JPEG: return cpu_img_decode_jpeg(d, len, img);
    case F_PNG: return cpu_img_decode_png(d, len, img);
    case F_TIFF: return cpu_img_decode_tiff(d, len, img);
    case F_WEBP: return cpu_img_decode_webp(d, len, img);
    case F_JP2: return cpu_img_decode_jpeg2000(d, len, 0, img);
    case F_J2K: return cpu_img_decode_jpeg2000(d, len, 1, img);
    case F_BMP: return decode_bmp(d, len, img);
    case F_PNM: return decode_pnm(d, len, img);
    case F_UNKNOWN: break;
    }
    char head[3 * 8 + 1] = "";
    for (size_t i = 0; i < len && i < 8; i++) {
        static const char hex[] = "0123456789abcdef";
        head[3 * i] = hex[d[i] >> 4];
        head[3 * i + 1] = hex[d[i] & 15];
        head[3 * i + 2] = i + 1 < len && i + 1 < 8 ? ' ' : 0;
    }
    return onyx_error(ONYX_ERR_RUNTIME, "the %zu bytes are not an image of a known format "
                      "(BMP, JPEG, JPEG 2000, PNG, PNM, TIFF, WebP); they start with [%s]", len,
                      head);
}

#else
/* Built without the image libraries (ONYX_WITH_CODECS=0): the op stays known, every decode says
 * what to install. */
static onyx_status no_codecs(void) {
    return onyx_error(ONYX_ERR_UNSUPPORTED,
                      "ImageDecoder: onyx was built without image codecs (install "
                      "libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev "
                      "libstb-dev and rebuild, or build with ONYX_WITH_CODECS=1)");
}

onyx_status cpu_img_decode(const uint8_t *d, size_t len, cpu_image *img) {
    (void)d, (void)len, (void)img;
    return no_codecs();
}
#define NO_CODEC(fn)                                                                  \
    onyx_status fn(const uint8_t *d, size_t len, cpu_image *img) {                    \
        (void)d, (void)len, (void)img;                                                \
        return no_codecs();                                                           \
    }
NO_CODEC(cpu_img_decode_jpeg)
NO_CODEC(cpu_img_decode_png)
NO_CODEC(cpu_img_decode_tiff)
NO_CODEC(cpu_img_decode_webp)
onyx_status cpu_img_decode_jpeg2000(const uint8_t *d, size_t len, int codestream, cpu_image *img) {
    (void)codestream;
    return cpu_img_decode(d, len, img);
}
#endif

onyx_status cpu_image_decoder_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    if (!x || x->dtype != ONYX_UINT8)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has type %s, expected uint8",
                          x ? onyx_dtype_name(x->dtype) : "(none)");
    const char *fmt = attr_string(c->node, "pixel_format", "RGB");
    int channels = strcmp(fmt, "Grayscale") == 0 ? 1 : 3;
    bool bgr = strcmp(fmt, "BGR") == 0;
    if (channels == 3 && !bgr && strcmp(fmt, "RGB") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "pixel_format is '%s', expected RGB, BGR or Grayscale", fmt);
    if (x->numel == 0) return onyx_error(ONYX_ERR_RUNTIME, "the encoded image is empty");
    cpu_image img = {NULL, 0, 0};
    onyx_status st = ONYX_OK;
    CHECK(cpu_img_decode(x->data, (size_t)x->numel, &img));
    int64_t dims[3] = {img.height, img.width, channels};
    CHECK(value_alloc_tensor(c->out[0], ONYX_UINT8, 3, dims));
    uint8_t *y = c->out[0]->t.data;
    const uint8_t *p = img.rgb;
    int64_t n = img.width * img.height;
    if (channels == 1) {
        /* Pillow's RGB -> L: ITU-R 601-2 luma in 16-bit fixed point, rounded */
        for (int64_t i = 0; i < n; i++, p += 3)
            y[i] = (uint8_t)((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
    } else if (bgr) {
        for (int64_t i = 0; i < n; i++, p += 3, y += 3) {
            y[0] = p[2];
            y[1] = p[1];
            y[2] = p[0];
        }
    } else {
        memcpy(y, p, (size_t)n * 3);
    }
done:
    free(img.rgb);
    return st;
}
