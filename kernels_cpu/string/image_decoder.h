/* The codecs behind ImageDecoder: each decodes one format from memory into 8-bit RGB, refusing
 * corrupt or truncated data with an error (never a crash), and images past the pixel limit. */
#ifndef ONYX_KERNELS_CPU_IMAGE_DECODER_H
#define ONYX_KERNELS_CPU_IMAGE_DECODER_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Pillow's decompression-bomb limit (2 x Image.MAX_IMAGE_PIXELS): the reference refuses larger
 * images, and a few bytes of header must not make us allocate gigabytes. */
#define CPU_IMG_MAX_PIXELS 178956970LL

/* A decoded image: rows of width * 3 bytes, R G B; `rgb` is malloc'd, the caller frees it. */
typedef struct cpu_image {
    uint8_t *rgb;
    int64_t width, height;
} cpu_image;

/* Checks the size a header gives before anything is allocated for it. */
onyx_status cpu_img_check_size(const char *format, int64_t width, int64_t height);

/* Allocates img->rgb for width x height (after cpu_img_check_size). */
onyx_status cpu_img_alloc(cpu_image *img, int64_t width, int64_t height);

/* Any supported format, found from the leading bytes. Fills *img on success; on failure *img is
 * left empty. */
onyx_status cpu_img_decode(const uint8_t *data, size_t len, cpu_image *img);

/* One format each, same contract. */
onyx_status cpu_img_decode_jpeg(const uint8_t *data, size_t len, cpu_image *img);
onyx_status cpu_img_decode_png(const uint8_t *data, size_t len, cpu_image *img);
onyx_status cpu_img_decode_tiff(const uint8_t *data, size_t len, cpu_image *img);
onyx_status cpu_img_decode_webp(const uint8_t *data, size_t len, cpu_image *img);
/* codestream: a raw JPEG 2000 codestream (.j2k) rather than the JP2 file format */
onyx_status cpu_img_decode_jpeg2000(const uint8_t *data, size_t len, int codestream,
                                    cpu_image *img);

#endif
