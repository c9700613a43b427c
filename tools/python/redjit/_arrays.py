"""GPU arrays as redjit sees them (pointer, shape, element strides, dtype, device, framework), and
the tensor request of a reduce built from them.  Pure Python: the functions that need no GPU
(tensor_request, element_strides, kept_shape, dtype_of_typestr) are tested without one."""
import ctypes
import sys

from ._custom import Custom
from ._lib import ITEMSIZE, RedjitError

_TYPESTR = {"f2": "f16", "f4": "f32", "f8": "f64", "i4": "i32", "i8": "i64", "u4": "u32",
            "u8": "u64", "i1": "i8", "u1": "u8", "i2": "i16", "u2": "u16", "b1": "bool"}
_LITTLE = sys.byteorder == "little"


def _einval(msg):
    return RedjitError("RJ_EINVAL", msg)


def dtype_of_typestr(typestr):
    """'<f4' -> 'f32' (the __cuda_array_interface__ typestr); bf16 has no typestr (torch only)."""
    if len(typestr) == 3 and (typestr[0] == "<" or (typestr[0] in "=|" and _LITTLE)):
        d = _TYPESTR.get(typestr[1:])
        if d:
            return d
    raise _einval(f"dtype: typestr {typestr!r} is not one redjit reduces "
                  "(<f2 <f4 <f8 <i4 <i8 <u4 <u8 |i1 |u1 <i2 <u2 |b1; bf16 and float8 through a "
                  "torch tensor)")


def element_strides(byte_strides, itemsize):
    """Byte strides -> element strides; each must be a multiple of the item size."""
    out = []
    for i, b in enumerate(byte_strides):
        if b % itemsize:
            raise _einval(f"strides[{i}]: {b} bytes is not a multiple of the item size "
                          f"({itemsize} bytes)")
        out.append(b // itemsize)
    return tuple(out)


def is_row_major(shape, strides):
    """strides (elements) None or those of a C-contiguous array (size-1 dims' strides ignored)."""
    if strides is None:
        return True
    want = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != want:
            return False
        want *= n
    return True


def normalize_axes(axis, ndim):
    """axis None -> every dim; int or sequence, negatives counted from the end -> sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    out = []
    for i, a in enumerate(axis):
        a = int(a)
        b = a + ndim if a < 0 else a
        if not 0 <= b < ndim:
            raise _einval(f"axes[{i}]: {a} is outside -{ndim}..{ndim - 1}")
        if b in out:
            raise _einval(f"axes[{i}]: dim {b} is given twice")
        out.append(b)
    return tuple(sorted(out))


def kept_shape(shape, axes):
    """The destination's shape: the kept dims in order; () when every dim is reduced."""
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def tensor_request(shape, strides, axes, dtype, op="sum", nan="propagate", accum=False,
                   deterministic=True, dynamic=False, correction=None, acc_dtype=None,
                   invariant=False):
    """The JSON dict of a tensor request (op: a name, or a redjit.Custom).  shape: the source view's sizes (a 0-d array is [1]);
    strides: element strides or None (row-major); axes: normalised dims (normalize_axes);
    correction: var / std's divisor N - correction (None: the default, 1); acc_dtype: "f64" to
    accumulate sum / prod / mean of f16, bf16, f32 in f64 (None: the default); invariant: each
    output's bits fixed by its reduced length and the dtype (docs/INVARIANCE.md)."""
    if dtype not in ITEMSIZE:
        raise _einval(f"dtype: unknown value {dtype!r}")
    if len(shape) == 0:  # a 0-d array: one element
        shape, strides, axes = [1], None, (0,)
    shape = [int(n) for n in shape]
    custom = op.__class__ is Custom
    req = {"kind": "tensor", "op": "custom" if custom else op, "dtype": dtype, "shape": shape}
    if strides is not None and not is_row_major(shape, strides):
        req["strides"] = [int(s) for s in strides]
    req["axes"] = [int(a) for a in axes]
    if nan != "propagate":
        req["nan"] = nan
    if accum:
        req["accum"] = True
    if not deterministic:
        req["deterministic"] = False
    if dynamic:
        req["dynamic"] = True
    if invariant:
        req["invariant"] = True
    if correction is not None:
        req["correction"] = int(correction)
    if acc_dtype is not None:
        req["acc_dtype"] = acc_dtype
    if custom:
        req["combine"] = op.combine()
    return req


# ------------------------------------------------------------------ array description
class ArrayInfo:
    __slots__ = ("ptr", "shape", "strides", "dtype", "device", "framework", "obj", "keep")

    def __init__(self, ptr, shape, strides, dtype, device, framework, obj, keep=None):
        self.ptr = ptr            # device address of element 0
        self.shape = shape        # tuple
        self.strides = strides    # element strides or None (row-major)
        self.dtype = dtype        # redjit dtype name
        self.device = device      # CUDA ordinal
        self.framework = framework  # "torch", "cupy", "numba", "cai", "dlpack"
        self.obj = obj
        self.keep = keep          # what must stay alive while ptr is used (a DLPack capsule)


_torch = None
_TORCH_DTYPES = None


def _torch_mod():
    global _torch, _TORCH_DTYPES
    if _torch is None:
        t = sys.modules.get("torch")
        if t is None:
            return None
        _TORCH_DTYPES = {t.float16: "f16", t.bfloat16: "bf16", t.float32: "f32",
                         t.float64: "f64", t.int32: "i32", t.int64: "i64"}
        for name, d in (("uint32", "u32"), ("uint64", "u64"), ("int8", "i8"), ("uint8", "u8"),
                        ("int16", "i16"), ("uint16", "u16"), ("bool", "bool"),
                        ("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2")):
            if hasattr(t, name):
                _TORCH_DTYPES[getattr(t, name)] = d
        _torch = t
    return _torch


def describe(x, what="x"):
    """An ArrayInfo for a torch CUDA tensor, any __cuda_array_interface__ array, or a __dlpack__
    object on a CUDA device."""
    t = _torch_mod()
    if t is not None and isinstance(x, t.Tensor):
        # The tensor's own attributes: cheaper than building __cuda_array_interface__, and they
        # cover bf16 and tensors that require grad, which the interface refuses.
        if not x.is_cuda:
            raise _einval(f"{what}: a torch tensor on {x.device}, not on a CUDA device")
        d = _TORCH_DTYPES.get(x.dtype)
        if d is None:
            raise _einval(f"{what}: torch dtype {x.dtype} is not one redjit reduces")
        shape = tuple(x.shape)
        strides = None if x.is_contiguous() else tuple(x.stride())
        return ArrayInfo(x.data_ptr(), shape, strides, d, x.device.index, "torch", x)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        if cai.get("mask") is not None:
            raise _einval(f"{what}: masked arrays are not supported")
        d = dtype_of_typestr(cai["typestr"])
        shape = tuple(cai["shape"])
        st = cai.get("strides")
        strides = None if st is None else element_strides(st, ITEMSIZE[d])
        mod = type(x).__module__.split(".")[0]
        if mod == "cupy":
            dev, fw = x.device.id, "cupy"
        elif mod == "numba":
            dev, fw = _pointer_device(cai["data"][0]), "numba"
        else:
            dev, fw = _pointer_device(cai["data"][0]), "cai"
        return ArrayInfo(cai["data"][0] or 0, shape, strides, d, dev, fw, x)
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x, what)
    raise _einval(f"{what}: {type(x).__name__} is not a GPU array (no __cuda_array_interface__, "
                  "not a torch CUDA tensor, no __dlpack__)")


