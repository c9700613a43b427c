"""Package-wide options: the rj_options fields the CLI sets (emulate_packed, ptx_version,
ir_in_process, the compiler process's limits) as defaults of every compile, and the kernel caches
of every thread's context (rj_ctx_set_disk_cache, rj_ctx_set_memory_cache) — docs/PYTHON.md,
"Options"."""
from __future__ import annotations

import _thread  # threading's primitives, without threading's imports (functools, collections)

TYPE_CHECKING = False  # typing is not imported at run time (annotations are strings)
if TYPE_CHECKING:
    from typing import Any, Dict, Optional

from ._errors import InvalidRequest

__all__ = ["set_options", "get_options"]

_UNSET = object()
_lock = _thread.allocate_lock()
# rj_options fields, as every compile gets them unless its call says otherwise
_FIELDS = {"emulate_packed": False, "ptx_version": 0, "ir_in_process": False,
           "ir_timeout_ms": 0, "ir_memory_mb": 0}
_defaults = dict(_FIELDS)
# the caches of every context: disk_cache None (the environment's: REDJIT_CACHE_DIR ...),
# "" (off) or a directory; memory_cache None (REDJIT_CACHE_MAX_KERNELS, else 4096) or a bound
_caches = {"disk_cache": None, "memory_cache": None}
generation = [0]  # bumped by set_options: contexts drop the options they made before


def _int(name, v, lo, hi):
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise InvalidRequest("RJ_EINVAL", f"{name}: {v!r} is not an integer in {lo}..{hi}")
    return v


def _bool(name, v):
    if not isinstance(v, bool):
        raise InvalidRequest("RJ_EINVAL", f"{name}: {v!r} is not a bool")
    return v


def check(name, v):
    """A checked value of rj_options field `name`."""
    if name in ("emulate_packed", "ir_in_process"):
        return _bool(name, v)
    if name == "ptx_version":
        return _int(name, v, 0, 999)
    if name == "ir_timeout_ms":
        return _int(name, v, 0, 2**31 - 1)
    return _int(name, v, -1, 2**31 - 1)  # ir_memory_mb: -1 none, 0 the default


def set_options(*, emulate_packed: Optional[bool] = None, ptx_version: Optional[int] = None,
                ir_in_process: Optional[bool] = None, ir_timeout_ms: Optional[int] = None,
                ir_memory_mb: Optional[int] = None, disk_cache: Any = _UNSET,
                memory_cache: Any = _UNSET) -> None:
    """Sets package-wide defaults (None: leave as is).  emulate_packed: sm100_packed runs on
    targets without its packed instructions, scalar instructions in their place (the CLI's
    --emulate-packed); ptx_version: e.g. 88 for PTX 8.8 (0: the least the kernel needs);
    ir_in_process: compile_ir's and custom combines' IR compiled in this process, not in
    redjit-irc (faster; IR that makes LLVM abort ends the process); ir_timeout_ms / ir_memory_mb:
    redjit-irc's limits (0: the defaults, 60 s and 4096 MiB; ir_memory_mb -1: none).
    disk_cache: a directory for compiled kernels, "" to turn the disk cache off, None for the
    environment's ($REDJIT_CACHE_DIR, else ~/.cache/redjit: contexts made afterwards);
    memory_cache: the bound of kernels a context's cache keeps (0: none; None:
    $REDJIT_CACHE_MAX_KERNELS, else 4096).  The caches
    apply to this thread's context now and to every context made later; compile options to the
    compiles made afterwards (this thread's reduce memo is emptied, so that its kernels are made
    again with them)."""
    new = {}
    for name, v in (("emulate_packed", emulate_packed), ("ptx_version", ptx_version),
                    ("ir_in_process", ir_in_process), ("ir_timeout_ms", ir_timeout_ms),
                    ("ir_memory_mb", ir_memory_mb)):
        if v is not None:
            new[name] = check(name, v)
    caches = {}
    if disk_cache is not _UNSET:
        if disk_cache is not None and not isinstance(disk_cache, str):
            disk_cache = str(disk_cache)  # a pathlib.Path
        if disk_cache is not None and "\0" in disk_cache:
            raise InvalidRequest("RJ_EINVAL", "disk_cache: a path with a NUL byte")
        caches["disk_cache"] = disk_cache
    if memory_cache is not _UNSET:
        if memory_cache is not None:
            _int("memory_cache", memory_cache, 0, 2**62)
        caches["memory_cache"] = memory_cache
    with _lock:
        _defaults.update(new)
        _caches.update(caches)
        generation[0] += 1
    from . import _tls
    c = getattr(_tls, "ctx", None)
    if c is not None:
        if caches:
            apply_caches(c, caches)
        c.opts.clear()
        c.drop_memo()


def get_options() -> Dict[str, Any]:
    """The package-wide defaults set_options keeps, as a dict."""
    with _lock:
        return dict(_defaults, **_caches)


def apply_caches(c, caches=None):
    """Sets a context's caches from the package-wide settings (a new context, or set_options)."""
    caches = dict(_caches) if caches is None else caches
    d = caches.get("disk_cache")
    if d is not None:
        c.check(c.L.rj_ctx_set_disk_cache(c.ptr, d.encode()))
    m = caches.get("memory_cache")
    if m is not None:
        c.check(c.L.rj_ctx_set_memory_cache(c.ptr, m))


def fill(o, overrides):
    """Puts the package-wide defaults, then a call's overrides (not None), into rj_options o."""
    with _lock:
        vals = dict(_defaults)
    for k, v in overrides.items():
        if v is not None:
            vals[k] = check(k, v)
    if vals["ptx_version"] and not o.ptx_version:
        o.ptx_version = vals["ptx_version"]
    o.emulate_packed = int(vals["emulate_packed"])
    o.ir_in_process = int(vals["ir_in_process"])
    o.ir_timeout_ms = vals["ir_timeout_ms"]
    o.ir_memory_mb = vals["ir_memory_mb"]
