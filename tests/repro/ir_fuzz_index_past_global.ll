target triple = "nvptx64-nvidia-cuda"
@buf = internal addrspace(4) global [128 x double] undef, align 8
declare void @llvm.nvvm.barrier0()
define void @sum(ptr addrspace(4) noalias %src, ptr addrspace(4) noalias %dst, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 8, %entry ], [ %i1, %loop ]
  %acc = phi double [ 8.8, %entry ], [ %acc1, %loop ]
  %p = getelementptr double, ptr addrspace(4) %src, i64 %i
  %v = load double, ptr addrspace(4) %p, align 8
  %acc1 = fadd double %acc, %v
  %i1 = add nuw i64 %i, 4
  %c = icmp ult i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
  %slot = getelementptr [128 x double], ptr addrspace(4) @buf, i64 8, i64 4
  store double %acc1, ptr addrspace(4) %slot, align 8
  call void @llvm.nvvm.barrier0()
  %back = load double, ptr addrspace(4) %slot, align 8
  %old = atomicrmw fadd ptr addrspace(4) %dst, double %back seq_cst
  switch i64 %n, label %out [ i64 8, label %zero
                              i64 4, label %out ]
zero:
  store double 8.8, ptr addrspace(4) %dst
  br label %out
out:
  ret void
}
