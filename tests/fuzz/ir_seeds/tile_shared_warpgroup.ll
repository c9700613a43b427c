; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@rj_src0 = internal addrspace(3) global [8192 x bfloat] undef, align 16
@rj_dst1 = internal addrspace(3) global [16 x bfloat] undef, align 16

define ptx_kernel void @redjit_tile(ptr addrspace(1) %0, ptr addrspace(1) %1) {
entry:
  %i17 = alloca i32, align 4
  %i9 = alloca i32, align 4
  %acc = alloca float, align 4
  %i5 = alloca i32, align 4
  %i1 = alloca i32, align 4
  %i = alloca i32, align 4
  %2 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %tid_in_scope = urem i32 %2, 128
  store i32 %2, ptr %i, align 4
  br label %loop

loop:                                             ; preds = %body, %entry
  %3 = load i32, ptr %i, align 4
  %4 = icmp slt i32 %3, 8192
  br i1 %4, label %body, label %done

body:                                             ; preds = %loop
  %5 = load i32, ptr %i, align 4
  %6 = getelementptr bfloat, ptr addrspace(1) %0, i32 %5
  %7 = load bfloat, ptr addrspace(1) %6, align 2
  %8 = getelementptr bfloat, ptr addrspace(3) @rj_src0, i32 %5
  store bfloat %7, ptr addrspace(3) %8, align 2
  %9 = load i32, ptr %i, align 4
  %10 = add i32 %9, 256
  store i32 %10, ptr %i, align 4
  br label %loop

done:                                             ; preds = %loop
  store i32 %2, ptr %i1, align 4
  br label %loop2

loop2:                                            ; preds = %body3, %done
  %11 = load i32, ptr %i1, align 4
  %12 = icmp slt i32 %11, 16
  br i1 %12, label %body3, label %done4

body3:                                            ; preds = %loop2
  %13 = load i32, ptr %i1, align 4
  %14 = getelementptr bfloat, ptr addrspace(1) %1, i32 %13
  %15 = load bfloat, ptr addrspace(1) %14, align 2
  %16 = getelementptr bfloat, ptr addrspace(3) @rj_dst1, i32 %13
  store bfloat %15, ptr addrspace(3) %16, align 2
  %17 = load i32, ptr %i1, align 4
  %18 = add i32 %17, 256
  store i32 %18, ptr %i1, align 4
  br label %loop2

done4:                                            ; preds = %loop2
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %19 = udiv i32 %2, 128
  %active = icmp eq i32 %19, 1
  br i1 %active, label %then, label %endif

then:                                             ; preds = %done4
  %group = udiv i32 %tid_in_scope, 32
  %lane = urem i32 %tid_in_scope, 32
  store i32 0, ptr %i5, align 4
  br label %loop6

endif:                                            ; preds = %done8, %done4
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  store i32 %2, ptr %i17, align 4
  br label %loop18

loop6:                                            ; preds = %endif16, %then
  %20 = load i32, ptr %i5, align 4
  %21 = icmp slt i32 %20, 4
  br i1 %21, label %body7, label %done8

body7:                                            ; preds = %loop6
  %22 = load i32, ptr %i5, align 4
  %23 = mul i32 %22, 4
  %spa = add i32 %23, %group
  %24 = icmp ult i32 %spa, 16
  %25 = urem i32 %spa, 16
  %26 = udiv i32 %spa, 16
  %27 = mul i32 %25, 512
  %28 = add i32 0, %27
  store float -0.000000e+00, ptr %acc, align 4
  store i32 %lane, ptr %i9, align 4
  br label %loop10

done8:                                            ; preds = %loop6
  call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 1, i32 128)
  br label %endif

loop10:                                           ; preds = %endif14, %body7
  %29 = load i32, ptr %i9, align 4
  %30 = icmp slt i32 %29, 512
  br i1 %30, label %body11, label %done12

body11:                                           ; preds = %loop10
  %31 = load i32, ptr %i9, align 4
  br i1 %24, label %then13, label %endif14

done12:                                           ; preds = %loop10
  %32 = load float, ptr %acc, align 4
  %33 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %32, i32 1, i32 31)
  %34 = fadd float %32, %33
  %35 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %34, i32 2, i32 31)
  %36 = fadd float %34, %35
  %37 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %36, i32 4, i32 31)
  %38 = fadd float %36, %37
  %39 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %38, i32 8, i32 31)
  %40 = fadd float %38, %39
  %41 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %40, i32 16, i32 31)
  %42 = fadd float %40, %41
  %43 = icmp eq i32 %lane, 0
  %44 = and i1 %24, %43
  br i1 %44, label %then15, label %endif16

then13:                                           ; preds = %body11
  %45 = urem i32 %31, 512
  %46 = udiv i32 %31, 512
  %47 = mul i32 %45, 1
  %48 = add i32 0, %47
  %49 = add i32 %28, %48
  %50 = getelementptr bfloat, ptr addrspace(3) @rj_src0, i32 %49
  %51 = load bfloat, ptr addrspace(3) %50, align 2
  %52 = fpext bfloat %51 to float
  %53 = load float, ptr %acc, align 4
  %54 = fadd float %53, %52
  store float %54, ptr %acc, align 4
  br label %endif14

endif14:                                          ; preds = %then13, %body11
  %55 = load i32, ptr %i9, align 4
  %56 = add i32 %55, 32
  store i32 %56, ptr %i9, align 4
  br label %loop10

then15:                                           ; preds = %done12
  %57 = urem i32 %spa, 16
  %58 = udiv i32 %spa, 16
  %59 = mul i32 %57, 1
  %60 = add i32 0, %59
  %61 = getelementptr bfloat, ptr addrspace(3) @rj_dst1, i32 %60
  %62 = load bfloat, ptr addrspace(3) %61, align 2
  %63 = fpext bfloat %62 to float
  %64 = fadd float %42, %63
  %65 = fptrunc float %64 to bfloat
  store bfloat %65, ptr addrspace(3) %61, align 2
  br label %endif16

endif16:                                          ; preds = %then15, %done12
  %66 = load i32, ptr %i5, align 4
  %67 = add i32 %66, 1
  store i32 %67, ptr %i5, align 4
  br label %loop6

loop18:                                           ; preds = %body19, %endif
  %68 = load i32, ptr %i17, align 4
  %69 = icmp slt i32 %68, 16
  br i1 %69, label %body19, label %done20

body19:                                           ; preds = %loop18
  %70 = load i32, ptr %i17, align 4
  %71 = getelementptr bfloat, ptr addrspace(3) @rj_dst1, i32 %70
  %72 = load bfloat, ptr addrspace(3) %71, align 2
  %73 = getelementptr bfloat, ptr addrspace(1) %1, i32 %70
  store bfloat %72, ptr addrspace(1) %73, align 2
  %74 = load i32, ptr %i17, align 4
  %75 = add i32 %74, 256
  store i32 %75, ptr %i17, align 4
  br label %loop18

done20:                                           ; preds = %loop18
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #0

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32) #1

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32) #2

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier.cta.sync.aligned.count(i32, i32) #1

attributes #0 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #1 = { convergent nocallback nounwind }
attributes #2 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
