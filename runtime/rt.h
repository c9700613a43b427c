/* runtime/ — the only code that touches the CUDA driver.  libcuda.so.1 is opened with dlopen
 * when first needed, so everything up to PTX works with no driver.  Handles cross this interface
 * as plain integers and pointers; cuda.h stays inside runtime/. */
#ifndef RJ_RT_H
#define RJ_RT_H

#include "../ir/ir.h"

typedef struct rt_cuda rt_cuda;

/* Opens the driver and cuInit's it; RJ_ENODEV when libcuda or a GPU is missing. */
rj_status rt_open(rt_cuda **out, ir_err *e);
void rt_close(rt_cuda *rt);
rj_status rt_device_count(rt_cuda *rt, int *n, ir_err *e);
rj_status rt_device_cc(rt_cuda *rt, int dev, int *major, int *minor, ir_err *e);
/* Makes device dev's primary context current (pushed); rt_leave pops it. */
rj_status rt_enter(rt_cuda *rt, int dev, ir_err *e);
void rt_leave(rt_cuda *rt);

rj_status rt_module_load(rt_cuda *rt, const char *ptx, const char *entry, void **mod, void **fn,
                         ir_err *e);
void rt_module_unload(rt_cuda *rt, void *mod);
rj_status rt_alloc(rt_cuda *rt, size_t bytes, uint64_t *ptr, ir_err *e);
void rt_free(rt_cuda *rt, uint64_t ptr);
rj_status rt_htod(rt_cuda *rt, uint64_t dst, const void *src, size_t bytes, ir_err *e);
rj_status rt_dtoh(rt_cuda *rt, void *dst, uint64_t src, size_t bytes, ir_err *e);
/* Launches fn and waits for it; *ms is the kernel time measured with events (may be NULL). */
rj_status rt_launch(rt_cuda *rt, void *fn, const unsigned grid[3], const unsigned block[3],
                    unsigned shared, void **args, double *ms, ir_err *e);

#endif
