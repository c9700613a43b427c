; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @redjit_tensor(ptr addrspace(1) noalias readonly %0, ptr addrspace(1) noalias %1) #0 {
entry:
  %i8 = alloca i64, align 8
  %i4 = alloca i64, align 8
  %i = alloca i64, align 8
  %acc3 = alloca float, align 4
  %acc2 = alloca float, align 4
  %acc1 = alloca float, align 4
  %acc = alloca float, align 4
  %2 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %3 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  store float -0.000000e+00, ptr %acc, align 4
  store float -0.000000e+00, ptr %acc1, align 4
  store float -0.000000e+00, ptr %acc2, align 4
  store float -0.000000e+00, ptr %acc3, align 4
  %4 = udiv i32 %2, 32
  %5 = mul i32 %3, 8
  %6 = add i32 %5, %4
  %row = zext i32 %6 to i64
  %7 = urem i32 %2, 32
  %lane = zext i32 %7 to i64
  %8 = icmp ult i64 %row, 4096
  %9 = select i1 %8, i64 %row, i64 0
  %10 = mul i64 %9, 4096
  %11 = getelementptr float, ptr addrspace(1) %0, i64 %10
  %12 = select i1 %8, i64 4096, i64 0
  %13 = ptrtoint ptr addrspace(1) %11 to i64
  %14 = udiv i64 %13, 4
  %15 = and i64 %14, 3
  %16 = sub i64 4, %15
  %17 = and i64 %16, 3
  %18 = icmp slt i64 %17, %12
  %19 = select i1 %18, i64 %17, i64 %12
  store i64 %lane, ptr %i, align 4
  br label %loop

loop:                                             ; preds = %body, %entry
  %20 = load i64, ptr %i, align 4
  %21 = icmp slt i64 %20, %19
  br i1 %21, label %body, label %done

body:                                             ; preds = %loop
  %22 = load i64, ptr %i, align 4
  %23 = getelementptr float, ptr addrspace(1) %11, i64 %22
  %24 = load float, ptr addrspace(1) %23, align 4
  %25 = load float, ptr %acc, align 4
  %26 = fadd float %25, %24
  store float %26, ptr %acc, align 4
  %27 = load i64, ptr %i, align 4
  %28 = add i64 %27, 32
  store i64 %28, ptr %i, align 4
  br label %loop

done:                                             ; preds = %loop
  %29 = getelementptr float, ptr addrspace(1) %11, i64 %19
  %30 = sub i64 %12, %19
  %nv = sdiv i64 %30, 4
  %31 = sub i64 %nv, 1
  store i64 %lane, ptr %i4, align 4
  br label %loop5

loop5:                                            ; preds = %body6, %done
  %32 = load i64, ptr %i4, align 4
  %33 = icmp slt i64 %32, %nv
  br i1 %33, label %body6, label %done7

