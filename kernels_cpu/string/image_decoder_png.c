/* PNG for ImageDecoder through libpng: palette, gray, 16-bit and alpha images become 8-bit RGB
 * (16-bit keeps the high byte and alpha is dropped, as Pillow's RGB modes do). libpng reports
 * errors by longjmp to the setjmp of its png_jmpbuf; warnings are silenced. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "kernels_cpu/string/image_decoder.h"

typedef struct png_ctx {
    const uint8_t *data;
    size_t len, pos;
    char msg[200];
    /* what must be freed after a longjmp lives here, not in locals that setjmp may not keep */
    uint8_t *rgb;
    png_bytep *rows;
    onyx_status size_st; /* a size refusal, reported as itself rather than as a libpng error */
} png_ctx;

static void on_error(png_structp png, png_const_charp msg) {
    png_ctx *ctx = png_get_error_ptr(png);
    snprintf(ctx->msg, sizeof ctx->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

static void read_bytes(png_structp png, png_bytep out, size_t n) {
    png_ctx *ctx = png_get_io_ptr(png);
    if (n > ctx->len - ctx->pos) png_error(png, "the data ends early (truncated image)");
    memcpy(out, ctx->data + ctx->pos, n);
    ctx->pos += n;
}

onyx_status cpu_img_decode_png(const uint8_t *data, size_t len, cpu_image *img) {
    png_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.data = data;
    ctx.len = len;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, on_error, on_warning);
    if (!png) return onyx_oom("PNG decoder");
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return onyx_oom("PNG decoder");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(ctx.rows);
        free(ctx.rgb);
        if (ctx.size_st != ONYX_OK) return ctx.size_st;
        return onyx_error(ONYX_ERR_RUNTIME, "cannot decode the PNG image: %s", ctx.msg);
    }
    png_set_read_fn(png, &ctx, read_bytes);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    if ((ctx.size_st = cpu_img_check_size("PNG", w, h)) != ONYX_OK)
        png_error(png, "too large");
    int color = png_get_color_type(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_gray_to_rgb(png);
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)w * 3)
        png_error(png, "unexpected row size after conversion to RGB");
    ctx.rgb = malloc((size_t)w * (size_t)h * 3);
    ctx.rows = malloc((size_t)h * sizeof *ctx.rows);
    if (!ctx.rgb || !ctx.rows) {
        snprintf(ctx.msg, sizeof ctx.msg, "out of memory");
        ctx.size_st = onyx_oom("decoded PNG image");
        png_longjmp(png, 1);
    }
    for (png_uint_32 y = 0; y < h; y++) ctx.rows[y] = ctx.rgb + (size_t)y * w * 3;
    png_read_image(png, ctx.rows);
    png_destroy_read_struct(&png, &info, NULL);
    free(ctx.rows);
    img->rgb = ctx.rgb;
    img->width = w;
    img->height = h;
    return ONYX_OK;
}
