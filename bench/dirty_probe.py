#!/usr/bin/env python3
"""What do_bench's L2 flush leaves to a read-only kernel: zero 256 MB (as do_bench), then one
rj_reduce of 1-D 2^24 f32; run under `ncu --cache-control none` to read the kernel's DRAM bytes
written (a reduction writes 4 bytes; the rest is the flush's dirty lines)."""
import sys, torch
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from peers import Redjit  # noqa: E402
rj = Redjit(sys.argv[1])
x = torch.rand(1 << 24, device="cuda"); y = torch.empty(1, device="cuda")
req = rj.request('{"kind":"tensor","op":"sum","dtype":"f32","shape":[16777216],"axes":[0]}')
cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
for flush in ("zero", "read", "zero"):
    if flush == "zero":
        cache.zero_()
    else:
        cache.sum(dtype=torch.int32)
    rj.reduce(req, x, y)
torch.cuda.synchronize()
