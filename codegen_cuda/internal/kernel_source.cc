// Schedule kernel -> CUDA C++ __global__ function (see kernel_source.h).
#include "codegen_cuda/internal/kernel_source.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "codegen_cuda/internal/index_source.h"
#include "codegen_cuda/internal/narrow_div.h"
#include "codegen_cuda/internal/packed_pairs.h"
#include "codegen_cuda/internal/reduction_source.h"
#include "codegen_cuda/internal/row_cache.h"
#include "codegen_cuda/internal/row_prefetch.h"
#include "codegen_cuda/internal/row_division.h"
#include "codegen_cuda/internal/value_source.h"
#include "runtime/cuda/kernel_abi.h"
#include "runtime/reference/prims_scalar.h"

namespace coil::codegen_cuda_internal {
namespace {

static_assert(cuda::kCudaBlockThreads == 256, "the prelude's COIL_BLOCK_WARPS is 256 / 32");

void CollectNames(const proto::SymExpr& e, absl::flat_hash_set<std::string>& out) {
  if (e.kind() == proto::SymExpr::SYMBOL) out.insert(e.name());
  for (const proto::SymExpr& a : e.args()) CollectNames(a, out);
}

class Emitter {
 public:
  Emitter(const proto::Kernel& k, const ScheduleInfo& info) : k_(k), info_(info) {}

  absl::StatusOr<KernelSource> Run() {
    absl::Status s = Emit();
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("kernel ", k_.id(), " '", k_.name(), "': ", s.message()));
    }
    return std::move(out_);
  }

