; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @redjit_tensor(ptr addrspace(1) noalias readonly %0, ptr addrspace(1) noalias %1) #0 {
entry:
  %i = alloca i64, align 8
  %acc3 = alloca i32, align 4
  %acc2 = alloca i32, align 4
  %acc1 = alloca i32, align 4
  %acc = alloca i32, align 4
  %2 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %3 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %4 = udiv i32 %2, 32
  %5 = mul i32 %3, 8
  %6 = add i32 %5, %4
  %out = zext i32 %6 to i64
  %7 = urem i32 %2, 32
  %8 = zext i32 %7 to i64
  %9 = icmp ult i64 %out, 32
  %10 = select i1 %9, i64 %out, i64 0
  %11 = urem i64 %10, 32
  %12 = udiv i64 %10, 32
  %13 = mul i64 %11, 48
  %14 = add i64 0, %13
  store i32 2147483647, ptr %acc, align 4
  store i32 2147483647, ptr %acc1, align 4
  store i32 2147483647, ptr %acc2, align 4
  store i32 2147483647, ptr %acc3, align 4
  %15 = select i1 %9, i64 3072, i64 0
  store i64 %8, ptr %i, align 4
  br label %loop

loop:                                             ; preds = %endif9, %entry
  %16 = load i64, ptr %i, align 4
  %17 = icmp slt i64 %16, %15
  br i1 %17, label %body, label %done

body:                                             ; preds = %loop
  %18 = load i64, ptr %i, align 4
  %19 = add i64 %18, 0
  %20 = icmp slt i64 %19, %15
  br i1 %20, label %then, label %endif

done:                                             ; preds = %loop
  %21 = load i32, ptr %acc, align 4
  %22 = load i32, ptr %acc1, align 4
  %23 = load i32, ptr %acc2, align 4
  %24 = load i32, ptr %acc3, align 4
  %25 = call i32 @llvm.smin.i32(i32 %21, i32 %22)
  %26 = call i32 @llvm.smin.i32(i32 %23, i32 %24)
  %27 = call i32 @llvm.smin.i32(i32 %25, i32 %26)
  %28 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %27, i32 16, i32 31)
  %29 = call i32 @llvm.smin.i32(i32 %27, i32 %28)
  %30 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %29, i32 8, i32 31)
  %31 = call i32 @llvm.smin.i32(i32 %29, i32 %30)
  %32 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %31, i32 4, i32 31)
  %33 = call i32 @llvm.smin.i32(i32 %31, i32 %32)
  %34 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %33, i32 2, i32 31)
  %35 = call i32 @llvm.smin.i32(i32 %33, i32 %34)
  %36 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %35, i32 1, i32 31)
  %37 = call i32 @llvm.smin.i32(i32 %35, i32 %36)
  %38 = icmp eq i64 %8, 0
  %39 = and i1 %9, %38
  br i1 %39, label %then10, label %endif11

then:                                             ; preds = %body
  %40 = urem i64 %19, 48
  %41 = udiv i64 %19, 48
  %42 = mul i64 %40, 1
  %43 = add i64 0, %42
  %44 = urem i64 %41, 64
  %45 = udiv i64 %41, 64
  %46 = mul i64 %44, 1536
  %47 = add i64 %43, %46
  %48 = add i64 %14, %47
  %49 = getelementptr i32, ptr addrspace(1) %0, i64 %48
  %50 = load i32, ptr addrspace(1) %49, align 4
  %51 = load i32, ptr %acc, align 4
  %52 = call i32 @llvm.smin.i32(i32 %51, i32 %50)
  store i32 %52, ptr %acc, align 4
  br label %endif

endif:                                            ; preds = %then, %body
  %53 = add i64 %18, 32
  %54 = icmp slt i64 %53, %15
  br i1 %54, label %then4, label %endif5

then4:                                            ; preds = %endif
  %55 = urem i64 %53, 48
  %56 = udiv i64 %53, 48
  %57 = mul i64 %55, 1
  %58 = add i64 0, %57
  %59 = urem i64 %56, 64
  %60 = udiv i64 %56, 64
  %61 = mul i64 %59, 1536
  %62 = add i64 %58, %61
  %63 = add i64 %14, %62
  %64 = getelementptr i32, ptr addrspace(1) %0, i64 %63
  %65 = load i32, ptr addrspace(1) %64, align 4
  %66 = load i32, ptr %acc1, align 4
  %67 = call i32 @llvm.smin.i32(i32 %66, i32 %65)
  store i32 %67, ptr %acc1, align 4
  br label %endif5

endif5:                                           ; preds = %then4, %endif
  %68 = add i64 %18, 64
  %69 = icmp slt i64 %68, %15
  br i1 %69, label %then6, label %endif7

then6:                                            ; preds = %endif5
  %70 = urem i64 %68, 48
  %71 = udiv i64 %68, 48
  %72 = mul i64 %70, 1
  %73 = add i64 0, %72
  %74 = urem i64 %71, 64
  %75 = udiv i64 %71, 64
  %76 = mul i64 %74, 1536
  %77 = add i64 %73, %76
  %78 = add i64 %14, %77
  %79 = getelementptr i32, ptr addrspace(1) %0, i64 %78
  %80 = load i32, ptr addrspace(1) %79, align 4
  %81 = load i32, ptr %acc2, align 4
  %82 = call i32 @llvm.smin.i32(i32 %81, i32 %80)
  store i32 %82, ptr %acc2, align 4
  br label %endif7

endif7:                                           ; preds = %then6, %endif5
  %83 = add i64 %18, 96
  %84 = icmp slt i64 %83, %15
  br i1 %84, label %then8, label %endif9

then8:                                            ; preds = %endif7
  %85 = urem i64 %83, 48
  %86 = udiv i64 %83, 48
  %87 = mul i64 %85, 1
  %88 = add i64 0, %87
  %89 = urem i64 %86, 64
  %90 = udiv i64 %86, 64
  %91 = mul i64 %89, 1536
  %92 = add i64 %88, %91
  %93 = add i64 %14, %92
  %94 = getelementptr i32, ptr addrspace(1) %0, i64 %93
  %95 = load i32, ptr addrspace(1) %94, align 4
  %96 = load i32, ptr %acc3, align 4
  %97 = call i32 @llvm.smin.i32(i32 %96, i32 %95)
  store i32 %97, ptr %acc3, align 4
  br label %endif9

endif9:                                           ; preds = %then8, %endif7
  %98 = load i64, ptr %i, align 4
  %99 = add i64 %98, 128
  store i64 %99, ptr %i, align 4
  br label %loop

then10:                                           ; preds = %done
  %100 = getelementptr i32, ptr addrspace(1) %1, i64 %out
  store i32 %37, ptr addrspace(1) %100, align 4
  br label %endif11

endif11:                                          ; preds = %then10, %done
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #1

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.smin.i32(i32, i32) #2

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32) #3

attributes #0 = { "nvvm.maxntid"="256" "nvvm.minctasm"="4" }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
attributes #3 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
