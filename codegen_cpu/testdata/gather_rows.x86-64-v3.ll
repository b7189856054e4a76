; codegen_cpu/testdata/gather_rows.txt: every kernel's LLVM IR after O3 for x86-64-v3

; kernel 2 k2_copy
; Function Attrs: nofree norecurse nounwind memory(readwrite, inaccessiblemem: none)
define void @coil_k2_k2_copy(i64 %begin, i64 %end, ptr nocapture readonly %buffers, ptr nocapture readonly %symbols, ptr nocapture %error) local_unnamed_addr #0 {
entry:
  %0 = getelementptr inbounds ptr, ptr %buffers, i64 2
  %buf2 = load ptr, ptr %0, align 8
  %1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %1, align 8
  %2 = getelementptr inbounds ptr, ptr %buffers, i64 3
  %buf3 = load ptr, ptr %2, align 8
  %3 = icmp slt i64 %begin, %end
  br i1 %3, label %i2.header.preheader, label %common.ret

i2.header.preheader:                              ; preds = %entry, %i2.exit
  %p2 = phi i64 [ %p.next, %i2.exit ], [ %begin, %entry ]
  %4 = getelementptr inbounds i64, ptr %buf2, i64 %p2
  %5 = load i64, ptr %4, align 8, !alias.scope !0, !noalias !3
  %6 = icmp ult i64 %5, 96
  %7 = shl nuw nsw i64 %5, 6
  %8 = shl i64 %p2, 6
  br i1 %6, label %vector.body, label %check.fail, !prof !5

vector.body:                                      ; preds = %i2.header.preheader, %vector.body
  %index = phi i64 [ %index.next, %vector.body ], [ 0, %i2.header.preheader ]
  %9 = add nuw nsw i64 %7, %index
  %10 = getelementptr inbounds float, ptr %buf1, i64 %9
  %wide.load = load <8 x float>, ptr %10, align 4, !alias.scope !0, !noalias !3
  %11 = add i64 %index, %8
  %12 = getelementptr inbounds float, ptr %buf3, i64 %11
  store <8 x float> %wide.load, ptr %12, align 4, !alias.scope !3, !noalias !0
  %index.next = add nuw i64 %index, 8
  %13 = icmp eq i64 %index.next, 64
  br i1 %13, label %i2.exit, label %vector.body, !llvm.loop !6

common.ret:                                       ; preds = %i2.exit, %entry, %check.fail, %check.write
  ret void

i2.exit:                                          ; preds = %vector.body
  %p.next = add i64 %p2, 1
  %exitcond5.not = icmp eq i64 %p.next, %end
  br i1 %exitcond5.not, label %common.ret, label %i2.header.preheader

check.fail:                                       ; preds = %i2.header.preheader
  %14 = cmpxchg ptr %error, i64 0, i64 1 seq_cst seq_cst, align 8
  %15 = extractvalue { i64, i1 } %14, 1
  br i1 %15, label %check.write, label %common.ret

check.write:                                      ; preds = %check.fail
  %16 = getelementptr inbounds i64, ptr %error, i64 1
  store i64 1, ptr %16, align 8
  %17 = getelementptr inbounds i64, ptr %error, i64 2
  store i64 %5, ptr %17, align 8
  %18 = getelementptr inbounds i64, ptr %error, i64 3
  store i64 96, ptr %18, align 8
  %19 = getelementptr inbounds i64, ptr %error, i64 4
  store i64 0, ptr %19, align 8
  %20 = getelementptr inbounds i64, ptr %error, i64 5
  store ptr @check.what, ptr %20, align 8
  br label %common.ret
}
