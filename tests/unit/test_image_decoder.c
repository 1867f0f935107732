/* Unit tests for ImageDecoder's codecs (kernels_cpu/image_decoder_*.c): images encoded here with
 * the same libraries decode back, and every truncation and many corruptions of them are refused
 * with an error and nothing allocated, never a crash (run under ASan to see leaks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/encode.h>

#include "kernels_cpu/string/image_decoder.h"

enum { W = 19, H = 13 };

typedef onyx_status (*decode_fn)(const uint8_t *data, size_t len, cpu_image *img);

static void gradient(uint8_t *rgb) {
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *p = rgb + (y * W + x) * 3;
            p[0] = (uint8_t)(x * 13);
            p[1] = (uint8_t)(y * 19);
            p[2] = (uint8_t)(100 + x * y / 2);
        }
}

static uint8_t *encode_jpeg(const uint8_t *rgb, size_t *len) {
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char *out = NULL;
    unsigned long n = 0;
    jpeg_mem_dest(&c, &out, &n);
    c.image_width = W;
    c.image_height = H;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 98, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + c.next_scanline * W * 3);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *len = n;
    return out;
}

static uint8_t *encode_png(const uint8_t *rgb, size_t *len) {
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    im.width = W;
    im.height = H;
    im.format = PNG_FORMAT_RGB;
    size_t n = 0;
    assert_true(png_image_write_to_memory(&im, NULL, &n, 0, rgb, 0, NULL));
    uint8_t *out = malloc(n);
    assert_non_null(out);
    assert_true(png_image_write_to_memory(&im, out, &n, 0, rgb, 0, NULL));
    *len = n;
    return out;
}

static uint8_t *encode_webp(const uint8_t *rgb, size_t *len) {
    uint8_t *out = NULL;
    *len = WebPEncodeLosslessRGB(rgb, W, H, W * 3, &out);
    assert_true(*len > 0);
    return out;
}

/* Decodes data; on success checks the size (and pixels within tol when want is given). */
static bool decodes(decode_fn fn, const uint8_t *data, size_t len, const uint8_t *want, int tol) {
    cpu_image img = {NULL, 0, 0};
    onyx_status st = fn(data, len, &img);
    if (st != ONYX_OK) {
        assert_null(img.rgb);
        return false;
    }
    assert_non_null(img.rgb);
    if (want) {
        assert_int_equal(img.width, W);
        assert_int_equal(img.height, H);
        for (int i = 0; i < W * H * 3; i++) {
            int d = img.rgb[i] - want[i];
            if (d < -tol || d > tol) fail_msg("pixel byte %d: got %d, expected %d", i, img.rgb[i], want[i]);
        }
    }
    free(img.rgb);
    return true;
}

/* The whole image decodes; every prefix shorter than `must_fail_below` is refused; no prefix or
 * corrupted copy crashes. */
static void torture(decode_fn fn, const uint8_t *data, size_t len, const uint8_t *want, int tol,
                    size_t must_fail_below) {
    assert_true(decodes(fn, data, len, want, tol));
    for (size_t n = 0; n < len; n++) {
        bool ok = decodes(fn, data, n, NULL, 0);
        if (n < must_fail_below && ok) fail_msg("a prefix of %zu of %zu bytes decoded", n, len);
    }
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    for (size_t i = 0; i < len; i++) {
        for (int flip = 0; flip < 2; flip++) {
            memcpy(copy, data, len);
            copy[i] ^= flip ? 0xFF : 0x10;
            decodes(fn, copy, len, NULL, 0);
        }
    }
    free(copy);
}

static void test_jpeg(void **state) {
    (void)state;
    uint8_t rgb[W * H * 3];
    gradient(rgb);
    size_t len;
    uint8_t *jpg = encode_jpeg(rgb, &len);
    /* lossy: close to the source; and without its end every prefix is a truncated image */
    torture(cpu_img_decode_jpeg, jpg, len, rgb, 24, len);
    free(jpg);
}

/* Adobe-style CMYK (255 = no ink, as libjpeg writes it with an Adobe marker) becomes RGB as in
 * Pillow: a flat color, so that compression changes it by a step at most. */
static void test_jpeg_cmyk(void **state) {
    (void)state;
    static const uint8_t px[4] = {255, 128, 0, 200}, want[3] = {200, 100, 0};
    uint8_t cmyk[W * H * 4];
    for (int i = 0; i < W * H; i++) memcpy(cmyk + 4 * i, px, 4);
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char *out = NULL;
    unsigned long n = 0;
    jpeg_mem_dest(&c, &out, &n);
    c.image_width = W;
    c.image_height = H;
    c.input_components = 4;
    c.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 100, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(cmyk + c.next_scanline * W * 4);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    uint8_t rgb[W * H * 3];
    for (int i = 0; i < W * H; i++) memcpy(rgb + 3 * i, want, 3);
    assert_true(decodes(cpu_img_decode_jpeg, out, n, rgb, 2));
    free(out);
}

