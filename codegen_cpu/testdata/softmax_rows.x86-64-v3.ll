; inductor/testdata/softmax_rows.txt: every kernel's LLVM IR after O3 for x86-64-v3

; kernel 1 k1_amax
; Function Attrs: nofree nosync nounwind memory(readwrite, inaccessiblemem: none)
define void @coil_k1_k1_amax(i64 %begin, i64 %end, ptr nocapture readonly %buffers, ptr nocapture readonly %symbols, ptr nocapture readnone %error) local_unnamed_addr #0 {
entry:
  %0 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %0, align 8
  %1 = getelementptr inbounds ptr, ptr %buffers, i64 2
  %buf2 = load ptr, ptr %1, align 8
  %2 = icmp slt i64 %begin, %end
  br i1 %2, label %r0.header.preheader, label %p.exit

r0.header.preheader:                              ; preds = %entry, %r0.exit8
  %p18 = phi i64 [ %p.next, %r0.exit8 ], [ %begin, %entry ]
  %3 = mul i64 %p18, 10
  br label %vector.body44

vector.body44:                                    ; preds = %vector.body44, %r0.header.preheader
  %index45 = phi i64 [ 0, %r0.header.preheader ], [ %index.next51, %vector.body44 ]
  %vec.phi46 = phi <8 x i32> [ <i32 -2139095041, i32 -2139095041, i32 -2139095041, i32 -2139095041, i32 -2139095041, i32 -2139095041, i32 -2139095041, i32 -2139095041>, %r0.header.preheader ], [ %13, %vector.body44 ]
  %broadcast.splatinsert47 = insertelement <8 x i64> poison, i64 %index45, i64 0
  %broadcast.splat48 = shufflevector <8 x i64> %broadcast.splatinsert47, <8 x i64> poison, <8 x i32> zeroinitializer
  %vec.iv49 = or <8 x i64> %broadcast.splat48, <i64 0, i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7>
  %4 = icmp ult <8 x i64> %vec.iv49, <i64 10, i64 10, i64 10, i64 10, i64 10, i64 10, i64 10, i64 10>
  %5 = add i64 %index45, %3
  %6 = getelementptr inbounds float, ptr %buf1, i64 %5
  %wide.masked.load50 = tail call <8 x float> @llvm.masked.load.v8f32.p0(ptr %6, i32 4, <8 x i1> %4, <8 x float> poison), !alias.scope !0, !noalias !3
  %7 = fcmp uno <8 x float> %wide.masked.load50, zeroinitializer
  %8 = bitcast <8 x float> %wide.masked.load50 to <8 x i32>
  %9 = ashr <8 x i32> %8, <i32 31, i32 31, i32 31, i32 31, i32 31, i32 31, i32 31, i32 31>
  %10 = lshr <8 x i32> %9, <i32 1, i32 1, i32 1, i32 1, i32 1, i32 1, i32 1, i32 1>
  %11 = xor <8 x i32> %10, %8
  %12 = select <8 x i1> %7, <8 x i32> <i32 2147483647, i32 2147483647, i32 2147483647, i32 2147483647, i32 2147483647, i32 2147483647, i32 2147483647, i32 2147483647>, <8 x i32> %11
  %13 = tail call <8 x i32> @llvm.smax.v8i32(<8 x i32> %12, <8 x i32> %vec.phi46)
  %index.next51 = add i64 %index45, 8
  %14 = icmp eq i64 %index.next51, 16
  br i1 %14, label %middle.block40, label %vector.body44, !llvm.loop !5

middle.block40:                                   ; preds = %vector.body44
  %15 = select <8 x i1> %4, <8 x i32> %13, <8 x i32> %vec.phi46
  %16 = tail call i32 @llvm.vector.reduce.smax.v8i32(<8 x i32> %15)
  %17 = ashr i32 %16, 31
  %18 = lshr i32 %17, 1
  %19 = xor i32 %18, %16
  %20 = insertelement <8 x i32> undef, i32 %19, i64 0
  %broadcast.splatinsert37 = bitcast <8 x i32> %20 to <8 x float>
  %broadcast.splat38 = shufflevector <8 x float> %broadcast.splatinsert37, <8 x float> poison, <8 x i32> zeroinitializer
  br label %vector.body31

p.exit:                                           ; preds = %r0.exit8, %entry
  ret void

