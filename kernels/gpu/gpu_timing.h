/*
 * kernels/gpu/gpu_timing.h: device time by CUDA events, shared by the mlp, cnn and precision device
 * variants (kernels/mlp/mlp_cuda.cu, kernels/cnn/cnn_cuda.cu, kernels/precision/prec_cuda.cu). Two
 * tools, neither of which waits in a step:
 *
 *   - gpu_spans: a log of event pairs (begin, end) recorded on a stream around work of one kind (the
 *     host-to-device copies of a step, its kernels, a read-back). gpu_spans_take, called where the
 *     stream has drained anyway (after the epoch's sync), sums the pairs' elapsed times and empties the
 *     log: every span is measured, nothing is sampled or extrapolated. Events are created ahead
 *     (gpu_spans_create's reserve) and reused; the log holds at most GPU_SPANS_MAX pairs between
 *     takes, past which it stops recording and the next take says so (-1).
 *   - gpu_marks: the boundaries of a step's phases (n + 1 events) recorded on every `every`-th step.
 *     gpu_marks_poll gives a completed sample's n phase times without waiting (cudaEventQuery), once;
 *     gpu_marks_last waits for the last sample (outside timing: the records' device_*_ms metrics).
 *
 * Calls return 0 (poll: 1 when it gave a sample) or a cudaError_t value (> 0): gpu_timing_error says
 * what it means. A C header: the study code never includes it, only the .cu files.
 */
#ifndef SL_KERNELS_GPU_TIMING_H
#define SL_KERNELS_GPU_TIMING_H

#ifdef __cplusplus
extern "C" {
#endif

#define GPU_SPANS_MAX (1L << 17) /* pairs between two takes (an epoch of batch 1 on 60 000 rows fits) */
#define GPU_MARKS_MAX 8          /* phases of a step */

typedef struct gpu_spans gpu_spans;
typedef struct gpu_marks gpu_marks;

/* A log with `reserve` pairs' events created now (at most GPU_SPANS_MAX); NULL with *rc set. */
gpu_spans *gpu_spans_create(long reserve, int *rc);
void gpu_spans_destroy(gpu_spans *s);
/* Records the next pair's begin / end on stream (a cudaStream_t). An end without a begin is ignored;
 * past GPU_SPANS_MAX pairs both record nothing and mark the log overflowed. A NULL log (spans switched
 * off) records nothing; drop ignores it and take gives -1. */
int gpu_spans_begin(gpu_spans *s, void *stream);
int gpu_spans_end(gpu_spans *s, void *stream);
/* *ms = the sum of the closed pairs' elapsed times since the last take (waits for the last end event,
 * which has completed where the stream was synchronised), then empties the log. -1 (and *ms = NAN)
 * when the log overflowed or a pair was left open; a cudaError_t when reading failed. */
int gpu_spans_take(gpu_spans *s, double *ms);
/* Empties the log without reading it (before a repetition: what a check or warm-up left). */
void gpu_spans_drop(gpu_spans *s);
/* The same for each of n logs; destroy_all also sets each to NULL (a NULL log records nothing: how a
 * device variant switches its spans off). */
void gpu_spans_drop_all(gpu_spans **s, int n);
void gpu_spans_destroy_all(gpu_spans **s, int n);

/* n phases (1..GPU_MARKS_MAX), sampled on every `every`-th step from the first; NULL with *rc. */
gpu_marks *gpu_marks_create(int n, int every, int *rc);
void gpu_marks_destroy(gpu_marks *m);
/* Boundary i of the step on stream: i = 0 before the first phase (it decides whether this step is
 * sampled), i = 1..n after phase i. Records only on sampled steps. */
int gpu_marks_mark(gpu_marks *m, int i, void *stream);
/* When a sampled step has ended on the device and was not polled yet: ms[0..n) and 1; else 0 (no
 * waiting); a cudaError_t when reading failed. */
int gpu_marks_poll(gpu_marks *m, double *ms);
/* The last sample's ms[0..n), waiting for it: 0, -1 when no sampled step has ended (ms NAN), or a
 * cudaError_t. */
int gpu_marks_last(gpu_marks *m, double *ms);

const char *gpu_timing_error(int rc);

#ifdef __cplusplus
}
#endif

#endif
