"""Finding and loading libredjit.so, its ctypes prototypes and structs, and RedjitError.

Nothing here is loaded at import time: the first call that needs the library loads it, and a
failure is a RedjitError (status "library") naming every place searched."""
import ctypes
import os
import _thread  # threading's primitives, without threading's imports (functools, collections)

__all__ = ["RedjitError", "lib", "search_paths", "Options", "VariantInfo", "TreduceBuf",
           "TreduceGroup", "TreduceResult", "CacheStats"]


from ._errors import RedjitError  # noqa: E402 (one class per status: _errors.py)


# ------------------------------------------------ structs (include/redjit.h, redjit_treduce.h)
class Options(ctypes.Structure):  # rj_options
    _fields_ = [("struct_size", ctypes.c_uint32), ("target", ctypes.c_char_p),
                ("device", ctypes.c_int), ("ptx_version", ctypes.c_int),
                ("emulate_packed", ctypes.c_int), ("ir_in_process", ctypes.c_int),
                ("ir_timeout_ms", ctypes.c_int), ("ir_memory_mb", ctypes.c_int),
                ("sm_count", ctypes.c_int), ("reserved", ctypes.c_int * 7)]


class VariantInfo(ctypes.Structure):  # rj_variant_info
    _fields_ = [("struct_size", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("priority", ctypes.c_int), ("kinds", ctypes.c_char_p),
                ("summary", ctypes.c_char_p)]


class CacheStats(ctypes.Structure):  # rj_cache_stats
    _fields_ = [("struct_size", ctypes.c_uint32), ("compiles", ctypes.c_longlong),
                ("memory_hits", ctypes.c_longlong), ("disk_hits", ctypes.c_longlong),
                ("disk_writes", ctypes.c_longlong), ("disk_evictions", ctypes.c_longlong),
                ("kernels", ctypes.c_longlong), ("disk_dir", ctypes.c_char_p),
                ("disk_read_only", ctypes.c_int), ("disk_note", ctypes.c_char_p),
                ("memory_evictions", ctypes.c_longlong), ("kernels_pinned", ctypes.c_longlong),
                ("max_kernels", ctypes.c_longlong), ("cubin_loads", ctypes.c_longlong),
                ("cubin_links", ctypes.c_longlong), ("cubin_stale", ctypes.c_longlong)]


TREDUCE_MAX_DIMS = 5


class TreduceBuf(ctypes.Structure):  # rj_treduce_buf
    _fields_ = [("ptr", ctypes.c_uint64), ("device", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * TREDUCE_MAX_DIMS), ("has_strides", ctypes.c_int),
                ("strides", ctypes.c_int64 * TREDUCE_MAX_DIMS)]


class Combine(ctypes.Structure):  # rj_combine
    _fields_ = [("ir", ctypes.c_char_p), ("text", ctypes.c_uint64), ("identity", ctypes.c_uint64),
                ("field_identity", ctypes.c_uint64 * 4), ("commutative", ctypes.c_int),
                ("nfields", ctypes.c_int), ("fields", ctypes.c_int * 4), ("result", ctypes.c_int),
                ("fn", ctypes.c_char * 128), ("lift", ctypes.c_char * 128),
                ("finish", ctypes.c_char * 128)]


class TreduceGroup(ctypes.Structure):  # rj_treduce_group
    _fields_ = [("struct_size", ctypes.c_uint32), ("ranks", ctypes.c_int), ("root", ctypes.c_int),
                ("src", ctypes.POINTER(TreduceBuf)), ("dst", TreduceBuf), ("op", ctypes.c_int),
                ("dtype", ctypes.c_int), ("nan", ctypes.c_int), ("tile", ctypes.c_int64 * 2),
                ("pingpong", ctypes.c_int), ("accum", ctypes.c_int), ("path", ctypes.c_int),
                ("stream", ctypes.c_void_p), ("async_", ctypes.c_int),
                ("ring_timeout_ms", ctypes.c_int64), ("dynamic", ctypes.c_int),
                ("combine", Combine), ("invariant", ctypes.c_int)]


class TreduceResult(ctypes.Structure):  # rj_treduce_result
    _fields_ = [("struct_size", ctypes.c_uint32), ("variant", ctypes.c_char * 32),
                ("target", ctypes.c_char * 16), ("path", ctypes.c_char * 8),
                ("direct_ranks", ctypes.c_int), ("peer_ranks", ctypes.c_int),
                ("staged_ranks", ctypes.c_int), ("launches", ctypes.c_int),
                ("compile_ms", ctypes.c_double), ("load_ms", ctypes.c_double),
                ("ms", ctypes.c_double), ("slices", ctypes.c_int), ("gpus", ctypes.c_int),
                ("dst_digest", ctypes.c_uint64), ("root_share", ctypes.c_double),
                ("call_ms", ctypes.c_double), ("hops", ctypes.c_int),
                ("cache", ctypes.c_char * 8), ("cache_ms", ctypes.c_double)]


# Stable enum values of include/redjit.h.
KIND = {"tile": 1, "subgroup": 2, "tensor": 3, "treduce": 4}
# rj_op: which dtypes each takes and the kinds that serve it, docs/REQUESTS.md "Ops".
OP = {"sum": 0, "max": 1, "min": 2, "prod": 3, "and": 4, "or": 5, "xor": 6, "argmax": 7,
      "argmin": 8, "mean": 9, "var": 10, "std": 11, "logsumexp": 12}
INDEX_OPS = ("argmax", "argmin")  # their result is an int64 index
# ORDER DTYPE (include/redjit.h rj_dtype; i8 .. e5m2: tensor reductions only)
DTYPE = {"f16": 0, "bf16": 1, "f32": 2, "f64": 3, "i32": 4, "u32": 5, "i64": 6, "u64": 7,
         "i8": 8, "u8": 9, "i16": 10, "u16": 11, "bool": 12, "e4m3": 13, "e5m2": 14}
ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "u32": 4, "i64": 8, "u64": 8,
            "i8": 1, "u8": 1, "i16": 2, "u16": 2, "bool": 1, "e4m3": 1, "e5m2": 1}
