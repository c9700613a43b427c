target triple = "nvptx64-nvidia-cuda"
%pair = type { i32, float }
define internal float @helper(%pair %p, float %x) {
  %a = extractvalue %pair %p, 1
  %b = extractvalue %pair %p, 0
  %c = uitofp i32 %b to float
  %d = fmul fast float %a, %c
  %e = fdiv float %d, %x
  ret float %e
}
define void @main_kernel(ptr addrspace(1) %out, i32 %n, float %x) {
  %p0 = insertvalue %pair undef, i32 %n, 0
  %p1 = insertvalue %pair %p0, float %x, 1
  %r = call float @helper(%pair %p1, float %x)
  %h = fptrunc float %r to bfloat
  %g = fpext bfloat %h to double
  %u = fptoui double %g to i64
  %v = udiv i64 %u, 3
  %w = urem i64 %v, 5
  %s = shl i64 %w, 2
  %o = getelementptr i8, ptr addrspace(1) %out, i64 %s
  store i64 %v, ptr addrspace(1) %o, align 8
  ret void
}
