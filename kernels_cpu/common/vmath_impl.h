/* The body of kernels_cpu/common/vmath.c, written once over a small vector vocabulary (V: floats,
 * M: lane mask, VI: 32-bit ints) and included once per instruction set with those macros and
 * VM(name) / VM_FN / VM_INLINE / VM_TABLE defined (see vmath.c). No include guard on purpose. */

/* ---- cores on one vector */

/* e^r - 1 for |r| <= ln2/2 with r = x - n ln2 (Cephes' expf polynomial; Cody-Waite split of
 * ln 2 whose high part has 9 bits, so n * hi is exact for |n| < 2^15). */
VM_INLINE V VM(expm1_r)(V x, V *n_out) {
    V n = V_ROUND(V_MUL(x, V_SET1(1.44269504088896341f)));
    V r = V_FNMA(n, V_SET1(0.693359375f), x);
    r = V_FNMA(n, V_SET1(-2.12194440e-4f), r);
    V p = V_SET1(1.9875691500e-4f);
    p = V_FMA(p, r, V_SET1(1.3981999507e-3f));
    p = V_FMA(p, r, V_SET1(8.3334519073e-3f));
    p = V_FMA(p, r, V_SET1(4.1665795894e-2f));
    p = V_FMA(p, r, V_SET1(1.6666665459e-1f));
    p = V_FMA(p, r, V_SET1(5.0000001201e-1f));
    *n_out = n;
    return V_FMA(p, V_MUL(r, r), r);
}

/* Clamps keep NaN: x86 min/max return their second operand when either is NaN. Below -104 the
 * result is 0 and above 89 it is inf anyway; V_SCALE rounds subnormal results once. */
VM_INLINE V VM(exp_v)(V x) {
    x = V_MAX(V_SET1(-104.0f), V_MIN(V_SET1(89.0f), x));
    V n, em = VM(expm1_r)(x, &n);
    return V_SCALE(V_ADD(em, V_SET1(1.0f)), n);
}

/* 2^n em + 2^n - 1 as 2 (v em + v - 1/2) with v = 2^(n-1), so n = 128 (x up to 88.72) does not
 * overflow too early; n = 0 is exact (em itself). Below -26 the result is -1, and x itself below
 * 2^-25, which keeps -0 and subnormals exact. */
VM_INLINE V VM(expm1_v)(V x) {
    V xc = V_MAX(V_SET1(-26.0f), V_MIN(V_SET1(89.0f), x));
    V n, em = VM(expm1_r)(xc, &n);
    V v = V_SCALE(V_SET1(0.5f), n);
    V r = V_MUL(V_SET1(2.0f), V_FMA(v, em, V_SUB(v, V_SET1(0.5f))));
    return V_SEL(M_LT(V_ABS(x), V_SET1(0x1p-25f)), x, r);
}

/* Cephes' logf: x = m 2^e with m in [sqrt(1/2), sqrt 2), log(m) = f - f^2/2 + f^3 P(f) with
 * f = m - 1. Subnormals are scaled by 2^23 first; 0, negatives, inf and NaN fixed at the end. */
VM_INLINE V VM(log_v)(V x) {
    M sub = M_LT(x, V_SET1(0x1p-126f));
    V xs = V_SEL(sub, V_MUL(x, V_SET1(0x1p23f)), x);
    VI bits = VI_OF(xs);
    V e = V_CVT_FI(VI_SUB(VI_SRLI(bits, 23), VI_SET1(126)));
    e = V_SEL(sub, V_SUB(e, V_SET1(23.0f)), e);
    V m = V_OF(VI_OR(VI_AND(bits, VI_SET1(0x007fffff)), VI_SET1(0x3f000000))); /* [0.5, 1) */
    M lo = M_LT(m, V_SET1(0.707106781186547524f));
    e = V_SEL(lo, V_SUB(e, V_SET1(1.0f)), e);
    V f = V_SUB(V_SEL(lo, V_ADD(m, m), m), V_SET1(1.0f));
    V z = V_MUL(f, f);
    V p = V_SET1(7.0376836292e-2f);
    p = V_FMA(p, f, V_SET1(-1.1514610310e-1f));
    p = V_FMA(p, f, V_SET1(1.1676998740e-1f));
    p = V_FMA(p, f, V_SET1(-1.2420140846e-1f));
    p = V_FMA(p, f, V_SET1(1.4249322787e-1f));
    p = V_FMA(p, f, V_SET1(-1.6668057665e-1f));
    p = V_FMA(p, f, V_SET1(2.0000714765e-1f));
    p = V_FMA(p, f, V_SET1(-2.4999993993e-1f));
    p = V_FMA(p, f, V_SET1(3.3333331174e-1f));
    V y = V_MUL(V_MUL(p, f), z);
    y = V_FMA(e, V_SET1(-2.12194440e-4f), y);
    y = V_FNMA(z, V_SET1(0.5f), y);
    V r = V_FMA(e, V_SET1(0.693359375f), V_ADD(f, y));
    r = V_SEL(M_EQ(x, V_SET1(INFINITY)), x, r);
    r = V_SEL(M_EQ(x, V_SET1(0.0f)), V_SET1(-INFINITY), r);
    r = V_SEL(M_LT(x, V_SET1(0.0f)), V_SET1(NAN), r);
    return V_SEL(M_NAN(x), x, r);
}

