"""RedjitError and its subclasses, one per status of the C API (rj_status_name's names).

RedjitError(status, message) builds the subclass of its status, so every place that raises
RedjitError("RJ_EINVAL", ...) raises an InvalidRequest, and `except redjit.RedjitError` still
catches them all.  Where it helps NumPy-style code, a subclass is also the built-in exception
such code expects: InvalidRequest is a ValueError, Unsupported a NotImplementedError,
OutOfMemory a MemoryError."""

__all__ = ["RedjitError", "InvalidRequest", "NoVariant", "TargetError", "LLVMError", "NoDevice",
           "CudaError", "OutOfMemory", "Unsupported", "Timeout", "CompilerCrash", "Busy",
           "LibraryNotFound", "error_class"]


class RedjitError(RuntimeError):
    """A failed redjit call: .status is the status name ("RJ_EINVAL", ...; "library" when
    libredjit.so could not be loaded), .message the library's message (rj_errmsg: it names the
    field at fault).  RedjitError(status, message) is an instance of the status's subclass."""

    status_name = None  # the status a subclass stands for

    def __new__(cls, status=None, message="", *args):
        if cls is RedjitError:
            cls = _BY_STATUS.get(status, RedjitError)
        return super().__new__(cls, status, message, *args)

    def __init__(self, status=None, message=""):
        if status is None:
            status = self.status_name
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message

    def __reduce__(self):
        return (type(self), (self.status, self.message))


def _sub(name, status, doc, *bases):
    cls = type(name, (RedjitError,) + bases, {"__doc__": doc, "status_name": status,
                                               "__module__": "redjit"})
    return cls


InvalidRequest = _sub("InvalidRequest", "RJ_EINVAL",
                      "RJ_EINVAL: the request or an argument is invalid (the message names the "
                      "field); also a ValueError.", ValueError)
NoVariant = _sub("NoVariant", "RJ_ENOVARIANT",
                 "RJ_ENOVARIANT: valid, but no variant accepts it (the message lists each "
                 "reason).")
TargetError = _sub("TargetError", "RJ_ETARGET",
                   "RJ_ETARGET: an unknown target, or a target / PTX version / instruction "
                   "combination it cannot do.")
LLVMError = _sub("LLVMError", "RJ_ELLVM", "RJ_ELLVM: LLVM failed (verification, codegen).")
NoDevice = _sub("NoDevice", "RJ_ENODEV", "RJ_ENODEV: no CUDA driver, or no such GPU.")
CudaError = _sub("CudaError", "RJ_ECUDA",
                 "RJ_ECUDA: a CUDA driver call failed (the message names the call and error).")
OutOfMemory = _sub("OutOfMemory", "RJ_ENOMEM", "RJ_ENOMEM: host memory ran out; also a "
                   "MemoryError.", MemoryError)
Unsupported = _sub("Unsupported", "RJ_EUNSUPPORTED",
                   "RJ_EUNSUPPORTED: valid, but this build cannot do it (the message says "
                   "why); also a NotImplementedError.", NotImplementedError)
Timeout = _sub("Timeout", "RJ_ETIMEOUT",
               "RJ_ETIMEOUT: a kernel gave up waiting for another GPU's (treduce's ring).")
CompilerCrash = _sub("CompilerCrash", "RJ_ECRASH",
                     "RJ_ECRASH: the isolated compiler process (redjit-irc) ended without an "
                     "answer: killed, past its time or memory limit (the message says which).")
Busy = _sub("Busy", "RJ_EBUSY",
            "RJ_EBUSY: another thread is inside a call on this context; nothing was done.")
LibraryNotFound = _sub("LibraryNotFound", "library",
                       "libredjit.so could not be loaded (the message names every path "
                       "tried); also an ImportError.", ImportError)

_BY_STATUS = {c.status_name: c for c in (InvalidRequest, NoVariant, TargetError, LLVMError,
                                         NoDevice, CudaError, OutOfMemory, Unsupported, Timeout,
                                         CompilerCrash, Busy, LibraryNotFound)}


def error_class(status: str) -> type:
    """The exception class of a status name ("RJ_EINVAL" -> InvalidRequest); RedjitError for a
    status without one of its own."""
    return _BY_STATUS.get(status, RedjitError)
