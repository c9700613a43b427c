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


def empty(shape, dtype=None, device=None):
    return Tensor(tuple(shape), dtype, dev=device.index if device is not None else 0)


def install(stream=0x5000):
    """sys.modules["torch"] = the stand-in; the current stream of every device: `stream`."""
    t = types.ModuleType("torch")
    t.Tensor, t.Size, t.empty, t.device = Tensor, Size, empty, device
    for name, size in (("float16", 2), ("bfloat16", 2), ("float32", 4), ("float64", 8),
                       ("int32", 4), ("int64", 8), ("uint32", 4), ("uint64", 8)):
        setattr(t, name, dtype(name, size))
    t._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: stream)
    sys.modules["torch"] = t
    return t
