; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @redjit_tensor(ptr addrspace(1) noalias readonly %0, ptr addrspace(1) noalias %1, i64 %2, i64 %3, i64 %4, i64 %5, i64 %6) #0 {
entry:
  %i8 = alloca i64, align 8
  %i4 = alloca i64, align 8
  %i = alloca i64, align 8
  %acc3 = alloca float, align 4
  %acc2 = alloca float, align 4
  %acc1 = alloca float, align 4
  %acc = alloca float, align 4
  %7 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %8 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  store float -0.000000e+00, ptr %acc, align 4
  store float -0.000000e+00, ptr %acc1, align 4
  store float -0.000000e+00, ptr %acc2, align 4
  store float -0.000000e+00, ptr %acc3, align 4
  %9 = udiv i32 %7, 8
  %10 = mul i32 %8, 32
  %11 = add i32 %10, %9
  %row = zext i32 %11 to i64
  %12 = urem i32 %7, 8
  %lane = zext i32 %12 to i64
  %13 = icmp ult i64 %row, %2
  %14 = select i1 %13, i64 %row, i64 0
  %15 = mul i64 %14, %4
  %16 = getelementptr float, ptr addrspace(1) %0, i64 %15
  %17 = select i1 %13, i64 %3, i64 0
  %18 = ptrtoint ptr addrspace(1) %16 to i64
  %19 = udiv i64 %18, 4
  %20 = and i64 %19, 3
  %21 = sub i64 4, %20
  %22 = and i64 %21, 3
  %23 = icmp slt i64 %22, %17
  %24 = select i1 %23, i64 %22, i64 %17
  store i64 %lane, ptr %i, align 4
  br label %loop

loop:                                             ; preds = %body, %entry
  %25 = load i64, ptr %i, align 4
  %26 = icmp slt i64 %25, %24
  br i1 %26, label %body, label %done

body:                                             ; preds = %loop
  %27 = load i64, ptr %i, align 4
  %28 = getelementptr float, ptr addrspace(1) %16, i64 %27
  %29 = load float, ptr addrspace(1) %28, align 4
  %30 = load float, ptr %acc, align 4
  %31 = fadd float %30, %29
  store float %31, ptr %acc, align 4
  %32 = load i64, ptr %i, align 4
  %33 = add i64 %32, 8
  store i64 %33, ptr %i, align 4
  br label %loop

done:                                             ; preds = %loop
  %34 = getelementptr float, ptr addrspace(1) %16, i64 %24
  %35 = sub i64 %17, %24
  %nv = sdiv i64 %35, 4
  %36 = sub i64 %nv, 1
  store i64 %lane, ptr %i4, align 4
  br label %loop5

loop5:                                            ; preds = %body6, %done
  %37 = load i64, ptr %i4, align 4
  %38 = icmp slt i64 %37, %nv
  br i1 %38, label %body6, label %done7

