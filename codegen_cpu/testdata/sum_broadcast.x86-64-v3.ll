; codegen_cpu/testdata/sum_broadcast.txt: every kernel's LLVM IR after O3 for x86-64-v3

; kernel 2 k2_sum
; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, inaccessiblemem: none)
define void @coil_k2_k2_sum(i64 %begin, i64 %end, ptr nocapture readonly %buffers, ptr nocapture readonly %symbols, ptr nocapture readnone %error) local_unnamed_addr #0 {
entry:
  %0 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %0, align 8
  %1 = getelementptr inbounds ptr, ptr %buffers, i64 2
  %buf2 = load ptr, ptr %1, align 8
  %2 = getelementptr inbounds ptr, ptr %buffers, i64 5
  %buf5 = load ptr, ptr %2, align 8
  %3 = icmp slt i64 %begin, %end
  br i1 %3, label %r0.header.preheader, label %p.exit

r0.header.preheader:                              ; preds = %entry, %r0.exit
  %p4 = phi i64 [ %p.next, %r0.exit ], [ %begin, %entry ]
  %4 = mul i64 %p4, 100
  br label %vector.body

vector.body:                                      ; preds = %vector.body, %r0.header.preheader
  %index = phi i64 [ 0, %r0.header.preheader ], [ %index.next, %vector.body ]
  %vec.phi = phi <8 x double> [ <double 0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00, double -0.000000e+00>, %r0.header.preheader ], [ %10, %vector.body ]
  %5 = add i64 %index, %4
  %6 = getelementptr inbounds float, ptr %buf1, i64 %5
  %wide.load = load <8 x float>, ptr %6, align 4, !alias.scope !0, !noalias !3
  %7 = getelementptr inbounds float, ptr %buf2, i64 %index
  %wide.load6 = load <8 x float>, ptr %7, align 4, !alias.scope !0, !noalias !3
  %8 = fadd <8 x float> %wide.load, %wide.load6
  %9 = fpext <8 x float> %8 to <8 x double>
  %10 = fadd reassoc <8 x double> %vec.phi, %9
  %index.next = add nuw i64 %index, 8
  %11 = icmp eq i64 %index.next, 96
  br i1 %11, label %middle.block, label %vector.body, !llvm.loop !5

middle.block:                                     ; preds = %vector.body
  %12 = tail call reassoc double @llvm.vector.reduce.fadd.v8f64(double -0.000000e+00, <8 x double> %10)
  br label %r0.body

p.exit:                                           ; preds = %r0.exit, %entry
  ret void

r0.body:                                          ; preds = %middle.block, %r0.body
  %r03 = phi i64 [ 96, %middle.block ], [ %r0.next, %r0.body ]
  %acc2.02 = phi double [ %12, %middle.block ], [ %20, %r0.body ]
  %13 = add i64 %r03, %4
  %14 = getelementptr inbounds float, ptr %buf1, i64 %13
  %15 = load float, ptr %14, align 4, !alias.scope !0, !noalias !3
  %16 = getelementptr inbounds float, ptr %buf2, i64 %r03
  %17 = load float, ptr %16, align 4, !alias.scope !0, !noalias !3
  %18 = fadd float %15, %17
  %19 = fpext float %18 to double
  %20 = fadd reassoc double %acc2.02, %19
  %r0.next = add nuw nsw i64 %r03, 1
  %exitcond.not = icmp eq i64 %r0.next, 100
  br i1 %exitcond.not, label %r0.exit, label %r0.body, !llvm.loop !8

r0.exit:                                          ; preds = %r0.body
  %21 = fptrunc double %20 to float
  %22 = getelementptr inbounds float, ptr %buf5, i64 %p4
  store float %21, ptr %22, align 4, !alias.scope !3, !noalias !0
  %p.next = add nsw i64 %p4, 1
  %exitcond5.not = icmp eq i64 %p.next, %end
  br i1 %exitcond5.not, label %p.exit, label %r0.header.preheader
}

; kernel 3 k3_div
; remark: <unknown>:0:0: Stores SLP vectorized with cost -2 and with tree size 2
; Function Attrs: nofree norecurse nounwind memory(readwrite, inaccessiblemem: none)
define void @coil_k3_k3_div(i64 %begin, i64 %end, ptr nocapture readonly %buffers, ptr nocapture readonly %symbols, ptr nocapture %error) local_unnamed_addr #0 {
entry:
  %0 = getelementptr inbounds ptr, ptr %buffers, i64 3
  %buf3 = load ptr, ptr %0, align 8
  %1 = getelementptr inbounds ptr, ptr %buffers, i64 4
  %buf4 = load ptr, ptr %1, align 8
  %2 = getelementptr inbounds ptr, ptr %buffers, i64 6
  %buf6 = load ptr, ptr %2, align 8
  %3 = icmp slt i64 %begin, %end
  br i1 %3, label %p.body, label %checks.done

p.body:                                           ; preds = %entry, %p.body
  %p3 = phi i64 [ %p.next, %p.body ], [ %begin, %entry ]
  %check.acc.02 = phi i8 [ %10, %p.body ], [ 0, %entry ]
  %4 = getelementptr inbounds i32, ptr %buf3, i64 %p3
  %5 = load i32, ptr %4, align 4, !alias.scope !0, !noalias !3
  %6 = getelementptr inbounds i32, ptr %buf4, i64 %p3
  %7 = load i32, ptr %6, align 4, !alias.scope !0, !noalias !3
  %8 = icmp eq i32 %7, 0
  %9 = zext i1 %8 to i8
  %10 = or i8 %check.acc.02, %9
  %11 = sext i32 %5 to i64
  %12 = icmp eq i32 %7, -1
  %13 = add i32 %7, 1
  %14 = icmp ult i32 %13, 2
  %narrow = select i1 %14, i32 1, i32 %7
  %15 = sext i32 %narrow to i64
  %16 = sdiv i64 %11, %15
  %17 = sub nsw i64 0, %11
  %18 = select i1 %12, i64 %17, i64 %16
  %19 = trunc i64 %18 to i32
  %20 = getelementptr inbounds i32, ptr %buf6, i64 %p3
  store i32 %19, ptr %20, align 4, !alias.scope !3, !noalias !0
  %p.next = add nsw i64 %p3, 1
  %exitcond.not = icmp eq i64 %p.next, %end
  br i1 %exitcond.not, label %p.exit, label %p.body

p.exit:                                           ; preds = %p.body
  %21 = icmp eq i8 %10, 0
  br i1 %21, label %checks.done, label %check.fail, !prof !5

checks.done:                                      ; preds = %entry, %p.exit, %check.write, %check.fail
  ret void

check.fail:                                       ; preds = %p.exit
  %22 = cmpxchg ptr %error, i64 0, i64 1 seq_cst seq_cst, align 8
  %23 = extractvalue { i64, i1 } %22, 1
  br i1 %23, label %check.write, label %checks.done

check.write:                                      ; preds = %check.fail
  %24 = getelementptr inbounds i64, ptr %error, i64 1
  store <4 x i64> <i64 3, i64 1, i64 1, i64 0>, ptr %24, align 8
  %25 = getelementptr inbounds i64, ptr %error, i64 5
  store ptr @check.what, ptr %25, align 8
  br label %checks.done
}