body6:                                            ; preds = %loop5
  %34 = load i64, ptr %i4, align 4
  %35 = add i64 %34, 0
  %36 = icmp slt i64 %35, %nv
  %37 = select i1 %36, i64 %35, i64 %31
  %38 = mul i64 %37, 4
  %39 = getelementptr float, ptr addrspace(1) %29, i64 %38
  %40 = load <4 x float>, ptr addrspace(1) %39, align 16
  %41 = extractelement <4 x float> %40, i32 0
  %42 = extractelement <4 x float> %40, i32 1
  %43 = extractelement <4 x float> %40, i32 2
  %44 = extractelement <4 x float> %40, i32 3
  %45 = add i64 %34, 32
  %46 = icmp slt i64 %45, %nv
  %47 = select i1 %46, i64 %45, i64 %31
  %48 = mul i64 %47, 4
  %49 = getelementptr float, ptr addrspace(1) %29, i64 %48
  %50 = load <4 x float>, ptr addrspace(1) %49, align 16
  %51 = extractelement <4 x float> %50, i32 0
  %52 = extractelement <4 x float> %50, i32 1
  %53 = extractelement <4 x float> %50, i32 2
  %54 = extractelement <4 x float> %50, i32 3
  %55 = add i64 %34, 64
  %56 = icmp slt i64 %55, %nv
  %57 = select i1 %56, i64 %55, i64 %31
  %58 = mul i64 %57, 4
  %59 = getelementptr float, ptr addrspace(1) %29, i64 %58
  %60 = load <4 x float>, ptr addrspace(1) %59, align 16
  %61 = extractelement <4 x float> %60, i32 0
  %62 = extractelement <4 x float> %60, i32 1
  %63 = extractelement <4 x float> %60, i32 2
  %64 = extractelement <4 x float> %60, i32 3
  %65 = add i64 %34, 96
  %66 = icmp slt i64 %65, %nv
  %67 = select i1 %66, i64 %65, i64 %31
  %68 = mul i64 %67, 4
  %69 = getelementptr float, ptr addrspace(1) %29, i64 %68
  %70 = load <4 x float>, ptr addrspace(1) %69, align 16
  %71 = extractelement <4 x float> %70, i32 0
  %72 = extractelement <4 x float> %70, i32 1
  %73 = extractelement <4 x float> %70, i32 2
  %74 = extractelement <4 x float> %70, i32 3
  %75 = add i64 %34, 128
  %76 = icmp slt i64 %75, %nv
  %77 = select i1 %76, i64 %75, i64 %31
  %78 = mul i64 %77, 4
  %79 = getelementptr float, ptr addrspace(1) %29, i64 %78
  %80 = load <4 x float>, ptr addrspace(1) %79, align 16
  %81 = extractelement <4 x float> %80, i32 0
  %82 = extractelement <4 x float> %80, i32 1
  %83 = extractelement <4 x float> %80, i32 2
  %84 = extractelement <4 x float> %80, i32 3
  %85 = add i64 %34, 160
  %86 = icmp slt i64 %85, %nv
  %87 = select i1 %86, i64 %85, i64 %31
  %88 = mul i64 %87, 4
  %89 = getelementptr float, ptr addrspace(1) %29, i64 %88
  %90 = load <4 x float>, ptr addrspace(1) %89, align 16
  %91 = extractelement <4 x float> %90, i32 0
  %92 = extractelement <4 x float> %90, i32 1
  %93 = extractelement <4 x float> %90, i32 2
  %94 = extractelement <4 x float> %90, i32 3
  %95 = add i64 %34, 192
  %96 = icmp slt i64 %95, %nv
  %97 = select i1 %96, i64 %95, i64 %31
  %98 = mul i64 %97, 4
  %99 = getelementptr float, ptr addrspace(1) %29, i64 %98
  %100 = load <4 x float>, ptr addrspace(1) %99, align 16
  %101 = extractelement <4 x float> %100, i32 0
  %102 = extractelement <4 x float> %100, i32 1
  %103 = extractelement <4 x float> %100, i32 2
  %104 = extractelement <4 x float> %100, i32 3
  %105 = add i64 %34, 224
  %106 = icmp slt i64 %105, %nv
  %107 = select i1 %106, i64 %105, i64 %31
  %108 = mul i64 %107, 4
  %109 = getelementptr float, ptr addrspace(1) %29, i64 %108
  %110 = load <4 x float>, ptr addrspace(1) %109, align 16
  %111 = extractelement <4 x float> %110, i32 0
  %112 = extractelement <4 x float> %110, i32 1
  %113 = extractelement <4 x float> %110, i32 2
  %114 = extractelement <4 x float> %110, i32 3
  %115 = load float, ptr %acc, align 4
  %116 = fadd float %115, %41
  store float %116, ptr %acc, align 4
  %117 = load float, ptr %acc1, align 4
  %118 = fadd float %117, %42
  store float %118, ptr %acc1, align 4
  %119 = load float, ptr %acc2, align 4
  %120 = fadd float %119, %43
  store float %120, ptr %acc2, align 4
  %121 = load float, ptr %acc3, align 4
  %122 = fadd float %121, %44
  store float %122, ptr %acc3, align 4
  %123 = select i1 %46, float %51, float -0.000000e+00
  %124 = load float, ptr %acc, align 4
  %125 = fadd float %124, %123
  store float %125, ptr %acc, align 4
  %126 = select i1 %46, float %52, float -0.000000e+00
  %127 = load float, ptr %acc1, align 4
  %128 = fadd float %127, %126
  store float %128, ptr %acc1, align 4
  %129 = select i1 %46, float %53, float -0.000000e+00
  %130 = load float, ptr %acc2, align 4
  %131 = fadd float %130, %129
  store float %131, ptr %acc2, align 4
  %132 = select i1 %46, float %54, float -0.000000e+00
  %133 = load float, ptr %acc3, align 4
  %134 = fadd float %133, %132
  store float %134, ptr %acc3, align 4
  %135 = select i1 %56, float %61, float -0.000000e+00
  %136 = load float, ptr %acc, align 4
  %137 = fadd float %136, %135
  store float %137, ptr %acc, align 4
  %138 = select i1 %56, float %62, float -0.000000e+00
  %139 = load float, ptr %acc1, align 4
  %140 = fadd float %139, %138
  store float %140, ptr %acc1, align 4
  %141 = select i1 %56, float %63, float -0.000000e+00
  %142 = load float, ptr %acc2, align 4
  %143 = fadd float %142, %141
  store float %143, ptr %acc2, align 4
  %144 = select i1 %56, float %64, float -0.000000e+00
  %145 = load float, ptr %acc3, align 4
  %146 = fadd float %145, %144
  store float %146, ptr %acc3, align 4
  %147 = select i1 %66, float %71, float -0.000000e+00
  %148 = load float, ptr %acc, align 4
  %149 = fadd float %148, %147
  store float %149, ptr %acc, align 4
  %150 = select i1 %66, float %72, float -0.000000e+00
  %151 = load float, ptr %acc1, align 4
  %152 = fadd float %151, %150
  store float %152, ptr %acc1, align 4
  %153 = select i1 %66, float %73, float -0.000000e+00
  %154 = load float, ptr %acc2, align 4
  %155 = fadd float %154, %153
  store float %155, ptr %acc2, align 4
  %156 = select i1 %66, float %74, float -0.000000e+00
  %157 = load float, ptr %acc3, align 4
  %158 = fadd float %157, %156
  store float %158, ptr %acc3, align 4
  %159 = select i1 %76, float %81, float -0.000000e+00
  %160 = load float, ptr %acc, align 4
  %161 = fadd float %160, %159
  store float %161, ptr %acc, align 4
  %162 = select i1 %76, float %82, float -0.000000e+00
  %163 = load float, ptr %acc1, align 4
  %164 = fadd float %163, %162
  store float %164, ptr %acc1, align 4
  %165 = select i1 %76, float %83, float -0.000000e+00
  %166 = load float, ptr %acc2, align 4
  %167 = fadd float %166, %165
  store float %167, ptr %acc2, align 4
  %168 = select i1 %76, float %84, float -0.000000e+00
  %169 = load float, ptr %acc3, align 4
  %170 = fadd float %169, %168
  store float %170, ptr %acc3, align 4
  %171 = select i1 %86, float %91, float -0.000000e+00
  %172 = load float, ptr %acc, align 4
  %173 = fadd float %172, %171
  store float %173, ptr %acc, align 4
  %174 = select i1 %86, float %92, float -0.000000e+00
  %175 = load float, ptr %acc1, align 4
  %176 = fadd float %175, %174
  store float %176, ptr %acc1, align 4
  %177 = select i1 %86, float %93, float -0.000000e+00
  %178 = load float, ptr %acc2, align 4
  %179 = fadd float %178, %177
  store float %179, ptr %acc2, align 4
  %180 = select i1 %86, float %94, float -0.000000e+00
  %181 = load float, ptr %acc3, align 4
  %182 = fadd float %181, %180
  store float %182, ptr %acc3, align 4
  %183 = select i1 %96, float %101, float -0.000000e+00
  %184 = load float, ptr %acc, align 4
  %185 = fadd float %184, %183
  store float %185, ptr %acc, align 4
  %186 = select i1 %96, float %102, float -0.000000e+00
  %187 = load float, ptr %acc1, align 4
  %188 = fadd float %187, %186
  store float %188, ptr %acc1, align 4
  %189 = select i1 %96, float %103, float -0.000000e+00
  %190 = load float, ptr %acc2, align 4
  %191 = fadd float %190, %189
  store float %191, ptr %acc2, align 4
  %192 = select i1 %96, float %104, float -0.000000e+00
  %193 = load float, ptr %acc3, align 4
  %194 = fadd float %193, %192
  store float %194, ptr %acc3, align 4
  %195 = select i1 %106, float %111, float -0.000000e+00
  %196 = load float, ptr %acc, align 4
  %197 = fadd float %196, %195
  store float %197, ptr %acc, align 4
  %198 = select i1 %106, float %112, float -0.000000e+00
  %199 = load float, ptr %acc1, align 4
  %200 = fadd float %199, %198
  store float %200, ptr %acc1, align 4
  %201 = select i1 %106, float %113, float -0.000000e+00
  %202 = load float, ptr %acc2, align 4
  %203 = fadd float %202, %201
  store float %203, ptr %acc2, align 4
  %204 = select i1 %106, float %114, float -0.000000e+00
  %205 = load float, ptr %acc3, align 4
  %206 = fadd float %205, %204
  store float %206, ptr %acc3, align 4
  %207 = load i64, ptr %i4, align 4
  %208 = add i64 %207, 256
  store i64 %208, ptr %i4, align 4
  br label %loop5

