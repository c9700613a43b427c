"""A stand-in for the few parts of torch that redjit's package reads (a CUDA tensor's attributes,
dtypes, the current stream, torch.empty), so that the torch lane of redjit.reduce runs without
torch or a GPU: install() puts it in sys.modules["torch"] (only in a process of its own: redjit
keeps the module it first sees).  Pointers are made up; nothing reaches a GPU unless the launch
is replaced."""
import sys
import types


class dtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __repr__(self):
        return f"torch.{self.name}"


class device:
    def __init__(self, index):
        self.type, self.index = "cuda", index

    def __repr__(self):
        return f"device(type='cuda', index={self.index})"


class Size(tuple):
    pass


def _row_major(shape):
    st, n = [], 1
    for d in reversed(shape):
        st.append(n)
        n *= d
    return tuple(reversed(st))


class Tensor:
    _next_ptr = 0x7f0000000000

    def __init__(self, shape, dt, strides=None, dev=0, ptr=None, cuda=True):
        self.shape = Size(shape)
        self.dtype = dt
        self._strides = tuple(strides) if strides is not None else _row_major(shape)
        self._dev = dev
        self.is_cuda = cuda
        if ptr is None:
            ptr = Tensor._next_ptr
            Tensor._next_ptr += 1 << 24
        self._ptr = ptr

    def stride(self):
        return self._strides

    def is_contiguous(self):
        return all(s == r for n, s, r in zip(self.shape, self._strides, _row_major(self.shape))
                   if n != 1)

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return self._dev if self.is_cuda else -1

    @property
    def device(self):
        return device(self._dev)

    # What redjit's array-API functions ask of a framework beyond the above (casts, fills,
    # reshapes, copies, x != 0): each records what happened in `value` / `op`, nothing is computed.
    value = None  # the fill value of full(), fill_(), or the source of an operation
    op = None     # the operation that made this tensor ("to f32", "ne 0", ...)

    def to(self, dt, copy=False):
        t = Tensor(self.shape, dt, dev=self._dev)
        t.value, t.op = self, f"to {dt.name}"
        return t

    def reshape(self, shape):
        if not self.is_contiguous():
            raise ValueError("stand-in: reshape of a strided tensor")
        t = Tensor(tuple(shape), self.dtype, dev=self._dev, ptr=self._ptr)
        t.value, t.op = self.value, self.op
        return t

    def view(self, shape_or_dtype):
        if isinstance(shape_or_dtype, dtype):  # the same bits as another dtype of that size
            t = Tensor(self.shape, shape_or_dtype, dev=self._dev, ptr=self._ptr)
            t.value, t.op = self.value, self.op
            return t
        return self.reshape(shape_or_dtype)

    def fill_(self, v):
        self.value, self.op = v, "fill"
        return self

    def copy_(self, src):
        self.value, self.op = src, "copy"
        return self

    def __ne__(self, other):
        t = Tensor(self.shape, _dtypes["bool"], dev=self._dev)
        t.value, t.op = self, f"ne {other}"
        return t

    def __add__(self, v):
        t = Tensor(self.shape, self.dtype, dev=self._dev)
        t.value, t.op = (self, v), "add"
        return t

    __hash__ = object.__hash__


def empty(shape, dtype=None, device=None):
    return Tensor(tuple(shape), dtype, dev=device.index if device is not None else 0)


def full(shape, value, dtype=None, device=None):
    t = Tensor(tuple(shape), dtype, dev=device.index if device is not None else 0)
    t.value, t.op = value, "full"
    return t


class _Stream:
    def __init__(self, ptr, device=None):
        self.cuda_stream = ptr


class _StreamContext:
    def __init__(self, s):
        self.s = s

    def __enter__(self):
        _current.append(self.s.cuda_stream)

    def __exit__(self, *exc):
        _current.pop()


_dtypes = {}
_current = []  # streams made current by torch.cuda.stream(...)


def install(stream=0x5000):
    """sys.modules["torch"] = the stand-in; the current stream of every device: `stream`."""
    t = types.ModuleType("torch")
    t.Tensor, t.Size, t.empty, t.device, t.full = Tensor, Size, empty, device, full
    t.cuda = types.SimpleNamespace(ExternalStream=_Stream, stream=_StreamContext)
    t.bool = _dtypes["bool"] = dtype("bool", 1)
    for name, size in (("float16", 2), ("bfloat16", 2), ("float32", 4), ("float64", 8),
                       ("int32", 4), ("int64", 8), ("uint32", 4), ("uint64", 8), ("int8", 1),
                       ("uint8", 1), ("int16", 2), ("uint16", 2)):
        setattr(t, name, dtype(name, size))
    t._C = types.SimpleNamespace(
        _cuda_getCurrentRawStream=lambda d: _current[-1] if _current else stream)
    sys.modules["torch"] = t
    return t
