; inductor/testdata/layer_norm_gelu.txt: every kernel's LLVM IR after O3 for x86-64-v3

; kernel 1 k1_sum
; Function Attrs: nofree nosync nounwind memory(readwrite, inaccessiblemem: none)
define void @coil_k1_k1_sum(i64 %begin, i64 %end, ptr nocapture readonly %buffers, ptr nocapture readonly %symbols, ptr nocapture readnone %error) local_unnamed_addr #0 {
entry:
  %0 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %0, align 8
  %1 = getelementptr inbounds ptr, ptr %buffers, i64 2
  %buf2 = load ptr, ptr %1, align 8
  %2 = getelementptr inbounds ptr, ptr %buffers, i64 3
  %buf3 = load ptr, ptr %2, align 8
  %3 = getelementptr inbounds ptr, ptr %buffers, i64 4
  %buf4 = load ptr, ptr %3, align 8
  %4 = icmp slt i64 %begin, %end
  br i1 %4, label %r0.header.preheader, label %p.exit

r0.header.preheader:                              ; preds = %entry, %r0.exit8
  %p18 = phi i64 [ %p.next, %r0.exit8 ], [ %begin, %entry ]
  %5 = shl i64 %p18, 5
  br label %vector.body45

vector.body45:                                    ; preds = %vector.body45, %r0.header.preheader
  %index46 = phi i64 [ 0, %r0.header.preheader ], [ %index.next49, %vector.body45 ]
  %vec.phi47 = phi <8 x double> [ <double 0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00>, %r0.header.preheader ], [ %9, %vector.body45 ]
  %6 = add nuw i64 %index46, %5
  %7 = getelementptr inbounds float, ptr %buf1, i64 %6
  %wide.load48 = load <8 x float>, ptr %7, align 4, !alias.scope !0, !noalias !3
  %8 = fpext <8 x float> %wide.load48 to <8 x double>
  %9 = fadd reassoc <8 x double> %vec.phi47, %8
  %index.next49 = add nuw i64 %index46, 8
  %10 = icmp eq i64 %index.next49, 32
  br i1 %10, label %middle.block40, label %vector.body45, !llvm.loop !5

middle.block40:                                   ; preds = %vector.body45
  %11 = tail call reassoc double @llvm.vector.reduce.fadd.v8f64(double -0.000000e+00, <8 x double> %9)
  %12 = fptrunc double %11 to float
  %13 = fmul float %12, 3.125000e-02
  %broadcast.splatinsert37 = insertelement <8 x float> poison, float %13, i64 0
  %broadcast.splat38 = shufflevector <8 x float> %broadcast.splatinsert37, <8 x float> poison, <8 x i32> zeroinitializer
  br label %vector.body34

p.exit:                                           ; preds = %r0.exit8, %entry
  ret void

vector.body34:                                    ; preds = %vector.body34, %middle.block40
  %index35 = phi i64 [ 0, %middle.block40 ], [ %index.next39, %vector.body34 ]
  %vec.phi = phi <8 x double> [ <double 0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00>, %middle.block40 ], [ %19, %vector.body34 ]
  %14 = add nuw i64 %index35, %5
  %15 = getelementptr inbounds float, ptr %buf1, i64 %14
  %wide.load36 = load <8 x float>, ptr %15, align 4, !alias.scope !0, !noalias !3
  %16 = fsub <8 x float> %wide.load36, %broadcast.splat38
  %17 = fmul <8 x float> %16, %16
  %18 = fpext <8 x float> %17 to <8 x double>
  %19 = fadd reassoc <8 x double> %vec.phi, %18
  %index.next39 = add nuw i64 %index35, 8
  %20 = icmp eq i64 %index.next39, 32
  br i1 %20, label %middle.block29, label %vector.body34, !llvm.loop !8

middle.block29:                                   ; preds = %vector.body34
  %21 = tail call reassoc double @llvm.vector.reduce.fadd.v8f64(double -0.000000e+00, <8 x double> %19)
  %22 = fptrunc double %21 to float
  %23 = fmul float %22, 3.125000e-02
  %24 = fadd float %23, 0x3EE4F8B580000000
  %25 = tail call float @llvm.sqrt.f32(float %24)
  %26 = fdiv float 1.000000e+00, %25
  %broadcast.splatinsert = insertelement <8 x float> poison, float %13, i64 0
  %broadcast.splat = shufflevector <8 x float> %broadcast.splatinsert, <8 x float> poison, <8 x i32> zeroinitializer
  %broadcast.splatinsert25 = insertelement <8 x float> poison, float %26, i64 0
  %broadcast.splat26 = shufflevector <8 x float> %broadcast.splatinsert25, <8 x float> poison, <8 x i32> zeroinitializer
  br label %vector.body

