; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@rj_src_slots0 = internal addrspace(1) constant [256 x i32] [i32 0, i32 1, i32 128, i32 129, i32 8, i32 9, i32 136, i32 137, i32 2, i32 3, i32 130, i32 131, i32 10, i32 11, i32 138, i32 139, i32 4, i32 5, i32 132, i32 133, i32 12, i32 13, i32 140, i32 141, i32 6, i32 7, i32 134, i32 135, i32 14, i32 15, i32 142, i32 143, i32 16, i32 17, i32 144, i32 145, i32 24, i32 25, i32 152, i32 153, i32 18, i32 19, i32 146, i32 147, i32 26, i32 27, i32 154, i32 155, i32 20, i32 21, i32 148, i32 149, i32 28, i32 29, i32 156, i32 157, i32 22, i32 23, i32 150, i32 151, i32 30, i32 31, i32 158, i32 159, i32 32, i32 33, i32 160, i32 161, i32 40, i32 41, i32 168, i32 169, i32 34, i32 35, i32 162, i32 163, i32 42, i32 43, i32 170, i32 171, i32 36, i32 37, i32 164, i32 165, i32 44, i32 45, i32 172, i32 173, i32 38, i32 39, i32 166, i32 167, i32 46, i32 47, i32 174, i32 175, i32 48, i32 49, i32 176, i32 177, i32 56, i32 57, i32 184, i32 185, i32 50, i32 51, i32 178, i32 179, i32 58, i32 59, i32 186, i32 187, i32 52, i32 53, i32 180, i32 181, i32 60, i32 61, i32 188, i32 189, i32 54, i32 55, i32 182, i32 183, i32 62, i32 63, i32 190, i32 191, i32 64, i32 65, i32 192, i32 193, i32 72, i32 73, i32 200, i32 201, i32 66, i32 67, i32 194, i32 195, i32 74, i32 75, i32 202, i32 203, i32 68, i32 69, i32 196, i32 197, i32 76, i32 77, i32 204, i32 205, i32 70, i32 71, i32 198, i32 199, i32 78, i32 79, i32 206, i32 207, i32 80, i32 81, i32 208, i32 209, i32 88, i32 89, i32 216, i32 217, i32 82, i32 83, i32 210, i32 211, i32 90, i32 91, i32 218, i32 219, i32 84, i32 85, i32 212, i32 213, i32 92, i32 93, i32 220, i32 221, i32 86, i32 87, i32 214, i32 215, i32 94, i32 95, i32 222, i32 223, i32 96, i32 97, i32 224, i32 225, i32 104, i32 105, i32 232, i32 233, i32 98, i32 99, i32 226, i32 227, i32 106, i32 107, i32 234, i32 235, i32 100, i32 101, i32 228, i32 229, i32 108, i32 109, i32 236, i32 237, i32 102, i32 103, i32 230, i32 231, i32 110, i32 111, i32 238, i32 239, i32 112, i32 113, i32 240, i32 241, i32 120, i32 121, i32 248, i32 249, i32 114, i32 115, i32 242, i32 243, i32 122, i32 123, i32 250, i32 251, i32 116, i32 117, i32 244, i32 245, i32 124, i32 125, i32 252, i32 253, i32 118, i32 119, i32 246, i32 247, i32 126, i32 127, i32 254, i32 255], align 16
@rj_dst_slots1 = internal addrspace(1) constant [64 x i32] [i32 0, i32 8, i32 0, i32 8, i32 0, i32 8, i32 0, i32 8, i32 1, i32 9, i32 1, i32 9, i32 1, i32 9, i32 1, i32 9, i32 2, i32 10, i32 2, i32 10, i32 2, i32 10, i32 2, i32 10, i32 3, i32 11, i32 3, i32 11, i32 3, i32 11, i32 3, i32 11, i32 4, i32 12, i32 4, i32 12, i32 4, i32 12, i32 4, i32 12, i32 5, i32 13, i32 5, i32 13, i32 5, i32 13, i32 5, i32 13, i32 6, i32 14, i32 6, i32 14, i32 6, i32 14, i32 6, i32 14, i32 7, i32 15, i32 7, i32 15, i32 7, i32 15, i32 7, i32 15], align 16