NAN = {"propagate": 0, "ignore": 1}
TREDUCE_PATH = {"auto": 0, "peer": 1, "staged": 2, "split": 3, "split_equal": 4, "ring": 5}
EMIT_PTX, EMIT_LLVM, EMIT_LLVM_OPT = 0, 1, 2

_vp, _cp, _int, _u64, _sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64, \
    ctypes.c_size_t
_uint3 = ctypes.c_uint * 3

# name: (restype, argtypes)
_PROTOS = {
    "rj_version": (_cp, []),
    "rj_ctx_new": (_vp, []),
    "rj_ctx_free": (None, [_vp]),
    "rj_ctx_compile_count": (ctypes.c_longlong, [_vp]),
    "rj_ctx_set_disk_cache": (_int, [_vp, _cp]),
    "rj_ctx_set_memory_cache": (_int, [_vp, ctypes.c_longlong]),
    "rj_request_size": (_sz, []),
    "rj_request_new": (_vp, [_int]),
    "rj_request_free": (None, [_vp]),
    "rj_request_parse": (_int, [_vp, _cp, _vp]),
    "rj_request_canonical": (_int, [_vp, _vp, ctypes.POINTER(_cp)]),
    "rj_result_dtype": (_int, [_int, _int]),
    "rj_options_init": (None, [ctypes.POINTER(Options)]),
    "rj_target_resolve": (_int, [_vp, ctypes.POINTER(Options), _cp, _sz]),
    "rj_compile": (_int, [_vp, _vp, ctypes.POINTER(Options), ctypes.POINTER(_vp)]),
    "rj_compile_ir": (_int, [_vp, _cp, _sz, _cp, ctypes.POINTER(Options), ctypes.POINTER(_vp)]),
    "rj_kernel_release": (_int, [_vp, _vp]),
    "rj_ctx_cache_stats": (_int, [_vp, ctypes.POINTER(CacheStats)]),
    "rj_explain": (_int, [_vp, _vp, ctypes.POINTER(Options), ctypes.POINTER(_cp)]),
    "rj_variant_count": (_int, [_vp]),
    "rj_variant_get": (_int, [_vp, _int, ctypes.POINTER(VariantInfo)]),
    "rj_kernel_text": (_cp, [_vp, _int]),
    "rj_kernel_variant": (_cp, [_vp]),
    "rj_kernel_target": (_cp, [_vp]),
    "rj_kernel_entry": (_cp, [_vp]),
    "rj_kernel_compile_ms": (ctypes.c_double, [_vp]),
    "rj_kernel_dims": (None, [_vp, _uint3, _uint3, ctypes.POINTER(ctypes.c_uint)]),
    "rj_kernel_launch": (_int, [_vp, _vp, _int, _uint3, _uint3, ctypes.c_uint,
                                ctypes.POINTER(_vp), ctypes.POINTER(ctypes.c_double)]),
    "rj_kernel_load": (_int, [_vp, _vp, _int, ctypes.POINTER(ctypes.c_double)]),
    "rj_device_count": (_int, [_vp, ctypes.POINTER(_int)]),
    "rj_device_sync": (_int, [_vp, _int]),
    "rj_device_alloc": (_int, [_vp, _int, _sz, ctypes.POINTER(_u64)]),
    "rj_device_free": (_int, [_vp, _int, _u64]),
    "rj_memcpy_htod": (_int, [_vp, _int, _u64, _vp, _sz]),
    "rj_reduce_segments": (_int, [_vp, _vp, ctypes.POINTER(Options), _u64, _u64, _u64, _u64,
                                  _vp]),
    "rj_segments_status": (_int, [_vp, _int, _u64]),
    "rj_reduce": (_int, [_vp, _vp, ctypes.POINTER(Options), _u64, _u64, _vp]),
    "rj_tensor_launch": (_int, [_vp, _vp, _int, _u64, _u64, _vp]),
    "rj_tensor_launch_n": (_int, [_vp, _vp, _int, _u64, ctypes.POINTER(_u64), _int, _u64, _u64,
                                  _vp]),
    "rj_reduce_values": (_int, [_vp, _vp, ctypes.POINTER(Options), _u64, _u64, _u64, _vp]),
    "rj_reduce_n": (_int, [_vp, _vp, ctypes.POINTER(Options), _u64, ctypes.POINTER(_u64), _int,
                           _u64, _u64, _vp]),
    "rj_reduce_multi": (_int, [_vp, _vp, ctypes.POINTER(Options), _u64, ctypes.c_int64, _u64, _u64,
                               _vp]),
    "rj_treduce_group_init_sized": (None, [ctypes.POINTER(TreduceGroup), _sz]),
    "rj_treduce_run": (_int, [_vp, ctypes.POINTER(TreduceGroup), ctypes.POINTER(Options),
                              ctypes.POINTER(TreduceResult)]),
    "rj_treduce_sync": (_int, [_vp]),
    "rj_errmsg": (_cp, [_vp]),
    "rj_status_name": (_cp, [_int]),
}

