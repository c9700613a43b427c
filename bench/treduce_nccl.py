"""NCCL's reduce through torch.distributed, one process per GPU: the baseline for treduce.

Run: python3 -m torch.distributed.run --standalone --nproc_per_node=N bench/treduce_nccl.py
Rank 0 prints one JSON line per size and collective: {"engine": "nccl", "collective": "reduce",
"bytes_per_rank": B, "ms": median, ...}.  Times dist.reduce(dst=0, op=SUM) (and, with
--collectives reduce,allreduce, dist.all_reduce(op=SUM), every rank getting the sum: the
bandwidth a ring reaches where no root's link is the limit) of an f32 tensor of B bytes per rank with CUDA events on rank 0
around one call, after a barrier and a synchronize on every rank (so a rank's late start, a few
microseconds, is inside the time, as the root waits for it), median of the runs: 3 warm-ups, then
25 runs (7 from 256 MiB per rank), as `redjit bench` does (scripts/bench-treduce.sh).
"""
import argparse, json, os, statistics
import torch
import torch.distributed as dist

p = argparse.ArgumentParser()
p.add_argument("--min-log2", type=int, default=12)
p.add_argument("--max-log2", type=int, default=30)
p.add_argument("--step", type=int, default=2)
p.add_argument("--runs", type=int, default=25)
p.add_argument("--collectives", default="reduce", help="reduce, allreduce or both, comma-separated")
a = p.parse_args()
rank = int(os.environ["RANK"]); local = int(os.environ.get("LOCAL_RANK", rank))
torch.cuda.set_device(local)
try:  # binding the device up front (torch >= 2.3) lets NCCL set up eagerly
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
except TypeError:
    dist.init_process_group("nccl")
collectives = a.collectives.split(",")
assert set(collectives) <= {"reduce", "allreduce"}, collectives


def call(collective, x):
    if collective == "reduce":
        dist.reduce(x, dst=0, op=dist.ReduceOp.SUM)
    else:
        dist.all_reduce(x, op=dist.ReduceOp.SUM)


for b in range(a.min_log2, a.max_log2 + 1, a.step):
    n = (1 << b) // 4
    x = torch.randn(n, device="cuda")
    runs = a.runs if b < 28 else 7
    for collective in collectives:
        times = []
        for i in range(3 + runs):
            dist.barrier(device_ids=[local])
            torch.cuda.synchronize()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            call(collective, x)
            e.record()
            torch.cuda.synchronize()
            if i >= 3:
                times.append(s.elapsed_time(e))
        if rank == 0:
            print(json.dumps({"engine": "nccl", "collective": collective, "bytes_per_rank": 1 << b,
                              "ms": statistics.median(times), "runs": runs,
                              "ranks": dist.get_world_size(),
                              "nccl": ".".join(map(str, torch.cuda.nccl.version()))}),
                  flush=True)
    del x
dist.destroy_process_group()
