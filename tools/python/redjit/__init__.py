"""redjit: JIT-compiled GPU reductions, from Python, over libredjit.so's C ABI (ctypes only).

    import redjit
    y = redjit.reduce(x, "sum", axis=1)         # x: a torch / CuPy / Numba CUDA array
    k = redjit.compile({"kind": "tensor", "op": "max", "dtype": "f32", "shape": [64, 64]})
    print(k.variant, k.ptx[:200])

Every thread gets its own rj_ctx (a context is single-threaded), kept for the thread's life so that
compiled kernels are reused; it is freed when the thread ends or at exit.  A Kernel holds one pin
on its kernel (rj_kernel_release drops it when the Kernel is closed or dropped), and so does
reduce's memo for each kernel it launches: unpinned kernels are the context's cache's, which keeps
a bounded number.  Failures raise RedjitError(status, message).  docs/PYTHON.md has the details."""
from __future__ import annotations

import ctypes
import sys
import _thread  # threading's primitives, without threading's imports (functools, collections)
import weakref

# typing is not imported at run time (it costs more than the rest of the import where nothing
# loaded it before): annotations are strings (__future__ above), and the aliases below are made
# on first use by __getattr__.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _arrays, _custom, _fused, _options, _segment
from ._custom import Custom
from ._multi import MultiList, multi_reduce  # noqa: F401
from ._options import get_options, set_options  # noqa: F401
from ._arrays import ArrayInfo, describe, kept_shape, normalize_axes, tensor_request
from ._errors import (Busy, CompilerCrash, CudaError, InvalidRequest, LibraryNotFound,  # noqa
                      LLVMError, NoDevice, NoVariant, OutOfMemory, TargetError, Timeout,
                      Unsupported)
from ._lib import (DTYPE, EMIT_LLVM, EMIT_LLVM_OPT, EMIT_PTX, INDEX_OPS, KIND, NAN, OP,
                   TREDUCE_MAX_DIMS, TREDUCE_PATH, CacheStats, Options, RedjitError, TreduceBuf, TreduceGroup, TreduceResult,
                   VariantInfo, dumps, lib, search_paths)

__all__ = ["RedjitError", "Custom", "Kernel", "Variant", "version", "variants", "compile",
           "compile_ir", "explain", "canonical", "reduce", "reduce_values", "treduce",
           "dot", "norm", "segment_reduce",
           "multi_reduce", "MultiList",
           "tensor_request", "search_paths", "library_path", "compile_count", "cache_stats",
           "__version__", "InvalidRequest", "NoVariant", "TargetError", "LLVMError", "NoDevice",
           "CudaError", "OutOfMemory", "Unsupported", "Timeout", "CompilerCrash", "Busy",
           "LibraryNotFound", "set_options", "get_options"]



def _variant_class():
    """Variant, the namedtuple variants() returns, made on first use (collections costs an
    import where nothing loaded it before)."""
    global Variant
    if "Variant" not in globals():
        import collections
        Variant = collections.namedtuple("Variant", "name priority kinds summary")
        Variant.__module__ = __name__
    return Variant


if TYPE_CHECKING:
    from typing import NamedTuple

    class Variant(NamedTuple):
        name: str
        priority: int
        kinds: str
        summary: str
if TYPE_CHECKING:
    Request = Union[Dict[str, Any], str, bytes]  # a request as a dict or JSON text
    Axis = Union[None, int, Sequence[int]]
    Dims = Union[None, int, Sequence[int]]


def _alias(name):
    """The type aliases Request, Axis and Dims, made when first asked for (they need typing)."""
    from typing import Any, Dict, Sequence, Union
    aliases = {"Request": Union[Dict[str, Any], str, bytes], "Axis": Union[None, int, Sequence[int]],
               "Dims": Union[None, int, Sequence[int]]}
    globals().update(aliases)
    return aliases[name]

_MEMO_MAX = 4096  # reduce's prepared layouts kept per thread
# rj_request_parse keeps a context's 32 most recently parsed IR texts (combines, fused maps and
# epilogues; redjit.h): a parsed request points at its text, which goes once 32 other distinct
# texts have been parsed
_TEXTS_KEPT = 32


# ------------------------------------------------------------------ per-thread contexts
def _free_requests(L, requests):
    for req in requests.values():
        L.rj_request_free(req)
    requests.clear()


def _free_ctx(L, ptr, requests, live, seg_status):
    live[0] = False  # first: a Kernel dropped after this calls nothing in the freed context
    _free_requests(L, requests)
    for dev, word in seg_status.items():  # segment_reduce's status words
        L.rj_device_free(ptr, dev, word)  # (a failure leaves nothing to do: the context goes)
    seg_status.clear()
    L.rj_ctx_free(ptr)  # every kernel with it, pinned or not


