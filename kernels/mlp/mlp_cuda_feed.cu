/*
 * kernels/mlp/mlp_cuda_feed.cu: the host-fed steps of the mlp device variants (mlp_cuda.h, seed 003,
 * part 5): the batch's rows gathered on the host and copied each step, synchronously from pageable
 * memory on the compute stream, or from pinned slots on a second stream that overlaps the last step.
 * Their copies are the MLP_SPAN_H2D spans of the record's phases.
 */
#include <stdlib.h>
#include <string.h>

#include "mlp_cuda_impl.h"

/* ---- host-fed steps (seed 003, part 5) ------------------------------------------------------------ */

static size_t slot_bytes(const mlp_cuda *c) { return (size_t)c->max_batch * (size_t)(c->d.n0 + 1); }

void mlp_free_feed(mlp_cuda *c)
{
    if (c->cs)
        cudaStreamSynchronize(c->cs);
    if (c->h_rows && c->feed == MLP_FEED_OVERLAP)
        cudaFreeHost(c->h_rows);
    else
        free(c->h_rows);
    if (c->d_rows) {
        cudaFree(c->d_rows);
        c->bytes -= 2 * slot_bytes(c);
    }
    for (int i = 0; i < 2; i++) {
        if (c->copied[i])
            cudaEventDestroy(c->copied[i]);
        if (c->consumed[i])
            cudaEventDestroy(c->consumed[i]);
        c->copied[i] = c->consumed[i] = NULL;
    }
    if (c->cs)
        cudaStreamDestroy(c->cs);
    c->h_rows = c->d_rows = NULL, c->cs = NULL, c->feed = MLP_FEED_RESIDENT;
}

extern "C" int mlp_cuda_set_feed(mlp_cuda *c, int feed)
{
    if (!c)
        return -1;
    if (feed != MLP_FEED_RESIDENT && feed != MLP_FEED_SYNC && feed != MLP_FEED_OVERLAP)
        return mlp_fail(c, "feed", "want MLP_FEED_RESIDENT (0), MLP_FEED_SYNC (1) or MLP_FEED_OVERLAP (2)");
    CK(cudaStreamSynchronize(c->s), "feed: drain the stream");
    mlp_free_feed(c);
    if (feed == MLP_FEED_RESIDENT)
        return 0;
    size_t n = 2 * slot_bytes(c);
    if (feed == MLP_FEED_OVERLAP)
        CK(cudaMallocHost((void **)&c->h_rows, n), "feed: cudaMallocHost slots");
    else if (!(c->h_rows = (uint8_t *)malloc(n)))
        return mlp_fail(c, "feed", "out of host memory for the slots");
    c->feed = feed; /* from here free_feed frees h_rows the way it was allocated */
    if (mlp_dalloc(c, (void **)&c->d_rows, n, "feed: cudaMalloc slots"))
        return -1;
    CK(cudaStreamCreateWithFlags(&c->cs, cudaStreamNonBlocking), "feed: copy stream");
    for (int i = 0; i < 2; i++) {
        CK(cudaEventCreateWithFlags(&c->copied[i], cudaEventDisableTiming), "feed: event");
        CK(cudaEventCreateWithFlags(&c->consumed[i], cudaEventDisableTiming), "feed: event");
    }
    return 0;
}

extern "C" int mlp_cuda_data_host(mlp_cuda *c, const uint8_t *images, const uint8_t *labels, const int32_t *idx,
                                  int B)
{
    if (!c || mlp_check_B(c, B, "host data"))
        return -1;
    if (c->feed == MLP_FEED_RESIDENT)
        return mlp_fail(c, "host data", "mlp_cuda_set_feed chose no host feed");
    const size_t n0 = (size_t)c->d.n0, lab = (size_t)c->max_batch * n0; /* the labels' offset in a slot */
    c->rslot ^= 1;
    uint8_t *h = c->h_rows + c->rslot * slot_bytes(c), *dv = c->d_rows + c->rslot * slot_bytes(c);
    /* the slot's last copy must have read these host bytes before the host writes them again */
    CK(cudaEventSynchronize(c->copied[c->rslot]), "host data: slot wait");
    for (int b = 0; b < B; b++) {
        memcpy(h + (size_t)b * n0, images + (size_t)idx[b] * n0, n0);
        h[lab + (size_t)b] = labels[idx[b]];
    }
    cudaStream_t cs = c->feed == MLP_FEED_OVERLAP ? c->cs : c->s;
    if (cs != c->s) /* and the device slot must have been gathered from before it is overwritten */
        CK(cudaStreamWaitEvent(cs, c->consumed[c->rslot], 0), "host data: wait for the slot");
    TIMED(gpu_spans_begin(c->span[MLP_SPAN_H2D], cs), "host data: span");
    CK(cudaMemcpyAsync(dv, h, (size_t)B * n0, cudaMemcpyHostToDevice, cs), "host data: copy rows");
    CK(cudaMemcpyAsync(dv + lab, h + lab, (size_t)B, cudaMemcpyHostToDevice, cs), "host data: copy labels");
    TIMED(gpu_spans_end(c->span[MLP_SPAN_H2D], cs), "host data: span");
    CK(cudaEventRecord(c->copied[c->rslot], cs), "host data: event");
    if (cs != c->s)
        CK(cudaStreamWaitEvent(c->s, c->copied[c->rslot], 0), "host data: wait for the copy");
    TIMED(gpu_spans_begin(c->span[MLP_SPAN_KERNEL], c->s), "host data: span"); /* after the wait */
    if (mlp_gather(c, dv, dv + lab, 0, 0, B))
        return -1;
    CK(cudaEventRecord(c->consumed[c->rslot], c->s), "host data: event");
    return 0;
}
