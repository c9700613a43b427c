; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@rj_src_slots0 = internal addrspace(1) constant [128 x i32] [i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15, i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31, i32 32, i32 33, i32 34, i32 35, i32 36, i32 37, i32 38, i32 39, i32 40, i32 41, i32 42, i32 43, i32 44, i32 45, i32 46, i32 47, i32 48, i32 49, i32 50, i32 51, i32 52, i32 53, i32 54, i32 55, i32 56, i32 57, i32 58, i32 59, i32 60, i32 61, i32 62, i32 63, i32 64, i32 65, i32 66, i32 67, i32 68, i32 69, i32 70, i32 71, i32 72, i32 73, i32 74, i32 75, i32 76, i32 77, i32 78, i32 79, i32 80, i32 81, i32 82, i32 83, i32 84, i32 85, i32 86, i32 87, i32 88, i32 89, i32 90, i32 91, i32 92, i32 93, i32 94, i32 95, i32 96, i32 97, i32 98, i32 99, i32 100, i32 101, i32 102, i32 103, i32 104, i32 105, i32 106, i32 107, i32 108, i32 109, i32 110, i32 111, i32 112, i32 113, i32 114, i32 115, i32 116, i32 117, i32 118, i32 119, i32 120, i32 121, i32 122, i32 123, i32 124, i32 125, i32 126, i32 127], align 16
@rj_dst_slots1 = internal addrspace(1) constant [32 x i32] zeroinitializer, align 16

define ptx_kernel void @redjit_tile(ptr addrspace(1) %0, ptr addrspace(1) %1, ptr addrspace(1) %2) {
entry:
  %rj_dst_slots = alloca [1 x i32], align 4
  %rj_src_slots = alloca [4 x i32], align 4
  %3 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %4 = mul i32 %3, 4
  %5 = add i32 %4, 0
  %6 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %5
  %7 = load i32, ptr addrspace(1) %6, align 4
  %8 = icmp slt i32 %7, 0
  %9 = select i1 %8, i32 0, i32 %7
  %10 = getelementptr i32, ptr addrspace(1) %0, i32 %9
  %11 = load i32, ptr addrspace(1) %10, align 4
  %12 = getelementptr i32, ptr %rj_src_slots, i32 0
  store i32 %11, ptr %12, align 4
  %13 = add i32 %4, 1
  %14 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %13
  %15 = load i32, ptr addrspace(1) %14, align 4
  %16 = icmp slt i32 %15, 0
  %17 = select i1 %16, i32 0, i32 %15
  %18 = getelementptr i32, ptr addrspace(1) %0, i32 %17
  %19 = load i32, ptr addrspace(1) %18, align 4
  %20 = getelementptr i32, ptr %rj_src_slots, i32 1
  store i32 %19, ptr %20, align 4
  %21 = add i32 %4, 2
  %22 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %21
  %23 = load i32, ptr addrspace(1) %22, align 4
  %24 = icmp slt i32 %23, 0
  %25 = select i1 %24, i32 0, i32 %23
  %26 = getelementptr i32, ptr addrspace(1) %0, i32 %25
  %27 = load i32, ptr addrspace(1) %26, align 4
  %28 = getelementptr i32, ptr %rj_src_slots, i32 2
  store i32 %27, ptr %28, align 4
  %29 = add i32 %4, 3
  %30 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %29
  %31 = load i32, ptr addrspace(1) %30, align 4
  %32 = icmp slt i32 %31, 0
  %33 = select i1 %32, i32 0, i32 %31
  %34 = getelementptr i32, ptr addrspace(1) %0, i32 %33
  %35 = load i32, ptr addrspace(1) %34, align 4
  %36 = getelementptr i32, ptr %rj_src_slots, i32 3
  store i32 %35, ptr %36, align 4
  %37 = mul i32 %3, 1
  %38 = add i32 %37, 0
  %39 = getelementptr i32, ptr addrspace(1) @rj_dst_slots1, i32 %38
  %40 = load i32, ptr addrspace(1) %39, align 4
  %41 = icmp slt i32 %40, 0
  %42 = select i1 %41, i32 0, i32 %40
  %43 = getelementptr i32, ptr addrspace(1) %1, i32 %42
  %44 = load i32, ptr addrspace(1) %43, align 4
  %45 = getelementptr i32, ptr %rj_dst_slots, i32 0
  store i32 %44, ptr %45, align 4
  %46 = getelementptr i32, ptr %rj_src_slots, i32 0
  %47 = load i32, ptr %46, align 4
  %48 = add i32 0, %47
  %49 = getelementptr i32, ptr %rj_src_slots, i32 1
  %50 = load i32, ptr %49, align 4
  %51 = add i32 %48, %50
  %52 = getelementptr i32, ptr %rj_src_slots, i32 2
  %53 = load i32, ptr %52, align 4
  %54 = add i32 %51, %53
  %55 = getelementptr i32, ptr %rj_src_slots, i32 3
  %56 = load i32, ptr %55, align 4
  %57 = add i32 %54, %56
  %58 = call i32 @llvm.nvvm.redux.sync.add(i32 %57, i32 -1)
  %59 = getelementptr i32, ptr %rj_dst_slots, i32 0
  store i32 %58, ptr %59, align 4
  %60 = mul i32 %3, 1
  %61 = getelementptr i32, ptr %rj_dst_slots, i32 0
  %62 = load i32, ptr %61, align 4
  %63 = add i32 %60, 0
  %64 = getelementptr i32, ptr addrspace(1) %2, i32 %63
  store i32 %62, ptr addrspace(1) %64, align 4
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #0

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.redux.sync.add(i32, i32) #1

attributes #0 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #1 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