class _Context:
    """One rj_ctx and what reduce keeps in it: the memo (a layout seen before -> its launch),
    the parsed dynamic requests the memo uses, the pins the memo holds, options per device.
    Only its own thread calls into it: a pin dropped in another thread waits in `deferred` for
    this thread's next compile or new layout (a call from there could find this thread inside
    the context and make its call fail with RJ_EBUSY)."""

    def __init__(self):
        L = lib()
        self.L = L
        self.ptr = L.rj_ctx_new()
        if not self.ptr:
            raise RedjitError("RJ_ENOMEM", "rj_ctx_new: out of memory")
        self.vptr = ctypes.c_void_p(self.ptr)  # built once: passed to every launch as it is
        self.launch = L.rj_tensor_launch
        self.launch_n = L.rj_tensor_launch_n  # fused calls (_fused.py)
        self.thread = _thread.get_ident()
        self.memo = {}      # reduce: layout key -> (C function, handle, argument, kept shape)
        self.requests = {}  # reduce: request JSON -> rj_request * (dynamic requests)
        self.opts = {}      # device -> Options (target auto)
        self.pins = []      # reduce: the kernels the memo launches, one pin each (rj_compile's)
        self.deferred = []  # pins dropped in other threads, released by this one
        self.live = [True]  # False once the context is freed (the finalizer, or at exit)
        # custom requests parsed since the kept ones (requests of a Custom op) were last let go
        self.custom_parses = 0
        self.custom_kept = False  # requests holds a request with IR (a Custom op, an IR map)
        self.seg_status = {}  # device -> segment_reduce's status word there (_segment.py)
        weakref.finalize(self, _free_ctx, L, self.ptr, self.requests, self.live, self.seg_status)
        self.opts_gen = _options.generation[0]
        _options.apply_caches(self)  # set_options' disk / memory cache settings

    def drop_memo(self):
        self.memo.clear()
        _free_requests(self.L, self.requests)
        self.custom_kept = False
        pins, self.pins = self.pins, []
        for k in pins:
            self.release(k)

    def release(self, k):
        """Drops one pin on kernel pointer k: now in this context's thread, else later (from
        release_deferred); nothing once the context is freed or the interpreter shuts down."""
        if not self.live[0] or sys.is_finalizing():
            return
        if _thread.get_ident() != self.thread:
            self.deferred.append(k)  # list.append: atomic under the GIL
            return
        if self.L.rj_kernel_release(self.ptr, k) == _EBUSY:  # another thread inside (misuse)
            self.deferred.append(k)
        self.release_deferred()

    def release_deferred(self):
        while self.deferred and self.live[0]:
            k = self.deferred.pop()
            if self.L.rj_kernel_release(self.ptr, k) == _EBUSY:
                self.deferred.append(k)
                return

    def fail(self, s):
        msg = self.L.rj_errmsg(self.ptr)
        return RedjitError(self.L.rj_status_name(s).decode(), msg.decode(errors="replace"))

    def check(self, s):
        if s:
            raise self.fail(s)

    def parse(self, request):
        """A new rj_request * parsed from a dict or JSON text; the caller frees it."""
        text = request if isinstance(request, (str, bytes)) else dumps(request)
        if isinstance(text, str):
            text = text.encode()
        if b'"combine"' in text or b'"ir"' in text:  # maybe IR: may push a kept text out
            if self.custom_parses >= _TEXTS_KEPT:
                if self.custom_kept:
                    self.drop_memo()  # before the library frees a text they point at
                self.custom_parses = 0
            self.custom_parses += 1  # a failed validation has kept the text too
        req = self.L.rj_request_new(KIND["tile"])  # rj_request_parse initialises it anew
        if not req:
            raise RedjitError("RJ_ENOMEM", "rj_request_new: out of memory")
        s = self.L.rj_request_parse(self.ptr, text, req)
        if s:
            self.L.rj_request_free(req)
            raise self.fail(s)
        return req

    def options(self, device=0, target=None, ptx_version=0, **overrides):
        """rj_options for a call: set_options' defaults (_options.py), then the call's own
        (overrides: emulate_packed, ir_in_process, ... where not None)."""
        device = _int_arg("device", device)
        ptx_version = _int_arg("ptx_version", ptx_version)
        if target is not None:
            _str_arg("target", target)
        plain = target is None and not ptx_version and not any(
            v is not None for v in overrides.values())
        if self.opts_gen != _options.generation[0]:  # set_options was called since
            self.opts.clear()
            self.opts_gen = _options.generation[0]
        if plain:
            o = self.opts.get(device)
            if o is not None:
                return o
        o = Options()
        self.L.rj_options_init(ctypes.byref(o))
        o.device = int(device)
        o.ptx_version = int(ptx_version)
        if target is not None:
            o.target = target.encode()
        _options.fill(o, overrides)
        if plain:
            self.opts[device] = o
        return o


_EBUSY = 11  # RJ_EBUSY
_INT_MAX = 2**31 - 1  # the C int the library reads


def _int_arg(name, v):
    """v as an int 0 .. INT_MAX, or InvalidRequest naming the argument (never a value cut to 32
    bits)."""
    if v.__class__ is not int:  # numbers only for another type: its import costs every process
        import numbers
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise RedjitError("RJ_EINVAL", f"{name}: expected an int, not {type(v).__name__} {v!r}")
    if not 0 <= v <= _INT_MAX:
        raise RedjitError("RJ_EINVAL", f"{name}: {int(v)} is out of range (0..{_INT_MAX})")
    return int(v)


def _str_arg(name, v):
    """v (a str without NUL) as bytes, or InvalidRequest naming the argument."""
    if not isinstance(v, str):
        raise RedjitError("RJ_EINVAL", f"{name}: expected a str, not {type(v).__name__} {v!r}")
    if "\0" in v:
        raise RedjitError("RJ_EINVAL", f"{name}: holds a NUL character at {v.index(chr(0))}")
    return v.encode()
_tls = _thread._local()


def _ctx():
    try:
        return _tls.ctx
    except AttributeError:
        c = _tls.ctx = _Context()
        return c


def library_path() -> str:
    """The path of the libredjit.so in use (loading it if needed)."""
    return lib().path


def compile_count() -> int:
    """Kernels this thread's context has compiled so far (rj_ctx_compile_count)."""
    c = _ctx()
    return c.L.rj_ctx_compile_count(c.ptr)