/* tanh|x| = -t / (t + 2) with t = expm1(-2|x|) in [-1, 0]: one formula for every x, no overflow,
 * exact near 0 through expm1; the sign is put back last. */
VM_INLINE V VM(tanh_v)(V x) {
    V ax = V_ABS(x);
    V t = VM(expm1_v)(V_MUL(V_SET1(-2.0f), ax));
    V r = V_DIV(V_SUB(V_SET1(0.0f), t), V_ADD(t, V_SET1(2.0f)));
    return V_OR(r, V_SIGN(x));
}

/* erf|x| - |x| = |x| Q(x^2) for |x| < 1 (a minimax fit of erf(x)/x - 1, relative error 1.2e-9). */
VM_INLINE V VM(erf_small)(V ax) {
    V u = V_MUL(ax, ax);
    V q = V_SET1(7.854026625864208e-05f);
    q = V_FMA(q, u, V_SET1(-0.0008010247838683426f));
    q = V_FMA(q, u, V_SET1(0.005188334733247757f));
    q = V_FMA(q, u, V_SET1(-0.026853816583752632f));
    q = V_FMA(q, u, V_SET1(0.1128358542919159f));
    q = V_FMA(q, u, V_SET1(-0.3761262595653534f));
    q = V_FMA(q, u, V_SET1(0.12837916612625122f));
    return V_FMA(ax, q, ax);
}

/* erfc a = exp(P(a)) for a in [1, 4], P a minimax fit of log erfc on [0.96, 4] (error 6.5e-9;
 * rounding P's value in float leaves erfc within 2.5e-6 relative, erf within 1 ulp); a is clamped
 * to 4, where erf is 1 in float. */
VM_INLINE V VM(erfc_big)(V ax) {
    V a = V_MIN(V_SET1(4.0f), ax);
    V p = V_SET1(-4.1828442931546306e-08f);
    p = V_FMA(p, a, V_SET1(2.5498402465018444e-06f));
    p = V_FMA(p, a, V_SET1(-5.4678661399520934e-05f));
    p = V_FMA(p, a, V_SET1(0.0006429699715226889f));
    p = V_FMA(p, a, V_SET1(-0.004913728218525648f));
    p = V_FMA(p, a, V_SET1(0.02675316296517849f));
    p = V_FMA(p, a, V_SET1(-0.11054065078496933f));
    p = V_FMA(p, a, V_SET1(-0.6314300298690796f));
    p = V_FMA(p, a, V_SET1(-1.1304247379302979f));
    p = V_FMA(p, a, V_SET1(0.0003596805327106267f));
    return VM(exp_v)(p);
}

VM_INLINE V VM(erf_v)(V x) {
    V ax = V_ABS(x);
    M small = M_LT(ax, V_SET1(1.0f));
    V r = VM(erf_small)(ax);
    if (!M_ALL(small)) r = V_SEL(small, r, V_SUB(V_SET1(1.0f), VM(erfc_big)(ax)));
    return V_OR(r, V_SIGN(x));
}

/* e / (1 + e) or 1 / (1 + e) with e = exp(-|x|) <= 1: never overflows, exact tails. */
VM_INLINE V VM(sigmoid_v)(V x) {
    V e = VM(exp_v)(V_SUB(V_SET1(0.0f), V_ABS(x)));
    V num = V_SEL(M_LT(x, V_SET1(0.0f)), e, V_SET1(1.0f));
    return V_DIV(num, V_ADD(V_SET1(1.0f), e));
}

/* erfc a for a > 4 by its asymptotic series e^-a^2 / (a sqrt pi) sum (-1)^k (2k-1)!! / (2a^2)^k,
 * k <= 6: relative error under 1e-5 there, where erfc < 1.6e-8 (Gelu's far negative tail). */
