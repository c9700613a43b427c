/* The embedding API (rj_emit*), for libredjit_emit.a only — never for libredjit.so.
 *
 * Built against the LLVM-C headers with no LLVM linked: these functions, and the passes/ and ir/
 * code they reach, call whatever LLVM the program that links libredjit_emit.a links (the
 * caller's).  CMake partially links the archive and localises every symbol but rj_emit*, so
 * pass_* / ir_* never clash with the caller's names.  Rules: include/redjit_emit.h,
 * EMBEDDING.md. */
#include "../passes/subgroup.h"
#include "redjit_emit.h"

#include <stdio.h>
#include <string.h>

#define TARGET_DEFAULT "sm_90"

/* A pass_emit over the caller's module, at the builder's position. */
static rj_status begin(rj_emitter *em, pass_emit *e, ir_err *err) {
  memset(err, 0, sizeof *err);
  memset(e, 0, sizeof *e);
  e->err = err;
  if (!em) return RJ_EINVAL;
  if (!em->module || !em->builder)
    return ir_fail(err, RJ_EINVAL, "emitter: module and builder are required (rj_emitter_init)");
  LLVMBasicBlockRef bb = LLVMGetInsertBlock(em->builder);
  if (!bb) return ir_fail(err, RJ_EINVAL, "builder: not positioned in a basic block");
  e->fn = LLVMGetBasicBlockParent(bb);
  if (!e->fn || LLVMGetGlobalParent(e->fn) != em->module)
    return ir_fail(err, RJ_EINVAL, "builder: positioned in a function of another module");
  e->M = em->module;
  e->C = LLVMGetModuleContext(em->module);
  e->B = em->builder;
  const char *tname = em->target ? em->target : TARGET_DEFAULT;
  e->target = ir_target_find(tname);
  if (!e->target) return ir_fail(err, RJ_ETARGET, "target: unknown target \"%.32s\"", tname);
  e->barriers = em->barriers_used;
  e->uniq = 0;
  return RJ_OK;
}

static rj_status finish(rj_emitter *em, pass_emit *e, ir_err *err, rj_status s) {
  if (!em) return RJ_EINVAL;
  em->status = s;
  snprintf(em->errmsg, sizeof em->errmsg, "%s", s ? err->msg : "");
  if (!s) {
    em->barriers_used = e->barriers;
    if (e->ptx_needed > em->ptx_needed) em->ptx_needed = e->ptx_needed;
  }
  return s;
}

void rj_emitter_init(rj_emitter *em, LLVMModuleRef module, LLVMBuilderRef builder) {
  memset(em, 0, sizeof *em);
  em->struct_size = sizeof *em;
  em->module = module;
  em->builder = builder;
}

rj_status rj_emit_subgroup(rj_emitter *em, rj_primitive p, rj_dtype t, int log2_size,
                           LLVMValueRef value, LLVMValueRef arg, LLVMValueRef *out) {
  pass_emit e;
  ir_err err;
  rj_status s = begin(em, &e, &err);
  if (out) *out = NULL;
  if (!s && !out) s = ir_fail(&err, RJ_EINVAL, "out: required");
  if (!s && (unsigned)t > RJ_U64) s = ir_fail(&err, RJ_EINVAL, "dtype: unknown value");
  if (!s && (log2_size < 0 || log2_size > 5))
    s = ir_fail(&err, RJ_EINVAL, "log2_size: %d is outside 0..5 (a group is 1 to 32 lanes)",
                log2_size);
  if (!s) s = pass_subgroup(&e, p, t, log2_size, value, arg, 1, out); /* var / std: N - 1 */
  return finish(em, &e, &err, s);
}

rj_status rj_emit_tile(rj_emitter *em, const rj_request *req, LLVMValueRef src, LLVMValueRef dst,
                       LLVMValueRef tid) {
  pass_emit e;
  ir_err err;
  rj_status s = begin(em, &e, &err);
  if (s) return finish(em, &e, &err, s);
  if (!req || req->kind != RJ_KIND_TILE)
    return finish(em, &e, &err,
                  ir_fail(&err, RJ_EINVAL, "kind: rj_emit_tile needs a tile request"));
  if ((s = ir_validate(req, &err))) return finish(em, &e, &err, s);
  const rj_tile *t = &req->u.tile;
  if (t->op == RJ_OP_CUSTOM)
    return finish(em, &e, &err,
                  ir_fail(&err, RJ_EINVAL,
                          "op: \"custom\" calls the caller's combine, linked only where the tile "
                          "request is compiled (rj_compile); rj_emit_tile does not take it"));
  if (!src || !dst || !tid)
    return finish(em, &e, &err, ir_fail(&err, RJ_EINVAL, "src, dst, tid: all three are required"));
  if (LLVMTypeOf(tid) != LLVMInt32TypeInContext(e.C))
    return finish(em, &e, &err, ir_fail(&err, RJ_EINVAL, "tid: must be an i32 value"));
  unsigned want_as = t->src.mem == RJ_MEM_SHARED ? AS_SHARED : AS_GENERIC;
  const char *names[2] = {"src", "dst"};
  LLVMValueRef ptrs[2] = {src, dst};
  for (int i = 0; i < 2; i++) {
    LLVMTypeRef pt = LLVMTypeOf(ptrs[i]);
    if (LLVMGetTypeKind(pt) != LLVMPointerTypeKind || LLVMGetPointerAddressSpace(pt) != want_as)
      return finish(em, &e, &err,
                    ir_fail(&err, RJ_EINVAL, "%s: must be a pointer in addrspace(%u) (%s memory)",
                            names[i], want_as, ir_mem_name(t->src.mem)));
  }
  /* the variant: forced, or the one of the buffers' memory; its predicates decide */
  const pass_variant *v = t->src.mem == RJ_MEM_SHARED ? &pass_variant_shared : &pass_variant_local;
  if (req->variant[0] && strcmp(req->variant, "auto") != 0) {
    if (strcmp(req->variant, pass_variant_shared.name) == 0)
      v = &pass_variant_shared;
    else if (strcmp(req->variant, pass_variant_local.name) == 0)
      v = &pass_variant_local;
    else
      return finish(em, &e, &err,
                    ir_fail(&err, RJ_EINVAL,
                            "variant: \"%s\" has no embeddable tile emitter (shared, local)",
                            req->variant));
  }
  char why[512];
  const char *reason = v->accepts(req, e.target, why, sizeof why);
  if (reason) return finish(em, &e, &err, ir_fail(&err, RJ_ENOVARIANT, "%s: %s", v->name, reason));
  pass_tile_args a = {src, dst, tid};
  s = v->tile(&e, t, &a);
  return finish(em, &e, &err, s);
}