def cache_stats() -> Dict[str, Any]:
    """This thread's context's cache counters (rj_ctx_cache_stats) as a dict: compiles,
    memory_hits, kernels, kernels_pinned (kernels a Kernel or reduce's memo holds), max_kernels,
    memory_evictions, the disk cache's (disk_dir None: off) and the cubin counters."""
    c = _ctx()
    c.release_deferred()
    st = CacheStats()
    st.struct_size = ctypes.sizeof(st)
    c.check(c.L.rj_ctx_cache_stats(c.ptr, ctypes.byref(st)))
    out = {f: getattr(st, f) for f, _ in CacheStats._fields_ if f != "struct_size"}
    for f in ("disk_dir", "disk_note"):
        out[f] = out[f].decode(errors="replace") if out[f] is not None else None
    return out


# ------------------------------------------------------------------ inspect
def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return lib().rj_version().decode()


def variants() -> List[Variant]:
    """The registered variants in dispatch order: Variant(name, priority, kinds, summary)."""
    c = _ctx()
    out = []
    for i in range(c.L.rj_variant_count(c.ptr)):
        v = VariantInfo()
        v.struct_size = ctypes.sizeof(VariantInfo)
        st = c.L.rj_variant_get(c.ptr, i, ctypes.byref(v))
        if st:  # rj_variant_get leaves no message: the status is the whole answer
            raise RedjitError(c.L.rj_status_name(st).decode(), f"rj_variant_get({i}) failed")
        out.append(_variant_class()(v.name.decode(), v.priority, v.kinds.decode(),
                                    v.summary.decode()))
    return out


def explain(request: Request, target: Optional[str] = None, *,
            emulate_packed: Optional[bool] = None) -> str:
    """rj_explain's text: one line per variant, chosen / rejected with its reason / not tried.
    A request that no variant accepts still returns the text (every line a rejection)."""
    c = _ctx()
    req = c.parse(request)
    try:
        text = ctypes.c_char_p()
        o = c.options(0, target, emulate_packed=emulate_packed)
        s = c.L.rj_explain(c.ptr, req, ctypes.byref(o), ctypes.byref(text))
        if s not in (0, 2):  # RJ_OK, RJ_ENOVARIANT
            raise c.fail(s)
        return text.value.decode()
    finally:
        c.L.rj_request_free(req)


def canonical(request: Request) -> Dict[str, Any]:
    """The canonical form of a request (every default filled in), as a dict."""
    c = _ctx()
    req = c.parse(request)
    try:
        text = ctypes.c_char_p()
        c.check(c.L.rj_request_canonical(c.ptr, req, ctypes.byref(text)))
        import json
        return json.loads(text.value.decode())
    finally:
        c.L.rj_request_free(req)


# ------------------------------------------------------------------ kernels
class Kernel:
    """A compiled kernel, owned by the context of the thread that compiled it (launch it from
    that thread).  Texts are read from the library when asked for.  The Kernel holds one pin on
    the kernel (its compile's), released by close(), at the end of a `with` block, or when the
    Kernel is dropped; from then on the context's cache may evict the kernel.  Kernels of the
    same request share one compiled kernel, each with its own pin.

    The constructor takes over the pin of ptr (compile's and compile_ir's).  Keyword-only
    _owns_pin=False (private) wraps a kernel whose pin another holder owns (reduce's memo, another
    Kernel): closing or dropping it releases nothing, and it must not outlive that holder."""

    def __init__(self, ctx, ptr, request=None, *, _owns_pin=True):
        self._ctx = ctx  # keeps the rj_ctx (which owns the kernel) alive
        self._ptr = ptr  # one pin when _owns_pin: released by close()
        self._owns_pin = bool(_owns_pin)
        self._request = request
        L = ctx.L
        g, b, sh = (ctypes.c_uint * 3)(), (ctypes.c_uint * 3)(), ctypes.c_uint()
        L.rj_kernel_dims(ptr, g, b, ctypes.byref(sh))
        self.grid, self.block, self.shared_bytes = tuple(g), tuple(b), sh.value
        self.variant = L.rj_kernel_variant(ptr).decode()
        self.target = L.rj_kernel_target(ptr).decode()
        self.entry = L.rj_kernel_entry(ptr).decode()
        self.compile_ms = L.rj_kernel_compile_ms(ptr)

    def close(self) -> None:
        """Releases this Kernel's pin (rj_kernel_release; none when built with _owns_pin=False);
        the Kernel is unusable afterwards.  Closing again does nothing."""
        p, self._ptr = self._ptr, None
        if p and self._owns_pin:
            self._ctx.release(p)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: a half-made Kernel, or the interpreter shutting down
            pass

    def _kernel(self):
        if not self._ptr:
            raise RedjitError("RJ_EINVAL", "kernel: closed (its pin was released)")
        return self._ptr

    def _text(self, what):
        t = self._ctx.L.rj_kernel_text(self._kernel(), what)
        return t.decode() if t is not None else ""

    @property
    def ptx(self) -> str:
        return self._text(EMIT_PTX)

    @property
    def llvm_ir(self) -> str:
        return self._text(EMIT_LLVM)

    @property
    def llvm_ir_optimized(self) -> str:
        return self._text(EMIT_LLVM_OPT)

    def explain(self) -> str:
        """rj_explain's text for this kernel's request on its target."""
        if self._request is None:
            raise RedjitError("RJ_EINVAL", "explain: a kernel from compile_ir has no request")
        return explain(self._request, self.target)

    def load(self, device: int = 0) -> float:
        """Loads the kernel on GPU `device` now; returns the load's milliseconds."""
        c = self._owner()
        ms = ctypes.c_double()
        dev = _int_arg("device", device)
        c.check(c.L.rj_kernel_load(c.ptr, self._kernel(), dev, ctypes.byref(ms)))
        return ms.value

    def _owner(self):
        if self._ctx.thread != _thread.get_ident():
            raise RedjitError("RJ_EINVAL", "kernel: compiled by another thread's context (a "
                              "context is single-threaded): compile it in this thread")
        return self._ctx

    def launch(self, args: Sequence[Any], grid: Dims = None, block: Dims = None,
               shared_bytes: Optional[int] = None, device: int = 0) -> float:
        """rj_kernel_launch: runs the kernel on GPU `device` and waits for it; returns its
        milliseconds (CUDA events).  args: one per kernel parameter; an int is a 64-bit value
        (a device pointer), a ctypes instance (c_int32(5), c_float(1.0) ...) is passed as it is.
        grid / block / shared_bytes default to the kernel's own (compile_ir kernels have none)."""
        c = self._owner()
        grid = _dim3(grid if grid is not None else self.grid, "grid")
        block = _dim3(block if block is not None else self.block, "block")
        if 0 in grid or 0 in block:
            raise RedjitError("RJ_EINVAL", "launch: give grid and block (this kernel has none)")
        sh = self.shared_bytes if shared_bytes is None else int(shared_bytes)
        vals = [a if isinstance(a, ctypes._SimpleCData) or isinstance(a, ctypes.Structure)
                else ctypes.c_uint64(int(a)) for a in args]
        arr = (ctypes.c_void_p * max(1, len(vals)))(*[ctypes.addressof(v) for v in vals])
        ms = ctypes.c_double()
        dev = _int_arg("device", device)
        c.check(c.L.rj_kernel_launch(c.ptr, self._kernel(), dev, grid, block, sh, arr,
                                     ctypes.byref(ms)))
        return ms.value

    def __repr__(self):
        return (f"<redjit.Kernel {self.entry} variant={self.variant} target={self.target} "
                f"grid={self.grid} block={self.block}>")