vector.body:                                      ; preds = %vector.body, %middle.block29
  %index = phi i64 [ 0, %middle.block29 ], [ %index.next, %vector.body ]
  %27 = add nuw i64 %index, %5
  %28 = getelementptr inbounds float, ptr %buf1, i64 %27
  %wide.load = load <8 x float>, ptr %28, align 4, !alias.scope !0, !noalias !3
  %29 = fsub <8 x float> %wide.load, %broadcast.splat
  %30 = fmul <8 x float> %broadcast.splat26, %29
  %31 = getelementptr inbounds float, ptr %buf2, i64 %index
  %wide.load27 = load <8 x float>, ptr %31, align 4, !alias.scope !0, !noalias !3
  %32 = fmul <8 x float> %wide.load27, %30
  %33 = getelementptr inbounds float, ptr %buf3, i64 %index
  %wide.load28 = load <8 x float>, ptr %33, align 4, !alias.scope !0, !noalias !3
  %34 = fadd <8 x float> %wide.load28, %32
  %35 = fmul <8 x float> %34, <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>
  %36 = fmul <8 x float> %34, <float 0x3FE6A09E60000000, float 0x3FE6A09E60000000, float 0x3FE6A09E60000000, float 0x3FE6A09E60000000, float 0x3FE6A09E60000000, float 0x3FE6A09E60000000, float 0x3FE6A09E60000000, float 0x3FE6A09E60000000>
  %37 = tail call <8 x float> @llvm.fabs.v8f32(<8 x float> %36)
  %38 = fcmp oge <8 x float> %37, <float 8.750000e-01, float 8.750000e-01, float 8.750000e-01, float 8.750000e-01, float 8.750000e-01, float 8.750000e-01, float 8.750000e-01, float 8.750000e-01>
  %39 = fcmp ogt <8 x float> %37, <float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00>
  %40 = select <8 x i1> %39, <8 x float> <float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00>, <8 x float> %37
  %41 = fadd <8 x float> %40, <float -8.750000e-01, float -8.750000e-01, float -8.750000e-01, float -8.750000e-01, float -8.750000e-01, float -8.750000e-01, float -8.750000e-01, float -8.750000e-01>
  %42 = fmul <8 x float> %36, %36
  %43 = select <8 x i1> %38, <8 x float> %41, <8 x float> %42
  %44 = select <8 x i1> %38, <8 x float> <float 0x3F2A339BC0000000, float 0x3F2A339BC0000000, float 0x3F2A339BC0000000, float 0x3F2A339BC0000000, float 0x3F2A339BC0000000, float 0x3F2A339BC0000000, float 0x3F2A339BC0000000, float 0x3F2A339BC0000000>, <8 x float> <float 0x3F16CDC700000000, float 0x3F16CDC700000000, float 0x3F16CDC700000000, float 0x3F16CDC700000000, float 0x3F16CDC700000000, float 0x3F16CDC700000000, float 0x3F16CDC700000000, float 0x3F16CDC700000000>
  %45 = select <8 x i1> %38, <8 x float> <float 0xBF60A67F60000000, float 0xBF60A67F60000000, float 0xBF60A67F60000000, float 0xBF60A67F60000000, float 0xBF60A67F60000000, float 0xBF60A67F60000000, float 0xBF60A67F60000000, float 0xBF60A67F60000000>, <8 x float> <float 0xBF4AEC8A00000000, float 0xBF4AEC8A00000000, float 0xBF4AEC8A00000000, float 0xBF4AEC8A00000000, float 0xBF4AEC8A00000000, float 0xBF4AEC8A00000000, float 0xBF4AEC8A00000000, float 0xBF4AEC8A00000000>
  %46 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %44, <8 x float> %43, <8 x float> %45)
  %47 = select <8 x i1> %38, <8 x float> <float 0x3F86EC6100000000, float 0x3F86EC6100000000, float 0x3F86EC6100000000, float 0x3F86EC6100000000, float 0x3F86EC6100000000, float 0x3F86EC6100000000, float 0x3F86EC6100000000, float 0x3F86EC6100000000>, <8 x float> <float 0x3F75542A40000000, float 0x3F75542A40000000, float 0x3F75542A40000000, float 0x3F75542A40000000, float 0x3F75542A40000000, float 0x3F75542A40000000, float 0x3F75542A40000000, float 0x3F75542A40000000>
  %48 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %46, <8 x float> %43, <8 x float> %47)
  %49 = select <8 x i1> %38, <8 x float> <float 0xBFA7FAB9E0000000, float 0xBFA7FAB9E0000000, float 0xBFA7FAB9E0000000, float 0xBFA7FAB9E0000000, float 0xBFA7FAB9E0000000, float 0xBFA7FAB9E0000000, float 0xBFA7FAB9E0000000, float 0xBFA7FAB9E0000000>, <8 x float> <float 0xBF9B81A720000000, float 0xBF9B81A720000000, float 0xBF9B81A720000000, float 0xBF9B81A720000000, float 0xBF9B81A720000000, float 0xBF9B81A720000000, float 0xBF9B81A720000000, float 0xBF9B81A720000000>
  %50 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %48, <8 x float> %43, <8 x float> %49)
  %51 = select <8 x i1> %38, <8 x float> <float 0xBFEA732120000000, float 0xBFEA732120000000, float 0xBFEA732120000000, float 0xBFEA732120000000, float 0xBFEA732120000000, float 0xBFEA732120000000, float 0xBFEA732120000000, float 0xBFEA732120000000>, <8 x float> <float 0x3FBCE2E8E0000000, float 0x3FBCE2E8E0000000, float 0x3FBCE2E8E0000000, float 0x3FBCE2E8E0000000, float 0x3FBCE2E8E0000000, float 0x3FBCE2E8E0000000, float 0x3FBCE2E8E0000000, float 0x3FBCE2E8E0000000>
  %52 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %50, <8 x float> %43, <8 x float> %51)
  %53 = select <8 x i1> %38, <8 x float> <float 0xC0037116A0000000, float 0xC0037116A0000000, float 0xC0037116A0000000, float 0xC0037116A0000000, float 0xC0037116A0000000, float 0xC0037116A0000000, float 0xC0037116A0000000, float 0xC0037116A0000000>, <8 x float> <float 0xBFD8127440000000, float 0xBFD8127440000000, float 0xBFD8127440000000, float 0xBFD8127440000000, float 0xBFD8127440000000, float 0xBFD8127440000000, float 0xBFD8127440000000, float 0xBFD8127440000000>
  %54 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %52, <8 x float> %43, <8 x float> %53)
  %55 = select <8 x i1> %38, <8 x float> <float 0xBFF88672E0000000, float 0xBFF88672E0000000, float 0xBFF88672E0000000, float 0xBFF88672E0000000, float 0xBFF88672E0000000, float 0xBFF88672E0000000, float 0xBFF88672E0000000, float 0xBFF88672E0000000>, <8 x float> <float 0x3FC06EBA80000000, float 0x3FC06EBA80000000, float 0x3FC06EBA80000000, float 0x3FC06EBA80000000, float 0x3FC06EBA80000000, float 0x3FC06EBA80000000, float 0x3FC06EBA80000000, float 0x3FC06EBA80000000>
  %56 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %54, <8 x float> %43, <8 x float> %55)
  %57 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %37, <8 x float> %56, <8 x float> %37)
  %58 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %56, <8 x float> <float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000, float 0x3FF7154760000000>, <8 x float> <float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000, float 0x4168000000000000>)
  %59 = fadd <8 x float> %58, <float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000, float 0xC168000000000000>
  %60 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %59, <8 x float> <float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000, float 0xBFE62E4000000000>, <8 x float> %56)
  %61 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %59, <8 x float> <float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000, float 0xBEB7F7D1C0000000>, <8 x float> %60)
  %62 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %61, <8 x float> <float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000, float 0x3F56A4CF60000000>, <8 x float> <float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000, float 0x3F8120DA80000000>)
  %63 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %62, <8 x float> %61, <8 x float> <float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000, float 0x3FA5557CE0000000>)
  %64 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %63, <8 x float> %61, <8 x float> <float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000, float 0x3FC5554DC0000000>)
  %65 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %64, <8 x float> %61, <8 x float> <float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000, float 0x3FDFFFFFE0000000>)
  %66 = fmul <8 x float> %61, %61
  %67 = tail call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %66, <8 x float> %65, <8 x float> %61)
  %68 = fadd <8 x float> %67, <float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00>
  %69 = bitcast <8 x float> %58 to <8 x i32>
  %70 = bitcast <8 x float> %68 to <8 x i32>
  %71 = shl <8 x i32> %69, <i32 23, i32 23, i32 23, i32 23, i32 23, i32 23, i32 23, i32 23>
  %72 = add <8 x i32> %71, %70
  %73 = bitcast <8 x i32> %72 to <8 x float>
  %74 = fsub <8 x float> <float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00>, %73
  %75 = select <8 x i1> %38, <8 x float> %74, <8 x float> %57
  %76 = tail call <8 x float> @llvm.copysign.v8f32(<8 x float> %75, <8 x float> %36)
  %77 = fadd <8 x float> %76, <float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00>
  %78 = fmul <8 x float> %35, %77
  %79 = fadd <8 x float> %wide.load, %78
  %80 = getelementptr inbounds float, ptr %buf4, i64 %27
  store <8 x float> %79, ptr %80, align 4, !alias.scope !3, !noalias !0
  %index.next = add nuw i64 %index, 8
  %81 = icmp eq i64 %index.next, 32
  br i1 %81, label %r0.exit8, label %vector.body, !llvm.loop !9

