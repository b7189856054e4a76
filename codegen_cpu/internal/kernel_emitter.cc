// Schedule kernel -> LLVM function: loop nests, loads/stores, expressions (the REDUCE
// accumulators are reduction_emitter.cc's).
#include "codegen_cpu/internal/kernel_emitter.h"

#include <cmath>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/internal/alias_scopes.h"
#include "codegen_cpu/internal/index_emitter.h"
#include "codegen_cpu/internal/loop_metadata.h"
#include "codegen_cpu/internal/loop_shapes.h"
#include "codegen_cpu/internal/math_emitter.h"
#include "codegen_cpu/internal/reduction_emitter.h"
#include "codegen_cpu/internal/runtime_checks.h"
#include "codegen_cpu/internal/streaming_stores.h"
#include "codegen_cpu/internal/target.h"
#include "llvm/IR/IRBuilder.h"
#include "runtime/cpu/kernel_abi.h"

namespace coil::codegen_cpu_internal {
namespace {

constexpr int64_t kColumnTile = 256;  // [Note: column reductions]

class KernelEmitter {
 public:
  KernelEmitter(const proto::Kernel& k, const ScheduleInfo& info, llvm::Module& m)
      : k_(k),
        info_(info),
        m_(m),
        c_(m.getContext()),
        b_(c_),
        eb_(c_),
        scopes_(k, info.buffers, m.getContext()),
        checks_(eb_) {}

  absl::StatusOr<llvm::Function*> Run(const std::string& symbol) {
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Type* ptr = b_.getPtrTy();
    auto* ft = llvm::FunctionType::get(b_.getVoidTy(), {i64, i64, ptr, ptr, ptr}, false);
    f_ = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, symbol, m_);
    f_->setDoesNotThrow();
    f_->getArg(0)->setName("begin");
    f_->getArg(1)->setName("end");
    f_->getArg(2)->setName("buffers");
    f_->getArg(3)->setName("symbols");
    f_->getArg(4)->setName("error");
    f_->addParamAttr(4, llvm::Attribute::NoCapture);
    checks_.Bind(f_->getArg(4));
    // 512-bit vectors wherever AVX-512 exists (target.h, [Note: 512-bit vectors]).
    if (info_.vector_bits >= 512) f_->addFnAttr(kPreferVectorWidthAttr, "512");
    for (int a : {2, 3}) {
      f_->addParamAttr(a, llvm::Attribute::NoCapture);
      f_->addParamAttr(a, llvm::Attribute::ReadOnly);
    }
    auto* entry = llvm::BasicBlock::Create(c_, "entry", f_);
    auto* start = llvm::BasicBlock::Create(c_, "start", f_);
    eb_.SetInsertPoint(entry);
    eb_.SetInsertPoint(eb_.CreateBr(start));
    b_.SetInsertPoint(start);
    absl::Status s = Body();
    if (!s.ok()) {
      f_->eraseFromParent();
      return absl::Status(s.code(),
                          absl::StrCat("kernel ", k_.id(), " '", k_.name(), "': ", s.message()));
    }
    checks_.EmitReport(b_);  // runtime_checks.h, [Note: deferred checks]
    b_.CreateRetVoid();
    return f_;
  }

 private:
  // ---- Entry-block values: symbols, ranges, buffer bases and strides. ----
  llvm::Value* GraphSymbol(absl::string_view name) {
    auto it = info_.symbol_index.find(std::string(name));
    if (it == info_.symbol_index.end()) return nullptr;
    auto [cached, inserted] = sym_values_.emplace(it->second, nullptr);
    if (inserted) {
      llvm::Value* p = eb_.CreateConstInBoundsGEP1_64(eb_.getInt64Ty(), f_->getArg(3), it->second);
      cached->second = eb_.CreateLoad(eb_.getInt64Ty(), p, absl::StrCat("sym.", name));
    }
    return cached->second;
  }

  absl::StatusOr<llvm::Value*> EntryExpr(const proto::SymExpr& e) {
    IndexEmitter ix(eb_, [this](absl::string_view n) { return GraphSymbol(n); });
    return ix.Emit(e);
  }

  struct BufferVals {
    const proto::Buffer* buf = nullptr;
    llvm::Value* base = nullptr;
    std::vector<llvm::Value*> strides;
  };

