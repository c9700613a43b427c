/* jit/harness/ — `run` and `bench` (include/redjit_check.h), on the public API alone: redjit.h's
 * calls, and ir/'s plain request data (shapes, views, placements).  Never jit/, runtime/ or
 * passes/.  The map:
 *   oracle.c          inputs (RNG, poison), element access, the float64 / exact reference, the
 *                     comparison with the tolerances of docs/CLI.md ("redjit run")
 *   oracle_state.c    the same for argmax argmin var std logsumexp (inputs drawn for them)
 *   frame.c           guarded device buffers, the first failure's note, one element's check,
 *                     argmax / argmin's values against the source
 *   results.c         options over the defaults, results as far as the caller's struct reaches
 *   bench.c           the one bench loop, and a kernel's bench over device buffers
 *   entry.c           rj_check / rj_bench: validate, compile -> load, the kind's run or bench
 *   check_<kind>.c    one kind's run and bench: tile, subgroup, tensor, treduce */
#ifndef RJ_HARNESS_H
#define RJ_HARNESS_H

#include "../../ir/ir.h"
#include "redjit_check.h"
#include "redjit_treduce.h"

/* ---------------------------------------------------------------- oracle.c */
typedef struct hr_rng {
  uint64_t s;
} hr_rng;
void hr_rng_seed(hr_rng *g, uint64_t seed);
uint64_t hr_rng_next(hr_rng *g); /* splitmix64 */

/* Fills n elements of dtype at p with docs/CLI.md's distribution. */
void hr_fill_random(hr_rng *g, rj_dtype t, void *p, int64_t n);
/* n inputs for op, reduced len at a time: hr_fill_random's, except prod (floats: exp(s u), u in
 * [-1, 1), s = 2 / sqrt(len) clamped to [2^-8 (bf16: 2^-6), 1/2], so that a product stays near 1;
 * integers: odd values, so that a wrapped product is never 0), and (all ones, but one random bit
 * cleared with probability 4 / len), or (0, but one random bit set with probability 4 / len), xor
 * (every bit random). */
void hr_fill_op(hr_rng *g, rj_op op, rj_dtype t, void *p, int64_t n, int64_t len);
/* Float dtypes: `count` random elements of the n at p become NaN (others: nothing). */
void hr_fill_nans(hr_rng *g, rj_dtype t, void *p, int64_t n, int count);
/* Writes n poison elements (a NaN with a payload for floats, 0xDEAD... for integers). */
void hr_fill_poison(rj_dtype t, void *p, int64_t n);
bool hr_is_poison(rj_dtype t, const void *p, int64_t i);
double hr_load_f64(rj_dtype t, const void *p, int64_t i);
void hr_store_f64(rj_dtype t, void *p, int64_t i, double v);
uint64_t hr_load_bits(rj_dtype t, const void *p, int64_t i);

/* An exact or float64 result for one output element. */
typedef struct hr_value {
  double f;      /* floats */
  uint64_t u;    /* integers, wrapped to the dtype's width (sign-extended for signed) */
  double mag;    /* sum of |x| over the reduced elements (and |old dst|): the tolerance scale */
  int64_t n;     /* elements folded (NaNs skipped under nan = ignore): prod's tolerance */
  int acc_f64;   /* the kernel accumulated a float sum / prod / mean in f64 (acc_dtype "f64"):
                    checked to the output's rounding plus f64 roundoff, not tolerance(dtype) */
  int zero_sign; /* a float sum over an empty extent (hr_oracle_empty): +0.0, and after the
                    epilogue the sign of a zero f, are due bit for bit */
} hr_value;

/* Combines x into acc by op (float: with nan policy; ints: exact, wrapping). */
void hr_oracle_init(rj_op op, rj_dtype t, hr_value *acc);
void hr_oracle_add(rj_op op, rj_dtype t, rj_nan nan, hr_value *acc, const void *p, int64_t i);
/* After the last add of a reduction of `count` elements: mean divides the sum (and mag) by it. */
void hr_oracle_finish(rj_op op, hr_value *acc, int64_t count);
/* A float sum over an extent of no element is +0.0, as NumPy's, not the -0.0 its folds start
 * from: marks acc's zero sign as due (not under accum, whose old value is folded in, nor after a
 * caller's IR epilogue, which a C reference may round otherwise). */
void hr_oracle_empty(const rj_tensor *t, hr_value *acc, int64_t extent);
/* An integer result of i8 .. u16 (res) in its dtype's range, saturated as the kernels' store
 * narrows: and's identity (all ones of the u64 accumulator) is 255 for u8, max's is -128 for i8. */
void hr_oracle_narrow(rj_dtype res, hr_value *acc);
/* Tile reference: dst_old may be NULL (no accum).  ref has spatial_len entries. */
void hr_oracle_tile(const rj_tile *t, const void *src, const void *dst_old, hr_value *ref);
/* Tensor reference of every output; dst_old NULL without accum. */
void hr_oracle_tensor(const rj_tensor *t, const ir_tview *v, const void *src, const void *dst_old,
                      hr_value *ref);
