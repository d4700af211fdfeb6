/* kernels/precision/prec_common.c: the workspace and weight layouts shared by the precision rows, and
 * the scalar conversions exported for tests. */
#include "precision_kernels.h"
#include "prec_dp.h"
#include "prec_fp16n.h"

#include <stdio.h>

static size_t up64(size_t bytes) { return (bytes + 63) / 64 * 64; }
static size_t max3(size_t a, size_t b, size_t c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }
static size_t ap_words(const mlp_dims *d, int B) { return (size_t)(B + 1) / 2 * max3(d->n0, d->n1, d->n2); }
static size_t dp_words(const mlp_dims *d, int B) { return (size_t)(B + 1) / 2 * max3(d->n1, d->n2, d->n3); }
static size_t dq_halves(const mlp_dims *d, int B) { return (size_t)B * (max3(d->n1, d->n2, d->n3) + 1); }

size_t prec_ws_bytes(const mlp_dims *d, int B)
{
    size_t wt = (size_t)d->n1 * d->n2 > (size_t)d->n2 * d->n3 ? (size_t)d->n1 * d->n2 : (size_t)d->n2 * d->n3;
    return up64(mlp_ws_floats(d, B) * sizeof(float)) + up64((size_t)B * d->n0 * 2) +
           up64((size_t)B * d->n1 * 2) + up64((size_t)B * d->n2 * 2) + up64(wt * sizeof(float)) +
           up64(ap_words(d, B) * 4) + up64(dp_words(d, B) * 4) + up64(dq_halves(d, B) * 2);
}

void prec_ws_bind(prec_ws *ws, const mlp_dims *d, int B, void *block)
{
    char *p = block;
    mlp_ws_bind(&ws->f, d, B, (float *)p);
    p += up64(mlp_ws_floats(d, B) * sizeof(float));
    ws->xq = (uint16_t *)p;
    p += up64((size_t)B * d->n0 * 2);
    ws->a1q = (uint16_t *)p;
    p += up64((size_t)B * d->n1 * 2);
    ws->a2q = (uint16_t *)p;
    p += up64((size_t)B * d->n2 * 2);
    ws->wt = (float *)p;
    p += up64(((size_t)d->n1 * d->n2 > (size_t)d->n2 * d->n3 ? (size_t)d->n1 * d->n2 : (size_t)d->n2 * d->n3) *
              sizeof(float));
    ws->ap = (uint32_t *)p;
    p += up64(ap_words(d, B) * 4);
    ws->dp = (uint32_t *)p;
    p += up64(dp_words(d, B) * 4);
    ws->dq = (uint16_t *)p;
}

/* An interleaved W has its rows rounded up to an even count (the odd row's partner is zero). */
static size_t pairs_elems(int n_in, int n_out) { return (size_t)(n_in + 1) / 2 * 2 * (size_t)n_out; }

size_t prec_pairs_offset(const mlp_dims *d, int layer)
{
    /* after the plain copy, rounded up to 32 elements (64 bytes): the pair layouts are read and written
     * as 32-bit words, and a layout of odd size would leave them misaligned */
    size_t off = (mlp_layout_of(d).n + 31) / 32 * 32;
    if (layer > 0)
        off += pairs_elems(d->n0, d->n1);
    if (layer > 1)
        off += pairs_elems(d->n1, d->n2);
    return off;
}

/* W^T's pairs follow the interleaved Ws: layer l's ceil(n_out / 2) x n_in words. */
size_t prec_tpairs_offset(const mlp_dims *d, int layer)
{
    size_t off = prec_pairs_offset(d, 2) + pairs_elems(d->n2, d->n3);
    return layer > 1 ? off + pairs_elems(d->n2, d->n1) : off;
}

size_t prec_qweights_elems(const mlp_dims *d) { return prec_tpairs_offset(d, 2) + pairs_elems(d->n3, d->n2); }

/* ---- the paths -------------------------------------------------------------------------------------- */
static int cpu_has(const char *what)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (!strcmp(what, "avx512bf16"))
        return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw");
#if PREC_HAVE_FP16_CODE
    if (!strcmp(what, "avx512fp16"))
        return __builtin_cpu_supports("avx512fp16") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#endif
#else
    (void)what;
#endif
    return 0;
}

int prec_path(int type)
{
    if (type == PT_BF16 && PREC_HAVE_DP_CODE && cpu_has("avx512bf16"))
        return PREC_PATH_BF16DP;
    if (type == PT_F16 && PREC_HAVE_FP16_CODE && cpu_has("avx512fp16"))
        return PREC_PATH_FP16;
    return PREC_PATH_CONVERT;
}

const char *prec_path_name(int path)
{
    static const char *const bits[] = {"", "", "128-bit", "", "256-bit", "", "", "", "512-bit"};
    static char line[3][96];
    const char *w = SIMD_BYTES <= 64 && bits[SIMD_BYTES / 8][0] ? bits[SIMD_BYTES / 8] : "scalar";
    if (path == PREC_PATH_BF16DP)
        snprintf(line[1], sizeof line[1], "vdpbf16ps (AVX512_BF16) forward and backward, %s",
                 PREC_DP_BYTES == 64 ? "512-bit" : "256-bit");
    else if (path == PREC_PATH_FP16)
        snprintf(line[2], sizeof line[2], "native fp16 FMA (AVX512_FP16) forward, %s", w);
    else
        snprintf(line[0], sizeof line[0], "conversions to float32, float32 FMA, %s", w);
    return line[path == PREC_PATH_BF16DP ? 1 : path == PREC_PATH_FP16 ? 2 : 0];
}

const char *prec_cpu_offers(void)
{
    static const char *const names[] = {"avx512bf16", "avx512fp16", "amx-bf16", "f16c"};
    static char line[128];
    char has[64] = "", lacks[64] = "";
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        int yes = 0;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
        __builtin_cpu_init();
        yes = i == 0   ? __builtin_cpu_supports("avx512bf16")
              : i == 1 ? __builtin_cpu_supports("avx512fp16")
              : i == 2 ? __builtin_cpu_supports("amx-bf16")
                       : __builtin_cpu_supports("f16c");
#endif
        char *to = yes ? has : lacks;
        snprintf(to + strlen(to), 64 - strlen(to), "%s%s", *to ? " " : "", names[i]);
    }
    snprintf(line, sizeof line, "%s%s%s", *has ? has : "none of them", *lacks ? "; lacks " : "", lacks);
    return line;
}

uint16_t prec_to_bf16(float x) { return prec_f32_to_bf16(x); }
float prec_from_bf16(uint16_t h) { return prec_bf16_to_f32(h); }
uint16_t prec_to_f16(float x) { return prec_f32_to_f16(x); }
float prec_from_f16(uint16_t h) { return prec_f16_to_f32(h); }