r0.exit8:                                         ; preds = %vector.body
  %p.next = add nsw i64 %p18, 1
  %exitcond22.not = icmp eq i64 %p.next, %end
  br i1 %exitcond22.not, label %p.exit, label %r0.header.preheader
}

; kernel 24 k24_sum
; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, inaccessiblemem: none)
define void @coil_k24_k24_sum(i64 %begin, i64 %end, ptr nocapture readonly %buffers, ptr nocapture readonly %symbols, ptr nocapture readnone %error) local_unnamed_addr #0 {
entry:
  %0 = getelementptr inbounds ptr, ptr %buffers, i64 4
  %buf4 = load ptr, ptr %0, align 8
  %1 = getelementptr inbounds ptr, ptr %buffers, i64 5
  %buf5 = load ptr, ptr %1, align 8
  %2 = icmp slt i64 %begin, %end
  br i1 %2, label %r0.header.preheader, label %p.exit

r0.header.preheader:                              ; preds = %entry, %middle.block
  %p4 = phi i64 [ %p.next, %middle.block ], [ %begin, %entry ]
  %3 = shl i64 %p4, 5
  br label %vector.body

vector.body:                                      ; preds = %vector.body, %r0.header.preheader
  %index = phi i64 [ 0, %r0.header.preheader ], [ %index.next, %vector.body ]
  %vec.phi = phi <8 x double> [ <double 0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00>, %r0.header.preheader ], [ %7, %vector.body ]
  %4 = add nuw i64 %index, %3
  %5 = getelementptr inbounds float, ptr %buf4, i64 %4
  %wide.load = load <8 x float>, ptr %5, align 4, !alias.scope !0, !noalias !3
  %6 = fpext <8 x float> %wide.load to <8 x double>
  %7 = fadd reassoc <8 x double> %vec.phi, %6
  %index.next = add nuw i64 %index, 8
  %8 = icmp eq i64 %index.next, 32
  br i1 %8, label %middle.block, label %vector.body, !llvm.loop !5

middle.block:                                     ; preds = %vector.body
  %9 = tail call reassoc double @llvm.vector.reduce.fadd.v8f64(double -0.000000e+00, <8 x double> %7)
  %10 = fptrunc double %9 to float
  %11 = getelementptr inbounds float, ptr %buf5, i64 %p4
  store float %10, ptr %11, align 4, !alias.scope !3, !noalias !0
  %p.next = add nsw i64 %p4, 1
  %exitcond5.not = icmp eq i64 %p.next, %end
  br i1 %exitcond5.not, label %p.exit, label %r0.header.preheader

p.exit:                                           ; preds = %middle.block, %entry
  ret void
}