/* oracle_fused.c: requests with a map, an epilogue or other inputs (docs/TENSOR.md "Fused
 * maps").  hr_other_view: other input k's view (its strides, or src's).  hr_oracle_fused:
 * others[k] is input k + 1's element 0; max / min outputs are checked as sums (mag: |ref|). */
bool hr_fused(const rj_tensor *t);
/* A tile request with a map or an epilogue (one input, built-ins only): the same reference over
 * ir_src_offset's elements, outputs in fused spatial order. */
void hr_oracle_tile_fused(const rj_tile *t, const void *src, const void *dst_old, hr_value *ref);
void hr_other_view(const rj_tensor *t, int k, ir_tview *v);
void hr_oracle_fused(const rj_tensor *t, const ir_tview *v, const void *src,
                     const void *const *others, const void *dst_old, const rj_check_opts *o,
                     hr_value *ref);
/* Compares got (element i of a dtype buffer) with ref; fills the error. */
bool hr_compare(rj_op op, rj_dtype t, const hr_value *ref, const void *got, int64_t i,
                double *abs_err, double *rel_err);

/* ---------------------------------------------------------------- oracle_state.c
 * argmax argmin var std logsumexp: inputs, reference and tolerance (docs/CLI.md, "redjit run"). */
bool hr_state_op(rj_op op);
/* Redraws the view's elements for op (after hr_fill_random): style (seed bits 3-4) 0 plain (ties
 * for argmax / argmin), 1 and 2 hard (offsets, magnitudes, -inf rows and +inf elements), 3
 * degenerate (every element equal; logsumexp: the largest magnitudes). */
void hr_state_fill(hr_rng *g, const rj_tensor *t, const ir_tview *v, void *view, int style);
/* Every output's reference: argmax / argmin in u (the index; -1: none), the others in f, with n
 * (elements folded) in u and the error scale in mag. */
void hr_state_ref(const rj_tensor *t, const ir_tview *v, const void *src, hr_value *ref);
/* The same for a tile request (its outputs in fused spatial order, ir_src_offset's elements). */
void hr_state_fill_tile(const rj_tile *t, void *src, int style);
void hr_state_ref_tile(const rj_tile *t, const void *src, hr_value *ref);
/* And for runs of len contiguous elements (the subgroup kind's groups): the fill over `runs` of
 * them from src, and the reference (NaN propagated) of the run at element first. */
void hr_state_fill_runs(rj_op op, rj_dtype t, void *src, int64_t runs, int64_t len, int style);
void hr_state_ref_run(rj_op op, rj_dtype t, int correction, const void *src, int64_t first,
                      int64_t len, hr_value *ref);
/* hr_compare for these ops (element i of got, in the result's dtype): argmax / argmin exact,
 * the others within the tolerance of docs/CLI.md; NaN and inf exactly. */
bool hr_state_compare(rj_op op, rj_dtype t, const hr_value *ref, const void *got, int64_t i,
                      double *abs_err, double *rel_err);

/* ---------------------------------------------------------------- frame.c */
#define HR_GUARD 256 /* poisoned elements each side of every device buffer */

/* A device buffer between poisoned guards, mirrored on the host. */
typedef struct hr_buf {
  rj_dtype t;
  int device;
  int64_t n;     /* payload elements */
  void *host;    /* HR_GUARD + n + HR_GUARD elements, as uploaded */
  rj_devptr dev; /* its device copy (0: none) */
} hr_buf;
/* host all poison, the device's allocated (not uploaded) */
rj_status hr_buf_make(rj_ctx *ctx, hr_buf *b, int device, rj_dtype t, int64_t n);
size_t hr_buf_bytes(const hr_buf *b); /* guards included */
void *hr_payload(const hr_buf *b);
rj_devptr hr_payload_dev(const hr_buf *b);
rj_status hr_buf_up(rj_ctx *ctx, const hr_buf *b);
/* Downloads b into out (guards included) and adds its changed guard elements to *guard_hits. */
rj_status hr_buf_down(rj_ctx *ctx, const hr_buf *b, void *out, int64_t *guard_hits);
void hr_buf_free(rj_ctx *ctx, hr_buf *b, rj_status s);
/* rj_device_free of ptr (0: nothing), keeping ctx's message when s, the status so far, is a
 * failure (a public call clears the message it starts with). */
void hr_free(rj_ctx *ctx, int device, rj_devptr ptr, rj_status s);
/* The guard elements around n payload elements at p (guards included) that are not poison. */
int64_t hr_guard_hits(rj_dtype t, const void *p, int64_t n);
rj_status hr_nomem(rj_ctx *ctx);