define ptx_kernel void @redjit_tile(ptr addrspace(1) %0, ptr addrspace(1) %1, ptr addrspace(1) %2) {
entry:
  %rj_dst_slots = alloca [2 x float], align 4
  %rj_src_slots = alloca [8 x float], align 4
  %3 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %4 = mul i32 %3, 8
  %5 = add i32 %4, 0
  %6 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %5
  %7 = load i32, ptr addrspace(1) %6, align 4
  %8 = icmp slt i32 %7, 0
  %9 = select i1 %8, i32 0, i32 %7
  %10 = getelementptr float, ptr addrspace(1) %0, i32 %9
  %11 = load float, ptr addrspace(1) %10, align 4
  %12 = getelementptr float, ptr %rj_src_slots, i32 0
  store float %11, ptr %12, align 4
  %13 = add i32 %4, 1
  %14 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %13
  %15 = load i32, ptr addrspace(1) %14, align 4
  %16 = icmp slt i32 %15, 0
  %17 = select i1 %16, i32 0, i32 %15
  %18 = getelementptr float, ptr addrspace(1) %0, i32 %17
  %19 = load float, ptr addrspace(1) %18, align 4
  %20 = getelementptr float, ptr %rj_src_slots, i32 1
  store float %19, ptr %20, align 4
  %21 = add i32 %4, 2
  %22 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %21
  %23 = load i32, ptr addrspace(1) %22, align 4
  %24 = icmp slt i32 %23, 0
  %25 = select i1 %24, i32 0, i32 %23
  %26 = getelementptr float, ptr addrspace(1) %0, i32 %25
  %27 = load float, ptr addrspace(1) %26, align 4
  %28 = getelementptr float, ptr %rj_src_slots, i32 2
  store float %27, ptr %28, align 4
  %29 = add i32 %4, 3
  %30 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %29
  %31 = load i32, ptr addrspace(1) %30, align 4
  %32 = icmp slt i32 %31, 0
  %33 = select i1 %32, i32 0, i32 %31
  %34 = getelementptr float, ptr addrspace(1) %0, i32 %33
  %35 = load float, ptr addrspace(1) %34, align 4
  %36 = getelementptr float, ptr %rj_src_slots, i32 3
  store float %35, ptr %36, align 4
  %37 = add i32 %4, 4
  %38 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %37
  %39 = load i32, ptr addrspace(1) %38, align 4
  %40 = icmp slt i32 %39, 0
  %41 = select i1 %40, i32 0, i32 %39
  %42 = getelementptr float, ptr addrspace(1) %0, i32 %41
  %43 = load float, ptr addrspace(1) %42, align 4
  %44 = getelementptr float, ptr %rj_src_slots, i32 4
  store float %43, ptr %44, align 4
  %45 = add i32 %4, 5
  %46 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %45
  %47 = load i32, ptr addrspace(1) %46, align 4
  %48 = icmp slt i32 %47, 0
  %49 = select i1 %48, i32 0, i32 %47
  %50 = getelementptr float, ptr addrspace(1) %0, i32 %49
  %51 = load float, ptr addrspace(1) %50, align 4
  %52 = getelementptr float, ptr %rj_src_slots, i32 5
  store float %51, ptr %52, align 4
  %53 = add i32 %4, 6
  %54 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %53
  %55 = load i32, ptr addrspace(1) %54, align 4
  %56 = icmp slt i32 %55, 0
  %57 = select i1 %56, i32 0, i32 %55
  %58 = getelementptr float, ptr addrspace(1) %0, i32 %57
  %59 = load float, ptr addrspace(1) %58, align 4
  %60 = getelementptr float, ptr %rj_src_slots, i32 6
  store float %59, ptr %60, align 4
  %61 = add i32 %4, 7
  %62 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %61
  %63 = load i32, ptr addrspace(1) %62, align 4
  %64 = icmp slt i32 %63, 0
  %65 = select i1 %64, i32 0, i32 %63
  %66 = getelementptr float, ptr addrspace(1) %0, i32 %65
  %67 = load float, ptr addrspace(1) %66, align 4
  %68 = getelementptr float, ptr %rj_src_slots, i32 7
  store float %67, ptr %68, align 4
  %69 = mul i32 %3, 2
  %70 = add i32 %69, 0
  %71 = getelementptr i32, ptr addrspace(1) @rj_dst_slots1, i32 %70
  %72 = load i32, ptr addrspace(1) %71, align 4
  %73 = icmp slt i32 %72, 0
  %74 = select i1 %73, i32 0, i32 %72
  %75 = getelementptr float, ptr addrspace(1) %1, i32 %74
  %76 = load float, ptr addrspace(1) %75, align 4
  %77 = getelementptr float, ptr %rj_dst_slots, i32 0
  store float %76, ptr %77, align 4
  %78 = add i32 %69, 1
  %79 = getelementptr i32, ptr addrspace(1) @rj_dst_slots1, i32 %78
  %80 = load i32, ptr addrspace(1) %79, align 4
  %81 = icmp slt i32 %80, 0
  %82 = select i1 %81, i32 0, i32 %80
  %83 = getelementptr float, ptr addrspace(1) %1, i32 %82
  %84 = load float, ptr addrspace(1) %83, align 4
  %85 = getelementptr float, ptr %rj_dst_slots, i32 1
  store float %84, ptr %85, align 4
  %86 = getelementptr float, ptr %rj_src_slots, i32 0
  %87 = load float, ptr %86, align 4
  %88 = call float @llvm.maximum.f32(float 0xFFF0000000000000, float %87)
  %89 = getelementptr float, ptr %rj_src_slots, i32 1
  %90 = load float, ptr %89, align 4
  %91 = call float @llvm.maximum.f32(float %88, float %90)
  %92 = getelementptr float, ptr %rj_src_slots, i32 4
  %93 = load float, ptr %92, align 4
  %94 = call float @llvm.maximum.f32(float %91, float %93)
  %95 = getelementptr float, ptr %rj_src_slots, i32 5
  %96 = load float, ptr %95, align 4
  %97 = call float @llvm.maximum.f32(float %94, float %96)
  %98 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %97, i32 1, i32 31)
  %99 = call float @llvm.maximum.f32(float %97, float %98)
  %100 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %99, i32 2, i32 31)
  %101 = call float @llvm.maximum.f32(float %99, float %100)
  %102 = getelementptr float, ptr %rj_dst_slots, i32 0
  store float %101, ptr %102, align 4
  %103 = getelementptr float, ptr %rj_src_slots, i32 2
  %104 = load float, ptr %103, align 4
  %105 = call float @llvm.maximum.f32(float 0xFFF0000000000000, float %104)
  %106 = getelementptr float, ptr %rj_src_slots, i32 3
  %107 = load float, ptr %106, align 4
  %108 = call float @llvm.maximum.f32(float %105, float %107)
  %109 = getelementptr float, ptr %rj_src_slots, i32 6
  %110 = load float, ptr %109, align 4
  %111 = call float @llvm.maximum.f32(float %108, float %110)
  %112 = getelementptr float, ptr %rj_src_slots, i32 7
  %113 = load float, ptr %112, align 4
  %114 = call float @llvm.maximum.f32(float %111, float %113)
  %115 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %114, i32 1, i32 31)
  %116 = call float @llvm.maximum.f32(float %114, float %115)
  %117 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %116, i32 2, i32 31)
  %118 = call float @llvm.maximum.f32(float %116, float %117)
  %119 = getelementptr float, ptr %rj_dst_slots, i32 1
  store float %118, ptr %119, align 4
  %120 = mul i32 %3, 2
  %121 = getelementptr float, ptr %rj_dst_slots, i32 0
  %122 = load float, ptr %121, align 4
  %123 = add i32 %120, 0
  %124 = getelementptr float, ptr addrspace(1) %2, i32 %123
  store float %122, ptr addrspace(1) %124, align 4
  %125 = getelementptr float, ptr %rj_dst_slots, i32 1
  %126 = load float, ptr %125, align 4
  %127 = add i32 %120, 1
  %128 = getelementptr float, ptr addrspace(1) %2, i32 %127
  store float %126, ptr addrspace(1) %128, align 4
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #0

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.maximum.f32(float, float) #1

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32) #2

attributes #0 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #1 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
