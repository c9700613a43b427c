; ModuleID = 'redjit'
source_filename = "redjit"
target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@rj_src_slots0 = internal addrspace(1) constant [32 x i32] [i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15, i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31], align 16
@rj_dst_slots1 = internal addrspace(1) constant [1 x i32] zeroinitializer, align 16

define ptx_kernel void @redjit_tile(ptr addrspace(1) %0, ptr addrspace(1) %1, ptr addrspace(1) %2) {
entry:
  %rj_dst_slots = alloca [1 x float], align 4
  %rj_src_slots = alloca [32 x float], align 4
  %3 = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %4 = mul i32 %3, 32
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
  %69 = add i32 %4, 8
  %70 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %69
  %71 = load i32, ptr addrspace(1) %70, align 4
  %72 = icmp slt i32 %71, 0
  %73 = select i1 %72, i32 0, i32 %71
  %74 = getelementptr float, ptr addrspace(1) %0, i32 %73
  %75 = load float, ptr addrspace(1) %74, align 4
  %76 = getelementptr float, ptr %rj_src_slots, i32 8
  store float %75, ptr %76, align 4
  %77 = add i32 %4, 9
  %78 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %77
  %79 = load i32, ptr addrspace(1) %78, align 4
  %80 = icmp slt i32 %79, 0
  %81 = select i1 %80, i32 0, i32 %79
  %82 = getelementptr float, ptr addrspace(1) %0, i32 %81
  %83 = load float, ptr addrspace(1) %82, align 4
  %84 = getelementptr float, ptr %rj_src_slots, i32 9
  store float %83, ptr %84, align 4
  %85 = add i32 %4, 10
  %86 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %85
  %87 = load i32, ptr addrspace(1) %86, align 4
  %88 = icmp slt i32 %87, 0
  %89 = select i1 %88, i32 0, i32 %87
  %90 = getelementptr float, ptr addrspace(1) %0, i32 %89
  %91 = load float, ptr addrspace(1) %90, align 4
  %92 = getelementptr float, ptr %rj_src_slots, i32 10
  store float %91, ptr %92, align 4
  %93 = add i32 %4, 11
  %94 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %93
  %95 = load i32, ptr addrspace(1) %94, align 4
  %96 = icmp slt i32 %95, 0
  %97 = select i1 %96, i32 0, i32 %95
  %98 = getelementptr float, ptr addrspace(1) %0, i32 %97
  %99 = load float, ptr addrspace(1) %98, align 4
  %100 = getelementptr float, ptr %rj_src_slots, i32 11
  store float %99, ptr %100, align 4
  %101 = add i32 %4, 12
  %102 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %101
  %103 = load i32, ptr addrspace(1) %102, align 4
  %104 = icmp slt i32 %103, 0
  %105 = select i1 %104, i32 0, i32 %103
  %106 = getelementptr float, ptr addrspace(1) %0, i32 %105
  %107 = load float, ptr addrspace(1) %106, align 4
  %108 = getelementptr float, ptr %rj_src_slots, i32 12
  store float %107, ptr %108, align 4
  %109 = add i32 %4, 13
  %110 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %109
  %111 = load i32, ptr addrspace(1) %110, align 4
  %112 = icmp slt i32 %111, 0
  %113 = select i1 %112, i32 0, i32 %111
  %114 = getelementptr float, ptr addrspace(1) %0, i32 %113
  %115 = load float, ptr addrspace(1) %114, align 4
  %116 = getelementptr float, ptr %rj_src_slots, i32 13
  store float %115, ptr %116, align 4
  %117 = add i32 %4, 14
  %118 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %117
  %119 = load i32, ptr addrspace(1) %118, align 4
  %120 = icmp slt i32 %119, 0
  %121 = select i1 %120, i32 0, i32 %119
  %122 = getelementptr float, ptr addrspace(1) %0, i32 %121
  %123 = load float, ptr addrspace(1) %122, align 4
  %124 = getelementptr float, ptr %rj_src_slots, i32 14
  store float %123, ptr %124, align 4
  %125 = add i32 %4, 15
  %126 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %125
  %127 = load i32, ptr addrspace(1) %126, align 4
  %128 = icmp slt i32 %127, 0
  %129 = select i1 %128, i32 0, i32 %127
  %130 = getelementptr float, ptr addrspace(1) %0, i32 %129
  %131 = load float, ptr addrspace(1) %130, align 4
  %132 = getelementptr float, ptr %rj_src_slots, i32 15
  store float %131, ptr %132, align 4
  %133 = add i32 %4, 16
  %134 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %133
  %135 = load i32, ptr addrspace(1) %134, align 4
  %136 = icmp slt i32 %135, 0
  %137 = select i1 %136, i32 0, i32 %135
  %138 = getelementptr float, ptr addrspace(1) %0, i32 %137
  %139 = load float, ptr addrspace(1) %138, align 4
  %140 = getelementptr float, ptr %rj_src_slots, i32 16
  store float %139, ptr %140, align 4
  %141 = add i32 %4, 17
  %142 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %141
  %143 = load i32, ptr addrspace(1) %142, align 4
  %144 = icmp slt i32 %143, 0
  %145 = select i1 %144, i32 0, i32 %143
  %146 = getelementptr float, ptr addrspace(1) %0, i32 %145
  %147 = load float, ptr addrspace(1) %146, align 4
  %148 = getelementptr float, ptr %rj_src_slots, i32 17
  store float %147, ptr %148, align 4
  %149 = add i32 %4, 18
  %150 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %149
  %151 = load i32, ptr addrspace(1) %150, align 4
  %152 = icmp slt i32 %151, 0
  %153 = select i1 %152, i32 0, i32 %151
  %154 = getelementptr float, ptr addrspace(1) %0, i32 %153
  %155 = load float, ptr addrspace(1) %154, align 4
  %156 = getelementptr float, ptr %rj_src_slots, i32 18
  store float %155, ptr %156, align 4
  %157 = add i32 %4, 19
  %158 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %157
  %159 = load i32, ptr addrspace(1) %158, align 4
  %160 = icmp slt i32 %159, 0
  %161 = select i1 %160, i32 0, i32 %159
  %162 = getelementptr float, ptr addrspace(1) %0, i32 %161
  %163 = load float, ptr addrspace(1) %162, align 4
  %164 = getelementptr float, ptr %rj_src_slots, i32 19
  store float %163, ptr %164, align 4
  %165 = add i32 %4, 20
  %166 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %165
  %167 = load i32, ptr addrspace(1) %166, align 4
  %168 = icmp slt i32 %167, 0
  %169 = select i1 %168, i32 0, i32 %167
  %170 = getelementptr float, ptr addrspace(1) %0, i32 %169
  %171 = load float, ptr addrspace(1) %170, align 4
  %172 = getelementptr float, ptr %rj_src_slots, i32 20
  store float %171, ptr %172, align 4
  %173 = add i32 %4, 21
  %174 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %173
  %175 = load i32, ptr addrspace(1) %174, align 4
  %176 = icmp slt i32 %175, 0
  %177 = select i1 %176, i32 0, i32 %175
  %178 = getelementptr float, ptr addrspace(1) %0, i32 %177
  %179 = load float, ptr addrspace(1) %178, align 4
  %180 = getelementptr float, ptr %rj_src_slots, i32 21
  store float %179, ptr %180, align 4
  %181 = add i32 %4, 22
  %182 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %181
  %183 = load i32, ptr addrspace(1) %182, align 4
  %184 = icmp slt i32 %183, 0
  %185 = select i1 %184, i32 0, i32 %183
  %186 = getelementptr float, ptr addrspace(1) %0, i32 %185
  %187 = load float, ptr addrspace(1) %186, align 4
  %188 = getelementptr float, ptr %rj_src_slots, i32 22
  store float %187, ptr %188, align 4
  %189 = add i32 %4, 23
  %190 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %189
  %191 = load i32, ptr addrspace(1) %190, align 4
  %192 = icmp slt i32 %191, 0
  %193 = select i1 %192, i32 0, i32 %191
  %194 = getelementptr float, ptr addrspace(1) %0, i32 %193
  %195 = load float, ptr addrspace(1) %194, align 4
  %196 = getelementptr float, ptr %rj_src_slots, i32 23
  store float %195, ptr %196, align 4
  %197 = add i32 %4, 24
  %198 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %197
  %199 = load i32, ptr addrspace(1) %198, align 4
  %200 = icmp slt i32 %199, 0
  %201 = select i1 %200, i32 0, i32 %199
  %202 = getelementptr float, ptr addrspace(1) %0, i32 %201
  %203 = load float, ptr addrspace(1) %202, align 4
  %204 = getelementptr float, ptr %rj_src_slots, i32 24
  store float %203, ptr %204, align 4
  %205 = add i32 %4, 25
  %206 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %205
  %207 = load i32, ptr addrspace(1) %206, align 4
  %208 = icmp slt i32 %207, 0
  %209 = select i1 %208, i32 0, i32 %207
  %210 = getelementptr float, ptr addrspace(1) %0, i32 %209
  %211 = load float, ptr addrspace(1) %210, align 4
  %212 = getelementptr float, ptr %rj_src_slots, i32 25
  store float %211, ptr %212, align 4
  %213 = add i32 %4, 26
  %214 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %213
  %215 = load i32, ptr addrspace(1) %214, align 4
  %216 = icmp slt i32 %215, 0
  %217 = select i1 %216, i32 0, i32 %215
  %218 = getelementptr float, ptr addrspace(1) %0, i32 %217
  %219 = load float, ptr addrspace(1) %218, align 4
  %220 = getelementptr float, ptr %rj_src_slots, i32 26
  store float %219, ptr %220, align 4
  %221 = add i32 %4, 27
  %222 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %221
  %223 = load i32, ptr addrspace(1) %222, align 4
  %224 = icmp slt i32 %223, 0
  %225 = select i1 %224, i32 0, i32 %223
  %226 = getelementptr float, ptr addrspace(1) %0, i32 %225
  %227 = load float, ptr addrspace(1) %226, align 4
  %228 = getelementptr float, ptr %rj_src_slots, i32 27
  store float %227, ptr %228, align 4
  %229 = add i32 %4, 28
  %230 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %229
  %231 = load i32, ptr addrspace(1) %230, align 4
  %232 = icmp slt i32 %231, 0
  %233 = select i1 %232, i32 0, i32 %231
  %234 = getelementptr float, ptr addrspace(1) %0, i32 %233
  %235 = load float, ptr addrspace(1) %234, align 4
  %236 = getelementptr float, ptr %rj_src_slots, i32 28
  store float %235, ptr %236, align 4
  %237 = add i32 %4, 29
  %238 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %237
  %239 = load i32, ptr addrspace(1) %238, align 4
  %240 = icmp slt i32 %239, 0
  %241 = select i1 %240, i32 0, i32 %239
  %242 = getelementptr float, ptr addrspace(1) %0, i32 %241
  %243 = load float, ptr addrspace(1) %242, align 4
  %244 = getelementptr float, ptr %rj_src_slots, i32 29
  store float %243, ptr %244, align 4
  %245 = add i32 %4, 30
  %246 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %245
  %247 = load i32, ptr addrspace(1) %246, align 4
  %248 = icmp slt i32 %247, 0
  %249 = select i1 %248, i32 0, i32 %247
  %250 = getelementptr float, ptr addrspace(1) %0, i32 %249
  %251 = load float, ptr addrspace(1) %250, align 4
  %252 = getelementptr float, ptr %rj_src_slots, i32 30
  store float %251, ptr %252, align 4
  %253 = add i32 %4, 31
  %254 = getelementptr i32, ptr addrspace(1) @rj_src_slots0, i32 %253
  %255 = load i32, ptr addrspace(1) %254, align 4
  %256 = icmp slt i32 %255, 0
  %257 = select i1 %256, i32 0, i32 %255
  %258 = getelementptr float, ptr addrspace(1) %0, i32 %257
  %259 = load float, ptr addrspace(1) %258, align 4
  %260 = getelementptr float, ptr %rj_src_slots, i32 31
  store float %259, ptr %260, align 4
  %261 = mul i32 %3, 1
  %262 = add i32 %261, 0
  %263 = getelementptr i32, ptr addrspace(1) @rj_dst_slots1, i32 %262
  %264 = load i32, ptr addrspace(1) %263, align 4
  %265 = icmp slt i32 %264, 0
  %266 = select i1 %265, i32 0, i32 %264
  %267 = getelementptr float, ptr addrspace(1) %1, i32 %266
  %268 = load float, ptr addrspace(1) %267, align 4
  %269 = getelementptr float, ptr %rj_dst_slots, i32 0
  store float %268, ptr %269, align 4
  %270 = getelementptr float, ptr %rj_src_slots, i32 0
  %271 = load float, ptr %270, align 4
  %272 = fadd float -0.000000e+00, %271
  %273 = getelementptr float, ptr %rj_src_slots, i32 1
  %274 = load float, ptr %273, align 4
  %275 = fadd float %272, %274
  %276 = getelementptr float, ptr %rj_src_slots, i32 2
  %277 = load float, ptr %276, align 4
  %278 = fadd float %275, %277
  %279 = getelementptr float, ptr %rj_src_slots, i32 3
  %280 = load float, ptr %279, align 4
  %281 = fadd float %278, %280
  %282 = getelementptr float, ptr %rj_src_slots, i32 4
  %283 = load float, ptr %282, align 4
  %284 = fadd float %281, %283
  %285 = getelementptr float, ptr %rj_src_slots, i32 5
  %286 = load float, ptr %285, align 4
  %287 = fadd float %284, %286
  %288 = getelementptr float, ptr %rj_src_slots, i32 6
  %289 = load float, ptr %288, align 4
  %290 = fadd float %287, %289
  %291 = getelementptr float, ptr %rj_src_slots, i32 7
  %292 = load float, ptr %291, align 4
  %293 = fadd float %290, %292
  %294 = getelementptr float, ptr %rj_src_slots, i32 8
  %295 = load float, ptr %294, align 4
  %296 = fadd float %293, %295
  %297 = getelementptr float, ptr %rj_src_slots, i32 9
  %298 = load float, ptr %297, align 4
  %299 = fadd float %296, %298
  %300 = getelementptr float, ptr %rj_src_slots, i32 10
  %301 = load float, ptr %300, align 4
  %302 = fadd float %299, %301
  %303 = getelementptr float, ptr %rj_src_slots, i32 11
  %304 = load float, ptr %303, align 4
  %305 = fadd float %302, %304
  %306 = getelementptr float, ptr %rj_src_slots, i32 12
  %307 = load float, ptr %306, align 4
  %308 = fadd float %305, %307
  %309 = getelementptr float, ptr %rj_src_slots, i32 13
  %310 = load float, ptr %309, align 4
  %311 = fadd float %308, %310
  %312 = getelementptr float, ptr %rj_src_slots, i32 14
  %313 = load float, ptr %312, align 4
  %314 = fadd float %311, %313
  %315 = getelementptr float, ptr %rj_src_slots, i32 15
  %316 = load float, ptr %315, align 4
  %317 = fadd float %314, %316
  %318 = getelementptr float, ptr %rj_src_slots, i32 16
  %319 = load float, ptr %318, align 4
  %320 = fadd float %317, %319
  %321 = getelementptr float, ptr %rj_src_slots, i32 17
  %322 = load float, ptr %321, align 4
  %323 = fadd float %320, %322
  %324 = getelementptr float, ptr %rj_src_slots, i32 18
  %325 = load float, ptr %324, align 4
  %326 = fadd float %323, %325
  %327 = getelementptr float, ptr %rj_src_slots, i32 19
  %328 = load float, ptr %327, align 4
  %329 = fadd float %326, %328
  %330 = getelementptr float, ptr %rj_src_slots, i32 20
  %331 = load float, ptr %330, align 4
  %332 = fadd float %329, %331
  %333 = getelementptr float, ptr %rj_src_slots, i32 21
  %334 = load float, ptr %333, align 4
  %335 = fadd float %332, %334
  %336 = getelementptr float, ptr %rj_src_slots, i32 22
  %337 = load float, ptr %336, align 4
  %338 = fadd float %335, %337
  %339 = getelementptr float, ptr %rj_src_slots, i32 23
  %340 = load float, ptr %339, align 4
  %341 = fadd float %338, %340
  %342 = getelementptr float, ptr %rj_src_slots, i32 24
  %343 = load float, ptr %342, align 4
  %344 = fadd float %341, %343
  %345 = getelementptr float, ptr %rj_src_slots, i32 25
  %346 = load float, ptr %345, align 4
  %347 = fadd float %344, %346
  %348 = getelementptr float, ptr %rj_src_slots, i32 26
  %349 = load float, ptr %348, align 4
  %350 = fadd float %347, %349
  %351 = getelementptr float, ptr %rj_src_slots, i32 27
  %352 = load float, ptr %351, align 4
  %353 = fadd float %350, %352
  %354 = getelementptr float, ptr %rj_src_slots, i32 28
  %355 = load float, ptr %354, align 4
  %356 = fadd float %353, %355
  %357 = getelementptr float, ptr %rj_src_slots, i32 29
  %358 = load float, ptr %357, align 4
  %359 = fadd float %356, %358
  %360 = getelementptr float, ptr %rj_src_slots, i32 30
  %361 = load float, ptr %360, align 4
  %362 = fadd float %359, %361
  %363 = getelementptr float, ptr %rj_src_slots, i32 31
  %364 = load float, ptr %363, align 4
  %365 = fadd float %362, %364
  %366 = getelementptr float, ptr %rj_dst_slots, i32 0
  store float %365, ptr %366, align 4
  %367 = mul i32 %3, 1
  %368 = getelementptr float, ptr %rj_dst_slots, i32 0
  %369 = load float, ptr %368, align 4
  %370 = add i32 %367, 0
  %371 = getelementptr float, ptr addrspace(1) %2, i32 %370
  store float %369, ptr addrspace(1) %371, align 4
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #0

attributes #0 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