static void test_png(void **state) {
    (void)state;
    uint8_t rgb[W * H * 3];
    gradient(rgb);
    size_t len;
    uint8_t *png = encode_png(rgb, &len);
    /* the trailing IEND chunk (12 bytes) is not needed for the pixels */
    torture(cpu_img_decode_png, png, len, rgb, 0, len - 12);
    free(png);
}

static void test_webp(void **state) {
    (void)state;
    uint8_t rgb[W * H * 3];
    gradient(rgb);
    size_t len;
    uint8_t *webp = encode_webp(rgb, &len);
    torture(cpu_img_decode_webp, webp, len, rgb, 0, len);
    WebPFree(webp);
}

static onyx_status decode_j2k(const uint8_t *data, size_t len, cpu_image *img) {
    return cpu_img_decode_jpeg2000(data, len, 1, img);
}

static onyx_status decode_jp2(const uint8_t *data, size_t len, cpu_image *img) {
    return cpu_img_decode_jpeg2000(data, len, 0, img);
}

/* Formats encoded elsewhere: garbage, headers alone and empty input are refused. */
static void test_garbage(void **state) {
    (void)state;
    static const decode_fn fns[] = {cpu_img_decode_jpeg, cpu_img_decode_png, cpu_img_decode_webp,
                                    cpu_img_decode_tiff, decode_j2k, decode_jp2};
    uint8_t junk[512];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)(i * 37 + 11);
    static const uint8_t tiff_head[] = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0, 1, 4, 0, 1, 0,
                                        0, 0, 0xFF, 0xFF, 0, 0};
    static const uint8_t j2k_head[] = {0xFF, 0x4F, 0xFF, 0x51, 0, 41, 0, 0, 0, 0, 0xFF, 0xFF};
    static const uint8_t jp2_head[] = {0, 0, 0, 12, 'j', 'P', ' ', ' ', 13, 10, 0x87, 10, 0, 0, 0,
                                       20, 'f', 't', 'y', 'p'};
    for (size_t k = 0; k < sizeof fns / sizeof *fns; k++) {
        assert_false(decodes(fns[k], junk, 0, NULL, 0));
        assert_false(decodes(fns[k], junk, sizeof junk, NULL, 0));
        assert_false(decodes(fns[k], tiff_head, sizeof tiff_head, NULL, 0));
        assert_false(decodes(fns[k], j2k_head, sizeof j2k_head, NULL, 0));
        assert_false(decodes(fns[k], jp2_head, sizeof jp2_head, NULL, 0));
    }
}

/* The formats read partly by hand (BMP and PNM headers, plain PNM), through the dispatcher. */
static void test_bmp_pnm(void **state) {
    (void)state;
    uint8_t rgb[W * H * 3];
    gradient(rgb);
    /* bottom-up 24-bit BMP, BGR rows padded to 4 bytes */
    size_t stride = (W * 3 + 3) & ~3u, bmp_len = 54 + stride * H;
    uint8_t *bmp = calloc(1, bmp_len);
    assert_non_null(bmp);
    const uint32_t head[] = {(uint32_t)bmp_len, 0, 54, 40, W, H};
    bmp[0] = 'B';
    bmp[1] = 'M';
    for (int k = 0; k < 6; k++)
        for (int b = 0; b < 4; b++) bmp[2 + 4 * k + b] = (uint8_t)(head[k] >> (8 * b));
    bmp[26] = 1;  /* planes */
    bmp[28] = 24; /* bits per pixel */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 3; c++)
                bmp[54 + (size_t)(H - 1 - y) * stride + x * 3 + c] = rgb[(y * W + x) * 3 + 2 - c];
    torture(cpu_img_decode, bmp, bmp_len, rgb, 0, bmp_len);
    free(bmp);

    char head6[32];
    int n = snprintf(head6, sizeof head6, "P6\n%d %d\n255\n", W, H);
    size_t ppm_len = (size_t)n + sizeof rgb;
    uint8_t *ppm = malloc(ppm_len);
    assert_non_null(ppm);
    memcpy(ppm, head6, (size_t)n);
    memcpy(ppm + n, rgb, sizeof rgb);
    torture(cpu_img_decode, ppm, ppm_len, rgb, 0, ppm_len);
    free(ppm);

    /* plain and 16-bit forms: no crash on any prefix or corruption */
    static const char *const plain[] = {"P1 4 2\n0 1 1 0\n1 0 0 1\n", "P2 2 2 9\n1 2\n3 9\n",
                                        "P3 1 2 255\n1 2 3 # c\n4 5 6\n", "P4 9 2\n\xAA\x80\x55\x01",
                                        "P5 2 1 1000\n\x01\x02\x03\xE8", "P6 1 1 65535\n\x12\x34\x56\x78\x9A\xBC"};
    for (size_t k = 0; k < sizeof plain / sizeof *plain; k++) {
        size_t len = strlen(plain[k]); /* the binary tails hold no NUL byte */
        torture(cpu_img_decode, (const uint8_t *)plain[k], len, NULL, 0, 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jpeg),
        cmocka_unit_test(test_jpeg_cmyk),
        cmocka_unit_test(test_png),
        cmocka_unit_test(test_webp),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_bmp_pnm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