  absl::StatusOr<BufferVals*> Buffer(int id) {
    auto it = buffers_.find(id);
    if (it != buffers_.end()) return &it->second;
    auto bi = info_.buffers.find(id);
    if (bi == info_.buffers.end()) return absl::InvalidArgumentError(absl::StrCat("unknown buffer ", id));
    if (RegType(c_, bi->second->dtype()) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", id, " has no valid dtype"));
    }
    BufferVals v;
    v.buf = bi->second;
    if (const int over = InPlaceRoot(id, info_.buffers); over != id) {
      // [Note: in-place bases] An in-place output (Buffer.in_place) overwrites, element by
      // element, the buffer whose slot it took (Buffer.reuses), at the same arena offset: both
      // table entries hold one address. Loading that address once for both lets LLVM see each
      // element's load and store as the same address. With two loads it could not, and its
      // run-time overlap check (distance below one vector) failed at run time for exactly this
      // case (distance 0), so every in-place kernel ran its scalar loop: the attention
      // softmax's normalization, 5.5 ns per element (docs/cpu_backend.md).
      absl::StatusOr<BufferVals*> other = Buffer(over);
      if (!other.ok()) return other.status();
      v.base = (*other)->base;
    } else {
      llvm::Value* p = eb_.CreateConstInBoundsGEP1_64(eb_.getPtrTy(), f_->getArg(2), id);
      v.base = eb_.CreateLoad(eb_.getPtrTy(), p, absl::StrCat("buf", id));
    }
    if (StreamsStores(k_, *v.buf, info_.vector_bits)) {
      eb_.CreateAlignmentAssumption(m_.getDataLayout(), v.base, 64);
      llvm::cast<llvm::LoadInst>(v.base)->setMetadata(kStreamMetadata, llvm::MDNode::get(c_, {}));
    }
    const int rank = v.buf->shape_size();
    v.strides.assign(rank, eb_.getInt64(1));
    for (int d = rank - 2; d >= 0; --d) {
      absl::StatusOr<llvm::Value*> dim = EntryExpr(v.buf->shape(d + 1));
      if (!dim.ok()) return dim.status();
      v.strides[d] = eb_.CreateMul(v.strides[d + 1], *dim);
    }
    return &buffers_.emplace(id, std::move(v)).first->second;
  }

  // ---- Values and symbols inside the loops. ----
  llvm::Value* LoopSymbol(absl::string_view name) {
    if (name.size() >= 3 && name[0] == '_') {
      int d;
      if (!absl::SimpleAtoi(name.substr(2), &d) || d < 0) return nullptr;
      if (name[1] == 'i') return d < static_cast<int>(outer_.size()) ? outer_[d] : nullptr;
      if (name[1] == 'r') return d < static_cast<int>(inner_.size()) ? inner_[d] : nullptr;
      if (name[1] == 'v') {
        auto it = values_.find(d);
        return it == values_.end() ? nullptr : EmitToI64(b_, it->second);
      }
      return nullptr;
    }
    return GraphSymbol(name);
  }

  absl::StatusOr<llvm::Value*> Index(const proto::SymExpr& e) {
    IndexEmitter ix(b_, [this](absl::string_view n) { return LoopSymbol(n); });
    return ix.Emit(e);
  }

  absl::StatusOr<TypedValue> Use(int id) {
    auto it = values_.find(id);
    if (it == values_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("refers to expr ", id, ", not defined before or not visible here"));
    }
    return it->second;
  }