_cuda = None


def _pointer_device(ptr):
    """The CUDA ordinal owning a device pointer (cuPointerGetAttribute); 0 when unknown."""
    global _cuda
    if not ptr:
        return 0
    if _cuda is None:
        try:
            _cuda = ctypes.CDLL("libcuda.so.1")
            _cuda.cuPointerGetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                                    ctypes.c_uint64]
        except OSError:
            _cuda = False
    if not _cuda:
        return 0
    ordinal = ctypes.c_int(0)
    # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
    if _cuda.cuPointerGetAttribute(ctypes.byref(ordinal), 9, ptr) != 0:
        return 0
    return ordinal.value


# DLPack (dlpack.h): only what is needed to read a kDLCUDA tensor's description.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_DTYPES = {(2, 16): "f16", (2, 32): "f32", (2, 64): "f64", (0, 32): "i32", (0, 64): "i64",
              (1, 32): "u32", (1, 64): "u64", (4, 16): "bf16", (0, 8): "i8", (1, 8): "u8",
              (0, 16): "i16", (1, 16): "u16", (6, 8): "bool"}
_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = ctypes.c_void_p
_capsule_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(x, what):
    dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else None
    if dev is not None and int(dev[0]) != 2:
        raise _einval(f"{what}: a DLPack array on device type {int(dev[0])}, not CUDA (2)")
    cap = x.__dlpack__()
    p = _capsule_ptr(cap, b"dltensor")  # a DLManagedTensor: its DLTensor comes first
    t = _DLTensor.from_address(p)
    if t.device.device_type != 2:
        raise _einval(f"{what}: a DLPack array on device type {t.device.device_type}, not CUDA (2)")
    d = _DL_DTYPES.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    if d is None:
        raise _einval(f"{what}: DLPack dtype code {t.dtype.code} bits {t.dtype.bits} lanes "
                      f"{t.dtype.lanes} is not one redjit reduces")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    # The capsule stays unconsumed: its destructor calls the producer's deleter when `keep` goes.
    return ArrayInfo((t.data or 0) + t.byte_offset, shape, strides, d, t.device.device_id,
                     "dlpack", x, keep=cap)
