; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@rj_warp_part0 = internal addrspace(3) global [32 x float] undef, align 16
@rj_cluster_part1 = internal addrspace(3) global [8 x float] undef, align 16

define ptx_kernel void @redjit_tensor(ptr addrspace(1) noalias readonly %0, ptr addrspace(1) noalias %1) #0 {
entry:
  %cta_res = alloca float, align 4
  %i8 = alloca i64, align 8
  %i4 = alloca i64, align 8
  %i = alloca i64, align 8
  %acc3 = alloca float, align 4
  %acc2 = alloca float, align 4
  %acc1 = alloca float, align 4
  %acc = alloca float, align 4
  %2 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  call void @llvm.nvvm.barrier.cluster.arrive()
  %3 = call i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()
  %4 = zext i32 %2 to i64
  %5 = zext i32 %3 to i64
  %6 = mul i64 %5, 1024
  %lane = add i64 %6, %4
  store float -0.000000e+00, ptr %acc, align 4
  store float -0.000000e+00, ptr %acc1, align 4
  store float -0.000000e+00, ptr %acc2, align 4
  store float -0.000000e+00, ptr %acc3, align 4
  %7 = ptrtoint ptr addrspace(1) %0 to i64
  %8 = udiv i64 %7, 4
  %9 = and i64 %8, 3
  %10 = sub i64 4, %9
  %11 = and i64 %10, 3
  %12 = icmp slt i64 %11, 131072
  %13 = select i1 %12, i64 %11, i64 131072
  store i64 %lane, ptr %i, align 4
  br label %loop

loop:                                             ; preds = %body, %entry
  %14 = load i64, ptr %i, align 4
  %15 = icmp slt i64 %14, %13
  br i1 %15, label %body, label %done

body:                                             ; preds = %loop
  %16 = load i64, ptr %i, align 4
  %17 = getelementptr float, ptr addrspace(1) %0, i64 %16
  %18 = load float, ptr addrspace(1) %17, align 4
  %19 = load float, ptr %acc, align 4
  %20 = fadd float %19, %18
  store float %20, ptr %acc, align 4
  %21 = load i64, ptr %i, align 4
  %22 = add i64 %21, 8192
  store i64 %22, ptr %i, align 4
  br label %loop

done:                                             ; preds = %loop
  %23 = getelementptr float, ptr addrspace(1) %0, i64 %13
  %24 = sub i64 131072, %13
  %nv = sdiv i64 %24, 4
  %25 = sub i64 %nv, 1
  store i64 %lane, ptr %i4, align 4
  br label %loop5

loop5:                                            ; preds = %body6, %done
  %26 = load i64, ptr %i4, align 4
  %27 = icmp slt i64 %26, %nv
  br i1 %27, label %body6, label %done7