 private:
  absl::Status Emit() {
    for (const proto::Loop& l : k_.loops()) out_.rows = out_.rows || l.ranges_size() > 0;
    out_.warp_rows = out_.rows && WarpRows(k_, info_);
    absl::flat_hash_set<std::string> names;
    ForEachSymExpr(k_, [&](const proto::SymExpr& e) { CollectNames(e, names); });
    std::vector<int> used_symbols;
    for (const std::string& n : names) {
      int d;
      if (n.size() >= 3 && n[0] == '_' && n[1] == 'v' && absl::SimpleAtoi(n.substr(2), &d)) {
        v_ids_.insert(d);
      }
      auto it = info_.symbol_index.find(n);
      if (it != info_.symbol_index.end()) used_symbols.push_back(it->second);
    }
    // Buffers (and the symbols of their shapes, for bounds and offsets).
    absl::flat_hash_set<int> bufs;
    std::vector<int> first_use;  // bufs in the order the body first uses them
    for (const proto::Loop& l : k_.loops()) {
      for (const proto::Expr& e : l.body()) {
        if (e.kind() != proto::Expr::LOAD && e.kind() != proto::Expr::STORE) continue;
        if (LiteralLoad(e)) continue;  // no slot: the kernel never reads the buffer
        auto it = info_.buffers.find(e.buffer());
        if (it == info_.buffers.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("expr ", e.id(), " refers to unknown buffer ", e.buffer()));
        }
        if (e.index_size() != it->second->shape_size()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "expr ", e.id(), ": buffer ", e.buffer(), " ('", it->second->name(), "') has rank ",
              it->second->shape_size(), ", the index has ", e.index_size(), " dims"));
        }
        if (bufs.insert(e.buffer()).second) {
          first_use.push_back(e.buffer());
          for (const proto::SymExpr& d : it->second->shape()) {
            absl::flat_hash_set<std::string> sn;
            CollectNames(d, sn);
            for (const std::string& n : sn) {
              auto si = info_.symbol_index.find(n);
              if (si == info_.symbol_index.end()) {
                return absl::InvalidArgumentError(
                    absl::StrCat("buffer ", e.buffer(), " shape names unknown symbol '", n, "'"));
              }
              used_symbols.push_back(si->second);
            }
          }
        }
      }
    }
    for (const proto::Loop& l : k_.loops()) {
      for (const proto::Expr& e : l.body()) {
        defs_[e.id()] = &e;
        for (int a : e.args()) ++uses_[a], readers_[a].push_back(e.id());
        if (e.mask() != 0) ++uses_[e.mask()], readers_[e.mask()].push_back(e.id());
      }
    }
    // 32-bit index math when everything is constant and bounded (kernel_source.h).
    out_.index64 = !v_ids_.empty() || !IndexMathFitsInt32(k_, info_.buffers, bufs);
    DecideVector();
    if (out_.rows) cache_ = PlanRowCache(k_, info_, out_.warp_rows);
    out_.cached_loads = static_cast<int>(cache_.slot_dtype.size());
    out_.symbol = cuda::KernelSymbol(k_.id(), out_.items_per_thread);
    const std::string ix = out_.index64 ? "i64" : "int";
    std::string& o = out_.text;
    absl::StrAppend(
        &o, "// kernel ", k_.id(), " '", k_.name(), "' (", proto::Kernel::Kind_Name(k_.kind()),
        !out_.rows       ? ""
        : out_.warp_rows ? ", a warp per row"
                         : ", a block per row",
        out_.items_per_thread > 1 ? absl::StrCat(", ", out_.items_per_thread, " per thread, ",
                                                 vec_.size(), " vector accesses")
                                  : "",
        cache_.iterations > 0
            ? absl::StrCat(", persistent: ", cache_.slot_dtype.size() - cache_.values,
                           " loads kept in registers",
                           cache_.values > 0 ? absl::StrCat(", ", cache_.values, " values") : "")
            : "",
        out_.index64 ? ", 64-bit index" : ", 32-bit index", ")\n");
    const int min_blocks = out_.rows && !out_.warp_rows ? std::max(0, info_.row_min_blocks) : 0;
    absl::StrAppend(&o, "extern \"C\" __global__ void __launch_bounds__(", cuda::kCudaBlockThreads,
                    min_blocks > 0 ? absl::StrCat(", ", min_blocks) : "", ") ", out_.symbol,
                    "(char* const* coil_bufs, const i64* coil_syms, CoilCudaError* coil_err) {\n");
    absl::flat_hash_set<int> declared;
    for (int p : used_symbols) {
      if (declared.insert(p).second) {
        absl::StrAppend(&o, "  const ", ix, " s", p, " = (", ix, ")coil_syms[", p, "];\n");
      }
    }
    // The kernel's own table: slot i holds the i-th buffer the body uses (kernel_abi.h), so
    // kernels that differ only in their buffers have the same code once names are set aside.
    out_.buffers = first_use;
    for (size_t slot = 0; slot < first_use.size(); ++slot) {
      const int id = first_use[slot];
      const proto::Buffer& b = *info_.buffers.at(id);
      if (!IsValidDType(b.dtype())) {
        return absl::InvalidArgumentError(absl::StrCat("buffer ", id, " has no valid dtype"));
      }
      absl::StrAppend(&o, "  ", MemType(b.dtype()), "* b", id, " = (", MemType(b.dtype()),
                      "*)coil_bufs[", slot, "];  // ", b.name(), "\n");
    }
    if (out_.rows && !out_.warp_rows) {
      absl::StrAppend(&o, "  __shared__ float coil_shf[32];\n  __shared__ double coil_shd[32];\n"
                          "  __shared__ i64 coil_shl[32];\n  __shared__ i64 coil_shp[32];\n");
    }
    // Outer ranges and the flat count.
    std::string count = "(i64)1";
    for (int d = 0; d < k_.ranges_size(); ++d) {
      absl::StatusOr<std::string> r = Index(k_.ranges(d));
      if (!r.ok()) return r.status();
      absl::StrAppend(&o, "  const ", ix, " n", d, " = ", *r, ";\n");
      count = absl::StrCat(count, " * n", d);
    }
    absl::StrAppend(&o, "  const ", ix, " coil_n = (", ix, ")(", count, ");\n");
    std::vector<PrefetchedRows> prefetch;  // row_prefetch.h
    const bool block_rows = out_.rows && !out_.warp_rows;
    for (int id : block_rows ? RowPrefetchBuffers(k_, info_) : std::vector<int>()) {
      const proto::Buffer& b = *info_.buffers.at(id);
      absl::StatusOr<std::string> w = Index(b.shape(b.shape_size() - 1));
      if (!w.ok()) return w.status();
      prefetch.push_back({id, *w, MemType(b.dtype())});
    }
    absl::StrAppend(&o, RowPrefetchSetup(prefetch));
    if (out_.rows) {
      // Block per row: blockDim.y is 1. Warp per row: threadIdx.y is the warp's row of the block.
      absl::StrAppend(&o, "  for (", ix, " coil_row = (", ix,
                      ")blockIdx.x * blockDim.y + threadIdx.y;"
                      " coil_row < coil_n; coil_row += (",
                      ix, ")gridDim.x * blockDim.y) {\n");
      Decompose("coil_row", "n", "i", k_.ranges_size(), "    ");
      absl::StrAppend(&o, RowPrefetchIssue(prefetch));
      for (size_t c = 0; c < cache_.slot_dtype.size(); ++c) {
        const std::optional<DType>& raw = cache_.slot_raw[c];
        absl::StrAppend(&o, "    ", raw ? absl::StrCat("__align__(16) ", MemType(*raw))
                                        : RegType(cache_.slot_dtype[c]),
                        " coil_c", c, "[", cache_.iterations, "][", cache_.items, "];\n");
      }
    } else if (out_.items_per_thread > 1) {
      return VectorBody();
    } else {
      absl::StrAppend(&o, "  for (", ix, " coil_lin = (", ix, ")blockIdx.x * blockDim.x + threadIdx.x;"
                      " coil_lin < coil_n; coil_lin += (", ix, ")gridDim.x * blockDim.x) {\n");
      Decompose("coil_lin", "n", "i", k_.ranges_size(), "    ");
    }
    for (int li = 0; li < k_.loops_size(); ++li) {
      absl::Status s = k_.loops(li).ranges_size() > 0 ? RangedLoop(li) : FlatLoop(li);
      if (!s.ok()) return s;
    }
    absl::StrAppend(&o, "  }\n}\n");
    return absl::OkStatus();
  }

  // Vectorized pointwise kernels (kernel_source.h).
  void DecideVector() {
    if (!info_.vectorize || out_.rows) return;
    vec_ = PointwiseVectorAccesses(k_, info_);
    if (!vec_.empty()) out_.items_per_thread = cuda::kCudaVectorItems * info_.vector_groups;
  }

  // The loop of a vectorized pointwise kernel. A thread takes `groups` vectors of 4
  // consecutive indices, blockDim.x vectors apart (each group's accesses coalesce over the
  // warp): first every group's vector loads, so that groups x 16 bytes per input are in flight
  // before any use, then per group the body once per item (each in its own scope, the
  // innermost index advanced) and the vector stores. Loads of a group past the end are
  // skipped, its body is not run.
  absl::Status VectorBody() {
    std::string& o = out_.text;
    const std::string ix = out_.index64 ? "i64" : "int";
    const int v = cuda::kCudaVectorItems;
    const int groups = out_.items_per_thread / v;
    const int last = k_.ranges_size() - 1;
    absl::StrAppend(&o, "  const i64 coil_nv = (i64)coil_n / ", v, ";\n",
                    "  for (i64 coil_q0 = (i64)blockIdx.x * blockDim.x * ", groups,
                    " + threadIdx.x; coil_q0 < coil_nv; coil_q0 += (i64)gridDim.x * blockDim.x * ",
                    groups, ") {\n");
    std::vector<const proto::Expr*> loads, stores;
    for (const proto::Loop& l : k_.loops()) {
      for (const proto::Expr& e : l.body()) {
        if (!vec_.contains(e.id())) continue;
        (e.kind() == proto::Expr::LOAD ? loads : stores).push_back(&e);
      }
    }
    for (const proto::Expr* e : loads) {
      absl::StrAppend(&o, "    __align__(16) ", MemType(info_.buffers.at(e->buffer())->dtype()),
                      " coil_v", e->id(), "[", groups, "][", v, "];\n");
    }
    const std::string group_head = absl::StrCat(
        "    #pragma unroll\n    for (int coil_g = 0; coil_g < ", groups,
        "; ++coil_g) {\n      const i64 coil_q = coil_q0 + (i64)coil_g * blockDim.x;\n");
    if (!loads.empty()) {
      absl::StrAppend(&o, group_head, "      if (coil_q < coil_nv) {\n");
      for (const proto::Expr* e : loads) {
        absl::StrAppend(&o, "        coil_vcopy4(coil_v", e->id(), "[coil_g], &b", e->buffer(),
                        "[(", ix, ")(coil_q * ", v, ")]);\n");
      }
      absl::StrAppend(&o, "      }\n    }\n");
    }
    absl::StrAppend(&o, group_head, "      if (coil_q >= coil_nv) break;\n      const ", ix,
                    " coil_lin = (", ix, ")(coil_q * ", v, ");\n");
    Decompose("coil_lin", "n", "i", k_.ranges_size(), "      ");
    absl::StrAppend(&o, "      const ", ix, " coil_il = i", last, ";\n");
    for (const proto::Expr* e : stores) {
      const DType dt = info_.buffers.at(e->buffer())->dtype();
      absl::StrAppend(&o, "      __align__(16) ", PackedStore(dt) ? "float" : MemType(dt),
                      " coil_v", e->id(), "[", v, "];\n");
    }
    for (int u = 0; u < v; ++u) {
      vec_item_ = u;
      absl::StrAppend(&o, "      {\n      const ", ix, " i", last, " = coil_il + ", u, ";\n");
      for (int li = 0; li < k_.loops_size(); ++li) {
        if (absl::Status s = FlatLoop(li); !s.ok()) return s;
      }
      absl::StrAppend(&o, "      }\n");
      // Every item defines the same expressions: forget them for the next scope.
      for (const proto::Loop& l : k_.loops()) {
        for (const proto::Expr& e : l.body()) dtypes_.erase(e.id());
      }
    }
    vec_item_ = -1;
    for (const proto::Expr* e : stores) {
      absl::StrAppend(&o, "      ", VectorStoreCall(info_.buffers.at(e->buffer())->dtype(), v),
                      "&b", e->buffer(), "[coil_lin], coil_v", e->id(), ");\n");
    }
    absl::StrAppend(&o, "    }\n  }\n}\n");
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Index(const proto::SymExpr& e) {
    return IndexSource(e, info_.symbol_index, out_.index64 ? "i64" : "int");
  }

  // `var` decomposed row-major into <prefix>0.. over the extents <ext>0...
  void Decompose(const std::string& var, const std::string& ext, const std::string& prefix,
                 int rank, const std::string& pad) {
    const std::string ix = out_.index64 ? "i64" : "int";
    if (rank == 0) return;
    absl::StrAppend(&out_.text, pad, ix, " coil_t_", prefix, " = ", var, ";\n");
    for (int d = rank - 1; d >= 1; --d) {
      absl::StrAppend(&out_.text, pad, "const ", ix, " ", prefix, d, " = coil_t_", prefix, " % ",
                      ext, d, "; coil_t_", prefix, " /= ", ext, d, ";\n");
    }
    absl::StrAppend(&out_.text, pad, "const ", ix, " ", prefix, "0 = coil_t_", prefix, ";\n");
  }

  absl::StatusOr<DType> Use(int id) {
    auto it = dtypes_.find(id);
    if (it == dtypes_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("refers to expr ", id, ", not defined before"));
    }
    return it->second;
  }

  // When expression `id` is prims.convert_element_type to `to` (bf16 / f16) of a floating value,
  // read by one STORE alone (no other expression, mask, register slot or index reads it): that
  // value's id and dtype. The store may round the value itself.
  std::optional<std::pair<int, DType>> RoundingOnlyStored(int id, DType to) const {
    auto d = defs_.find(id);
    if (d == defs_.end()) return std::nullopt;
    const proto::Expr& c = *d->second;
    auto u = uses_.find(id);
    if (c.kind() != proto::Expr::APPLY || c.op() != "prims.convert_element_type" ||
        c.dtype() != to || c.args_size() != 1 || u == uses_.end() || u->second != 1 ||
        cache_.slot_of.contains(id) || v_ids_.contains(id) || cache_.dead.contains(id)) {
      return std::nullopt;
    }
    auto t = dtypes_.find(c.args(0));
    if (t == dtypes_.end() || !IsFloating(t->second)) return std::nullopt;
    return std::make_pair(c.args(0), t->second);
  }

  // APPLY div `e` as a multiplication by this reciprocal (narrow_div.h), else nullopt.
  std::optional<float> NarrowDivReciprocal(const proto::Expr& e) const {
    if (!info_.narrow_div_reciprocal || cache_.slot_of.contains(e.id()) || cache_.Reads(e.id()) ||
        v_ids_.contains(e.id())) {
      return std::nullopt;
    }
    return NarrowDivisionReciprocal(e, defs_, uses_, dtypes_, info_,
                                    [&](const proto::Expr& x) { return LiteralLoad(x); });
  }

  bool LiteralLoad(const proto::Expr& e) const { return ScalarConstantLoad(e, info_); }

  // The element of a LOAD / STORE: checks of data-derived indices, then `b<id>[offset]`.
  absl::StatusOr<std::string> Element(const proto::Expr& e, const std::string& pad) {
    if (vec_item_ >= 0 && vec_.contains(e.id())) {
      // Pointwise loads keep every group's vector: [group][item].
      const bool grouped = !out_.rows && e.kind() == proto::Expr::LOAD;
      return absl::StrCat("coil_v", e.id(), grouped ? "[coil_g]" : "", "[", vec_item_, "]");
    }
    const proto::Buffer& b = *info_.buffers.at(e.buffer());
    const std::string ix = out_.index64 ? "i64" : "int";
    std::string offset;
    for (int d = 0; d < e.index_size(); ++d) {
      absl::StatusOr<std::string> idx = Index(e.index(d));
      if (!idx.ok()) return idx.status();
      absl::StatusOr<std::string> size = Index(b.shape(d));
      if (!size.ok()) return size.status();
      std::string x = *idx;
      if (MentionsDataValue(e.index(d))) {
        x = absl::StrCat("x", e.id(), "_", d);
        absl::StrAppend(&out_.text, pad, ix, " ", x, " = ", *idx, ";\n", pad, "if ((u64)(i64)", x,
                        " >= (u64)(i64)(", *size, ")) { coil_fail(coil_err, ",
                        cuda::kCudaIndexOutOfBounds, ", ", k_.id(), ", ", e.id(), ", ", d,
                        ", (i64)", x, ", (i64)(", *size, ")); ", x, " = 0; }\n");
      }
      offset = d == 0 ? absl::StrCat("(", x, ")")
                      : absl::StrCat("(", offset, " * (", *size, ") + (", x, "))");
    }
    if (offset.empty()) offset = "0";
    return absl::StrCat("b", e.buffer(), "[", offset, "]");
  }

  // One expression (not REDUCE) at `pad`; `thread0_stores`: guard stores (range-less Loops of
  // row kernels).
  absl::Status Expr(const proto::Expr& e, bool thread0_stores, const std::string& pad) {
    std::string& o = out_.text;
    const std::string name = absl::StrCat("e", e.id());
    if (e.id() <= 0 || dtypes_.contains(e.id())) {
      return absl::InvalidArgumentError("expression ids must be >= 1 and unique in the kernel");
    }
    if (e.kind() != proto::Expr::STORE && !IsValidDType(e.dtype())) {
      return absl::InvalidArgumentError("has no valid dtype");
    }
    if (e.kind() == proto::Expr::APPLY && cache_.Reads(e.id())) {  // computed by an earlier Loop
      absl::StrAppend(&o, pad, RegType(e.dtype()), " ", name, " = ", CacheSlot(e.id()), ";\n");
      dtypes_[e.id()] = e.dtype();
      PublishV(e.id(), e.dtype(), pad);
      return absl::OkStatus();
    }
    std::vector<DType> arg_dt;
    for (int a : e.args()) {
      absl::StatusOr<DType> d = Use(a);
      if (!d.ok()) return d.status();
      arg_dt.push_back(*d);
    }
    switch (e.kind()) {
      case proto::Expr::LOAD: {
        const proto::Buffer& b = *info_.buffers.at(e.buffer());
        if (Cached(e.id())) {  // persistent rows: loaded by an earlier Loop
          absl::StrAppend(&o, pad, RegType(e.dtype()), " ", name, " = ", CacheSlot(e.id()), ";\n");
          break;
        }
        if (LiteralLoad(e)) {
          // A scalar constant: its value (the one element whatever the index, broadcasts too).
          const ScheduleInfo::Scalar& c = info_.scalar_constants.at(e.buffer());
          absl::StrAppend(&o, pad, "const ", RegType(e.dtype()), " ", name, " = ",
                          ConvertSource(LiteralSource(b.dtype(), c.d, c.i), b.dtype(), e.dtype()),
                          ";\n");
          break;
        }
        absl::StrAppend(&o, pad, RegType(e.dtype()), " ", name, ";\n");
        std::string inner = pad;
        if (e.mask() != 0) {
          absl::StatusOr<DType> m = Use(e.mask());
          if (!m.ok()) return m.status();
          if (IsFloating(*m)) return absl::InvalidArgumentError("mask is not bool");
          absl::StrAppend(&o, pad, "if (e", e.mask(), ") {\n");
          inner = pad + "  ";
        }
        absl::StatusOr<std::string> el = Element(e, inner);
        if (!el.ok()) return el.status();
        std::string value = LoadElementSource(*el, b.dtype());
        if (b.dtype() == proto::BFLOAT16 && vec_item_ >= 0 && vec_.contains(e.id())) {
          // An element of a bf16 vector: from its 32-bit word (coil_bf2f_at).
          const size_t bracket = el->rfind('[');
          value = absl::StrCat("coil_bf2f_at(", el->substr(0, bracket), ", ", vec_item_, ")");
        }
        absl::StrAppend(&o, inner, name, " = ", ConvertSource(value, b.dtype(), e.dtype()), ";\n");
        if (e.mask() != 0) {
          absl::StrAppend(&o, pad, "} else {\n", pad, "  ", name, " = ",
                          LiteralSource(e.dtype(), e.literal(), TruncSatHost(e.literal())),
                          ";\n", pad, "}\n");
        }
        if (cache_.fills.contains(e.id()) && !cache_.Raw(e.id())) {
          absl::StrAppend(&o, pad, CacheSlot(e.id()), " = ", name, ";\n");
        }
        break;
      }
      case proto::Expr::LITERAL:
        absl::StrAppend(&o, pad, "const ", RegType(e.dtype()), " ", name, " = ",
                        LiteralSource(e.dtype(), e.literal(), e.int_literal()), ";\n");
        break;
      case proto::Expr::INDEX:
      case proto::Expr::RANDOM: {
        absl::StatusOr<std::string> v = Index(e.value());
        if (!v.ok()) return v.status();
        std::string value =
            e.kind() == proto::Expr::INDEX
                ? ConvertSource(absl::StrCat("(i64)(", *v, ")"), proto::INT64, e.dtype())
                : ConvertSource(absl::StrCat("coil_philox_uniform(", e.seed(), "LL, (i64)(", *v,
                                             "))"),
                                proto::FLOAT64, e.dtype());
        if (e.kind() == proto::Expr::RANDOM && !IsFloating(e.dtype())) {
          return absl::InvalidArgumentError("RANDOM needs a floating dtype");
        }
        absl::StrAppend(&o, pad, "const ", RegType(e.dtype()), " ", name, " = ", value, ";\n");
        break;
      }
      case proto::Expr::APPLY: {
        if (e.args_size() < 1 || e.args_size() > 3) {
          return absl::InvalidArgumentError("APPLY takes 1 to 3 arguments");
        }
        if (e.op() == "prims.convert_element_type") {
          if (e.args_size() != 1) {
            return absl::InvalidArgumentError("convert_element_type takes 1 arg");
          }
          absl::StrAppend(&o, pad, "const ", RegType(e.dtype()), " ", name, " = ",
                          ConvertSource(absl::StrCat("e", e.args(0)), arg_dt[0], e.dtype()),
                          ";\n");
          break;
        }
        std::optional<ScalarOp> op = ScalarOpFromName(e.op());
        if (!op.has_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("'", e.op(), "' is not an elementwise prim"));
        }
        if (e.args_size() != ScalarOpArity(*op)) {
          return absl::InvalidArgumentError(absl::StrCat(e.op(), " takes ", ScalarOpArity(*op),
                                                         " args, got ", e.args_size()));
        }
        if (std::optional<float> r = *op == ScalarOp::kDiv ? NarrowDivReciprocal(e) : std::nullopt) {
          absl::StrAppend(&o, pad, "const float ", name, " = e", e.args(0), " * ",
                          LiteralSource(proto::FLOAT32, *r, 0), ";  // e", e.args(1),
                          ": rounds as the division (ExactNarrowReciprocal)\n");
          break;
        }
        if (row_divisions_.contains(e.id())) {  // row_division.h
          absl::StrAppend(&o, pad, "const float ", name, " = coil_div_row(e", e.args(0), ", e",
                          e.args(1), ");\n");
          break;
        }
        std::vector<ApplyOperand> args;
        for (int i = 0; i < e.args_size(); ++i) {
          args.push_back({absl::StrCat("e", e.args(i)), arg_dt[i]});
        }
        absl::StatusOr<std::string> s = ApplySource(*op, args, e.dtype(), name, k_.id(), e.id());
        if (!s.ok()) return s.status();
        absl::StrAppend(&o, pad, RegType(e.dtype()), " ", name, ";\n", pad, *s, "\n");
        break;
      }
      case proto::Expr::STORE: {
        if (e.args_size() != 1) return absl::InvalidArgumentError("STORE takes 1 arg");
        const proto::Buffer& b = *info_.buffers.at(e.buffer());
        std::string inner = pad;
        // A STORE a later one overwrites while every load reads the slot only fills it.
        const bool to_memory = !cache_.dropped_stores.contains(e.id());
        if (thread0_stores) {
          absl::StrAppend(&o, pad, "if (threadIdx.x == 0) {\n");
          inner = pad + "  ";
        }
        absl::StatusOr<std::string> el = Element(e, inner);
        if (!el.ok()) return el.status();
        if (to_memory) {
          // A vector store of bf16 / f16 keeps f32 values, packed in pairs when stored.
          const bool packed = vec_item_ >= 0 && vec_.contains(e.id()) && PackedStore(b.dtype());
          std::string value = absl::StrCat("e", e.args(0));
          DType from = arg_dt[0];
          if (packed) {
            // The pair's cvt rounds: a conversion to the buffer's dtype that only this store
            // reads is stored unconverted (its rounding is the same one).
            if (std::optional<std::pair<int, DType>> in = RoundingOnlyStored(e.args(0), b.dtype());
                in.has_value()) {
              value = absl::StrCat("e", in->first);
              from = in->second;
            }
          }
          absl::StrAppend(&o, inner, *el, " = ",
                          packed ? ConvertSource(value, from, proto::FLOAT32)
                                 : StoreValueSource(value, from, b.dtype()),
                          ";\n");
        }
        if (thread0_stores) absl::StrAppend(&o, pad, "}\n");
        if (auto f = cache_.store_fills.find(e.id()); f != cache_.store_fills.end()) {
          // Forwarded: the value a later Loop's LOAD of this element would read.
          absl::StrAppend(
              &o, inner, CacheSlot(e.id()), " = ",
              ConvertSource(ConvertSource(absl::StrCat("e", e.args(0)), arg_dt[0], b.dtype()),
                            b.dtype(), cache_.slot_dtype[f->second]),
              ";\n");
        }
        return absl::OkStatus();  // defines no value
      }
      default:
        return absl::InvalidArgumentError("unknown expression kind");
    }
    if (e.kind() == proto::Expr::APPLY && cache_.fills.contains(e.id())) {
      absl::StrAppend(&o, pad, CacheSlot(e.id()), " = ", name, ";\n");
    }
    dtypes_[e.id()] = e.dtype();
    PublishV(e.id(), e.dtype(), pad);
    return absl::OkStatus();
  }

  // _v<id>: the value as an int64 index variable.
  void PublishV(int id, DType dt, const std::string& pad) {
    if (!v_ids_.contains(id)) return;
    absl::StrAppend(&out_.text, pad, "const i64 v", id, " = ",
                    ToI64Source(absl::StrCat("e", id), dt), ";\n");
  }

  absl::Status ExprAt(int li, const proto::Expr& e, bool thread0_stores, const std::string& pad) {
    absl::Status s = Expr(e, thread0_stores, pad);
    if (s.ok()) return s;
    return absl::Status(s.code(), absl::StrCat("loop ", li, " expr ", e.id(), " (",
                                               proto::Expr::Kind_Name(e.kind()), "): ",
                                               s.message()));
  }

  absl::Status FlatLoop(int li) {
    for (const proto::Expr& e : k_.loops(li).body()) {
      if (e.kind() == proto::Expr::REDUCE) {
        return absl::InvalidArgumentError(
            absl::StrCat("loop ", li, " expr ", e.id(), ": REDUCE in a Loop without ranges"));
      }
      if (absl::Status s = ExprAt(li, e, out_.rows, "    "); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  struct Acc {
    const proto::Expr* e = nullptr;
    Red op = Red::kSum;
    DType acc_dt = proto::FLOAT32;  // FLOAT32, FLOAT64 or INT64
    std::string type;               // its C type
  };

  // A ranged Loop's body once per item of a position group (`items` > 1: each in its own scope,
  // the innermost position advanced), its REDUCEs accumulating (declarations to `decls`).
  absl::Status Items(int li, int items, std::vector<Acc>& accs, std::string& decls,
                     const std::string& pad, const std::string& ix) {
    std::string& o = out_.text;
    const proto::Loop& l = k_.loops(li);
    for (int u = 0; u < items; ++u) {
      std::string body_pad = pad + "  ";
      if (items > 1) {
        vec_item_ = u;
        absl::StrAppend(&o, body_pad, "{\n", body_pad, "const ", ix, " r", l.ranges_size() - 1,
                        " = coil_rl + ", u, ";\n", body_pad, "const ", ix, " coil_p = coil_p0 + ",
                        u, ";\n");
        for (const proto::Expr& e : l.body()) {
          if (e.kind() != proto::Expr::REDUCE) dtypes_.erase(e.id());
        }
      }
      for (const proto::Expr& e : l.body()) {
        // Dead: feeds only a value read from its slot; packed: computed on pairs after the items.
        if (cache_.dead.contains(e.id()) || packed_.exprs.contains(e.id())) continue;
        if (e.kind() != proto::Expr::REDUCE) {
          if (absl::Status s = ExprAt(li, e, false, body_pad); !s.ok()) return s;
          continue;
        }
        Acc* a = nullptr;
        for (Acc& x : accs) {
          if (x.e == &e) a = &x;
        }
        absl::StatusOr<DType> in = Use(e.args(0));
        if (!in.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("loop ", li, " expr ", e.id(), ": ", in.status().message()));
        }
        a->acc_dt = AccumulatorDType(*in);
        a->type = RegType(a->acc_dt);
        const ReductionText t = AccumulateSource(a->op, e.id(), absl::StrCat("e", e.args(0)),
                                                 a->acc_dt);
        // Vectorized: the accumulators are declared once (the first item's pass).
        if (u == 0) absl::StrAppend(&decls, pad, t.decl, "\n");
        absl::StrAppend(&o, body_pad, t.update, "\n");
      }
      absl::StrAppend(&o, PackedStash(packed_, u, body_pad));
      if (items > 1) absl::StrAppend(&o, body_pad, "}\n");
    }
    return absl::OkStatus();
  }

  absl::Status RangedLoop(int li) {
    const proto::Loop& l = k_.loops(li);
    std::string& o = out_.text;
    const std::string ix = out_.index64 ? "i64" : "int";
    // Accumulators, declared at row scope with their results.
    std::vector<Acc> accs;
    for (const proto::Expr& e : l.body()) {
      if (e.kind() != proto::Expr::REDUCE) continue;
      std::optional<Red> op = RedFromName(e.op());
      if (!op.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("loop ", li, " expr ", e.id(), ": unknown reduction '", e.op(), "'"));
      }
      if (e.args_size() != 1 || !IsValidDType(e.dtype())) {
        return absl::InvalidArgumentError(
            absl::StrCat("loop ", li, " expr ", e.id(), ": REDUCE takes 1 arg and a dtype"));
      }
      accs.push_back({&e, *op});
    }
    const std::string pad = "      ";
    absl::StrAppend(&o, "    // loop ", li, "\n");
    for (const Acc& a : accs) {
      absl::StrAppend(&o, "    ", RegType(a.e->dtype()), " e", a.e->id(), ";\n");
    }
    absl::StrAppend(&o, "    {\n");
    std::string count = "(i64)1";
    for (int d = 0; d < l.ranges_size(); ++d) {
      absl::StatusOr<std::string> r = Index(l.ranges(d));
      if (!r.ok()) return r.status();
      absl::StrAppend(&o, pad, "const ", ix, " m", d, " = ", *r, ";\n");
      count = absl::StrCat(count, " * m", d);
    }
    absl::StrAppend(&o, pad, "const ", ix, " coil_m = (", ix, ")(", count, ");\n");
    // The accumulators' types need their argument's dtype: declared when the body reaches them.
    const size_t decl_at = o.size();
    std::string decls_all;
    const bool persistent = cache_.iterations > 0;
    if (persistent) {
      absl::StrAppend(&o, pad, "#pragma unroll\n");
    } else if (info_.row_unroll > 1) {
      absl::StrAppend(&o, pad, "#pragma unroll ", info_.row_unroll, "\n");
    }
    // Vectorized (RowVector): 4 or 8 consecutive positions per thread, vector accesses as one.
    const RowVector rv = RowVectorAccesses(k_, l, info_);
    const absl::flat_hash_set<int>& flat = rv.accesses;
    const int items = rv.items;
    const std::string vcopy = absl::StrCat("coil_vcopy", items, "(");
    std::vector<const proto::Expr*> vstores;
    // Persistent: the same positions per thread in every Loop, group coil_j of `iterations`.
    const std::string persistent_loop = persistent ? PersistentLoopHead(cache_, ix, pad) : "";
    if (items == 1) {
      absl::StrAppend(&o, pad,
                      persistent ? persistent_loop
                                 : absl::StrCat("for (", ix, " coil_p = threadIdx.x; coil_p < "
                                                "coil_m; coil_p += blockDim.x) {\n"));
      Decompose("coil_p", "m", "r", l.ranges_size(), pad + "  ");
    } else {
      const int last = l.ranges_size() - 1;
      absl::StrAppend(
          &o, pad,
          persistent ? persistent_loop
                     : absl::StrCat("for (", ix, " coil_pv = threadIdx.x; coil_pv < coil_m / ",
                                    items, "; coil_pv += blockDim.x) {\n"),
          pad, "  const ", ix, " coil_p0 = coil_pv * ", items, ";\n");
      Decompose("coil_p0", "m", "r", l.ranges_size(), pad + "  ");
      absl::StrAppend(&o, pad, "  const ", ix, " coil_rl = r", last, ";\n");
      for (const proto::Expr& e : l.body()) {
        if (!flat.contains(e.id()) || Cached(e.id()) || cache_.dead.contains(e.id()) ||
            cache_.dropped_stores.contains(e.id())) {
          continue;
        }
        const proto::Buffer& b = *info_.buffers.at(e.buffer());
        absl::StatusOr<std::string> el = Element(e, pad + "  ");
        if (!el.ok()) return el.status();
        const bool packed = e.kind() == proto::Expr::STORE && PackedStore(b.dtype());
        absl::StrAppend(&o, pad, "  __align__(16) ", packed ? "float" : MemType(b.dtype()),
                        " coil_v", e.id(), "[", items, "];\n");
        if (e.kind() == proto::Expr::LOAD) {  // from memory, or a raw slot; filling it
          const std::string slot = cache_.Raw(e.id()) ? cache_.RawVector(e.id()) : "";
          const bool fill = cache_.fills.contains(e.id());
          const std::string v = absl::StrCat("coil_v", e.id());
          absl::StrAppend(&o, pad, "  ", vcopy, v, ", ",
                          !slot.empty() && !fill ? slot : absl::StrCat("&", *el), ");\n");
          if (!slot.empty() && fill) absl::StrAppend(&o, pad, "  ", vcopy, slot, ", ", v, ");\n");
        } else {
          vstores.push_back(&e);
        }
      }
      vec_ = flat;
    }
    // Row divisions (row_division.h): coil_div_row when the group's dividends are in range.
    // Packed pairs (packed_pairs.h): the tail of bf16 / f16 arithmetic on pairs of positions.
    if (info_.packed_pairs) {
      packed_ = PlanPackedPairs(l, items, vstores, defs_, readers_, cache_, v_ids_, info_);
    }
    absl::StrAppend(&o, PackedStashDeclarations(packed_, items, pad + "  "));
    const RowDivisions divisions =
        info_.row_division ? PlanRowDivisions(l, items, cache_, vec_, dtypes_, info_, defs_)
                           : RowDivisions();
    if (!divisions.divisions.empty()) {
      absl::StrAppend(&o, pad, "  if (", divisions.condition, ") {\n");
    }
    row_divisions_ = divisions.divisions;
    if (absl::Status s = Items(li, items, accs, decls_all, pad, ix); !s.ok()) return s;
    row_divisions_.clear();
    if (!divisions.divisions.empty()) {
      std::string decls_again;  // the accumulators are declared once
      absl::StrAppend(&o, pad, "  } else {\n");
      if (absl::Status s = Items(li, items, accs, decls_again, pad, ix); !s.ok()) return s;
      absl::StrAppend(&o, pad, "  }\n");
    }
    absl::StrAppend(&o, PackedPairsSource(packed_, items, pad + "  "));
    vec_item_ = -1;
    for (const proto::Expr* e : vstores) {
      absl::StatusOr<std::string> el = Element(*e, pad + "  ");
      if (!el.ok()) return el.status();
      const DType dt = info_.buffers.at(e->buffer())->dtype();
      absl::StrAppend(&o, pad, "  ",
                      packed_.exprs.contains(e->id())
                          ? absl::StrCat("coil_vstore_words<", items, ">(&", *el, ", coil_w")
                          : absl::StrCat(PackedStore(dt) ? VectorStoreCall(dt, items) : vcopy,
                                         "&", *el, ", coil_v"),
                      e->id(), ");\n");
    }
    packed_ = PackedPairs();
    vec_.clear();
    absl::StrAppend(&o, pad, "}\n");
    o.insert(decl_at, decls_all);
    // Block (or warp) reductions; every thread gets the results.
    for (const Acc& a : accs) {
      const std::string result = CombineSource(a.op, a.e->id(), a.acc_dt, out_.warp_rows);
      const DType from = (a.op == Red::kArgMax || a.op == Red::kArgMin) ? proto::INT64 : a.acc_dt;
      absl::StrAppend(&o, pad, "e", a.e->id(), " = ", ConvertSource(result, from, a.e->dtype()),
                      ";\n");
    }
    absl::StrAppend(&o, "    }\n");
    for (const Acc& a : accs) {
      dtypes_[a.e->id()] = a.e->dtype();
      PublishV(a.e->id(), a.e->dtype(), "    ");
    }
    return absl::OkStatus();
  }

  // Persistent rows: a LOAD that reads its register slot instead of memory, and that slot's
  // element for the current group and item.
  bool Cached(int id) const { return cache_.Reads(id) && !cache_.Raw(id); }
  std::string CacheSlot(int id) const { return cache_.Slot(id, std::max(vec_item_, 0)); }

  const proto::Kernel& k_;
  const ScheduleInfo& info_;
  KernelSource out_;
  RowCache cache_;
  absl::flat_hash_set<int> v_ids_;
  // Every expression of the kernel by id, and how many expressions read each (args, masks).
  absl::flat_hash_map<int, const proto::Expr*> defs_;
  absl::flat_hash_map<int, int> uses_;
  absl::flat_hash_map<int, std::vector<int>> readers_;  // the expressions that read each
  PackedPairs packed_;  // the ranged Loop being emitted (packed_pairs.h)
  // Vectorized pointwise kernels: the flat accesses (LOAD / STORE ids) and the item being
  // emitted (-1: none).
  absl::flat_hash_set<int> vec_;
  int vec_item_ = -1;
  // The ranged Loop whose items are being emitted with row divisions (row_division.h).
  absl::flat_hash_set<int> row_divisions_;
  // Defined expressions (REDUCE results once their Loop ends) -> dtype.
  absl::flat_hash_map<int, DType> dtypes_;
};

}  // namespace

absl::StatusOr<KernelSource> EmitKernelSource(const proto::Kernel& kernel,
                                              const ScheduleInfo& info) {
  return Emitter(kernel, info).Run();
}

}  // namespace coil::codegen_cuda_internal
