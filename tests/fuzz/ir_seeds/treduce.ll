; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @redjit_treduce(ptr addrspace(1) %0, ptr addrspace(1) %1, ptr addrspace(1) %2, ptr addrspace(1) %3, ptr addrspace(1) %4) {
entry:
  %w = alloca i64, align 8
  %5 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %6 = zext i32 %5 to i64
  %7 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %8 = zext i32 %7 to i64
  %9 = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %10 = zext i32 %9 to i64
  store i64 %8, ptr %w, align 4
  br label %chunks

chunks:                                           ; preds = %endif16, %entry
  %11 = load i64, ptr %w, align 4
  %12 = icmp slt i64 %11, 16
  br i1 %12, label %chunk, label %done

chunk:                                            ; preds = %chunks
  %13 = load i64, ptr %w, align 4
  %chunk1 = udiv i64 %13, 2
  %piece = urem i64 %13, 2
  %cc = urem i64 %chunk1, 1
  %14 = udiv i64 %chunk1, 1
  %rc = urem i64 %14, 8
  %outer = udiv i64 %14, 8
  %row0 = mul i64 %rc, 64
  %col0 = mul i64 %cc, 32
  %15 = mul i64 %col0, 1
  %16 = mul i64 %row0, 32
  %17 = add i64 %16, %15
  %18 = mul i64 %col0, 1
  %19 = mul i64 %row0, 32
  %20 = add i64 %19, %18
  %21 = sub i64 512, %row0
  %22 = sub i64 32, %col0
  %23 = icmp slt i64 %21, 64
  %24 = select i1 %23, i64 %21, i64 64
  %25 = icmp slt i64 %22, 32
  %26 = select i1 %25, i64 %22, i64 32
  %rows = trunc i64 %24 to i32
  %cols = trunc i64 %26 to i32
  %27 = mul i32 %rows, %cols
  %28 = trunc i64 %6 to i32
  %29 = trunc i64 %piece to i32
  %30 = mul i32 %29, 1024
  %31 = add i32 %30, %28
  %32 = add i32 %31, 0
  %valid = icmp ult i32 %32, %27
  %33 = udiv i32 %32, 32
  %34 = mul i32 %33, 32
  %35 = sub i32 %32, %34
  %36 = zext i32 %33 to i64
  %37 = zext i32 %35 to i64
  %38 = mul i64 %37, 1
  %39 = mul i64 %36, 32
  %40 = add i64 %39, %38
  %41 = add i64 %17, %40
  %42 = mul i64 %37, 1
  %43 = mul i64 %36, 32
  %44 = add i64 %43, %42
  %45 = add i64 %20, %44
  %soff = select i1 %valid, i64 %41, i64 0
  %doff = select i1 %valid, i64 %45, i64 0
  %46 = add i32 %31, 256
  %valid2 = icmp ult i32 %46, %27
  %47 = udiv i32 %46, 32
  %48 = mul i32 %47, 32
  %49 = sub i32 %46, %48
  %50 = zext i32 %47 to i64
  %51 = zext i32 %49 to i64
  %52 = mul i64 %51, 1
  %53 = mul i64 %50, 32
  %54 = add i64 %53, %52
  %55 = add i64 %17, %54
  %56 = mul i64 %51, 1
  %57 = mul i64 %50, 32
  %58 = add i64 %57, %56
  %59 = add i64 %20, %58
  %soff3 = select i1 %valid2, i64 %55, i64 0
  %doff4 = select i1 %valid2, i64 %59, i64 0
  %60 = add i32 %31, 512
  %valid5 = icmp ult i32 %60, %27
  %61 = udiv i32 %60, 32
  %62 = mul i32 %61, 32
  %63 = sub i32 %60, %62
  %64 = zext i32 %61 to i64
  %65 = zext i32 %63 to i64
  %66 = mul i64 %65, 1
  %67 = mul i64 %64, 32
  %68 = add i64 %67, %66
  %69 = add i64 %17, %68
  %70 = mul i64 %65, 1
  %71 = mul i64 %64, 32
  %72 = add i64 %71, %70
  %73 = add i64 %20, %72
  %soff6 = select i1 %valid5, i64 %69, i64 0
  %doff7 = select i1 %valid5, i64 %73, i64 0
  %74 = add i32 %31, 768
  %valid8 = icmp ult i32 %74, %27
  %75 = udiv i32 %74, 32
  %76 = mul i32 %75, 32
  %77 = sub i32 %74, %76
  %78 = zext i32 %75 to i64
  %79 = zext i32 %77 to i64
  %80 = mul i64 %79, 1
  %81 = mul i64 %78, 32
  %82 = add i64 %81, %80
  %83 = add i64 %17, %82
  %84 = mul i64 %79, 1
  %85 = mul i64 %78, 32
  %86 = add i64 %85, %84
  %87 = add i64 %20, %86
  %soff9 = select i1 %valid8, i64 %83, i64 0
  %doff10 = select i1 %valid8, i64 %87, i64 0
  %88 = getelementptr float, ptr addrspace(1) %2, i64 %soff
  %89 = load float, ptr addrspace(1) %88, align 4
  %90 = getelementptr float, ptr addrspace(1) %2, i64 %soff3
  %91 = load float, ptr addrspace(1) %90, align 4
  %92 = getelementptr float, ptr addrspace(1) %2, i64 %soff6
  %93 = load float, ptr addrspace(1) %92, align 4
  %94 = getelementptr float, ptr addrspace(1) %2, i64 %soff9
  %95 = load float, ptr addrspace(1) %94, align 4
  %96 = getelementptr float, ptr addrspace(1) %1, i64 %soff
  %97 = load float, ptr addrspace(1) %96, align 4
  %98 = getelementptr float, ptr addrspace(1) %1, i64 %soff3
  %99 = load float, ptr addrspace(1) %98, align 4
  %100 = getelementptr float, ptr addrspace(1) %1, i64 %soff6
  %101 = load float, ptr addrspace(1) %100, align 4
  %102 = getelementptr float, ptr addrspace(1) %1, i64 %soff9
  %103 = load float, ptr addrspace(1) %102, align 4
  %104 = fadd float -0.000000e+00, %89
  %105 = fadd float -0.000000e+00, %91
  %106 = fadd float -0.000000e+00, %93
  %107 = fadd float -0.000000e+00, %95
  %108 = getelementptr float, ptr addrspace(1) %3, i64 %soff
  %109 = load float, ptr addrspace(1) %108, align 4
  %110 = getelementptr float, ptr addrspace(1) %3, i64 %soff3
  %111 = load float, ptr addrspace(1) %110, align 4
  %112 = getelementptr float, ptr addrspace(1) %3, i64 %soff6
  %113 = load float, ptr addrspace(1) %112, align 4
  %114 = getelementptr float, ptr addrspace(1) %3, i64 %soff9
  %115 = load float, ptr addrspace(1) %114, align 4
  %116 = fadd float %104, %97
  %117 = fadd float %105, %99
  %118 = fadd float %106, %101
  %119 = fadd float %107, %103
  %120 = getelementptr float, ptr addrspace(1) %4, i64 %soff
  %121 = load float, ptr addrspace(1) %120, align 4
  %122 = getelementptr float, ptr addrspace(1) %4, i64 %soff3
  %123 = load float, ptr addrspace(1) %122, align 4
  %124 = getelementptr float, ptr addrspace(1) %4, i64 %soff6
  %125 = load float, ptr addrspace(1) %124, align 4
  %126 = getelementptr float, ptr addrspace(1) %4, i64 %soff9
  %127 = load float, ptr addrspace(1) %126, align 4
  %128 = fadd float %116, %109
  %129 = fadd float %117, %111
  %130 = fadd float %118, %113
  %131 = fadd float %119, %115
  %132 = fadd float %128, %121
  %133 = fadd float %129, %123
  %134 = fadd float %130, %125
  %135 = fadd float %131, %127
  br i1 %valid, label %then, label %endif

done:                                             ; preds = %chunks
  ret void

then:                                             ; preds = %chunk
  %136 = getelementptr float, ptr addrspace(1) %0, i64 %doff
  store float %132, ptr addrspace(1) %136, align 4
  br label %endif

endif:                                            ; preds = %then, %chunk
  br i1 %valid2, label %then11, label %endif12

then11:                                           ; preds = %endif
  %137 = getelementptr float, ptr addrspace(1) %0, i64 %doff4
  store float %133, ptr addrspace(1) %137, align 4
  br label %endif12

endif12:                                          ; preds = %then11, %endif
  br i1 %valid5, label %then13, label %endif14

then13:                                           ; preds = %endif12
  %138 = getelementptr float, ptr addrspace(1) %0, i64 %doff7
  store float %134, ptr addrspace(1) %138, align 4
  br label %endif14

endif14:                                          ; preds = %then13, %endif12
  br i1 %valid8, label %then15, label %endif16

then15:                                           ; preds = %endif14
  %139 = getelementptr float, ptr addrspace(1) %0, i64 %doff10
  store float %135, ptr addrspace(1) %139, align 4
  br label %endif16

endif16:                                          ; preds = %then15, %endif14
  %140 = load i64, ptr %w, align 4
  %141 = add i64 %140, %10
  store i64 %141, ptr %w, align 4
  br label %chunks
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #0

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #0

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 1, -2147483648) i32 @llvm.nvvm.read.ptx.sreg.nctaid.x() #0

attributes #0 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
