/* The ring path's kernel <-> host protocol: what the hop kernel (passes/variants/treduce_ring.c)
 * is built for and what the host (jit/treduce/ring.c) launches it with and allocates for it.
 * RING_THREADS threads per block; block b of every hop takes steps b, b + B, ... of
 * RING_STEP_BYTES each; a hop's inbox holds RING_NB slots of one step per block; a hop's flags
 * are ready[RING_MAXB] then credit[RING_MAXB], 64-bit counters. */
#ifndef RJ_PASSES_TREDUCE_RING_H
#define RJ_PASSES_TREDUCE_RING_H

#include <stdint.h>

enum { RING_THREADS = 512, RING_SLOTS = 4, RING_NB = 4, RING_MAXB = 128 };
#define RING_STEP_BYTES ((int64_t)128 << 10)
/* A hop's wait reads the call's status word too once it has lasted this long (ns). */
#define RING_LOOK_NS 1000000
#define RING_FLAG_BYTES (2 * RING_MAXB * 8)

/* The hop kernel's parameters, in order: global pointers up to RING_P_STATUS, then three i64,
 * then the sources (RING_FIXED of them come before the first). */
enum {
  RING_P_DST,         /* the destination (written by the last hop) */
  RING_P_IN,          /* this hop's inbox; NULL on the first hop */
  RING_P_NEXT,        /* the next hop's inbox; NULL on the last hop */
  RING_P_FLAGS,       /* this hop's ready[RING_MAXB], credit[RING_MAXB] */
  RING_P_NEXT_READY,  /* the next hop's ready counters */
  RING_P_PREV_CREDIT, /* the previous hop's credit counters */
  RING_P_STATUS,      /* the root's status words (page-locked host memory) */
  RING_P_NUMEL,       /* i64: elements */
  RING_P_BASE,        /* i64: the call's counter base */
  RING_P_TIMEOUT,     /* i64: a wait's limit, ns */
  RING_FIXED          /* parameters before the sources */
};

#endif
