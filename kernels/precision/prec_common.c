/* kernels/precision/prec_common.c: the workspace and weight layouts shared by the precision rows, and
 * the scalar conversions exported for tests. */
#include "precision_kernels.h"
#include "prec_convert.h"

static size_t up64(size_t bytes) { return (bytes + 63) / 64 * 64; }

size_t prec_ws_bytes(const mlp_dims *d, int B)
{
    size_t wt = (size_t)d->n1 * d->n2 > (size_t)d->n2 * d->n3 ? (size_t)d->n1 * d->n2 : (size_t)d->n2 * d->n3;
    return up64(mlp_ws_floats(d, B) * sizeof(float)) + up64((size_t)B * d->n0 * 2) +
           up64((size_t)B * d->n1 * 2) + up64((size_t)B * d->n2 * 2) + up64(wt * sizeof(float));
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
}

/* An interleaved W has its rows rounded up to an even count (the odd row's partner is zero). */
static size_t pairs_elems(int n_in, int n_out) { return (size_t)(n_in + 1) / 2 * 2 * (size_t)n_out; }

size_t prec_pairs_offset(const mlp_dims *d, int layer)
{
    size_t off = mlp_layout_of(d).n;
    if (layer > 0)
        off += pairs_elems(d->n0, d->n1);
    if (layer > 1)
        off += pairs_elems(d->n1, d->n2);
    return off;
}

size_t prec_qweights_elems(const mlp_dims *d) { return prec_pairs_offset(d, 2) + pairs_elems(d->n2, d->n3); }

uint16_t prec_to_bf16(float x) { return prec_f32_to_bf16(x); }
float prec_from_bf16(uint16_t h) { return prec_bf16_to_f32(h); }
uint16_t prec_to_f16(float x) { return prec_f32_to_f16(x); }
float prec_from_f16(uint16_t h) { return prec_f16_to_f32(h); }
