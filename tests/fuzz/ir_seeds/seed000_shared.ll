; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@rj_src0 = internal addrspace(3) global [32 x float] undef, align 16
@rj_dst1 = internal addrspace(3) global [4 x float] undef, align 16

define ptx_kernel void @redjit_tile(ptr addrspace(1) %0, ptr addrspace(1) %1) {
entry:
  %i15 = alloca i32, align 4
  %i9 = alloca i32, align 4
  %acc = alloca float, align 4
  %i5 = alloca i32, align 4
  %i1 = alloca i32, align 4
  %i = alloca i32, align 4
  %2 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  store i32 %2, ptr %i, align 4
  br label %loop

loop:                                             ; preds = %body, %entry
  %3 = load i32, ptr %i, align 4
  %4 = icmp slt i32 %3, 32
  br i1 %4, label %body, label %done

body:                                             ; preds = %loop
  %5 = load i32, ptr %i, align 4
  %6 = getelementptr float, ptr addrspace(1) %0, i32 %5
  %7 = load float, ptr addrspace(1) %6, align 4
  %8 = getelementptr float, ptr addrspace(3) @rj_src0, i32 %5
  store float %7, ptr addrspace(3) %8, align 4
  %9 = load i32, ptr %i, align 4
  %10 = add i32 %9, 32
  store i32 %10, ptr %i, align 4
  br label %loop

done:                                             ; preds = %loop
  store i32 %2, ptr %i1, align 4
  br label %loop2

loop2:                                            ; preds = %body3, %done
  %11 = load i32, ptr %i1, align 4
  %12 = icmp slt i32 %11, 4
  br i1 %12, label %body3, label %done4

body3:                                            ; preds = %loop2
  %13 = load i32, ptr %i1, align 4
  %14 = getelementptr float, ptr addrspace(1) %1, i32 %13
  %15 = load float, ptr addrspace(1) %14, align 4
  %16 = getelementptr float, ptr addrspace(3) @rj_dst1, i32 %13
  store float %15, ptr addrspace(3) %16, align 4
  %17 = load i32, ptr %i1, align 4
  %18 = add i32 %17, 32
  store i32 %18, ptr %i1, align 4
  br label %loop2

done4:                                            ; preds = %loop2
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %group = udiv i32 %2, 8
  %lane = urem i32 %2, 8
  store i32 0, ptr %i5, align 4
  br label %loop6

loop6:                                            ; preds = %endif14, %done4
  %19 = load i32, ptr %i5, align 4
  %20 = icmp slt i32 %19, 1
  br i1 %20, label %body7, label %done8

body7:                                            ; preds = %loop6
  %21 = load i32, ptr %i5, align 4
  %22 = mul i32 %21, 4
  %spa = add i32 %22, %group
  %23 = icmp ult i32 %spa, 4
  %24 = urem i32 %spa, 4
  %25 = udiv i32 %spa, 4
  %26 = mul i32 %24, 8
  %27 = add i32 0, %26
  store float -0.000000e+00, ptr %acc, align 4
  store i32 %lane, ptr %i9, align 4
  br label %loop10

done8:                                            ; preds = %loop6
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  store i32 %2, ptr %i15, align 4
  br label %loop16

loop10:                                           ; preds = %endif, %body7
  %28 = load i32, ptr %i9, align 4
  %29 = icmp slt i32 %28, 8
  br i1 %29, label %body11, label %done12

body11:                                           ; preds = %loop10
  %30 = load i32, ptr %i9, align 4
  br i1 %23, label %then, label %endif

done12:                                           ; preds = %loop10
  %31 = load float, ptr %acc, align 4
  %32 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %31, i32 1, i32 6175)
  %33 = fadd float %31, %32
  %34 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %33, i32 2, i32 6175)
  %35 = fadd float %33, %34
  %36 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %35, i32 4, i32 6175)
  %37 = fadd float %35, %36
  %38 = icmp eq i32 %lane, 0
  %39 = and i1 %23, %38
  br i1 %39, label %then13, label %endif14

then:                                             ; preds = %body11
  %40 = urem i32 %30, 8
  %41 = udiv i32 %30, 8
  %42 = mul i32 %40, 1
  %43 = add i32 0, %42
  %44 = add i32 %27, %43
  %45 = getelementptr float, ptr addrspace(3) @rj_src0, i32 %44
  %46 = load float, ptr addrspace(3) %45, align 4
  %47 = load float, ptr %acc, align 4
  %48 = fadd float %47, %46
  store float %48, ptr %acc, align 4
  br label %endif

endif:                                            ; preds = %then, %body11
  %49 = load i32, ptr %i9, align 4
  %50 = add i32 %49, 8
  store i32 %50, ptr %i9, align 4
  br label %loop10

then13:                                           ; preds = %done12
  %51 = urem i32 %spa, 4
  %52 = udiv i32 %spa, 4
  %53 = mul i32 %51, 1
  %54 = add i32 0, %53
  %55 = getelementptr float, ptr addrspace(3) @rj_dst1, i32 %54
  store float %37, ptr addrspace(3) %55, align 4
  br label %endif14

endif14:                                          ; preds = %then13, %done12
  %56 = load i32, ptr %i5, align 4
  %57 = add i32 %56, 1
  store i32 %57, ptr %i5, align 4
  br label %loop6

loop16:                                           ; preds = %body17, %done8
  %58 = load i32, ptr %i15, align 4
  %59 = icmp slt i32 %58, 4
  br i1 %59, label %body17, label %done18

body17:                                           ; preds = %loop16
  %60 = load i32, ptr %i15, align 4
  %61 = getelementptr float, ptr addrspace(3) @rj_dst1, i32 %60
  %62 = load float, ptr addrspace(3) %61, align 4
  %63 = getelementptr float, ptr addrspace(1) %1, i32 %60
  store float %62, ptr addrspace(1) %63, align 4
  %64 = load i32, ptr %i15, align 4
  %65 = add i32 %64, 32
  store i32 %65, ptr %i15, align 4
  br label %loop16

done18:                                           ; preds = %loop16
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #0

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32) #1

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32) #2

attributes #0 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #1 = { convergent nocallback nounwind }
attributes #2 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