def _dim3(v, what):
    if isinstance(v, int):
        v = (v,)
    v = tuple(int(n) for n in v)
    if not 1 <= len(v) <= 3:
        raise RedjitError("RJ_EINVAL", f"{what}: 1 to 3 sizes")
    return (ctypes.c_uint * 3)(*(v + (1,) * (3 - len(v))))


def compile(request: Request, *, target: Optional[str] = None, ptx_version: int = 0,
            device: int = 0, emulate_packed: Optional[bool] = None,
            ir_in_process: Optional[bool] = None) -> Kernel:
    """validate -> dispatch -> LLVM IR -> PTX (no GPU needed).  request: a dict or JSON text.
    target None: GPU `device`'s, else sm_90.  emulate_packed / ir_in_process (a custom
    combine's IR in this process): None takes set_options' default."""
    c = _ctx()
    c.release_deferred()
    text = request if isinstance(request, (str, bytes)) else dumps(request)
    req = c.parse(text)
    try:
        k = ctypes.c_void_p()
        o = c.options(device, target, ptx_version, emulate_packed=emulate_packed,
                      ir_in_process=ir_in_process)
        c.check(c.L.rj_compile(c.ptr, req, ctypes.byref(o), ctypes.byref(k)))
    finally:
        c.L.rj_request_free(req)
    return Kernel(c, k.value, text)


_BITCODE = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")


def compile_ir(ir: Any, entry: str, *, target: Optional[str] = None, ptx_version: int = 0,
               device: int = 0, ir_in_process: Optional[bool] = None,
               ir_timeout_ms: Optional[int] = None, ir_memory_mb: Optional[int] = None) -> Kernel:
    """rj_compile_ir: an NVPTX module as LLVM IR text (str, or an object whose str() is IR, such
    as an llvmlite module) or bitcode (bytes) -> a Kernel.  entry: the kernel function.
    ir_in_process / ir_timeout_ms / ir_memory_mb: rj_options' (None: set_options' default)."""
    c = _ctx()
    c.release_deferred()
    if isinstance(ir, (bytes, bytearray, memoryview)):
        data = bytes(ir)
        n = len(data) if data[:4] in _BITCODE else 0
    else:
        data, n = str(ir).encode(), 0
    if not n and b"\0" in data:  # text: the library would read it up to the NUL
        raise RedjitError("RJ_EINVAL", f"ir: the text holds a NUL character at {data.index(0)}")
    name = _str_arg("entry", entry)
    k = ctypes.c_void_p()
    o = c.options(device, target, ptx_version, ir_in_process=ir_in_process,
                  ir_timeout_ms=ir_timeout_ms, ir_memory_mb=ir_memory_mb)
    c.check(c.L.rj_compile_ir(c.ptr, data, n, name, ctypes.byref(o), ctypes.byref(k)))
    return Kernel(c, k.value)


# ------------------------------------------------------------------ reduce
def _stream_of(stream, a):
    if stream is None:
        if a.framework == "torch":
            raw = getattr(_arrays._torch._C, "_cuda_getCurrentRawStream", None)
            if raw is not None:  # the handle alone, without building a torch.cuda.Stream
                return raw(a.device)
            return _arrays._torch.cuda.current_stream(a.device).cuda_stream
        if a.framework == "cupy":
            import cupy
            return cupy.cuda.get_current_stream().ptr
        return 0
    if isinstance(stream, int):
        return stream
    if isinstance(stream, ctypes.c_void_p):
        return stream.value or 0
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        v = getattr(stream, attr, None)
        if isinstance(v, int):
            return v
    try:
        return int(stream)  # numba's Stream, CUstream objects
    except (TypeError, ValueError):
        h = getattr(stream, "handle", None)
        if h is not None:
            return getattr(h, "value", h) or 0
    raise RedjitError("RJ_EINVAL", f"stream: {type(stream).__name__} is not a stream "
                      "(an int handle, a torch / CuPy / Numba stream)")


_NUMPY_NAMES = {"f16": "float16", "f32": "float32", "f64": "float64", "i32": "int32",
                "i64": "int64", "u32": "uint32", "u64": "uint64", "i8": "int8", "u8": "uint8",
                "i16": "int16", "u16": "uint16", "bool": "bool"}