# ------------------------------------------------ JSON text of a request
# json.dumps's text (its default separators) of the dicts a call builds, without importing json
# (about a millisecond of every process's import): str keys, plain ASCII strings, bool, int,
# finite float, None, lists and tuples.  Anything else (an escape, NaN, another type) goes to json.
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:+@ /")


class _NotPlain(Exception):
    pass


def _text(v, sort_keys):
    t = v.__class__
    if t is str:
        if _PLAIN.issuperset(v):
            return '"' + v + '"'
    elif t is bool:
        return "true" if v else "false"
    elif t is int:
        return int.__repr__(v)
    elif v is None:
        return "null"
    elif t is float:
        if v - v == 0:  # finite
            return float.__repr__(v)
    elif t is list or t is tuple:
        return "[" + ", ".join([_text(x, sort_keys) for x in v]) + "]"
    elif t is dict:
        for k in v:
            if k.__class__ is not str:
                raise _NotPlain
        return "{" + ", ".join([_text(k, sort_keys) + ": " + _text(v[k], sort_keys)
                                for k in (sorted(v) if sort_keys else v)]) + "}"
    raise _NotPlain


def dumps(obj, sort_keys=False):
    """json.dumps(obj, sort_keys=sort_keys), the same text; json is imported only where obj
    holds something _text leaves to it."""
    try:
        return _text(obj, sort_keys)
    except _NotPlain:
        import json
        return json.dumps(obj, sort_keys=sort_keys)


_SONAMES = ("libredjit.so.0.2", "libredjit.so")


def search_paths():
    """The places the library is looked for, in order (REDJIT_LIBRARY, when set, alone)."""
    env = os.environ.get("REDJIT_LIBRARY")
    if env:
        return [env]
    pkg = os.path.dirname(os.path.abspath(__file__))
    up3 = os.path.dirname(os.path.dirname(os.path.dirname(pkg)))
    dirs = [
        pkg,                            # a library copied into the package folder
        up3,                            # installed: <prefix>/lib/python3*/{dist,site}-packages/redjit
        os.path.join(up3, "build"),     # the source tree: <repo>/tools/python/redjit -> <repo>/build
    ]
    try:  # cmake --install writes where its library directory is, relative to the package
        from . import _installed
        dirs.insert(1, os.path.join(pkg, _installed.LIBDIR))
    except ImportError:
        pass
    out = []
    for d in dirs:
        for so in _SONAMES:
            p = os.path.normpath(os.path.join(d, so))
            if p not in out:
                out.append(p)
    return out


_lock = _thread.allocate_lock()
_lib = None


def _load():
    tried = []
    paths = search_paths()
    for p in paths:
        if not os.path.exists(p):
            tried.append(f"{p} (no such file)")
            continue
        try:
            return ctypes.CDLL(p), p
        except OSError as e:
            tried.append(f"{p} ({e})")
    if not os.environ.get("REDJIT_LIBRARY"):
        from ctypes.util import find_library  # here only: it imports tempfile, shutil, re
        name = find_library("redjit")
        if name:
            try:
                return ctypes.CDLL(name), name
            except OSError as e:
                tried.append(f"find_library('redjit') -> {name} ({e})")
        else:
            tried.append("ctypes.util.find_library('redjit') (not found)")
    where = "REDJIT_LIBRARY=" if os.environ.get("REDJIT_LIBRARY") else ""
    raise RedjitError("library", "libredjit.so could not be loaded; searched: " + where +
                      "; ".join(tried) + ". Set REDJIT_LIBRARY to the path of libredjit.so.0.2")


def lib():
    """The loaded library with its prototypes set (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            L, path = _load()
            for name, (res, args) in _PROTOS.items():
                try:
                    f = getattr(L, name)
                except AttributeError:
                    raise RedjitError("library", f"{path} lacks {name}: an older libredjit?")
                f.restype = res
                f.argtypes = args
            L.path = path
            _lib = L
    return _lib


def status_name(s):
    return lib().rj_status_name(s).decode()