body6:                                            ; preds = %loop5
  %28 = load i64, ptr %i4, align 4
  %29 = add i64 %28, 0
  %30 = icmp slt i64 %29, %nv
  %31 = select i1 %30, i64 %29, i64 %25
  %32 = mul i64 %31, 4
  %33 = getelementptr float, ptr addrspace(1) %23, i64 %32
  %34 = load <4 x float>, ptr addrspace(1) %33, align 16
  %35 = extractelement <4 x float> %34, i32 0
  %36 = extractelement <4 x float> %34, i32 1
  %37 = extractelement <4 x float> %34, i32 2
  %38 = extractelement <4 x float> %34, i32 3
  %39 = add i64 %28, 8192
  %40 = icmp slt i64 %39, %nv
  %41 = select i1 %40, i64 %39, i64 %25
  %42 = mul i64 %41, 4
  %43 = getelementptr float, ptr addrspace(1) %23, i64 %42
  %44 = load <4 x float>, ptr addrspace(1) %43, align 16
  %45 = extractelement <4 x float> %44, i32 0
  %46 = extractelement <4 x float> %44, i32 1
  %47 = extractelement <4 x float> %44, i32 2
  %48 = extractelement <4 x float> %44, i32 3
  %49 = add i64 %28, 16384
  %50 = icmp slt i64 %49, %nv
  %51 = select i1 %50, i64 %49, i64 %25
  %52 = mul i64 %51, 4
  %53 = getelementptr float, ptr addrspace(1) %23, i64 %52
  %54 = load <4 x float>, ptr addrspace(1) %53, align 16
  %55 = extractelement <4 x float> %54, i32 0
  %56 = extractelement <4 x float> %54, i32 1
  %57 = extractelement <4 x float> %54, i32 2
  %58 = extractelement <4 x float> %54, i32 3
  %59 = add i64 %28, 24576
  %60 = icmp slt i64 %59, %nv
  %61 = select i1 %60, i64 %59, i64 %25
  %62 = mul i64 %61, 4
  %63 = getelementptr float, ptr addrspace(1) %23, i64 %62
  %64 = load <4 x float>, ptr addrspace(1) %63, align 16
  %65 = extractelement <4 x float> %64, i32 0
  %66 = extractelement <4 x float> %64, i32 1
  %67 = extractelement <4 x float> %64, i32 2
  %68 = extractelement <4 x float> %64, i32 3
  %69 = load float, ptr %acc, align 4
  %70 = fadd float %69, %35
  store float %70, ptr %acc, align 4
  %71 = load float, ptr %acc1, align 4
  %72 = fadd float %71, %36
  store float %72, ptr %acc1, align 4
  %73 = load float, ptr %acc2, align 4
  %74 = fadd float %73, %37
  store float %74, ptr %acc2, align 4
  %75 = load float, ptr %acc3, align 4
  %76 = fadd float %75, %38
  store float %76, ptr %acc3, align 4
  %77 = select i1 %40, float %45, float -0.000000e+00
  %78 = load float, ptr %acc, align 4
  %79 = fadd float %78, %77
  store float %79, ptr %acc, align 4
  %80 = select i1 %40, float %46, float -0.000000e+00
  %81 = load float, ptr %acc1, align 4
  %82 = fadd float %81, %80
  store float %82, ptr %acc1, align 4
  %83 = select i1 %40, float %47, float -0.000000e+00
  %84 = load float, ptr %acc2, align 4
  %85 = fadd float %84, %83
  store float %85, ptr %acc2, align 4
  %86 = select i1 %40, float %48, float -0.000000e+00
  %87 = load float, ptr %acc3, align 4
  %88 = fadd float %87, %86
  store float %88, ptr %acc3, align 4
  %89 = select i1 %50, float %55, float -0.000000e+00
  %90 = load float, ptr %acc, align 4
  %91 = fadd float %90, %89
  store float %91, ptr %acc, align 4
  %92 = select i1 %50, float %56, float -0.000000e+00
  %93 = load float, ptr %acc1, align 4
  %94 = fadd float %93, %92
  store float %94, ptr %acc1, align 4
  %95 = select i1 %50, float %57, float -0.000000e+00
  %96 = load float, ptr %acc2, align 4
  %97 = fadd float %96, %95
  store float %97, ptr %acc2, align 4
  %98 = select i1 %50, float %58, float -0.000000e+00
  %99 = load float, ptr %acc3, align 4
  %100 = fadd float %99, %98
  store float %100, ptr %acc3, align 4
  %101 = select i1 %60, float %65, float -0.000000e+00
  %102 = load float, ptr %acc, align 4
  %103 = fadd float %102, %101
  store float %103, ptr %acc, align 4
  %104 = select i1 %60, float %66, float -0.000000e+00
  %105 = load float, ptr %acc1, align 4
  %106 = fadd float %105, %104
  store float %106, ptr %acc1, align 4
  %107 = select i1 %60, float %67, float -0.000000e+00
  %108 = load float, ptr %acc2, align 4
  %109 = fadd float %108, %107
  store float %109, ptr %acc2, align 4
  %110 = select i1 %60, float %68, float -0.000000e+00
  %111 = load float, ptr %acc3, align 4
  %112 = fadd float %111, %110
  store float %112, ptr %acc3, align 4
  %113 = load i64, ptr %i4, align 4
  %114 = add i64 %113, 32768
  store i64 %114, ptr %i4, align 4
  br label %loop5

done7:                                            ; preds = %loop5
  %115 = mul i64 %nv, 4
  %116 = add i64 %13, %115
  %117 = add i64 %116, %lane
  store i64 %117, ptr %i8, align 4
  br label %loop9

loop9:                                            ; preds = %body10, %done7
  %118 = load i64, ptr %i8, align 4
  %119 = icmp slt i64 %118, 131072
  br i1 %119, label %body10, label %done11

body10:                                           ; preds = %loop9
  %120 = load i64, ptr %i8, align 4
  %121 = getelementptr float, ptr addrspace(1) %0, i64 %120
  %122 = load float, ptr addrspace(1) %121, align 4
  %123 = load float, ptr %acc1, align 4
  %124 = fadd float %123, %122
  store float %124, ptr %acc1, align 4
  %125 = load i64, ptr %i8, align 4
  %126 = add i64 %125, 8192
  store i64 %126, ptr %i8, align 4
  br label %loop9