vector.body31:                                    ; preds = %vector.body31, %middle.block40
  %index32 = phi i64 [ 0, %middle.block40 ], [ %index.next39, %vector.body31 ]
  %vec.phi = phi <8 x double> [ <double 0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00>, %middle.block40 ], [ %54, %vector.body31 ]
  %broadcast.splatinsert33 = insertelement <8 x i64> poison, i64 %index32, i64 0
  %broadcast.splat34 = shufflevector <8 x i64> %broadcast.splatinsert33, <8 x i64> poison, <8 x i32> zeroinitializer
  %vec.iv35 = or <8 x i64> %broadcast.splat34, <i64 0, i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7>
  %21 = icmp ult <8 x i64> %vec.iv35, <i64 10, i64 10, i64 10, i64 10, i64 10, i64 10, i64 10, i64 10>
  %22 = add i64 %index32, %3
  %23 = getelementptr inbounds float, ptr %buf1, i64 %22
  %wide.masked.load36 = tail call <8 x float> @llvm.masked.load.v8f32.p0(ptr %23, i32 4, <8 x i1> %21, <8 x float> poison), !alias.scope !0, !noalias !3
  %24 = fsub <8 x float> %wide.masked.load36, %broadcast.splat38
  %25 = fcmp olt <8 x float> %24, <float -1.040000e+02, float -1.040000e+02, float -1.040000e+02, float -1.040000e+02, float -1.040000e+02, float -1.040000e+02, float -1.040000e+02, float -1.040000e+02>
  %26 = fcmp ogt <8 x float> %24, <float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01>
  %27 = select <8 x i1> %26, <8 x float> <float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01, float 8.900000e+01>, <8 x float> %24
  %28 = select <8 x i1> %25, <8 x float> zeroinitializer, <8 x float> %27
  %29 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %28, <8 x float> <float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000>, <8 x float> <float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000>)
  %30 = fadd <8 x float> %29, <float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000>
  %31 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %30, <8 x float> <float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000>, <8 x float> %28)
  %32 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %30, <8 x float> <float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000>, <8 x float> %31)
  %33 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %32, <8 x float> <float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000>, <8 x float> <float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000>)
  %34 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %33, <8 x float> %32, <8 x float> <float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000>)
  %35 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %34, <8 x float> %32, <8 x float> <float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000>)
  %36 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %35, <8 x float> %32, <8 x float> <float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000>)
  %37 = fmul <8 x float> %32, %32
  %38 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %37, <8 x float> %36, <8 x float> %32)
  %39 = fadd <8 x float> %38, <float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00>
  %40 = bitcast <8 x float> %29 to <8 x i32>
  %41 = add <8 x i32> %40, <i32 -1262485504, i32 -1262485504, i32 -1262485504, i32 -1262485504, i32 -1262485504, i32 -1262485504, i32 -1262485504, i32 -1262485504>
  %42 = ashr <8 x i32> %41, <i32 1, i32 1, i32 1, i32 1, i32 1, i32 1, i32 1, i32 1>
  %43 = sub <8 x i32> %40, %42
  %44 = shl <8 x i32> %42, <i32 23, i32 23, i32 23, i32 23, i32 23, i32 23, i32 23, i32 23>
  %45 = add <8 x i32> %44, <i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216>
  %46 = bitcast <8 x i32> %45 to <8 x float>
  %47 = fmul <8 x float> %39, %46
  %48 = shl <8 x i32> %43, <i32 23, i32 23, i32 23, i32 23, i32 23, i32 23, i32 23, i32 23>
  %49 = add <8 x i32> %48, <i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216, i32 1065353216>
  %50 = bitcast <8 x i32> %49 to <8 x float>
  %51 = fmul <8 x float> %47, %50
  %52 = select <8 x i1> %25, <8 x float> zeroinitializer, <8 x float> %51
  %53 = fpext <8 x float> %52 to <8 x double>
  %54 = fadd reassoc <8 x double> %vec.phi, %53
  %55 = getelementptr inbounds float, ptr %buf2, i64 %22
  tail call void @llvm.masked.store.v8f32.p0(<8 x float> %52, ptr %55, i32 4, <8 x i1> %21), !alias.scope !3, !noalias !0
  %index.next39 = add i64 %index32, 8
  %56 = icmp eq i64 %index.next39, 16
  br i1 %56, label %middle.block27, label %vector.body31, !llvm.loop !8

middle.block27:                                   ; preds = %vector.body31
  %57 = select reassoc <8 x i1> %21, <8 x double> %54, <8 x double> %vec.phi
  %58 = tail call reassoc double @llvm.vector.reduce.fadd.v8f64(double -0.000000e+00, <8 x double> %57)
  %59 = fptrunc double %58 to float
  %60 = fdiv arcp float 1.000000e+00, %59
  %broadcast.splatinsert25 = insertelement <8 x float> poison, float %60, i64 0
  %broadcast.splat26 = shufflevector <8 x float> %broadcast.splatinsert25, <8 x float> poison, <8 x i32> zeroinitializer
  br label %vector.body

vector.body:                                      ; preds = %vector.body, %middle.block27
  %index = phi i64 [ 0, %middle.block27 ], [ %index.next, %vector.body ]
  %broadcast.splatinsert = insertelement <8 x i64> poison, i64 %index, i64 0
  %broadcast.splat = shufflevector <8 x i64> %broadcast.splatinsert, <8 x i64> poison, <8 x i32> zeroinitializer
  %vec.iv = or <8 x i64> %broadcast.splat, <i64 0, i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7>
  %61 = icmp ult <8 x i64> %vec.iv, <i64 10, i64 10, i64 10, i64 10, i64 10, i64 10, i64 10, i64 10>
  %62 = add i64 %index, %3
  %63 = getelementptr inbounds float, ptr %buf2, i64 %62
  %wide.masked.load = tail call <8 x float> @llvm.masked.load.v8f32.p0(ptr %63, i32 4, <8 x i1> %61, <8 x float> poison), !alias.scope !3, !noalias !0
  %64 = fmul arcp <8 x float> %wide.masked.load, %broadcast.splat26
  tail call void @llvm.masked.store.v8f32.p0(<8 x float> %64, ptr %63, i32 4, <8 x i1> %61), !alias.scope !3, !noalias !0
  %index.next = add i64 %index, 8
  %65 = icmp eq i64 %index.next, 16
  br i1 %65, label %r0.exit8, label %vector.body, !llvm.loop !9

r0.exit8:                                         ; preds = %vector.body
  %p.next = add nsw i64 %p18, 1
  %exitcond22.not = icmp eq i64 %p.next, %end
  br i1 %exitcond22.not, label %p.exit, label %r0.header.preheader
}
