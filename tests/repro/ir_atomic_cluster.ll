target triple = "nvptx64-nvidia-cuda"
@buf = linkonce_odr addrspace(3) global [128 x double] undef, align 8
declare void @llvm.nvvm.barrier0()
define void @sum(ptr addrspace(7) noalias %src, ptr addrspace(7) noalias %dst, i8 %n) {
entry:
  br label %loop
loop:
  %i = phi i8 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi double [ 0.0, %entry ], [ %acc1, %loop ]
  %p = getelementptr double, ptr addrspace(7) %src, i8 %i
  %v = load double, ptr addrspace(7) %p, align 8
  %acc1 = fadd double %acc, %v
  %i1 = add nuw i8 %i, 7
  %c = icmp ult i8 %i1, %n
  br i1 %c, label %loop, label %done
done:
  %slot = getelementptr [128 x double], ptr addrspace(3) @buf, i8 0, i8 3
  store double %acc1, ptr addrspace(3) %slot, align 8
  call void @llvm.nvvm.barrier0()
  %back = load double, ptr addrspace(3) %slot, align 8
  %old = atomicrmw fadd ptr addrspace(7) %dst, double %back seq_cst
  switch i8 %n, label %out [ i8 0, label %zero
                              i8 7, label %out ]
zero:
  store double 0.0, ptr addrspace(7) %dst
  br label %out
out:
  ret void
}
