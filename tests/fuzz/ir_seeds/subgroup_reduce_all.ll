; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @redjit_subgroup(ptr addrspace(1) %0, ptr addrspace(1) %1) {
entry:
  %2 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %3 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %4 = mul i32 %2, 64
  %gid = add i32 %4, %3
  %5 = getelementptr i64, ptr addrspace(1) %0, i32 %gid
  %x = load i64, ptr addrspace(1) %5, align 4
  %6 = bitcast i64 %x to <2 x i32>
  %7 = extractelement <2 x i32> %6, i32 0
  %8 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %7, i32 1, i32 31)
  %9 = extractelement <2 x i32> %6, i32 1
  %10 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %9, i32 1, i32 31)
  %11 = insertelement <2 x i32> undef, i32 %8, i32 0
  %12 = insertelement <2 x i32> %11, i32 %10, i32 1
  %13 = bitcast <2 x i32> %12 to i64
  %14 = add i64 %x, %13
  %15 = bitcast i64 %14 to <2 x i32>
  %16 = extractelement <2 x i32> %15, i32 0
  %17 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %16, i32 2, i32 31)
  %18 = extractelement <2 x i32> %15, i32 1
  %19 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %18, i32 2, i32 31)
  %20 = insertelement <2 x i32> undef, i32 %17, i32 0
  %21 = insertelement <2 x i32> %20, i32 %19, i32 1
  %22 = bitcast <2 x i32> %21 to i64
  %23 = add i64 %14, %22
  %24 = bitcast i64 %23 to <2 x i32>
  %25 = extractelement <2 x i32> %24, i32 0
  %26 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %25, i32 4, i32 31)
  %27 = extractelement <2 x i32> %24, i32 1
  %28 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %27, i32 4, i32 31)
  %29 = insertelement <2 x i32> undef, i32 %26, i32 0
  %30 = insertelement <2 x i32> %29, i32 %28, i32 1
  %31 = bitcast <2 x i32> %30 to i64
  %32 = add i64 %23, %31
  %33 = bitcast i64 %32 to <2 x i32>
  %34 = extractelement <2 x i32> %33, i32 0
  %35 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %34, i32 8, i32 31)
  %36 = extractelement <2 x i32> %33, i32 1
  %37 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %36, i32 8, i32 31)
  %38 = insertelement <2 x i32> undef, i32 %35, i32 0
  %39 = insertelement <2 x i32> %38, i32 %37, i32 1
  %40 = bitcast <2 x i32> %39 to i64
  %41 = add i64 %32, %40
  %42 = bitcast i64 %41 to <2 x i32>
  %43 = extractelement <2 x i32> %42, i32 0
  %44 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %43, i32 16, i32 31)
  %45 = extractelement <2 x i32> %42, i32 1
  %46 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %45, i32 16, i32 31)
  %47 = insertelement <2 x i32> undef, i32 %44, i32 0
  %48 = insertelement <2 x i32> %47, i32 %46, i32 1
  %49 = bitcast <2 x i32> %48 to i64
  %50 = add i64 %41, %49
  %51 = getelementptr i64, ptr addrspace(1) %1, i32 %gid
  store i64 %50, ptr addrspace(1) %51, align 4
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #0

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #0

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32) #1

attributes #0 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #1 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