body6:                                            ; preds = %loop5
  %39 = load i64, ptr %i4, align 4
  %40 = add i64 %39, 0
  %41 = icmp slt i64 %40, %nv
  %42 = select i1 %41, i64 %40, i64 %36
  %43 = mul i64 %42, 4
  %44 = getelementptr float, ptr addrspace(1) %34, i64 %43
  %45 = load <4 x float>, ptr addrspace(1) %44, align 16
  %46 = extractelement <4 x float> %45, i32 0
  %47 = extractelement <4 x float> %45, i32 1
  %48 = extractelement <4 x float> %45, i32 2
  %49 = extractelement <4 x float> %45, i32 3
  %50 = add i64 %39, 8
  %51 = icmp slt i64 %50, %nv
  %52 = select i1 %51, i64 %50, i64 %36
  %53 = mul i64 %52, 4
  %54 = getelementptr float, ptr addrspace(1) %34, i64 %53
  %55 = load <4 x float>, ptr addrspace(1) %54, align 16
  %56 = extractelement <4 x float> %55, i32 0
  %57 = extractelement <4 x float> %55, i32 1
  %58 = extractelement <4 x float> %55, i32 2
  %59 = extractelement <4 x float> %55, i32 3
  %60 = add i64 %39, 16
  %61 = icmp slt i64 %60, %nv
  %62 = select i1 %61, i64 %60, i64 %36
  %63 = mul i64 %62, 4
  %64 = getelementptr float, ptr addrspace(1) %34, i64 %63
  %65 = load <4 x float>, ptr addrspace(1) %64, align 16
  %66 = extractelement <4 x float> %65, i32 0
  %67 = extractelement <4 x float> %65, i32 1
  %68 = extractelement <4 x float> %65, i32 2
  %69 = extractelement <4 x float> %65, i32 3
  %70 = add i64 %39, 24
  %71 = icmp slt i64 %70, %nv
  %72 = select i1 %71, i64 %70, i64 %36
  %73 = mul i64 %72, 4
  %74 = getelementptr float, ptr addrspace(1) %34, i64 %73
  %75 = load <4 x float>, ptr addrspace(1) %74, align 16
  %76 = extractelement <4 x float> %75, i32 0
  %77 = extractelement <4 x float> %75, i32 1
  %78 = extractelement <4 x float> %75, i32 2
  %79 = extractelement <4 x float> %75, i32 3
  %80 = add i64 %39, 32
  %81 = icmp slt i64 %80, %nv
  %82 = select i1 %81, i64 %80, i64 %36
  %83 = mul i64 %82, 4
  %84 = getelementptr float, ptr addrspace(1) %34, i64 %83
  %85 = load <4 x float>, ptr addrspace(1) %84, align 16
  %86 = extractelement <4 x float> %85, i32 0
  %87 = extractelement <4 x float> %85, i32 1
  %88 = extractelement <4 x float> %85, i32 2
  %89 = extractelement <4 x float> %85, i32 3
  %90 = add i64 %39, 40
  %91 = icmp slt i64 %90, %nv
  %92 = select i1 %91, i64 %90, i64 %36
  %93 = mul i64 %92, 4
  %94 = getelementptr float, ptr addrspace(1) %34, i64 %93
  %95 = load <4 x float>, ptr addrspace(1) %94, align 16
  %96 = extractelement <4 x float> %95, i32 0
  %97 = extractelement <4 x float> %95, i32 1
  %98 = extractelement <4 x float> %95, i32 2
  %99 = extractelement <4 x float> %95, i32 3
  %100 = add i64 %39, 48
  %101 = icmp slt i64 %100, %nv
  %102 = select i1 %101, i64 %100, i64 %36
  %103 = mul i64 %102, 4
  %104 = getelementptr float, ptr addrspace(1) %34, i64 %103
  %105 = load <4 x float>, ptr addrspace(1) %104, align 16
  %106 = extractelement <4 x float> %105, i32 0
  %107 = extractelement <4 x float> %105, i32 1
  %108 = extractelement <4 x float> %105, i32 2
  %109 = extractelement <4 x float> %105, i32 3
  %110 = add i64 %39, 56
  %111 = icmp slt i64 %110, %nv
  %112 = select i1 %111, i64 %110, i64 %36
  %113 = mul i64 %112, 4
  %114 = getelementptr float, ptr addrspace(1) %34, i64 %113
  %115 = load <4 x float>, ptr addrspace(1) %114, align 16
  %116 = extractelement <4 x float> %115, i32 0
  %117 = extractelement <4 x float> %115, i32 1
  %118 = extractelement <4 x float> %115, i32 2
  %119 = extractelement <4 x float> %115, i32 3
  %120 = load float, ptr %acc, align 4
  %121 = fadd float %120, %46
  store float %121, ptr %acc, align 4
  %122 = load float, ptr %acc1, align 4
  %123 = fadd float %122, %47
  store float %123, ptr %acc1, align 4
  %124 = load float, ptr %acc2, align 4
  %125 = fadd float %124, %48
  store float %125, ptr %acc2, align 4
  %126 = load float, ptr %acc3, align 4
  %127 = fadd float %126, %49
  store float %127, ptr %acc3, align 4
  %128 = select i1 %51, float %56, float -0.000000e+00
  %129 = load float, ptr %acc, align 4
  %130 = fadd float %129, %128
  store float %130, ptr %acc, align 4
  %131 = select i1 %51, float %57, float -0.000000e+00
  %132 = load float, ptr %acc1, align 4
  %133 = fadd float %132, %131
  store float %133, ptr %acc1, align 4
  %134 = select i1 %51, float %58, float -0.000000e+00
  %135 = load float, ptr %acc2, align 4
  %136 = fadd float %135, %134
  store float %136, ptr %acc2, align 4
  %137 = select i1 %51, float %59, float -0.000000e+00
  %138 = load float, ptr %acc3, align 4
  %139 = fadd float %138, %137
  store float %139, ptr %acc3, align 4
  %140 = select i1 %61, float %66, float -0.000000e+00
  %141 = load float, ptr %acc, align 4
  %142 = fadd float %141, %140
  store float %142, ptr %acc, align 4
  %143 = select i1 %61, float %67, float -0.000000e+00
  %144 = load float, ptr %acc1, align 4
  %145 = fadd float %144, %143
  store float %145, ptr %acc1, align 4
  %146 = select i1 %61, float %68, float -0.000000e+00
  %147 = load float, ptr %acc2, align 4
  %148 = fadd float %147, %146
  store float %148, ptr %acc2, align 4
  %149 = select i1 %61, float %69, float -0.000000e+00
  %150 = load float, ptr %acc3, align 4
  %151 = fadd float %150, %149
  store float %151, ptr %acc3, align 4
  %152 = select i1 %71, float %76, float -0.000000e+00
  %153 = load float, ptr %acc, align 4
  %154 = fadd float %153, %152
  store float %154, ptr %acc, align 4
  %155 = select i1 %71, float %77, float -0.000000e+00
  %156 = load float, ptr %acc1, align 4
  %157 = fadd float %156, %155
  store float %157, ptr %acc1, align 4
  %158 = select i1 %71, float %78, float -0.000000e+00
  %159 = load float, ptr %acc2, align 4
  %160 = fadd float %159, %158
  store float %160, ptr %acc2, align 4
  %161 = select i1 %71, float %79, float -0.000000e+00
  %162 = load float, ptr %acc3, align 4
  %163 = fadd float %162, %161
  store float %163, ptr %acc3, align 4
  %164 = select i1 %81, float %86, float -0.000000e+00
  %165 = load float, ptr %acc, align 4
  %166 = fadd float %165, %164
  store float %166, ptr %acc, align 4
  %167 = select i1 %81, float %87, float -0.000000e+00
  %168 = load float, ptr %acc1, align 4
  %169 = fadd float %168, %167
  store float %169, ptr %acc1, align 4
  %170 = select i1 %81, float %88, float -0.000000e+00
  %171 = load float, ptr %acc2, align 4
  %172 = fadd float %171, %170
  store float %172, ptr %acc2, align 4
  %173 = select i1 %81, float %89, float -0.000000e+00
  %174 = load float, ptr %acc3, align 4
  %175 = fadd float %174, %173
  store float %175, ptr %acc3, align 4
  %176 = select i1 %91, float %96, float -0.000000e+00
  %177 = load float, ptr %acc, align 4
  %178 = fadd float %177, %176
  store float %178, ptr %acc, align 4
  %179 = select i1 %91, float %97, float -0.000000e+00
  %180 = load float, ptr %acc1, align 4
  %181 = fadd float %180, %179
  store float %181, ptr %acc1, align 4
  %182 = select i1 %91, float %98, float -0.000000e+00
  %183 = load float, ptr %acc2, align 4
  %184 = fadd float %183, %182
  store float %184, ptr %acc2, align 4
  %185 = select i1 %91, float %99, float -0.000000e+00
  %186 = load float, ptr %acc3, align 4
  %187 = fadd float %186, %185
  store float %187, ptr %acc3, align 4
  %188 = select i1 %101, float %106, float -0.000000e+00
  %189 = load float, ptr %acc, align 4
  %190 = fadd float %189, %188
  store float %190, ptr %acc, align 4
  %191 = select i1 %101, float %107, float -0.000000e+00
  %192 = load float, ptr %acc1, align 4
  %193 = fadd float %192, %191
  store float %193, ptr %acc1, align 4
  %194 = select i1 %101, float %108, float -0.000000e+00
  %195 = load float, ptr %acc2, align 4
  %196 = fadd float %195, %194
  store float %196, ptr %acc2, align 4
  %197 = select i1 %101, float %109, float -0.000000e+00
  %198 = load float, ptr %acc3, align 4
  %199 = fadd float %198, %197
  store float %199, ptr %acc3, align 4
  %200 = select i1 %111, float %116, float -0.000000e+00
  %201 = load float, ptr %acc, align 4
  %202 = fadd float %201, %200
  store float %202, ptr %acc, align 4
  %203 = select i1 %111, float %117, float -0.000000e+00
  %204 = load float, ptr %acc1, align 4
  %205 = fadd float %204, %203
  store float %205, ptr %acc1, align 4
  %206 = select i1 %111, float %118, float -0.000000e+00
  %207 = load float, ptr %acc2, align 4
  %208 = fadd float %207, %206
  store float %208, ptr %acc2, align 4
  %209 = select i1 %111, float %119, float -0.000000e+00
  %210 = load float, ptr %acc3, align 4
  %211 = fadd float %210, %209
  store float %211, ptr %acc3, align 4
  %212 = load i64, ptr %i4, align 4
  %213 = add i64 %212, 64
  store i64 %213, ptr %i4, align 4
  br label %loop5

