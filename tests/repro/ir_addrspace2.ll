; A global in address space 2, which NVPTX has no PTX state space for: LLVM's PTX printer stops
; with report_fatal_error ("Bad address space found while emitting PTX: 2").  Found by
; tests/fuzz/fuzz_ir.c (every "3" of a seed's shared-memory buffer turned into "2").
target triple = "nvptx64-nvidia-cuda"
@g = addrspace(2) global i32 0
define void @k(ptr addrspace(1) %p) {
  %v = load i32, ptr addrspace(2) @g
  store i32 %v, ptr addrspace(1) %p
  ret void
}