/* The first failure's description (later ones are counted, not described). */
void hr_note(rj_check_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* n (0: nothing) elements outside the destination changed: counted, and the first noted. */
void hr_outside(rj_check_result *res, int64_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Checks element i of got against ref: counts it, keeps the largest errors, and on a mismatch
 * counts it wrong and notes "<where>: got ..., expected ..." (where: printf of fmt). */
void hr_check_elem(rj_check_result *res, rj_op op, rj_dtype t, const hr_value *ref, const void *got,
                   int64_t i, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* argmax / argmin with "values": got (v->outputs elements of the input dtype) against the
 * source: each bit for bit the element of view at the reference's index (hr_state_ref's u; NaN
 * payloads included), or under index -1 (an all-NaN row under ignore) the op's identity, -inf
 * (argmax) or +inf (argmin).  Counts every element checked, each mismatch wrong, and notes the
 * first. */
void hr_check_values(rj_check_result *res, const rj_tensor *t, const ir_tview *v, const void *view,
                     const hr_value *ref, const void *got);

/* A kind's run or bench body: gets its kernel compiled and loaded on o->compile.device, and
 * res's variant and target (and for run, compile and load times) filled (entry.c). */
typedef rj_status hr_check_fn(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                              rj_kernel *k, rj_check_result *res);
typedef rj_status hr_bench_fn(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                              rj_kernel *k, rj_bench_result *res);
/* One timed run (i counts from 0, warm-ups included): fresh data, the launch, *ms its time. */
typedef rj_status (*hr_bench_run)(rj_ctx *ctx, void *ud, int i, double *ms);
/* warm runs, then `runs` more whose times go to ms[] (sorted here): their median, bytes, GB/s. */
rj_status hr_bench_loop(rj_ctx *ctx, int warm, int runs, hr_bench_run run, void *ud, double *ms,
                        double bytes, rj_bench_result *res);
void hr_bench_done(double *ms, int runs, double bytes, rj_bench_result *res);
/* The bench of a kernel over nbuf device buffers of n[b] elements of dtype t, its parameters in
 * that order: each run refills the first nfresh from the RNG (in order) and launches k once. */
rj_status hr_bench_kernel(rj_ctx *ctx, const rj_check_opts *o, rj_kernel *k, rj_dtype t, int nbuf,
                          const int64_t *n, int nfresh, double bytes, rj_bench_result *res);
/* The caller's options over the defaults, as far as its struct_size reaches (NULL: defaults). */
void hr_check_opts(const rj_check_opts *in, rj_check_opts *full);
/* Ends a public entry point: RJ_OK clears the message; a failure without one gets its name. */
rj_status hr_done(rj_ctx *ctx, rj_status s);
/* The results a public entry point fills, computed in full here and handed to the caller as far
 * as its struct_size reaches (redjit.h, ABI).  hr_results_begin refuses a caller's struct_size
 * below the first version's (naming "res.struct_size" / "tres.struct_size") and zeroes r with
 * each struct_size set; hr_results_end copies each into the caller's struct that is not NULL. */
typedef struct hr_results {
  rj_check_result check;
  rj_bench_result bench;
  rj_treduce_result treduce;
} hr_results;
rj_status hr_results_begin(rj_ctx *ctx, hr_results *r, const rj_check_result *cres,
                           const rj_bench_result *bres, const rj_treduce_result *tres);
void hr_results_end(const hr_results *r, rj_check_result *cres, rj_bench_result *bres,
                    rj_treduce_result *tres);
/* Starts a public entry point that fills cres or bres (one of them not NULL) and tres: ctx given,
 * hr_results_begin, and the caller's options over the defaults in *full (hr_check_opts).  A
 * failure is to be returned as it is, before hr_results_end. */
rj_status hr_enter(rj_ctx *ctx, const rj_check_opts *o, const rj_check_result *cres,
                   const rj_bench_result *bres, const rj_treduce_result *tres, hr_results *r,
                   rj_check_opts *full);

/* ---------------------------------------------------------------- check_<kind>.c
 * Each gets a validated request of its kind, fills res, and returns a status (the message in
 * ctx).  Tile, subgroup and tensor: bodies (hr_check_fn, hr_bench_fn); treduce: whole (its
 * kernels are rj_treduce_run's). */
hr_check_fn hr_check_tile, hr_check_subgroup, hr_check_tensor;
hr_bench_fn hr_bench_tile, hr_bench_subgroup, hr_bench_tensor;
/* check_multi.c: list requests (rj_reduce_multi), from hr_check_tensor / hr_bench_tensor */
hr_check_fn hr_check_multi;
hr_bench_fn hr_bench_multi;
/* check_segments.c: tensor requests with "segments" (hr_check_tensor / hr_bench_tensor pass them
 * on).  hr_seg_offsets: S + 1 random ragged offsets over N rows for a seed (docs/CLI.md);
 * hr_seg_ref: the reference of each segment's C outputs (src: element 0, off: S + 1 offsets). */
void hr_seg_offsets(uint64_t seed, int64_t N, int64_t S, int64_t *off);
void hr_seg_ref(const rj_tensor *t, const void *src, const int64_t *off, hr_value *ref);
rj_status hr_check_segments(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_check_result *res);
rj_status hr_bench_segments(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_bench_result *res);
/* rj_treduce_check / rj_treduce_bench's work, after validation (cres or bres: which). */
rj_status hr_treduce(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                     rj_treduce_path path, rj_check_result *cres, rj_bench_result *bres,
                     rj_treduce_result *tres); /* tres: not NULL, struct_size set */

#endif