done7:                                            ; preds = %loop5
  %209 = mul i64 %nv, 4
  %210 = add i64 %19, %209
  %211 = add i64 %210, %lane
  store i64 %211, ptr %i8, align 4
  br label %loop9

loop9:                                            ; preds = %body10, %done7
  %212 = load i64, ptr %i8, align 4
  %213 = icmp slt i64 %212, %12
  br i1 %213, label %body10, label %done11

body10:                                           ; preds = %loop9
  %214 = load i64, ptr %i8, align 4
  %215 = getelementptr float, ptr addrspace(1) %11, i64 %214
  %216 = load float, ptr addrspace(1) %215, align 4
  %217 = load float, ptr %acc1, align 4
  %218 = fadd float %217, %216
  store float %218, ptr %acc1, align 4
  %219 = load i64, ptr %i8, align 4
  %220 = add i64 %219, 32
  store i64 %220, ptr %i8, align 4
  br label %loop9

done11:                                           ; preds = %loop9
  %221 = load float, ptr %acc, align 4
  %222 = load float, ptr %acc1, align 4
  %223 = load float, ptr %acc2, align 4
  %224 = load float, ptr %acc3, align 4
  %225 = fadd float %221, %222
  %226 = fadd float %223, %224
  %227 = fadd float %225, %226
  %228 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %227, i32 16, i32 31)
  %229 = fadd float %227, %228
  %230 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %229, i32 8, i32 31)
  %231 = fadd float %229, %230
  %232 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %231, i32 4, i32 31)
  %233 = fadd float %231, %232
  %234 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %233, i32 2, i32 31)
  %235 = fadd float %233, %234
  %236 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %235, i32 1, i32 31)
  %237 = fadd float %235, %236
  %238 = icmp eq i64 %lane, 0
  %239 = and i1 %8, %238
  br i1 %239, label %then, label %endif

then:                                             ; preds = %done11
  %240 = getelementptr float, ptr addrspace(1) %1, i64 %row
  store float %237, ptr addrspace(1) %240, align 4
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