def _out_dtype(op, dtype):
    """The output's redjit dtype for op (a name or a Custom) on input dtype `dtype`."""
    if op.__class__ is Custom:
        return op.out_dtype(dtype)
    if op not in OP or dtype not in DTYPE:  # refused later, naming the field
        return "i64" if op in INDEX_OPS else dtype
    r = lib().rj_result_dtype(OP[op], DTYPE[dtype])  # the library's rule: one owner
    return next((k for k, v in DTYPE.items() if v == r), dtype)


# i8 .. bool and float8: results of another dtype (sum / prod in 64 bits, means in f64 / f32)
_NARROW = ("i8", "u8", "i16", "u16", "bool", "e4m3", "e5m2")


def _torch_dtype(t, name):
    for k, v in _arrays._TORCH_DTYPES.items():
        if v == name:
            return k
    raise RedjitError("RJ_EINVAL", f"out: torch has no dtype for {name}: give out")


def _empty(a, shape, dtype):
    """out for x's result, of redjit dtype `dtype` (x's, int64 for an index, a Custom's)."""
    x = a.obj
    same = dtype == a.dtype
    if a.framework == "torch":
        t = _arrays._torch
        return t.empty(shape, dtype=x.dtype if same else _torch_dtype(t, dtype), device=x.device)
    if dtype not in _NUMPY_NAMES and not same:
        raise RedjitError("RJ_EINVAL", f"out: give out for a {dtype} result")
    if a.framework == "cupy":
        import cupy
        with cupy.cuda.Device(a.device):
            return cupy.empty(shape, dtype=x.dtype if same else _NUMPY_NAMES[dtype])
    if a.framework == "numba":
        from numba import cuda
        return cuda.device_array(shape, dtype=x.dtype if same else _NUMPY_NAMES[dtype])
    raise RedjitError("RJ_EINVAL", f"out: give out for a {a.framework} array (redjit allocates "
                      "only for torch, CuPy and Numba)")


def _check_out(o, a, kept, want):
    if o.shape != kept and not (kept == () and o.shape in ((1,), ())):
        raise RedjitError("RJ_EINVAL", f"out: shape {o.shape}, expected {kept}")
    if o.dtype != want:
        raise RedjitError("RJ_EINVAL", f"out: dtype {o.dtype}, expected {want}"
                          + (" (the op's result: argmax / argmin give int64 indices, a "
                             "struct-state Custom its field `result`'s dtype)"
                             if want != a.dtype else ""))
    if o.device != a.device:
        raise RedjitError("RJ_EINVAL", f"out: on device {o.device}, the source on {a.device}")
    if not _arrays.is_row_major(o.shape, o.strides):
        raise RedjitError("RJ_EINVAL", f"out: must be contiguous (row-major); strides {o.strides}")


def _prepare(c, a, o, axis, op, nan, accum, deterministic, dynamic, correction, acc_dtype,
             invariant=False):
    """What a repeated reduce of this layout needs: (C function, handle, third argument, kept
    shape).  Not dynamic: rj_tensor_launch of the kernel rj_compile made for the request (the
    context owns it), then the parsed request is freed.  Dynamic: rj_reduce of the parsed
    request (kept in c.requests), whose runtime-size kernel takes its sizes from it.  Every check
    of the arguments happens here, once per layout."""
    axes = normalize_axes(axis, len(a.shape))
    kept = kept_shape(a.shape, axes)
    if o is None:
        if accum:
            raise RedjitError("RJ_EINVAL", "out: accum folds out's old values in: give out")
    else:
        _check_out(o, a, kept, _out_dtype(op, a.dtype))
    rq = tensor_request(a.shape, a.strides, axes, a.dtype, op, nan, accum, deterministic, dynamic,
                        correction, acc_dtype, invariant)
    opts = c.options(a.device)
    if dynamic:
        rkey = dumps(rq, sort_keys=True)
        req = c.requests.get(rkey)
        if req is None:
            req = c.requests[rkey] = c.parse(rq)
            c.custom_kept = c.custom_kept or op.__class__ is Custom
        return c.L.rj_reduce, req, opts, kept
    req = c.parse(rq)
    try:
        k = ctypes.c_void_p()
        c.check(c.L.rj_compile(c.ptr, req, ctypes.byref(opts), ctypes.byref(k)))
    finally:
        c.L.rj_request_free(req)
    c.pins.append(k.value)  # the memo's pin, released when the memo is dropped
    return c.launch, k, a.device, kept


def _memo_room(c, n):
    """Room for n more memo keys.  Entries may share requests: all go at once, before the lookup
    (an entry prepared or found earlier in this call must not lose its request to the drop)."""
    if len(c.memo) + n > _MEMO_MAX:
        c.drop_memo()


_TENSOR = None      # torch.Tensor, once a torch tensor has been seen
_RAW_STREAM = None  # torch's current stream handle of a device (an int)
_EMPTY = None       # torch.empty
_INT64 = None       # torch.int64


def _torch_seen():
    global _TENSOR, _RAW_STREAM, _EMPTY, _INT64
    t = _arrays._torch
    if t is None or _TENSOR is not None:
        return
    raw = getattr(t._C, "_cuda_getCurrentRawStream", None)
    _RAW_STREAM = raw if raw is not None else (lambda d: t.cuda.current_stream(d).cuda_stream)
    _EMPTY = t.empty
    _INT64 = t.int64
    _TENSOR = t.Tensor


