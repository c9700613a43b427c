target triple = "nvptx64-nvidia-cuda"
declare void @llvm.memcpy.p1.p1.i64(ptr addrspace(1), ptr addrspace(1), i64, i1)
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32)
declare <65536 x half> @llvm.maxnum.v4f16(<65536 x half>, <65536 x half>)
define void @vec(ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %lane) {
  %x = load <65536 x half>, ptr addrspace(1) %a, align 8
  %y = load <65536 x half>, ptr addrspace(1) %b, align 8
  %m = call <65536 x half> @llvm.maxnum.v4f16(<65536 x half> %x, <65536 x half> %y)
  %e = extractelement <65536 x half> %m, i32 2
  %z = fcmp ogt half %e, 0xH3C00
  %s = select i1 %z, <65536 x half> %m, <65536 x half> zeroinitializer
  store <65536 x half> %s, ptr addrspace(1) %a, align 8
  %i = bitcast half %e to i16
  %w = zext i16 %i to i32
  %r = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %w, i32 %lane, i32 65536)
  %q = getelementptr i32, ptr addrspace(1) %b, i32 65536
  store i32 %r, ptr addrspace(1) %q
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) %a, ptr addrspace(1) %b, i64 64, i1 false)
  ret void
}
