/* The one table of GPU targets: the PTX ISA version each needs and the instructions it has.
 * Every predicate and emitter asks here; nothing else tests sm numbers.  The minimum PTX versions
 * are those LLVM 22's NVPTX backend selects by default for each processor (llc -mcpu=sm_XX). */
#include "ir.h"

#include <string.h>

#define I32R IR_F_REDUX_I32
#define NANM IR_F_MAX_NAN
#define BF16 IR_F_BF16_CVT
#define AMP (I32R | NANM | BF16)
#define BW (AMP | IR_F_ADD_F32X2 | IR_F_MAX3_F32)
#define SMEM 49152

static const ir_target targets[] = {
    {"sm_80", 80, 0, 70, AMP, SMEM},
    {"sm_86", 86, 0, 71, AMP, SMEM},
    {"sm_87", 87, 0, 74, AMP, SMEM},
    {"sm_89", 89, 0, 78, AMP, SMEM},
    {"sm_90", 90, 0, 78, AMP, SMEM},
    {"sm_90a", 90, 'a', 80, AMP, SMEM},
    {"sm_100", 100, 0, 86, BW, SMEM},
    {"sm_100a", 100, 'a', 86, BW | IR_F_REDUX_F32, SMEM},
    {"sm_100f", 100, 'f', 88, BW | IR_F_REDUX_F32, SMEM},
    {"sm_103", 103, 0, 88, BW, SMEM},
    {"sm_103a", 103, 'a', 88, BW | IR_F_REDUX_F32, SMEM},
    {"sm_103f", 103, 'f', 88, BW | IR_F_REDUX_F32, SMEM},
    {"sm_110", 110, 0, 90, BW, SMEM},
    {"sm_110a", 110, 'a', 90, BW | IR_F_REDUX_F32, SMEM},
    {"sm_110f", 110, 'f', 90, BW | IR_F_REDUX_F32, SMEM},
    {"sm_120", 120, 0, 87, BW, SMEM},
    {"sm_120a", 120, 'a', 87, BW, SMEM},
    {"sm_120f", 120, 'f', 88, BW, SMEM},
    {"sm_121", 121, 0, 88, BW, SMEM},
    {"sm_121a", 121, 'a', 88, BW, SMEM},
    {"sm_121f", 121, 'f', 88, BW, SMEM},
};

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
  case IR_F_REDUX_I32: need = 70; break;
  case IR_F_MAX_NAN: need = 70; break;
  case IR_F_BF16_CVT: need = 70; break;
  case IR_F_REDUX_F32: need = 86; break;
  case IR_F_ADD_F32X2: need = 86; break;
  case IR_F_MAX3_F32: need = 88; break;
  }
  return need > t->min_ptx ? need : t->min_ptx;
}

const char *ir_feature_name(ir_feature f) {
  switch (f) {
  case IR_F_REDUX_I32: return "redux.sync (integer)";
  case IR_F_REDUX_F32: return "redux.sync.f32 min/max";
  case IR_F_ADD_F32X2: return "add.f32x2";
  case IR_F_MAX3_F32: return "3-input max/min.f32";
  case IR_F_MAX_NAN: return "max.NaN/min.NaN";
  case IR_F_BF16_CVT: return "cvt.bf16.f32";
  }
  return "?";
}