def reduce(x: Any, op: Union[str, Custom] = "sum", axis: Axis = None, *, out: Any = None,
           nan: str = "propagate", accum: bool = False, stream: Any = None,
           deterministic: bool = True, dynamic: bool = False, correction: Optional[int] = None,
           acc_dtype: Optional[str] = None, others: Sequence[Any] = (), map: Optional[str] = None,
           epilogue: Optional[str] = None, scale: Optional[float] = None,
           p: Any = None, invariant: bool = False) -> Any:
    """Reduces x (a torch CUDA tensor, a __cuda_array_interface__ array, or a CUDA __dlpack__
    object) over `axis` (None: every dim; an int or a tuple, negatives from the end) with op
    (a name of OP: "sum", "max", "min", "prod", "and" / "or" / "xor" of integers, "argmax" /
    "argmin", "mean" / "var" / "std" / "logsumexp" of floats: docs/REQUESTS.md, "Ops"; or a
    redjit.Custom, the caller's combine as LLVM IR) into out
    (allocated by x's framework when None: the kept dims, row-major, shape () for a full
    reduction), on `stream` (None: the framework's current stream) without waiting.  Returns out.
    argmax / argmin write int64 indices (the first of ties; out allocated as int64); var / std
    divide by N - correction (None: 1, as torch.var).  acc_dtype="f64" accumulates sum / prod /
    mean of f16, bf16 and f32 in f64, rounded once to x's dtype (None: the dtype's default, f32
    for those, f64 for f64).

    Fused maps (docs/TENSOR.md "Fused maps"): map ("abs", "square", "mul", "sub_square",
    "abs_sub", "where", "nonzero") of x and `others` (arrays broadcasting to x's shape; "where":
    the mask), epilogue ("sqrt", "log", "scale" by `scale`), or a named op ("dot", "sumsq",
    "norm" with p = 1, 2, "inf", "amax", "mse", "l1", "count_nonzero", "masked_sum",
    "masked_mean": others=(mask,), the mean divided by the count of selected elements).

    invariant=True: the bits of each output depend only on its reduced length and x's dtype, not
    on the batch, the GPU model or its SM count (docs/INVARIANCE.md)."""
    try:
        c = _tls.ctx
    except AttributeError:
        c = _ctx()
    if others or map is not None or epilogue is not None or (op.__class__ is str and
                                                              op in _fused.FUSED_OPS):
        if invariant:
            raise RedjitError("RJ_EINVAL", "reduce: invariant with a fused map: give the JSON "
                              "request (\"invariant\": true) to redjit.compile / the C API")
        if accum or dynamic or not deterministic or correction is not None:
            raise RedjitError("RJ_EINVAL", "reduce: a fused map takes out, nan, stream and "
                              "acc_dtype (not accum, dynamic, deterministic or correction)")
        if axis.__class__ is list:
            axis = tuple(axis)
        others = tuple(others)
        tkey = None
        if x.__class__ is _TENSOR and op.__class__ is str and x.is_cuda:
            # torch: a fused layout seen before (x's, each other's and out's shape, strides,
            # dtype and device, and the arguments) goes straight to its launch, as below
            tkey = _fused.torch_key(x, others, out, axis, op, map, epilogue, scale, p, nan,
                                    acc_dtype, _TENSOR)
            try:
                e = c.memo.get(tkey)
            except TypeError:  # an argument that cannot be a key: the described path decides
                e = tkey = None
            if e is not None:
                k, dev, kept, arr, n = e
                if out is None:
                    out = _EMPTY(kept, dtype=x.dtype, device=x.device)
                for i in range(n):
                    arr[i] = others[i].data_ptr()
                s = c.launch_n(c.vptr, k, dev, x.data_ptr(), arr, n, out.data_ptr(), 0,
                               _RAW_STREAM(dev) if stream is None else _stream_of(stream, None))
                if s:
                    raise c.fail(s)
                return out
        return _fused.fused_reduce(c, x, op, axis, others, map, epilogue, scale, p, out, nan,
                                   stream, acc_dtype, _stream_of, _empty, _check_out, tkey)
    if axis.__class__ is list:
        axis = tuple(axis)
    tkey = None
    if x.__class__ is _TENSOR and x.is_cuda:
        # torch: a layout seen before (x's and out's shape, strides, dtype, device and the
        # arguments) goes straight to its launch; every check was made when it was first seen.
        dev = x.get_device()
        if out is None:
            tkey = (x.shape, x.stride(), x.dtype, dev, axis, op, nan, accum, deterministic,
                    dynamic, correction, acc_dtype, invariant)
        elif out.__class__ is _TENSOR and out.is_cuda:
            tkey = (x.shape, x.stride(), x.dtype, dev, axis, op, nan, accum, deterministic,
                    dynamic, correction, acc_dtype, invariant, out.shape, out.is_contiguous(),
                    out.dtype, out.get_device())
        e = c.memo.get(tkey)
        if e is not None:
            fn, h, arg, kept = e
            if out is None:
                if op.__class__ is str and _arrays._TORCH_DTYPES.get(x.dtype) in _NARROW:
                    od = _torch_dtype(_arrays._torch,
                                      _out_dtype(op, _arrays._TORCH_DTYPES[x.dtype]))
                else:
                    od = _INT64 if op in INDEX_OPS else x.dtype if op.__class__ is str or \
                        op.result_dtype is None else _torch_dtype(_arrays._torch, op.result_dtype)
                out = _EMPTY(kept, dtype=od, device=x.device)
            s = fn(c.vptr, h, arg, x.data_ptr(), out.data_ptr(),
                   _RAW_STREAM(dev) if stream is None else _stream_of(stream, None))
            if s:
                raise c.fail(s)
            return out
    return _reduce_described(c, tkey, x, op, axis, out, nan, accum, stream, deterministic,
                             dynamic, correction, acc_dtype, invariant)


