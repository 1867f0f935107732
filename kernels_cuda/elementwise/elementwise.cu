// The CUDA elementwise family: joins the tables of its parts (unary.cu, binary.cu, cast.cu),
// which are separate files so that they compile in parallel.
#include "kernels_cuda/elementwise/ew.cuh"

extern "C" const kernel *cuda_family_elementwise(size_t *count) {
    enum { CAP = 256 };
    static kernel all[CAP];
    // a function-local static: initialized once, safely, whoever asks first
    static const size_t n = [] {
        const kernel *(*parts[])(size_t *) = {ew_unary_entries, ew_binary_entries,
                                              ew_cast_entries};
        size_t k = 0;
        for (auto part : parts) {
            size_t m = 0;
            const kernel *e = part(&m);
            for (size_t i = 0; i < m && k < CAP; i++) all[k++] = e[i];
        }
        return k;
    }();
    *count = n;
    return all;
}
