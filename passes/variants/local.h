/* The local variant's plan, shared with the variants that reuse it (passes/redux.c): the proved
 * per-thread fold of a register layout, then a cross-lane reduction over the reduced lane bits. */
#ifndef RJ_PASSES_LOCAL_H
#define RJ_PASSES_LOCAL_H

#include "../passes.h"

/* A set of src slots as nested arithmetic progressions: base + sum of i[l] * step[l] over
 * i[l] < count[l], level 0 innermost, enumerated in ascending order. */
typedef struct pass_local_nest {
  int64_t base;
  int nlev;
  int64_t count[32], step[32];
} pass_local_nest;

/* Looped tiles: dst slots jd + r * rjd + m * djd (r < reps, m < count) fold the src slots of
 * the first one shifted by r * rsrc + m * dsrc; those are the union of nests pieces[0 ..
 * npieces), in order. */
typedef struct pass_local_group {
  int64_t jd, djd, count, dsrc, reps, rjd, rsrc;
  int npieces;
  pass_local_nest *pieces;
} pass_local_group;

typedef struct pass_local_plan {
  int T;
  ir_placement ps, pd;
  int nmask, masks[7]; /* the reduced thread bits, ascending */
  int32_t **fold; /* fold[jd]: src slots to fold for dst slot jd, -1 terminated; NULL: unused */
  uint32_t (*write)[4]; /* write[jd]: threads (bits) whose slot jd is in the dst region */
  /* too many slots to unroll (ir_local_unrolled): loops over groups instead */
  bool looped;
  int ngroups;
  pass_local_group *groups;
} pass_local_plan;

/* Builds and proves the plan; false with the reason in why (p must still be freed). */
bool pass_local_analyze(const rj_tile *t, pass_local_plan *p, char *why, size_t n);
void pass_local_plan_free(pass_local_plan *p);

/* Reduces one thread's folded value across the plan's lane bits (every lane of the warp calls
 * it, uniformly).  NULL in pass_local_emit: the shfl.sync.bfly tree. */
typedef LLVMValueRef (*pass_local_cross)(pass_emit *e, const rj_tile *t, const pass_local_plan *p,
                                         LLVMValueRef acc);
/* Emits the plan: per dst slot, fold the thread's slots, cross-lane reduce, accum, store. */
rj_status pass_local_emit(pass_emit *e, const rj_tile *t, const pass_tile_args *a,
                          const pass_local_plan *p, pass_local_cross cross);

#endif