VM_INLINE V VM(erfc_tail)(V a) {
    V a2 = V_MUL(a, a), w = V_DIV(V_SET1(1.0f), a2);
    V s = V_SET1(162.421875f);
    s = V_FMA(s, w, V_SET1(-29.53125f));
    s = V_FMA(s, w, V_SET1(6.5625f));
    s = V_FMA(s, w, V_SET1(-1.875f));
    s = V_FMA(s, w, V_SET1(0.75f));
    s = V_FMA(s, w, V_SET1(-0.5f));
    s = V_FMA(s, w, V_SET1(1.0f));
    V e = VM(exp_v)(V_SUB(V_SET1(0.0f), a2));
    return V_MUL(V_MUL(e, s), V_DIV(V_SET1(0.56418958354775628f), a));
}

/* 0.5 x (1 + erf z), z = x / sqrt 2; for |z| >= 1 through c = erfc|z|, so that the negative tail
 * keeps its relative accuracy (1 + erf z cancels there): x (1 - c/2) or x c / 2. */
VM_INLINE V VM(gelu_v)(V x) {
    V z = V_MUL(x, V_SET1(0.70710678118654752440f));
    V az = V_ABS(z);
    M small = M_LT(az, V_SET1(1.0f));
    V hx = V_MUL(V_SET1(0.5f), x);
    V r = V_FMA(hx, V_OR(VM(erf_small)(az), V_SIGN(z)), hx);
    if (!M_ALL(small)) {
        V c = VM(erfc_big)(az);
        M far = M_LT(z, V_SET1(-4.0f));
        if (M_ANY(far)) c = V_SEL(far, VM(erfc_tail)(az), c);
        V big = V_SEL(M_GT(z, V_SET1(0.0f)), V_MUL(x, V_FNMA(V_SET1(0.5f), c, V_SET1(1.0f))),
                      V_MUL(hx, c));
        r = V_SEL(small, r, big);
    }
    return r;
}

/* 0.5 (1 + tanh w) = sigmoid(2w): no cancellation for negative x. */
VM_INLINE V VM(gelu_tanh_v)(V x) {
    const float k = 1.5957691216057308f; /* 2 sqrt(2/pi) */
    V w = V_MUL(x, V_FMA(V_MUL(x, x), V_SET1(k * 0.044715f), V_SET1(k)));
    return V_MUL(x, VM(sigmoid_v)(w));
}

/* tanh(log(1 + e)) = n / (n + 2) with n = e (e + 2), e = exp x; 1 in float past x = 20. */
VM_INLINE V VM(mish_v)(V x) {
    V e = VM(exp_v)(V_MIN(V_SET1(20.0f), x));
    V n = V_MUL(e, V_ADD(e, V_SET1(2.0f)));
    return V_MUL(x, V_DIV(n, V_ADD(n, V_SET1(2.0f))));
}

/* max(x, 0) + log1p(exp(-|x|)); log1p(t) = log(u) t / (u - 1) with u = 1 + t corrects u's
 * rounding (Goldberg), t itself when u rounds to 1. */
VM_INLINE V VM(softplus_v)(V x) {
    V t = VM(exp_v)(V_SUB(V_SET1(0.0f), V_ABS(x)));
    V u = V_ADD(V_SET1(1.0f), t);
    V l = V_MUL(VM(log_v)(u), V_DIV(t, V_SUB(u, V_SET1(1.0f))));
    l = V_SEL(M_EQ(u, V_SET1(1.0f)), t, l);
    return V_ADD(V_MAX(V_SET1(0.0f), x), l);
}

/* ---- array drivers: whole vectors, then one masked tail */

/* y[i] = EXPR(v) with v = x[i], over x, y, n in scope */
#define VM_MAP_BODY(EXPR)                                                                          \
    do {                                                                                           \
        int64_t i = 0;                                                                             \
        for (; i + VW <= n; i += VW) {                                                             \
            V v = V_LOAD(x + i);                                                                   \
            V_STORE(y + i, EXPR);                                                                  \
        }                                                                                          \
        if (i < n) {                                                                               \
            M m = M_TAIL(n - i);                                                                   \
            V v = V_LOADN(x + i, m);                                                               \
            V_STOREN(y + i, m, EXPR);                                                              \
        }                                                                                          \
    } while (0)
#define VM_MAP(name, EXPR)                                                                         \
    VM_FN void VM(name)(const float *x, float *y, int64_t n) { VM_MAP_BODY(EXPR); }

VM_MAP(exp_a, VM(exp_v)(v))
VM_MAP(expm1_a, VM(expm1_v)(v))
VM_MAP(log_a, VM(log_v)(v))
VM_MAP(tanh_a, VM(tanh_v)(v))
VM_MAP(erf_a, VM(erf_v)(v))
VM_MAP(sigmoid_a, VM(sigmoid_v)(v))
VM_MAP(gelu_a, VM(gelu_v)(v))
VM_MAP(gelu_tanh_a, VM(gelu_tanh_v)(v))
VM_MAP(mish_a, VM(mish_v)(v))
VM_MAP(softplus_a, VM(softplus_v)(v))