def _reduce_described(c, tkey, x, op, axis, out, nan, accum, stream, deterministic, dynamic,
                      correction, acc_dtype, invariant=False):
    """reduce for any array (and a torch layout seen for the first time): the arrays described,
    their layout looked up in the memo or prepared."""
    a = describe(x)
    o = None if out is None else describe(out, "out")
    if 0 in a.shape:  # no kernel takes a zero-size dim: NumPy's results, by x's framework
        from ._array_api import reduce_empty
        return reduce_empty(a, out, op, axis, accum, stream)
    key = (a.shape, a.strides, a.dtype, a.device, axis, op, nan, accum, deterministic, dynamic,
           correction, acc_dtype, invariant,
           None if o is None else (o.shape, o.strides, o.dtype, o.device))
    _memo_room(c, 1 if tkey is None else 2)
    if c.deferred:
        c.release_deferred()
    e = c.memo.get(key)
    if e is None:
        e = c.memo[key] = _prepare(c, a, o, axis, op, nan, accum, deterministic, dynamic,
                                   correction, acc_dtype, invariant)
    if tkey is not None:
        c.memo[tkey] = e
    elif a.framework == "torch" and _TENSOR is None:
        _torch_seen()
    fn, h, arg, kept = e
    if out is None:
        out = _empty(a, kept, _out_dtype(op, a.dtype))
        o = describe(out, "out")
    s = fn(c.vptr, h, arg, a.ptr, o.ptr, _stream_of(stream, a))
    if s:
        raise c.fail(s)
    return out


def dot(x: Any, y: Any, axis: Axis = None, *, out: Any = None, stream: Any = None) -> Any:
    """sum(x * y) over `axis` (None: every dim) in one pass; y broadcasts to x's shape and has
    x's dtype (torch.dot / (x * y).sum(axis))."""
    return reduce(x, "dot", axis, others=(y,), out=out, stream=stream)


def norm(x: Any, p: Any = 2, axis: Axis = None, *, out: Any = None, stream: Any = None) -> Any:
    """The p-norm of x over `axis` (torch.linalg.vector_norm): p = 2 (accumulated in f64 for
    f16, bf16 and f32: no overflow), 1, or "inf" / float("inf")."""
    if p == float("inf"):
        p = "inf"
    return reduce(x, "norm", axis, p=p, out=out, stream=stream)


def segment_reduce(x: Any, offsets: Any, op: str = "sum", *, out: Any = None,
                   nan: str = "propagate", correction: Optional[int] = None, check: bool = False,
                   stream: Any = None, invariant: bool = False) -> Any:
    """Reduces the segments of axis 0 of x (1-D, or 2-D [N, C]: segments of rows) that offsets
    (an int32 / int64 array of S + 1 entries on x's device) cut: segment s is x[offsets[s] :
    offsets[s + 1]] (docs/TENSOR.md "Segmented reductions").  One launch, no host
    synchronisation; returns out (shape (S,) or (S, C); allocated by x's framework when None).
    Every op of reduce but custom (argmax / argmin: the index within the segment, -1 for an
    empty one; empty segments get the op's identity).  check=True waits for the GPU and raises
    RJ_EINVAL naming "segments" when offsets were invalid (the kernel clamps them: it never
    reads outside x).  invariant=True: each segment's result depends only on its length and
    values, not on where it starts or on the other segments (docs/INVARIANCE.md)."""
    try:
        c = _tls.ctx
    except AttributeError:
        c = _ctx()
    if op.__class__ is not str:
        raise RedjitError("RJ_EINVAL", "op: segment_reduce takes an op name (not a Custom)")
    return _segment.segment_reduce(c, x, offsets, op, out, nan, correction, check, stream,
                                   _stream_of, _empty, _check_out, _out_dtype, invariant)


def reduce_values(x: Any, op: str = "argmax", axis: Axis = None, *, out: Any = None,
                  values: Any = None, stream: Any = None) -> Tuple[Any, Any]:
    """argmax / argmin of x over `axis` with the extreme values too (the request's "values":
    rj_reduce_values): returns (indices, values), int64 indices (the first of ties) and the
    values in x's dtype, allocated by x's framework where out / values are None.  No memo of
    the layout: the parsed request is kept per layout, the kernel found by rj_reduce's cache."""
    if op not in INDEX_OPS:
        raise RedjitError("RJ_EINVAL", f"op: reduce_values takes \"argmax\" or \"argmin\", "
                          f"not {op!r}")
    try:
        c = _tls.ctx
    except AttributeError:
        c = _ctx()
    a = describe(x)
    axes = normalize_axes(tuple(axis) if axis.__class__ is list else axis, len(a.shape))
    kept = kept_shape(a.shape, axes)
    outs = []
    for arr, what, want in ((out, "out", "i64"), (values, "values", a.dtype)):
        if arr is None:
            arr = _empty(a, kept, want)
        d = describe(arr, what)
        _check_out(d, a, kept, want)
        outs.append((arr, d))
    rq = tensor_request(a.shape, a.strides, axes, a.dtype, op)
    rq["values"] = True
    rkey = dumps(rq, sort_keys=True)
    req = c.requests.get(rkey)
    if req is None:
        if len(c.requests) >= _MEMO_MAX:
            c.drop_memo()  # the memo's entries go with the requests they use
        req = c.requests[rkey] = c.parse(rq)
    s = c.L.rj_reduce_values(c.ptr, req, c.options(a.device), a.ptr, outs[0][1].ptr,
                             outs[1][1].ptr, _stream_of(stream, a))
    if s:
        raise c.fail(s)
    return outs[0][0], outs[1][0]


# ------------------------------------------------------------------ treduce
OP_CUSTOM = 13  # RJ_OP_CUSTOM: a redjit.Custom's op in rj_treduce_group


