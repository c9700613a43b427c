"""A tiny stand-in for pytest, so that `python3 tests/python/test_gpu.py` (or test_cpu.py) runs on a
machine without pytest: every test_* function of the module in order; pytest.skip works (as
_runner.skip); exit status 1 when a test fails, 0 otherwise (all skipped included)."""
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def setup_path():
    """Makes `import redjit` find tools/python when PYTHONPATH does not."""
    p = os.path.join(REPO, "tools", "python")
    if p not in sys.path:
        sys.path.insert(0, p)


class Skip(Exception):
    pass


def skip(reason=""):
    raise Skip(reason)


def cuda_torch():
    """torch, when it sees a CUDA GPU; else the test is skipped, saying why (pytest's skip under
    pytest)."""
    try:
        import pytest
        sk = pytest.skip
    except ImportError:
        sk = skip
    try:
        import torch
    except ImportError as e:
        sk(f"torch is not importable ({e})")
    if not torch.cuda.is_available():
        sk("torch sees no CUDA GPU")
    return torch


def raises(exc, fn, *a, **kw):
    """Calls fn; returns the exception of type exc it raised, fails if it raised none."""
    try:
        fn(*a, **kw)
    except exc as e:
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)} did not raise {exc.__name__}")


def main(module_globals):
    try:
        import pytest
        skipped = (Skip, pytest.skip.Exception)
    except ImportError:
        skipped = (Skip,)
    tests = [(n, f) for n, f in module_globals.items() if n.startswith("test_") and callable(f)]
    only = sys.argv[1:]
    fails = 0
    for name, fn in tests:
        if only and not any(o in name for o in only):
            continue
        t = time.perf_counter()
        try:
            fn()
        except skipped as e:
            print(f"SKIP {name}: {e}", flush=True)
            continue
        except Exception:
            fails += 1
            print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
            continue
        print(f"ok   {name} ({time.perf_counter() - t:.2f} s)", flush=True)
    print(f"{'FAILED' if fails else 'passed'}: {fails} failure(s) of {len(tests)} tests")
    sys.exit(1 if fails else 0)
