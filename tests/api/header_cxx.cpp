// The public headers compile as C++ under -Wall -Wextra -Werror (an object that is never linked):
// redjit_emit.h first, which includes redjit.h, then redjit.h again through its guard.
#include "redjit_emit.h"
#include "redjit.h"

static_assert(sizeof(rj_devptr) == 8, "rj_devptr holds a CUdeviceptr");
static_assert(RJ_VERSION >= 100, "RJ_VERSION is an integer constant expression");