def _treduce_buf(b, a, what):
    if len(a.shape) > TREDUCE_MAX_DIMS:
        raise RedjitError("RJ_EINVAL", f"{what}: {len(a.shape)} dims (at most 5)")
    shape = a.shape or (1,)
    b.ptr, b.device, b.ndim = a.ptr, a.device, len(shape)
    for i, n in enumerate(shape):
        b.shape[i] = n
    if a.strides is not None and a.shape and not _arrays.is_row_major(a.shape, a.strides):
        b.has_strides = 1
        for i, s in enumerate(a.strides):
            b.strides[i] = s


def treduce(sources: Sequence[Any], dst: Any, *, root: int = 0, op: Union[str, Custom] = "sum",
            nan: str = "propagate", accum: bool = False, path: str = "auto", stream: Any = None,
            tile: Optional[Sequence[int]] = None, pingpong: bool = False, sync: bool = True,
            dynamic: bool = False) -> Dict[str, Any]:
    """Root reduce across devices (rj_treduce_run): dst (on sources[root]'s GPU) receives the
    element-wise op of every source.  path: auto peer staged split split_equal ring.  stream:
    of the root's GPU (None: the framework's current stream there).  sync=False returns once the
    work is enqueued (rj_treduce_group.async).  dynamic=True: runtime-size kernels (a new element
    count of dense buffers compiles nothing).  op: a name, or a redjit.Custom (a struct state's
    dst has field `result`'s dtype).  Returns what ran, as a dict (path, ms, ...)."""
    c = _ctx()
    custom = op if op.__class__ is Custom else None
    srcs = [describe(s, f"sources[{i}]") for i, s in enumerate(sources)]
    if not srcs:
        raise RedjitError("RJ_EINVAL", "sources: at least one")
    d = describe(dst, "dst")
    for i, a in enumerate(srcs):
        if a.dtype != srcs[0].dtype:
            raise RedjitError("RJ_EINVAL", f"sources[{i}]: dtype {a.dtype}, sources[0] is "
                              f"{srcs[0].dtype}")
    want = custom.out_dtype(srcs[0].dtype) if custom else srcs[0].dtype
    if d.dtype != want:
        raise RedjitError("RJ_EINVAL", f"dst: dtype {d.dtype}, expected {want}")
    for name, table, v in (("op", OP, op), ("nan", NAN, nan), ("path", TREDUCE_PATH, path)):
        if v is custom and custom is not None:
            continue
        if v not in table:
            raise RedjitError("RJ_EINVAL", f"{name}: unknown value {v!r} (one of: "
                              f"{' '.join(table)})")
    bufs = (TreduceBuf * len(srcs))()
    for i, a in enumerate(srcs):
        _treduce_buf(bufs[i], a, f"sources[{i}]")
    g = TreduceGroup()
    c.L.rj_treduce_group_init_sized(ctypes.byref(g), ctypes.sizeof(g))
    g.ranks, g.root, g.src = len(srcs), int(root), bufs
    _treduce_buf(g.dst, d, "dst")
    g.op, g.dtype, g.nan = OP_CUSTOM if custom else OP[op], DTYPE[srcs[0].dtype], NAN[nan]
    keep = _custom.fill_group(g, custom, srcs[0].dtype, canonical) if custom else None
    if tile is not None:
        g.tile[0], g.tile[1] = int(tile[0]), int(tile[1])
    g.pingpong, g.accum, g.path = int(bool(pingpong)), int(bool(accum)), TREDUCE_PATH[path]
    g.stream = _stream_of(stream, d) or None
    g.async_ = 0 if sync else 1
    g.dynamic = int(bool(dynamic))
    res = TreduceResult()
    res.struct_size = ctypes.sizeof(res)
    c.check(c.L.rj_treduce_run(c.ptr, ctypes.byref(g), None, ctypes.byref(res)))
    del keep  # the combine's IR bytes lived through the call
    out = {f: getattr(res, f) for f, _ in TreduceResult._fields_ if f != "struct_size"}
    for f in ("variant", "target", "path", "cache"):
        out[f] = out[f].decode()
    return out


# libredjit.so is loaded with the package (0.3-0.5 ms: dlopen and the prototypes), so that a
# program's first reduction does not pay for it; where it cannot be loaded, the first call that
# needs it raises the RedjitError naming the paths searched.
try:
    lib()
except RedjitError:
    pass


# The NumPy / array-API reductions (_array_api.py), reached as redjit.sum etc. through the module's
# __getattr__: kept out of this module's globals, where sum / max / min / all / any would hide
# the builtins from the code above.
_ARRAY_API = ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "logsumexp",
              "all", "any", "dtype_name", "result_dtype")


if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ below
    from ._array_api import (all, any, argmax, argmin, dtype_name, logsumexp, max,  # noqa
                             mean, min, prod, result_dtype, std, sum, var)


_ARRAY_API_FNS = {}  # name: function, once the first of them is asked for


def __getattr__(name):
    f = _ARRAY_API_FNS.get(name)  # first: a NumPy reduction's call reads redjit.sum each time
    if f is not None:
        return f
    if name in ("Request", "Axis", "Dims"):
        return _alias(name)
    if name == "Variant":
        return _variant_class()
    if name in _ARRAY_API:
        from . import _array_api
        _ARRAY_API_FNS.update((n, getattr(_array_api, n)) for n in _ARRAY_API)
        return _ARRAY_API_FNS[name]
    raise AttributeError(f"module 'redjit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_ARRAY_API))


def _package_version():
    """The library's version (rj_version); without a library, the one the package was built
    with (setup.py's _version.py, cmake --install's _installed.py), else "0+unknown"."""
    try:
        return version()
    except RedjitError:
        pass
    for mod in ("_version", "_installed"):
        try:
            return __import__(f"{__name__}.{mod}", fromlist=["VERSION"]).VERSION
        except (ImportError, AttributeError):
            pass
    return "0+unknown"


__version__: str = _package_version()
