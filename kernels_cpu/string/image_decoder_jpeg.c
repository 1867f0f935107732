/* JPEG for ImageDecoder through libjpeg(-turbo) with its defaults (islow IDCT, fancy upsampling),
 * as Pillow decodes. libjpeg reports errors by longjmp out of our error manager; truncated data,
 * which libjpeg only warns about (and pads with gray), is an error too, as in Pillow. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "kernels_cpu/string/image_decoder.h"

typedef struct jpeg_ctx {
    struct jpeg_error_mgr mgr; /* first: libjpeg hands back a pointer to it */
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
    /* what must be freed after a longjmp lives here, not in locals that setjmp may not keep */
    uint8_t *rgb;
    uint8_t *cmyk_row;
} jpeg_ctx;

static void on_error(j_common_ptr cinfo) {
    jpeg_ctx *ctx = (jpeg_ctx *)cinfo->err;
    cinfo->err->format_message(cinfo, ctx->msg);
    longjmp(ctx->jump, 1);
}

/* Never prints; the warning that data ended early is fatal. */
static void on_message(j_common_ptr cinfo, int level) {
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) on_error(cinfo);
}

onyx_status cpu_img_decode_jpeg(const uint8_t *data, size_t len, cpu_image *img) {
    struct jpeg_decompress_struct cinfo;
    jpeg_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    cinfo.err = jpeg_std_error(&ctx.mgr);
    ctx.mgr.error_exit = on_error;
    ctx.mgr.emit_message = on_message;
    if (setjmp(ctx.jump)) {
        jpeg_destroy_decompress(&cinfo);
        free(ctx.rgb);
        free(ctx.cmyk_row);
        return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the JPEG image: %s", ctx.msg);
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)len);
    jpeg_read_header(&cinfo, TRUE);
    bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    /* libjpeg turns grayscale and YCbCr into RGB itself; CMYK it can only hand over as is */
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    onyx_status st = cpu_img_check_size("JPEG", cinfo.image_width, cinfo.image_height);
    if (st != ONYX_OK) {
        jpeg_destroy_decompress(&cinfo);
        return st;
    }
    jpeg_start_decompress(&cinfo);
    int64_t w = cinfo.output_width, h = cinfo.output_height;
    if (!(ctx.rgb = malloc((size_t)w * (size_t)h * 3)) ||
        (cmyk && !(ctx.cmyk_row = malloc((size_t)w * 4)))) {
        jpeg_destroy_decompress(&cinfo);
        free(ctx.rgb);
        return onyx_oom("decoded JPEG image");
    }
    /* Adobe writes CMYK inverted (255 = no ink), which is what the marker tells */
    bool inverted = cinfo.saw_Adobe_marker;
    while (cinfo.output_scanline < cinfo.output_height) {
        uint8_t *row = ctx.rgb + (size_t)cinfo.output_scanline * (size_t)w * 3;
        JSAMPROW rows[1] = {cmyk ? ctx.cmyk_row : row};
        jpeg_read_scanlines(&cinfo, rows, 1);
        if (!cmyk) continue;
        for (int64_t x = 0; x < w; x++) {
            const uint8_t *q = ctx.cmyk_row + 4 * x;
            /* ink amounts, then Pillow's CMYK -> RGB: (255 - K) - C * (255 - K) / 255, rounded
             * as its MULDIV255 does */
            unsigned nk = inverted ? q[3] : 255u - q[3];
            for (int ch = 0; ch < 3; ch++) {
                unsigned ink = inverted ? 255u - q[ch] : q[ch], t = ink * nk + 128;
                row[3 * x + ch] = (uint8_t)(nk - (((t >> 8) + t) >> 8));
            }
        }
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    free(ctx.cmyk_row);
    img->rgb = ctx.rgb;
    img->width = w;
    img->height = h;
    return ONYX_OK;
}
