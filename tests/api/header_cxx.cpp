// The public headers compile as C++ under -Wall -Wextra -Werror (an object that is never linked):
// redjit_emit.h first, which includes redjit.h, then redjit.h again through its guard, then
// redjit_treduce.h (which includes it too) and redjit_check.h (which includes both).
#include "redjit_emit.h"
#include "redjit.h"
#include "redjit_treduce.h"
#include "redjit_check.h"

static_assert(sizeof(rj_devptr) == 8, "rj_devptr holds a CUdeviceptr");
static_assert(RJ_VERSION >= 100, "RJ_VERSION is an integer constant expression");
static_assert(RJ_TREDUCE_RING == 5, "rj_treduce_path's values are stable");