VM_FN void VM(swish_a)(const float *x, float *y, int64_t n, float alpha) {
    const V a = V_SET1(alpha);
    VM_MAP_BODY(V_MUL(v, VM(sigmoid_v)(V_MUL(a, v))));
}

VM_FN void VM(elu_a)(const float *x, float *y, int64_t n, float alpha, float gamma, float s) {
    const V g = V_SET1(gamma), ga = V_SET1(gamma * alpha), sc = V_SET1(s);
    VM_MAP_BODY(V_SEL(M_GT(v, V_SET1(0.0f)), V_MUL(g, v), V_MUL(ga, VM(expm1_v)(V_MUL(v, sc)))));
}

VM_FN void VM(hard_a)(const float *x, float *y, int64_t n, float alpha, float beta, int mul_x) {
    const V a = V_SET1(alpha), b = V_SET1(beta), one = V_SET1(1.0f), zero = V_SET1(0.0f);
    if (mul_x) {
        VM_MAP_BODY(V_MUL(v, V_MAX(zero, V_MIN(one, V_FMA(a, v, b)))));
    } else {
        VM_MAP_BODY(V_MAX(zero, V_MIN(one, V_FMA(a, v, b))));
    }
}

VM_FN float VM(max_a)(const float *x, int64_t n) {
    V acc = V_SET1(-INFINITY);
    M nan = M_NONE;
    int64_t i = 0;
    for (; i + VW <= n; i += VW) {
        V v = V_LOAD(x + i);
        nan = M_OR(nan, M_NAN(v));
        acc = V_MAX(acc, v);
    }
    if (i < n) {
        M m = M_TAIL(n - i);
        V v = V_SEL(m, V_LOADN(x + i, m), V_SET1(-INFINITY));
        nan = M_OR(nan, M_NAN(v));
        acc = V_MAX(acc, v);
    }
    return M_ANY(nan) ? NAN : V_HMAX(acc);
}

VM_FN float VM(exp_sum_a)(const float *x, float *y, int64_t n, float sub) {
    const V s = V_SET1(sub);
    V acc = V_SET1(0.0f);
    int64_t i = 0;
    for (; i + VW <= n; i += VW) {
        V e = VM(exp_v)(V_SUB(V_LOAD(x + i), s));
        if (y) V_STORE(y + i, e);
        acc = V_ADD(acc, e);
    }
    if (i < n) {
        M m = M_TAIL(n - i);
        V e = VM(exp_v)(V_SUB(V_LOADN(x + i, m), s));
        if (y) V_STOREN(y + i, m, e);
        acc = V_ADD(acc, V_SEL(m, e, V_SET1(0.0f)));
    }
    return V_HSUM(acc);
}

VM_FN void VM(affine_a)(const float *x, float *y, int64_t n, float a_, float b_) {
    const V a = V_SET1(a_), b = V_SET1(b_);
    VM_MAP_BODY(V_FMA(a, v, b));
}

static const cpu_vmath VM_TABLE = {
    .name = VM_NAME,
    .exp = VM(exp_a),
    .expm1 = VM(expm1_a),
    .log = VM(log_a),
    .tanh = VM(tanh_a),
    .erf = VM(erf_a),
    .sigmoid = VM(sigmoid_a),
    .gelu = VM(gelu_a),
    .gelu_tanh = VM(gelu_tanh_a),
    .mish = VM(mish_a),
    .softplus = VM(softplus_a),
    .swish = VM(swish_a),
    .elu = VM(elu_a),
    .hard = VM(hard_a),
    .max = VM(max_a),
    .exp_sum = VM(exp_sum_a),
    .affine = VM(affine_a),
};

#undef VM_MAP
#undef VM_MAP_BODY

/* the path's macros, undefined so that the next path can define its own */
#undef V
#undef M
#undef VI
#undef VW
#undef V_SET1
#undef V_LOAD
#undef V_STORE
#undef M_TAIL
#undef V_LOADN
#undef V_STOREN
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_DIV
#undef V_FMA
#undef V_FNMA
#undef V_MIN
#undef V_MAX
#undef V_ABS
#undef V_SIGN
#undef V_OR
#undef V_ROUND
#undef V_SCALE
#undef V_SEL
#undef M_LT
#undef M_GT
#undef M_EQ
#undef M_NAN
#undef M_OR
#undef M_ANY
#undef M_ALL
#undef M_NONE
#undef V_HSUM
#undef V_HMAX
#undef VI_OF
#undef V_OF
#undef V_CVT_FI
#undef VI_SUB
#undef VI_SRLI
#undef VI_SET1
#undef VI_OR
#undef VI_AND
#undef VM
#undef VM_FN
#undef VM_INLINE
#undef VM_TABLE
#undef VM_NAME