done11:                                           ; preds = %loop9
  %127 = load float, ptr %acc, align 4
  %128 = load float, ptr %acc1, align 4
  %129 = load float, ptr %acc2, align 4
  %130 = load float, ptr %acc3, align 4
  %131 = fadd float %127, %128
  %132 = fadd float %129, %130
  %133 = fadd float %131, %132
  %134 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %133, i32 16, i32 31)
  %135 = fadd float %133, %134
  %136 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %135, i32 8, i32 31)
  %137 = fadd float %135, %136
  %138 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %137, i32 4, i32 31)
  %139 = fadd float %137, %138
  %140 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %139, i32 2, i32 31)
  %141 = fadd float %139, %140
  %142 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %141, i32 1, i32 31)
  %143 = fadd float %141, %142
  %warp = lshr i32 %2, 5
  %lane12 = and i32 %2, 31
  store float %143, ptr %cta_res, align 4
  %144 = icmp eq i32 %lane12, 0
  br i1 %144, label %then, label %endif

then:                                             ; preds = %done11
  %145 = getelementptr float, ptr addrspace(3) @rj_warp_part0, i32 %warp
  store float %143, ptr addrspace(3) %145, align 4
  br label %endif

endif:                                            ; preds = %then, %done11
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %146 = icmp eq i32 %warp, 0
  br i1 %146, label %then13, label %endif14

then13:                                           ; preds = %endif
  %147 = icmp ult i32 %lane12, 32
  %148 = select i1 %147, i32 %lane12, i32 0
  %149 = getelementptr float, ptr addrspace(3) @rj_warp_part0, i32 %148
  %150 = load float, ptr addrspace(3) %149, align 4
  %151 = select i1 %147, float %150, float -0.000000e+00
  %152 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %151, i32 16, i32 31)
  %153 = fadd float %151, %152
  %154 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %153, i32 8, i32 31)
  %155 = fadd float %153, %154
  %156 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %155, i32 4, i32 31)
  %157 = fadd float %155, %156
  %158 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %157, i32 2, i32 31)
  %159 = fadd float %157, %158
  %160 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %159, i32 1, i32 31)
  %161 = fadd float %159, %160
  store float %161, ptr %cta_res, align 4
  br label %endif14

endif14:                                          ; preds = %then13, %endif
  %162 = load float, ptr %cta_res, align 4
  call void @llvm.nvvm.barrier.cluster.wait()
  %163 = icmp eq i32 %2, 0
  br i1 %163, label %then15, label %endif16

then15:                                           ; preds = %endif14
  %164 = getelementptr float, ptr addrspace(3) @rj_cluster_part1, i32 %3
  %165 = call ptr addrspace(7) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3) %164, i32 0)
  store float %162, ptr addrspace(7) %165, align 4
  br label %endif16

endif16:                                          ; preds = %then15, %endif14
  call void @llvm.nvvm.barrier.cluster.arrive()
  call void @llvm.nvvm.barrier.cluster.wait()
  %166 = icmp ult i32 %2, 32
  %167 = icmp eq i32 %3, 0
  %168 = and i1 %167, %166
  br i1 %168, label %then17, label %endif18

then17:                                           ; preds = %endif16
  %169 = icmp ult i32 %2, 8
  %170 = select i1 %169, i32 %2, i32 0
  %171 = getelementptr float, ptr addrspace(3) @rj_cluster_part1, i32 %170
  %172 = load float, ptr addrspace(3) %171, align 4
  %173 = select i1 %169, float %172, float -0.000000e+00
  %174 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %173, i32 4, i32 31)
  %175 = fadd float %173, %174
  %176 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %175, i32 2, i32 31)
  %177 = fadd float %175, %176
  %178 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %177, i32 1, i32 31)
  %179 = fadd float %177, %178
  %180 = icmp eq i32 %2, 0
  br i1 %180, label %then19, label %endif20

endif18:                                          ; preds = %endif20, %endif16
  ret void

then19:                                           ; preds = %then17
  %181 = getelementptr float, ptr addrspace(1) %1, i64 0
  store float %179, ptr addrspace(1) %181, align 4
  br label %endif20

endif20:                                          ; preds = %then19, %then17
  br label %endif18
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier.cluster.arrive() #2

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank() #1

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32) #3

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32) #2

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier.cluster.wait() #2

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare ptr addrspace(7) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3) captures(none), i32) #1

attributes #0 = { "nvvm.cluster_dim"="8,1,1" "nvvm.maxntid"="1024" "nvvm.minctasm"="1" }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { convergent nocallback nounwind }
attributes #3 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
