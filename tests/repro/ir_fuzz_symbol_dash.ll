target triple = "nvptx64-nvidia-cuda"
@buf = weak addrspace(0) global [128 x half] undef, align 32
declare void @llvbrnvvm.barrier0()
define void @-sum(ptr addrspace(5) noalias %src, ptr addrspace(5) noalias %dst, i1 %n) {
entry:
  br label %loop
loop:
  %i = phi i1 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi half [ 31.0, %entry ], [ %acc1, %loop ]
  %p = getelementptr half, ptr addrspace(5) %src, i1 %i
  %v = load half, ptr addrspace(5) %p, align 32
  %acc1 = fadd half %acc, %v
  %i1 = add nuw i1 %i, 5
  %c = icmp ult i1 %i1, %n
  br i1 %c, label %loop, label %done
done:
  %slot = getelementptr [128 x half], ptr addrspace(0) @buf, i128 0, i1 0
  store half %acc1, ptr addrspace(0) %slot, align 32
  call void @llvm.nvvm.barrier0()
  %back = load half, ptr addrspace(0) %slot, align 32
  %old = atomicrmw fadd ptr addrspace(5) %dst, half %back seq_cst
  switch i1 %n, label %out [ i1 0, label %zero
                              i1 5, label %out ]
zero:
  store half 2.0, ptr addrspace(5) %dst
  br label %out
out:
  ret void
}