done7:                                            ; preds = %loop5
  %214 = mul i64 %nv, 4
  %215 = add i64 %24, %214
  %216 = add i64 %215, %lane
  store i64 %216, ptr %i8, align 4
  br label %loop9

loop9:                                            ; preds = %body10, %done7
  %217 = load i64, ptr %i8, align 4
  %218 = icmp slt i64 %217, %17
  br i1 %218, label %body10, label %done11

body10:                                           ; preds = %loop9
  %219 = load i64, ptr %i8, align 4
  %220 = getelementptr float, ptr addrspace(1) %16, i64 %219
  %221 = load float, ptr addrspace(1) %220, align 4
  %222 = load float, ptr %acc1, align 4
  %223 = fadd float %222, %221
  store float %223, ptr %acc1, align 4
  %224 = load i64, ptr %i8, align 4
  %225 = add i64 %224, 8
  store i64 %225, ptr %i8, align 4
  br label %loop9

done11:                                           ; preds = %loop9
  %226 = load float, ptr %acc, align 4
  %227 = load float, ptr %acc1, align 4
  %228 = load float, ptr %acc2, align 4
  %229 = load float, ptr %acc3, align 4
  %230 = fadd float %226, %227
  %231 = fadd float %228, %229
  %232 = fadd float %230, %231
  %233 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %232, i32 4, i32 6175)
  %234 = fadd float %232, %233
  %235 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %234, i32 2, i32 6175)
  %236 = fadd float %234, %235
  %237 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %236, i32 1, i32 6175)
  %238 = fadd float %236, %237
  %239 = icmp eq i64 %lane, 0
  %240 = and i1 %13, %239
  br i1 %240, label %then, label %endif

then:                                             ; preds = %done11
  %241 = getelementptr float, ptr addrspace(1) %1, i64 %row
  store float %238, ptr addrspace(1) %241, align 4
  br label %endif

endif:                                            ; preds = %then, %done11
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #1

; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32) #2

attributes #0 = { "nvvm.maxntid"="256" "nvvm.minctasm"="4" }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
