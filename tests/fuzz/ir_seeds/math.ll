target triple = "nvptx64-nvidia-cuda"
declare float @llvm.sqrt.f32(float)
declare float @llvm.fma.f32(float, float, float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
define void @k(ptr addrspace(1) %p, float %a, i32 %b) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %q = getelementptr float, ptr addrspace(1) %p, i32 %t
  %s = call float @llvm.sqrt.f32(float %a)
  %r = call float @llvm.fma.f32(float %s, float %a, float %a)
  %w = sext i32 %b to i128
  %d = sdiv i128 %w, 7
  %n = trunc i128 %d to i32
  %f = sitofp i32 %n to float
  %x = fadd float %r, %f
  store float %x, ptr addrspace(1) %q
  ret void
}
