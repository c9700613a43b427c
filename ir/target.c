/* The one table of GPU targets: the PTX ISA version each needs and the instructions it has.
 * Every predicate and emitter asks here; nothing else tests sm numbers.  The minimum PTX versions
 * are those LLVM 22's NVPTX backend selects by default for each processor (llc -mcpu=sm_XX). */
#include "ir.h"

#include <string.h>

#define I32R IR_F_REDUX_I32
#define NANM IR_F_MAX_NAN
#define BF16 IR_F_BF16_CVT
#define AMP (I32R | NANM | BF16)
#define CLU IR_F_CLUSTER
#define BW (AMP | CLU | IR_F_ADD_F32X2 | IR_F_MAX3_F32)
#define RF32 IR_F_REDUX_F32
#define SMEM 49152

/* name, sm, suffix, least PTX, features.  Verified against LLVM 22.1.8 llc (-mcpu, -mattr=+ptxNN:
 * a PTX version below "least" is fatal there) and CUDA 13.0 ptxas (docs/TARGETS.md):
 *  - add.f32x2 and 3-input max/min: every sm_100+ target (ptxas), PTX 8.6 / 8.8;
 *  - redux.sync.f32: only sm_100a/f and sm_103a/f -- llc aborts ("Cannot select") on sm_100,
 *    sm_103, sm_110*, sm_120*, sm_121*, and ptxas refuses sm_110a and sm_120a too;
 *  - sm_88 exists in LLVM 22 only at PTX 9.0; sm_101* is left out (ptxas 13.0 does not know it). */
#define TARGETS(X)                                                                                 \
  X("sm_80", 80, 0, 70, AMP)                                                                       \
  X("sm_86", 86, 0, 71, AMP)                                                                       \
  X("sm_87", 87, 0, 74, AMP)                                                                       \
  X("sm_88", 88, 0, 90, AMP)                                                                       \
  X("sm_89", 89, 0, 78, AMP)                                                                       \
  X("sm_90", 90, 0, 78, AMP | CLU)                                                                 \
  X("sm_90a", 90, 'a', 80, AMP | CLU)                                                              \
  X("sm_100", 100, 0, 86, BW)                                                                      \
  X("sm_100a", 100, 'a', 86, BW | RF32)                                                            \
  X("sm_100f", 100, 'f', 88, BW | RF32)                                                            \
  X("sm_103", 103, 0, 88, BW)                                                                      \
  X("sm_103a", 103, 'a', 88, BW | RF32)                                                            \
  X("sm_103f", 103, 'f', 88, BW | RF32)                                                            \
  X("sm_110", 110, 0, 90, BW)                                                                      \
  X("sm_110a", 110, 'a', 90, BW)                                                                   \
  X("sm_110f", 110, 'f', 90, BW)                                                                   \
  X("sm_120", 120, 0, 87, BW)                                                                      \
  X("sm_120a", 120, 'a', 87, BW)                                                                   \
  X("sm_120f", 120, 'f', 88, BW)                                                                   \
  X("sm_121", 121, 0, 88, BW)                                                                      \
  X("sm_121a", 121, 'a', 88, BW)                                                                   \
  X("sm_121f", 121, 'f', 88, BW)

#define ROW(n, sm, suf, ptx, f) {n, sm, suf, ptx, f, SMEM, 0},
/* The same targets with the packed instructions they lack provided by scalar emulation
 * (rj_options.emulate_packed): same name, same PTX, so the same LLVM target. */
#define ROW_EMU(n, sm, suf, ptx, f) {n, sm, suf, ptx, f, SMEM, IR_F_EMULABLE & ~(unsigned)(f)},

static const ir_target targets[] = {TARGETS(ROW)};
static const ir_target emulating[] = {TARGETS(ROW_EMU)};

const ir_target *ir_target_emulating(const ir_target *t) {
  for (int i = 0; t && i < ir_target_count(); i++)
    if (t == &targets[i] || t == &emulating[i]) return &emulating[i];
  return t;
}

int ir_target_count(void) {
  return (int)(sizeof targets / sizeof targets[0]);
}

const ir_target *ir_target_at(int i) {
  return i >= 0 && i < ir_target_count() ? &targets[i] : NULL;
}

const ir_target *ir_target_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < ir_target_count(); i++)
    if (strcmp(targets[i].name, name) == 0) return &targets[i];
  return NULL;
}

int ir_feature_ptx(const ir_target *t, ir_feature f) {
  if (!t || !(t->features & f)) return 0;
  int need = 0;
  switch (f) {
  case IR_F_REDUX_I32:
    need = 70;
    break;
  case IR_F_MAX_NAN:
    need = 70;
    break;
  case IR_F_BF16_CVT:
    need = 70;
    break;
  case IR_F_CLUSTER:
    need = 78;
    break;
  case IR_F_REDUX_F32:
    need = 86;
    break;
  case IR_F_ADD_F32X2:
    need = 86;
    break;
  case IR_F_MAX3_F32:
    need = 88;
    break;
  }
  return need > t->min_ptx ? need : t->min_ptx;
}

const char *ir_feature_name(ir_feature f) {
  switch (f) {
  case IR_F_REDUX_I32:
    return "redux.sync (integer)";
  case IR_F_REDUX_F32:
    return "redux.sync.f32 min/max";
  case IR_F_ADD_F32X2:
    return "add.f32x2";
  case IR_F_MAX3_F32:
    return "3-input max/min.f32";
  case IR_F_MAX_NAN:
    return "max.NaN/min.NaN";
  case IR_F_BF16_CVT:
    return "cvt.bf16.f32";
  case IR_F_CLUSTER:
    return "thread-block clusters";
  }
  return "?";
}
