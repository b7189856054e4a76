; inductor/testdata/mm_bias_relu.txt: every kernel's LLVM IR after O3 for x86-64-v3

; kernel 1 k1_mm
; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, inaccessiblemem: none)
define void @coil_k1_k1_mm(i64 %begin, i64 %end, ptr nocapture readonly %buffers, ptr nocapture readonly %symbols, ptr nocapture readnone %error) local_unnamed_addr #0 {
entry:
  %0 = getelementptr inbounds ptr, ptr %buffers, i64 4
  %buf4 = load ptr, ptr %0, align 8
  %1 = getelementptr inbounds ptr, ptr %buffers, i64 3
  %buf3 = load ptr, ptr %1, align 8
  %2 = getelementptr inbounds ptr, ptr %buffers, i64 5
  %buf5 = load ptr, ptr %2, align 8
  %3 = icmp slt i64 %begin, %end
  br i1 %3, label %i1.header.preheader, label %p.exit

i1.header.preheader:                              ; preds = %entry, %i1.exit
  %p2 = phi i64 [ %p.next, %i1.exit ], [ %begin, %entry ]
  %4 = shl i64 %p2, 4
  br label %vector.body

vector.body:                                      ; preds = %vector.body, %i1.header.preheader
  %index = phi i64 [ 0, %i1.header.preheader ], [ %index.next, %vector.body ]
  %5 = add nuw i64 %index, %4
  %6 = getelementptr inbounds float, ptr %buf4, i64 %5
  %wide.load = load <8 x float>, ptr %6, align 4, !alias.scope !0, !noalias !3
  %7 = getelementptr inbounds float, ptr %buf3, i64 %index
  %wide.load4 = load <8 x float>, ptr %7, align 4, !alias.scope !6, !noalias !7
  %8 = fadd <8 x float> %wide.load, %wide.load4
  %9 = fcmp uno <8 x float> %8, zeroinitializer
  %10 = fcmp olt <8 x float> %8, zeroinitializer
  %11 = select <8 x i1> %10, <8 x float> zeroinitializer, <8 x float> %8
  %12 = select <8 x i1> %9, <8 x float> <float 0x7FF8000000000000, float 0x7FF8000000000000, float 0x7FF8000000000000, float 0x7FF8000000000000, float 0x7FF8000000000000, float 0x7FF8000000000000, float 0x7FF8000000000000, float 0x7FF8000000000000>, <8 x float> %11
  %13 = getelementptr inbounds float, ptr %buf5, i64 %5
  store <8 x float> %12, ptr %13, align 4, !alias.scope !8, !noalias !9
  %index.next = add nuw i64 %index, 8
  %14 = icmp eq i64 %index.next, 16
  br i1 %14, label %i1.exit, label %vector.body, !llvm.loop !10

p.exit:                                           ; preds = %i1.exit, %entry
  ret void

i1.exit:                                          ; preds = %vector.body
  %p.next = add nsw i64 %p2, 1
  %exitcond3.not = icmp eq i64 %p.next, %end
  br i1 %exitcond3.not, label %p.exit, label %i1.header.preheader
}