  // The element address of a LOAD / STORE. Indices from data are checked (runtime_checks.h);
  // `*guard` (null: none needed) is the i1 under which the access must run.
  absl::StatusOr<std::pair<llvm::Value*, DType>> Address(const proto::Expr& e,
                                                         llvm::Value** guard) {
    *guard = nullptr;
    absl::StatusOr<BufferVals*> bv = Buffer(e.buffer());
    if (!bv.ok()) return bv.status();
    const proto::Buffer& buf = *(*bv)->buf;
    if (e.index_size() != buf.shape_size()) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", buf.id(), " ('", buf.name(),
                                                     "') has rank ", buf.shape_size(),
                                                     ", the index has ", e.index_size(), " dims"));
    }
    if (flat_ != nullptr && e.index_size() != 0) {  // an identity access ([Note: flat ...])
      return std::make_pair(b_.CreateInBoundsGEP(MemType(c_, buf.dtype()), (*bv)->base, flat_),
                            buf.dtype());
    }
    llvm::Value* off = b_.getInt64(0);
    for (int d = 0; d < e.index_size(); ++d) {
      absl::StatusOr<llvm::Value*> ix = Index(e.index(d));
      if (!ix.ok()) return ix.status();
      if (RefersToValue(e.index(d))) {
        absl::StatusOr<llvm::Value*> size = EntryExpr(buf.shape(d));
        if (!size.ok()) return size.status();
        const std::string what =
            absl::StrCat("expr ", e.id(), " (", proto::Expr::Kind_Name(e.kind()), ") of buffer ",
                         buf.id(), " ('", buf.name(), "')");
        const bool wrapped = IsWrappedIndex(k_, e.index(d));
        if (!DependsOnAny(k_, e.index(d), InnermostLoopVars())) {  // [Note: deferred checks]
          checks_.IndexOrReturn(b_, *ix, *size, d, wrapped, what);
          off = b_.CreateAdd(off, b_.CreateMul(*ix, (*bv)->strides[d]));
          continue;
        }
        llvm::Value* ok = checks_.Index(b_, *ix, *size, d, wrapped, what);
        *ix = b_.CreateSelect(ok, *ix, b_.getInt64(0));
        auto* c = llvm::dyn_cast<llvm::ConstantInt>(*size);
        // A size that may be 0 has no element 0 to read instead: skip the access.
        if (c == nullptr || c->getSExtValue() <= 0) {
          *guard = *guard != nullptr ? b_.CreateAnd(*guard, ok) : ok;
        }
      }
      off = b_.CreateAdd(off, b_.CreateMul(*ix, (*bv)->strides[d]));
    }
    llvm::Type* mt = MemType(c_, buf.dtype());
    return std::make_pair(b_.CreateInBoundsGEP(mt, (*bv)->base, off), buf.dtype());
  }

  // The variables of the innermost loop being emitted: the ranged Loop's last, else the last
  // outer dim's, else the parallel prefix's (one flattened loop).
  std::vector<std::string> InnermostLoopVars() const {
    if (!inner_.empty()) return {absl::StrCat("_r", inner_.size() - 1)};
    const int rank = k_.ranges_size(), prefix = cpu::ParallelPrefixRank(rank, k_.parallel_dims());
    // Column tiles loop over the last outer dim innermost whatever the runtime's split.
    if (rank > prefix || column_segments_) return {absl::StrCat("_i", rank - 1)};
    std::vector<std::string> vars;
    for (int d = 0; d < prefix; ++d) vars.push_back(absl::StrCat("_i", d));
    return vars;
  }

  // ---- Loops. ----
  // for (iv = lo; iv < hi; ++iv) body(iv), with `loop_md` (if any) as the loop's metadata.
  absl::Status For(llvm::Value* lo, llvm::Value* hi, const std::string& name,
                   const std::function<absl::Status(llvm::Value*)>& body,
                   llvm::MDNode* loop_md = nullptr) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(c_, name + ".header", f_);
    auto* loop = llvm::BasicBlock::Create(c_, name + ".body", f_);
    auto* exit = llvm::BasicBlock::Create(c_, name + ".exit", f_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, name);
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, hi), loop, exit);
    b_.SetInsertPoint(loop);
    if (absl::Status s = body(iv); !s.ok()) return s;
    llvm::Value* next = b_.CreateAdd(iv, b_.getInt64(1), name + ".next", false, true);
    iv->addIncoming(next, b_.GetInsertBlock());
    llvm::BranchInst* latch = b_.CreateBr(header);
    if (loop_md != nullptr) latch->setMetadata(llvm::LLVMContext::MD_loop, loop_md);
    b_.SetInsertPoint(exit);
    return absl::OkStatus();
  }

  absl::Status Body() {
    const int rank = k_.ranges_size();
    const int prefix = cpu::ParallelPrefixRank(rank, k_.parallel_dims());
    std::vector<llvm::Value*> ranges;
    for (const proto::SymExpr& r : k_.ranges()) {
      absl::StatusOr<llvm::Value*> v = EntryExpr(r);
      if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat("range: ", v.status().message()));
      ranges.push_back(*v);
    }
    outer_.assign(rank, nullptr);
    if (IsFlatPointwise(k_, info_.buffers)) {
      // The runtime's [begin, end) counts positions of the parallel prefix (all dims but the
      // last): the flat loop covers [begin, end) times the last dim's extent.
      llvm::Value* last = ranges[rank - 1];
      llvm::Value* flat_begin = b_.CreateMul(f_->getArg(0), last);
      llvm::Value* flat_end = b_.CreateMul(f_->getArg(1), last);
      return For(flat_begin, flat_end, "f",
                 [&](llvm::Value* flat) {
                   flat_ = flat;
                   return Loops();
                 },
                 LoopMetadata(0, 0));
    }
    const bool column = IsColumnReduction(k_, info_.buffers);
    if (column && rank == 1) return ColumnTiles(f_->getArg(0), f_->getArg(1));
    if (column && prefix == rank) {
      column_segments_ = true;
      return ColumnSegments(ranges);
    }
    return For(f_->getArg(0), f_->getArg(1), "p", [&](llvm::Value* p) -> absl::Status {
      SetLeadingOuter(p, prefix, ranges);
      if (rank <= prefix) return Loops();
      if (column) return ColumnTiles(b_.getInt64(0), ranges[rank - 1]);
      return For(
          b_.getInt64(0), ranges[rank - 1], absl::StrCat("i", rank - 1),
          [&](llvm::Value* iv) {
            outer_[rank - 1] = iv;
            return Loops();
          },
          LoopMetadata(0, 0, MaskedTail(ranges[rank - 1])));
    });
  }

  absl::Status Loops() {
    // Every outer iteration starts from the same set of visible values.
    values_.clear();
    for (int li = 0; li < k_.loops_size(); ++li) {
      absl::Status s = Loop(k_.loops(li));
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat("loop ", li, " ", s.message()));
    }
    return absl::OkStatus();
  }

  absl::Status Loop(const proto::Loop& l) {
    if (l.ranges_size() == 0) {
      inner_.clear();
      return Exprs(l, nullptr, nullptr);
    }
    std::vector<llvm::Value*> ranges;
    for (const proto::SymExpr& r : l.ranges()) {
      absl::StatusOr<llvm::Value*> v = EntryExpr(r);
      if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat("range: ", v.status().message()));
      ranges.push_back(*v);
    }
    // Accumulators, initialized before the nest.
    std::vector<Reduction> reds;
    for (const proto::Expr& e : l.body()) {
      if (e.kind() != proto::Expr::REDUCE) continue;
      absl::StatusOr<Reduction> r = StartReduction(b_, eb_, e, k_, values_);
      if (!r.ok()) {
        return absl::Status(r.status().code(),
                            absl::StrCat("expr ", e.id(), " (REDUCE): ", r.status().message()));
      }
      reds.push_back(*r);
    }
    const auto visible_before = values_;
    inner_.assign(ranges.size(), nullptr);
    ranged_ids_.clear();
    for (const proto::Expr& e : l.body()) ranged_ids_.insert(e.id());
    ranged_loop_ = &l;
    std::function<absl::Status(int)> nest = [&](int d) -> absl::Status {
      if (d == static_cast<int>(ranges.size())) {
        llvm::Value* pos = b_.getInt64(0);  // row-major position within the Loop
        for (size_t j = 0; j < ranges.size(); ++j) {
          pos = b_.CreateAdd(b_.CreateMul(pos, ranges[j]), inner_[j]);
        }
        return Exprs(l, &reds, pos);
      }
      const bool innermost = d + 1 == static_cast<int>(ranges.size());
      return For(
          b_.getInt64(0), ranges[d], absl::StrCat("r", d),
          [&](llvm::Value* iv) {
            inner_[d] = iv;
            return nest(d + 1);
          },
          innermost ? InnerLoopMetadata(reds, ranges[d]) : nullptr);
    };
    if (absl::Status s = nest(0); !s.ok()) return s;
    ranged_ids_.clear();
    ranged_loop_ = nullptr;
    // Only the REDUCE results leave a ranged Loop.
    values_ = visible_before;
    inner_.clear();
    for (const Reduction& r : reds) values_[r.expr->id()] = FinishReduction(b_, r);
    return absl::OkStatus();
  }

  // outer_[0 .. dims) from `flat`, a row-major position over those dims of `ranges`.
  void SetLeadingOuter(llvm::Value* flat, int dims, const std::vector<llvm::Value*>& ranges) {
    for (int d = dims - 1; d > 0; --d) {
      outer_[d] = b_.CreateURem(flat, ranges[d], absl::StrCat("i", d));
      flat = b_.CreateUDiv(flat, ranges[d]);
    }
    if (dims > 0) outer_[0] = flat;
  }

  // A column reduction whose [begin, end) spans every outer dim (Kernel.parallel_dims = rank):
  // positions are rows (all dims but the last) times columns; each row [begin, end) touches gets
  // ColumnTiles over its share of the columns, so one row can divide between threads.
  absl::Status ColumnSegments(const std::vector<llvm::Value*>& ranges) {
    const int rank = static_cast<int>(ranges.size());
    llvm::Value* begin = f_->getArg(0);
    llvm::Value* end = f_->getArg(1);
    llvm::Value* columns = ranges[rank - 1];
    // No columns: [begin, end) is empty; the divisor only has to be nonzero.
    llvm::Value* divisor = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, columns, b_.getInt64(1));
    llvm::Value* rows_end = b_.CreateAdd(end, b_.CreateSub(divisor, b_.getInt64(1)));
    rows_end = b_.CreateUDiv(rows_end, divisor);
    return For(b_.CreateUDiv(begin, divisor), rows_end, "q", [&](llvm::Value* q) -> absl::Status {
      llvm::Value* start = b_.CreateMul(q, columns);
      llvm::Value* lo = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, begin, start);
      llvm::Value* hi =
          b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, end, b_.CreateAdd(start, columns));
      lo = b_.CreateSub(lo, start, "col.lo");  // one statement each: a fixed instruction order
      hi = b_.CreateSub(hi, start, "col.hi");
      SetLeadingOuter(q, rank - 1, ranges);
      return ColumnTiles(lo, hi);
    });
  }

  // [Note: column reductions] A reduction over the rows of a row-major tensor into its columns (the
  // squeeze-excitation average pool over an NHWC activation: kernel [N, C], Loop [H, W], x[_i0,
  // _r0, _r1, _i1]) read one element per row, C floats apart, in the default nest
  // (docs/cpu_backend.md). Here the columns [lo, hi) are cut into tiles of kColumnTile; per tile,
  // every REDUCE keeps one accumulator per column (reduction_emitter.h, lanes), the reduction nest
  // runs with the tile's columns as its innermost loop (contiguous loads, vectorized), then the
  // range-less Loops run once per column on its results. Each column still accumulates its rows in
  // the same order, in the same accumulator type.
  absl::Status ColumnTiles(llvm::Value* lo, llvm::Value* hi) {
    const int last = k_.ranges_size() - 1;
    llvm::Value* tile = b_.getInt64(kColumnTile);
    llvm::Value* tiles =
        b_.CreateUDiv(b_.CreateAdd(b_.CreateSub(hi, lo), b_.getInt64(kColumnTile - 1)), tile);
    return For(b_.getInt64(0), tiles, "ct", [&](llvm::Value* t) -> absl::Status {
      llvm::Value* c0 = b_.CreateAdd(lo, b_.CreateMul(t, tile), "c0");
      llvm::Value* n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, tile, b_.CreateSub(hi, c0));
      values_.clear();
      const proto::Loop& l = k_.loops(0);
      std::vector<llvm::Value*> ranges;
      for (const proto::SymExpr& r : l.ranges()) {
        absl::StatusOr<llvm::Value*> v = EntryExpr(r);
        if (!v.ok()) {
          return absl::InvalidArgumentError(absl::StrCat("loop 0 range: ", v.status().message()));
        }
        ranges.push_back(*v);
      }
      std::vector<Reduction> reds;
      for (const proto::Expr& e : l.body()) {
        if (e.kind() != proto::Expr::REDUCE) continue;
        absl::StatusOr<Reduction> r = StartReduction(b_, eb_, e, k_, values_, kColumnTile);
        if (!r.ok()) {
          return absl::Status(r.status().code(), absl::StrCat("loop 0 expr ", e.id(),
                                                              " (REDUCE): ", r.status().message()));
        }
        reds.push_back(*r);
      }
      // Per column j of the tile: `fn` with _i<last> = c0 + j and each REDUCE's lane j.
      auto columns = [&](const std::string& name, llvm::MDNode* md,
                         const std::function<absl::Status(const std::vector<Reduction>&)>& fn) {
        return For(b_.getInt64(0), n, name, [&](llvm::Value* j) {
          outer_[last] = b_.CreateAdd(c0, j);
          std::vector<Reduction> lanes;
          for (const Reduction& r : reds) lanes.push_back(Lane(b_, r, j));
          return fn(lanes);
        }, md);
      };
      absl::Status s = columns("ci", nullptr, [&](const std::vector<Reduction>& lanes) {
        for (const Reduction& r : lanes) Initialize(b_, r);
        return absl::OkStatus();
      });
      if (!s.ok()) return s;
      inner_.assign(ranges.size(), nullptr);
      ranged_ids_.clear();
      for (const proto::Expr& e : l.body()) ranged_ids_.insert(e.id());
      ranged_loop_ = &l;
      std::function<absl::Status(int)> nest = [&](int d) -> absl::Status {
        if (d == static_cast<int>(ranges.size())) {
          return columns("cr", InnerLoopMetadata(reds, n), [&](std::vector<Reduction> lanes) {
            absl::Status s = Exprs(l, &lanes, b_.getInt64(0));
            return s.ok() ? s : absl::Status(s.code(), absl::StrCat("loop 0 ", s.message()));
          });
        }
        return For(b_.getInt64(0), ranges[d], absl::StrCat("r", d), [&](llvm::Value* iv) {
          inner_[d] = iv;
          return nest(d + 1);
        });
      };
      if (s = nest(0); !s.ok()) return s;
      ranged_ids_.clear();
      ranged_loop_ = nullptr;
      inner_.clear();
      return columns("ce", nullptr, [&](const std::vector<Reduction>& lanes) -> absl::Status {
        values_.clear();
        for (const Reduction& r : lanes) values_[r.expr->id()] = FinishReduction(b_, r);
        for (int li = 1; li < k_.loops_size(); ++li) {
          absl::Status s = Loop(k_.loops(li));
          if (!s.ok()) return absl::Status(s.code(), absl::StrCat("loop ", li, " ", s.message()));
        }
        return absl::OkStatus();
      });
    });
  }

  // [Note: f64 sums of f32 values] A float sum accumulates in f64 lanes, and the loop
  // vectorizer then picks the f64 vector width (4 lanes with AVX2), which also sets the width
  // of all the f32 work in the loop (an exp, for softmax): half the f32 lanes idle. Such loops
  // ask for the f32 width (llvm.loop.vectorize.width = register bits / 32): the f32 work runs
  // full width and each f64 accumulator spans two registers. A hint, not a force: a loop that
  // cannot be vectorized stays scalar; LLVM reports it as a remark, which the backend keeps in
  // the kernel's compiler_remarks (compiler_remarks.h) instead of printing it.
  llvm::MDNode* InnerLoopMetadata(const std::vector<Reduction>& reds, llvm::Value* trip) {
    bool widened = false;
    for (const Reduction& r : reds) widened = widened || r.f32_sum_in_f64;
    return LoopMetadata(widened && info_.vector_bits >= 64 ? info_.vector_bits / 32 : 0, 0,
                        MaskedTail(trip));
  }

  // [Note: masked tails] A short row whose length is not a multiple of the vector width (40
  // floats at 16 lanes) leaves its last elements to a scalar remainder loop, which costs more
  // than the vector part. With AVX-512 masked loads and stores are cheap, so such loops ask the
  // vectorizer to fold the tail into the vector loop under a mask
  // (llvm.loop.vectorize.predicate.enable): constant trip counts below 16 vectors that are not
  // a whole number of vectors.
  bool MaskedTail(llvm::Value* trip) const {
    const auto* c = llvm::dyn_cast<llvm::ConstantInt>(trip);
    const int64_t lanes = info_.vector_bits / 32;
    if (c == nullptr || info_.vector_bits < 512) return false;
    const int64_t n = c->getSExtValue();
    return n > 0 && n % lanes != 0 && n < 16 * lanes;
  }

  llvm::MDNode* LoopMetadata(int width, int interleave, bool masked_tail = false) {
    return VectorizerHints(c_, width, interleave, masked_tail);
  }

  absl::Status Exprs(const proto::Loop& l, std::vector<Reduction>* reds, llvm::Value* pos) {
    int red_index = 0;
    for (const proto::Expr& e : l.body()) {
      absl::Status s;
      if (e.kind() == proto::Expr::REDUCE) {
        if (reds == nullptr) {
          s = absl::InvalidArgumentError("REDUCE in a Loop without ranges");
        } else {
          s = Accumulate((*reds)[red_index++], pos);
        }
      } else {
        s = Expr(e);
      }
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("expr ", e.id(), " (",
                                                   proto::Expr::Kind_Name(e.kind()),
                                                   "): ", s.message()));
      }
    }
    return absl::OkStatus();
  }

  // ---- Expressions. ----
  absl::Status Define(const proto::Expr& e, llvm::Value* v) {
    if (e.id() <= 0) return absl::InvalidArgumentError("expression ids must be >= 1");
    values_[e.id()] = TypedValue{v, e.dtype()};
    return absl::OkStatus();
  }

  absl::Status Expr(const proto::Expr& e) {
    if (e.kind() != proto::Expr::STORE && RegType(c_, e.dtype()) == nullptr) {
      return absl::InvalidArgumentError("has no valid dtype");
    }
    switch (e.kind()) {
      case proto::Expr::LOAD: return Load(e);
      case proto::Expr::LITERAL:
        return Define(e, IsFloating(e.dtype()) ? EmitConstant(b_, e.dtype(), e.literal(), 0)
                                               : EmitConstant(b_, e.dtype(), 0, e.int_literal()));
      case proto::Expr::INDEX: {
        absl::StatusOr<llvm::Value*> v = Index(e.value());
        if (!v.ok()) return v.status();
        return Define(e, EmitConvert(b_, {*v, proto::INT64}, e.dtype()));
      }
      case proto::Expr::RANDOM: {
        if (!IsFloating(e.dtype())) return absl::InvalidArgumentError("RANDOM needs a floating dtype");
        absl::StatusOr<llvm::Value*> v = Index(e.value());
        if (!v.ok()) return v.status();
        return Define(e, EmitPhiloxUniform(b_, e.seed(), *v, e.dtype()));
      }
      case proto::Expr::APPLY: return Apply(e);
      case proto::Expr::STORE: {
        if (e.args_size() != 1) return absl::InvalidArgumentError("STORE takes 1 arg");
        absl::StatusOr<TypedValue> x = Use(e.args(0));
        if (!x.ok()) return x.status();
        llvm::Value* guard;
        absl::StatusOr<std::pair<llvm::Value*, DType>> a = Address(e, &guard);
        if (!a.ok()) return a.status();
        EmitGuarded(b_, guard, nullptr, [&]() -> llvm::Value* {
          scopes_.Tag(EmitStoreElement(b_, a->first, a->second, *x), e.buffer());
          return nullptr;
        });
        return absl::OkStatus();
      }
      default:
        return absl::InvalidArgumentError("unknown expression kind");
    }
  }

  // The masked-off value: the interpreter's FromDouble(literal, dtype).
  llvm::Value* MaskedLiteral(const proto::Expr& e) {
    const double d = e.literal();
    if (IsFloating(e.dtype())) return EmitConstant(b_, e.dtype(), d, 0);
    if (IsBool(e.dtype())) return EmitConstant(b_, e.dtype(), 0, d != 0.0);
    int64_t i = std::isnan(d)                           ? 0
                : d >= 9.2233720368547758e18            ? INT64_MAX
                : d <= -9.2233720368547758e18           ? INT64_MIN
                                                        : static_cast<int64_t>(d);
    return EmitConstant(b_, e.dtype(), 0, i);
  }

  // [Note: scalar loads before the loop] A 0-d buffer the kernel never stores into is read
  // once, in the entry block. Read in the loop, its load could not be hoisted when the buffers
  // may alias (all of AdamW's are caller inputs, one alias class), so whatever it feeds stayed
  // in the loop too: AdamW's bias corrections (exp, division, sqrt in f64 of the step count)
  // kept the p update at 4 f32 lanes (the f64 math sets the vectorization factor), where the
  // same loop without them runs at 16. Reading it first is the value it had before the kernel
  // wrote anything, the functional graph's meaning even if a caller passes a view of a tensor
  // the kernel writes.
  absl::StatusOr<llvm::Value*> ScalarBeforeLoops(int id) {
    auto cached = scalar_loads_.find(id);
    if (cached != scalar_loads_.end()) return cached->second;
    for (const proto::Loop& l : k_.loops()) {
      for (const proto::Expr& x : l.body()) {
        if (x.kind() == proto::Expr::STORE && x.buffer() == id) {
          return scalar_loads_[id] = nullptr;
        }
      }
    }
    absl::StatusOr<BufferVals*> bv = Buffer(id);
    if (!bv.ok()) return bv.status();
    llvm::Instruction* access = nullptr;
    llvm::Value* v = EmitLoadElement(eb_, (*bv)->base, (*bv)->buf->dtype(), &access);
    scopes_.Tag(access, id);
    return scalar_loads_[id] = v;
  }

  absl::Status Load(const proto::Expr& e) {
    if (e.mask() == 0 && e.index_size() == 0) {
      absl::StatusOr<BufferVals*> bv = Buffer(e.buffer());
      if (!bv.ok()) return bv.status();
      if ((*bv)->buf->shape_size() == 0) {
        absl::StatusOr<llvm::Value*> v = ScalarBeforeLoops(e.buffer());
        if (!v.ok()) return v.status();
        if (*v != nullptr) return Define(e, EmitConvert(b_, {*v, (*bv)->buf->dtype()}, e.dtype()));
      }
    }
    if (e.mask() == 0) {
      llvm::Value* guard;
      absl::StatusOr<std::pair<llvm::Value*, DType>> a = Address(e, &guard);
      if (!a.ok()) return a.status();
      return Define(e, EmitGuarded(b_, guard, EmitConstant(b_, e.dtype(), 0, 0), [&] {
                      llvm::Instruction* access = nullptr;
                      llvm::Value* v = EmitLoadElement(b_, a->first, a->second, &access);
                      scopes_.Tag(access, e.buffer());
                      return EmitConvert(b_, {v, a->second}, e.dtype());
                    }));
    }
    // Masked: the address is computed and read only where the mask holds.
    absl::StatusOr<TypedValue> m = Use(e.mask());
    if (!m.ok()) return m.status();
    if (IsFloating(m->dt)) return absl::InvalidArgumentError("mask is not bool");
    llvm::Value* cond = EmitConvert(b_, *m, proto::BOOL);
    llvm::Value* other = MaskedLiteral(e);
    llvm::BasicBlock* from = b_.GetInsertBlock();
    auto* then = llvm::BasicBlock::Create(c_, "masked.load", f_);
    auto* merge = llvm::BasicBlock::Create(c_, "masked.merge", f_);
    b_.CreateCondBr(cond, then, merge);
    b_.SetInsertPoint(then);
    llvm::Value* guard;
    absl::StatusOr<std::pair<llvm::Value*, DType>> a = Address(e, &guard);
    if (!a.ok()) return a.status();
    llvm::Value* v = EmitGuarded(b_, guard, EmitConstant(b_, e.dtype(), 0, 0), [&] {
      llvm::Instruction* access = nullptr;
      llvm::Value* loaded = EmitLoadElement(b_, a->first, a->second, &access);
      scopes_.Tag(access, e.buffer());
      return EmitConvert(b_, {loaded, a->second}, e.dtype());
    });
    llvm::BasicBlock* then_end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
    llvm::PHINode* phi = b_.CreatePHI(v->getType(), 2);
    phi->addIncoming(v, then_end);
    phi->addIncoming(other, from);
    return Define(e, phi);
  }

  absl::Status Apply(const proto::Expr& e) {
    std::vector<TypedValue> args;
    for (int a : e.args()) {
      absl::StatusOr<TypedValue> v = Use(a);
      if (!v.ok()) return v.status();
      args.push_back(*v);
    }
    if (args.empty()) return absl::InvalidArgumentError("APPLY without arguments");
    if (e.op() == "prims.convert_element_type") {
      if (args.size() != 1) return absl::InvalidArgumentError("convert_element_type takes 1 arg");
      return Define(e, EmitConvert(b_, args[0], e.dtype()));
    }
    std::optional<ScalarOp> op = ScalarOpFromName(e.op());
    if (!op.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("'", e.op(), "' is not an elementwise prim"));
    }
    if (static_cast<int>(args.size()) != ScalarOpArity(*op)) {
      return absl::InvalidArgumentError(absl::StrCat(e.op(), " takes ", ScalarOpArity(*op),
                                                     " args, got ", args.size()));
    }
    if ((*op == ScalarOp::kDiv || *op == ScalarOp::kRemainder || *op == ScalarOp::kFmod) &&
        !IsFloating(args.back().dt)) {  // the integral path: a divisor of 0 is an error
      checks_.NonZero(b_, EmitToI64(b_, args[1]),
                      *op == ScalarOp::kDiv         ? COIL_KERNEL_INT_DIV_BY_ZERO
                      : *op == ScalarOp::kRemainder ? COIL_KERNEL_INT_REM_BY_ZERO
                                                    : COIL_KERNEL_INT_FMOD_BY_ZERO,
                      absl::StrCat("expr ", e.id(), " (", e.op(), ")"));
    }
    if (*op == ScalarOp::kPow && IsIntegral(args[0].dt) && IsIntegral(args[1].dt)) {
      checks_.NonNegativeExponent(b_, EmitToI64(b_, args[1]),
                                  absl::StrCat("expr ", e.id(), " (", e.op(), ")"));
    }
    absl::StatusOr<TypedValue> r = EmitApply(b_, *op, args, e.dtype());
    if (!r.ok()) return r.status();
    // [Note: division by a row value] Inside a ranged Loop, a division by a value of an earlier
    // Loop (softmax's sum, a norm) whose quotient is only stored into a floating buffer may use
    // the reciprocal (arcp): LICM then computes 1/s once per row and the loop multiplies. At
    // most 1 ulp more error than the exact quotient, as PyTorch's own vectorized softmax
    // (docs/cpu_backend.md, "Fast-math"). A quotient that is rounded, compared or converted
    // (DynamicQuantizeLinear's round(x / scale)) stays exact: 1 ulp can cross a boundary.
    if (*op == ScalarOp::kDiv && !ranged_ids_.empty() && !ranged_ids_.contains(e.args(1)) &&
        OnlyStoredAsFloat(e.id())) {
      if (auto* div = llvm::dyn_cast<llvm::Instruction>(r->v);
          div != nullptr && div->getOpcode() == llvm::Instruction::FDiv) {
        div->setHasAllowReciprocal(true);
      }
    }
    return Define(e, r->v);
  }

  // Whether every use of expression `id` in the current ranged Loop is a STORE of it into a
  // buffer of a floating dtype (and there is at least one).
  bool OnlyStoredAsFloat(int id) {
    if (ranged_loop_ == nullptr) return false;
    int stores = 0;
    for (const proto::Expr& x : ranged_loop_->body()) {
      bool uses = false;
      for (int a : x.args()) uses = uses || a == id;
      if (!uses) continue;
      if (x.kind() != proto::Expr::STORE) return false;
      absl::StatusOr<BufferVals*> b = Buffer(x.buffer());
      if (!b.ok() || !IsFloating((*b)->buf->dtype())) return false;
      ++stores;
    }
    return stores > 0;
  }

  // One iteration's update of a REDUCE's accumulator (reduction_emitter.h).
  absl::Status Accumulate(const Reduction& r, llvm::Value* pos) {
    absl::StatusOr<TypedValue> in = Use(r.expr->args(0));
    if (!in.ok()) return in.status();
    codegen_cpu_internal::Accumulate(b_, r, *in, pos);
    return absl::OkStatus();
  }

  const proto::Kernel& k_;
  const ScheduleInfo& info_;
  llvm::Module& m_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;   // the loop body
  llvm::IRBuilder<> eb_;  // the entry block (loop-invariant values, allocas)
  const AliasScopes scopes_;
  RuntimeChecks checks_;  // bound to the function's error argument in Run
  llvm::Function* f_ = nullptr;
  absl::flat_hash_map<int, llvm::Value*> sym_values_;
  absl::flat_hash_map<int, BufferVals> buffers_;
  // 0-d buffers read in the entry block (nullptr: stored by the kernel, read where used).
  absl::flat_hash_map<int, llvm::Value*> scalar_loads_;
  std::vector<llvm::Value*> outer_;  // _i<d>
  // A flat pointwise kernel's position (then every non-scalar access is at it; outer_ unset).
  llvm::Value* flat_ = nullptr;
  std::vector<llvm::Value*> inner_;  // _r<d> of the current Loop
  // The expression ids of the ranged Loop being emitted (empty outside one).
  absl::flat_hash_set<int> ranged_ids_;
  const proto::Loop* ranged_loop_ = nullptr;
  // Body() chose ColumnSegments: the columns are the innermost loop (InnermostLoopVars).
  bool column_segments_ = false;
  absl::flat_hash_map<int, TypedValue> values_;
};

}  // namespace

ScheduleInfo MakeScheduleInfo(const proto::Schedule& schedule, const llvm::TargetMachine& tm) {
  ScheduleInfo info;
  info.vector_bits = VectorRegisterBits(tm);
  for (int i = 0; i < schedule.graph().symbols_size(); ++i) {
    info.symbol_index.emplace(schedule.graph().symbols(i).name(), i);
  }
  for (const proto::Buffer& b : schedule.buffers()) info.buffers.emplace(b.id(), &b);
  return info;
}

absl::StatusOr<llvm::Function*> EmitKernel(const proto::Kernel& kernel, const std::string& symbol,
                                           const ScheduleInfo& info, llvm::Module& module) {
  return KernelEmitter(kernel, info, module).Run(symbol);
}

}  // namespace coil::codegen_cpu_internal
