// Loop IR helpers and conversion to the Schedule protobuf.
#include "inductor/loop_ir.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"

namespace coil::inductor {

namespace {

// Loop and inner-loop variables of the first kMaxCachedVars dimensions, made once: lowering asks
// for them for every index of every kernel, and a SymExpr is immutable and shared.
constexpr int kMaxCachedVars = 16;

std::vector<SymExpr> MakeVars(const char* prefix) {
  std::vector<SymExpr> vars;
  for (int d = 0; d < kMaxCachedVars; ++d) vars.push_back(SymExpr::Symbol(absl::StrCat(prefix, d)));
  return vars;
}

}  // namespace

SymExpr LoopVar(int d) {
  static const std::vector<SymExpr>* vars = new std::vector<SymExpr>(MakeVars("_i"));
  if (d >= 0 && d < kMaxCachedVars) return (*vars)[d];
  return SymExpr::Symbol(absl::StrCat("_i", d));
}

SymExpr InnerVar(int d) {
  static const std::vector<SymExpr>* vars = new std::vector<SymExpr>(MakeVars("_r"));
  if (d >= 0 && d < kMaxCachedVars) return (*vars)[d];
  return SymExpr::Symbol(absl::StrCat("_r", d));
}

SymExpr ValueVar(int expr_id) { return SymExpr::Symbol(absl::StrCat("_v", expr_id)); }

bool IsLoopVarName(absl::string_view name) {
  return name.size() >= 3 && name[0] == '_' &&
         (name[1] == 'i' || name[1] == 'r' || name[1] == 'v');
}

SymExpr Buffer::NumElements() const {
  SymExpr n(1);
  for (const SymExpr& d : shape) n = n * d;
  return n;
}

SymExpr Buffer::SizeBytes() const { return NumElements() * SymExpr(ElementSize(dtype)); }

Kernel Kernel::Pointwise(std::string name, std::vector<SymExpr> ranges) {
  Kernel k;
  k.name = std::move(name);
  k.kind = proto::Kernel::POINTWISE;
  k.ranges = std::move(ranges);
  k.loops.emplace_back();
  return k;
}

int Kernel::next_id() const {
  int id = 0;
  for (const Loop& l : loops) {
    for (const Expr& e : l.body) id = std::max(id, e.id);
  }
  return id + 1;
}

int Kernel::Append(int loop, Expr e) {
  COIL_CHECK(loop >= 0 && loop < static_cast<int>(loops.size())) << "no loop " << loop;
  e.id = next_id();
  loops[loop].body.push_back(std::move(e));
  return loops[loop].body.back().id;
}

int Kernel::Load(int loop, int buffer, DType dtype, std::vector<SymExpr> index, int mask,
                 double masked_value) {
  Expr e;
  e.kind = proto::Expr::LOAD;
  e.dtype = dtype;
  e.buffer = buffer;
  e.index = std::move(index);
  e.mask = mask;
  e.literal = masked_value;
  return Append(loop, std::move(e));
}

int Kernel::Literal(int loop, DType dtype, double value) {
  Expr e;
  e.kind = proto::Expr::LITERAL;
  e.dtype = dtype;
  if (IsFloating(dtype)) {
    e.literal = value;
  } else {
    e.int_literal = IsBool(dtype) ? (value != 0) : static_cast<int64_t>(value);
    e.literal = static_cast<double>(e.int_literal);
  }
  return Append(loop, std::move(e));
}

int Kernel::Index(int loop, DType dtype, SymExpr value) {
  Expr e;
  e.kind = proto::Expr::INDEX;
  e.dtype = dtype;
  e.value = std::move(value);
  return Append(loop, std::move(e));
}

int Kernel::Apply(int loop, std::string op, DType dtype, std::vector<int> args) {
  Expr e;
  e.kind = proto::Expr::APPLY;
  e.dtype = dtype;
  e.op = std::move(op);
  e.args = std::move(args);
  return Append(loop, std::move(e));
}

int Kernel::Reduce(int loop, std::string op, DType dtype, int arg) {
  Expr e;
  e.kind = proto::Expr::REDUCE;
  e.dtype = dtype;
  e.op = std::move(op);
  e.args = {arg};
  return Append(loop, std::move(e));
}

int Kernel::Store(int loop, int buffer, std::vector<SymExpr> index, int value) {
  Expr e;
  e.kind = proto::Expr::STORE;
  e.dtype = Find(value).dtype;
  e.buffer = buffer;
  e.index = std::move(index);
  e.args = {value};
  return Append(loop, std::move(e));
}

int Kernel::Random(int loop, DType dtype, int64_t seed, SymExpr counter) {
  Expr e;
  e.kind = proto::Expr::RANDOM;
  e.dtype = dtype;
  e.seed = seed;
  e.value = std::move(counter);
  return Append(loop, std::move(e));
}

const Expr& Kernel::Find(int id) const {
  for (const Loop& l : loops) {
    for (const Expr& e : l.body) {
      if (e.id == id) return e;
    }
  }
  COIL_CHECK(false) << "kernel " << name << " has no expression " << id;
  return loops[0].body[0];
}

namespace {

// Sorted, each id once.
std::vector<int> SortedUnique(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

std::vector<int> Kernel::Reads() const {
  std::vector<int> ids(extern_inputs.begin(), extern_inputs.end());
  for (const Loop& l : loops) {
    for (const Expr& e : l.body) {
      if (e.kind == proto::Expr::LOAD) ids.push_back(e.buffer);
    }
  }
  return SortedUnique(std::move(ids));
}

std::vector<int> Kernel::Writes() const {
  std::vector<int> ids;
  if (extern_output != 0) ids.push_back(extern_output);
  for (const Loop& l : loops) {
    for (const Expr& e : l.body) {
      if (e.kind == proto::Expr::STORE) ids.push_back(e.buffer);
    }
  }
  return SortedUnique(std::move(ids));
}

Buffer& Program::buffer(int id) {
  COIL_CHECK(id >= 1 && id <= static_cast<int>(buffers.size())) << "no buffer " << id;
  return buffers[id - 1];
}

const Buffer& Program::buffer(int id) const {
  COIL_CHECK(id >= 1 && id <= static_cast<int>(buffers.size())) << "no buffer " << id;
  return buffers[id - 1];
}

int Program::AddBuffer(Buffer b) {
  b.id = static_cast<int>(buffers.size()) + 1;
  if (b.name.empty()) b.name = absl::StrCat("buf", b.id);
  buffers.push_back(std::move(b));
  return buffers.back().id;
}

int64_t Program::EvaluateHint(const SymExpr& e) const {
  absl::flat_hash_map<std::string, int64_t> values;
  for (const auto& [name, hint] : hints) values[name] = hint;
  for (const std::string& s : e.Symbols()) values.emplace(s, 64);
  absl::StatusOr<int64_t> v = e.Evaluate(values);
  return v.ok() ? *v : 0;
}

namespace {

// The buffers read or written, each once, in id order, from the sorted lists.
std::vector<int> Touched(const std::vector<int>& reads, const std::vector<int>& writes) {
  std::vector<int> ids;
  ids.reserve(reads.size() + writes.size());
  std::set_union(reads.begin(), reads.end(), writes.begin(), writes.end(),
                 std::back_inserter(ids));
  return ids;
}

// The buffers a kernel reads or writes, each once, in id order.
std::vector<int> TouchedBuffers(const Kernel& k) { return Touched(k.Reads(), k.Writes()); }

int64_t SumSizeHints(const std::vector<int>& touched,
                     const std::vector<std::optional<int64_t>>& sizes) {
  int64_t total = 0;
  for (int b : touched) {
    const std::optional<int64_t>& size = sizes[b - 1];
    if (!size.has_value() || __builtin_add_overflow(total, *size, &total)) return 0;
  }
  return total;
}

}  // namespace

SymExpr Program::BytesMoved(const Kernel& k) const {
  SymExpr total(0);
  for (int b : TouchedBuffers(k)) total = total + buffer(b).SizeBytes();
  return total;
}

std::vector<SymExpr> Program::BufferSizes() const {
  std::vector<SymExpr> sizes;
  sizes.reserve(buffers.size());
  for (const Buffer& b : buffers) sizes.push_back(b.SizeBytes());
  return sizes;
}

std::vector<std::optional<int64_t>> Program::SizeHints() const {
  absl::flat_hash_map<std::string, int64_t> values;
  for (const auto& [name, hint] : hints) values[name] = hint;
  // Dimension by dimension (a program has few distinct ones), not the symbolic product.
  absl::flat_hash_map<SymExpr, std::optional<int64_t>> dims;
  std::vector<std::optional<int64_t>> sizes;
  sizes.reserve(buffers.size());
  for (const Buffer& b : buffers) {
    std::optional<int64_t> size = ElementSize(b.dtype);
    for (const SymExpr& d : b.shape) {
      std::optional<int64_t> v = d.AsConstant();
      if (!v.has_value()) {
        auto [it, fresh] = dims.try_emplace(d);
        if (fresh) {
          // Symbols without a hint count as 64 (EvaluateHint); kept for later buffers.
          for (const std::string& s : d.Symbols()) values.emplace(s, 64);
          absl::StatusOr<int64_t> e = d.Evaluate(values);
          if (e.ok()) it->second = *e;
        }
        v = it->second;
      }
      int64_t product = 0;
      if (!v.has_value() || __builtin_mul_overflow(*size, *v, &product)) {
        size = std::nullopt;
        break;
      }
      size = product;
    }
    sizes.push_back(size);
  }
  return sizes;
}

int64_t Program::BytesMovedHint(const Kernel& k,
                                const std::vector<std::optional<int64_t>>& sizes) {
  return SumSizeHints(TouchedBuffers(k), sizes);
}

namespace {

void ExprToProto(const Expr& e, proto::Expr* p) {
  p->set_id(e.id);
  p->set_kind(e.kind);
  p->set_dtype(e.dtype);
  p->set_buffer(e.buffer);
  for (const SymExpr& i : e.index) *p->add_index() = i.ToProto();
  p->set_mask(e.mask);
  p->set_literal(e.literal);
  p->set_int_literal(e.int_literal);
  if (e.kind == proto::Expr::INDEX || e.kind == proto::Expr::RANDOM) {
    *p->mutable_value() = e.value.ToProto();
  }
  p->set_op(e.op);
  for (int a : e.args) p->add_args(a);
  p->set_seed(e.seed);
}

}  // namespace

proto::Schedule ToProto(const Program& program, proto::Graph graph) {
  proto::Schedule s;
  s.mutable_graph()->Swap(&graph);
  // Each buffer's size once; a kernel's bytes moved sums the buffers it touches.
  const std::vector<SymExpr> size_bytes = program.BufferSizes();
  const std::vector<std::optional<int64_t>> size_hints = program.SizeHints();
  for (const Buffer& b : program.buffers) {
    proto::Buffer* p = s.add_buffers();
    p->set_id(b.id);
    p->set_name(b.name);
    p->set_kind(b.kind);
    p->set_dtype(b.dtype);
    for (const SymExpr& d : b.shape) *p->add_shape() = d.ToProto();
    *p->mutable_size_bytes() = size_bytes[b.id - 1].ToProto();
    p->set_graph_value(b.graph_value);
    for (int o : b.graph_outputs) p->add_graph_outputs(o);
    *p->mutable_arena_offset() = b.arena_offset.ToProto();
    p->set_reuses(b.reuses);
    p->set_in_place(b.in_place);
  }
  int externs = 0;
  int64_t bytes = 0;
  for (const Kernel& k : program.kernels) {
    proto::Kernel* p = s.add_kernels();
    p->set_id(k.id);
    p->set_name(k.name);
    p->set_kind(k.kind);
    for (const SymExpr& r : k.ranges) *p->add_ranges() = r.ToProto();
    for (const Loop& l : k.loops) {
      proto::Loop* pl = p->add_loops();
      for (const SymExpr& r : l.ranges) *pl->add_ranges() = r.ToProto();
      for (const Expr& e : l.body) ExprToProto(e, pl->add_body());
    }
    p->set_extern_op(k.extern_op);
    for (int b : k.extern_inputs) p->add_extern_inputs(b);
    for (const ExternView& v : k.extern_input_views) {
      proto::ExternView* pv = p->add_extern_input_views();
      if (v.whole()) continue;
      *pv->mutable_offset() = v.offset.ToProto();
      for (const std::vector<ExternFactor>& dim : v.dims) {
        proto::ExternView::Dim* pd = pv->add_dims();
        for (const ExternFactor& f : dim) {
          *pd->add_sizes() = f.size.ToProto();
          *pd->add_strides() = f.stride.ToProto();
        }
      }
    }
    p->set_extern_output(k.extern_output);
    for (const SymExpr& d : k.extern_output_shape) *p->add_extern_output_shape() = d.ToProto();
    if (!k.extern_output_view.whole()) {
      proto::ExternView* pv = p->mutable_extern_output_view();
      *pv->mutable_offset() = k.extern_output_view.offset.ToProto();
      for (const std::vector<ExternFactor>& dim : k.extern_output_view.dims) {
        proto::ExternView::Dim* pd = pv->add_dims();
        for (const ExternFactor& f : dim) {
          *pd->add_sizes() = f.size.ToProto();
          *pd->add_strides() = f.stride.ToProto();
        }
      }
    }
    for (const auto& [name, value] : k.extern_attrs) {
      proto::NamedAttribute* a = p->add_extern_attrs();
      a->set_name(name);
      *a->mutable_value() = AttrToProto(value);
    }
    for (int64_t v : k.source_values) p->add_source_values(v);
    for (const std::string& op : k.source_ops) p->add_source_ops(op);
    const std::vector<int> reads = k.Reads(), writes = k.Writes();
    for (int b : reads) p->add_reads(b);
    for (int b : writes) p->add_writes(b);
    const std::vector<int> touched = Touched(reads, writes);
    SymExpr moved(0);
    for (int b : touched) moved = moved + size_bytes[b - 1];
    *p->mutable_bytes_moved() = moved.ToProto();
    p->set_bytes_moved_hint(SumSizeHints(touched, size_hints));
    bytes += p->bytes_moved_hint();
    externs += k.kind == proto::Kernel::EXTERN;
  }
  for (int o : program.outputs) s.add_outputs(o);
  for (const FusionDecision& d : program.decisions) {
    proto::FusionDecision* p = s.add_decisions();
    p->set_pass(d.pass);
    p->set_kind(d.kind);
    for (const std::string& k : d.kernels) p->add_kernels(k);
    p->set_accepted(d.accepted);
    p->set_reason(d.reason);
    p->set_bytes_saved_hint(d.bytes_saved_hint);
  }
  proto::ScheduleStats* stats = s.mutable_stats();
  stats->set_kernels_unfused(program.kernels_unfused);
  stats->set_kernels(static_cast<int>(program.kernels.size()));
  stats->set_externs(externs);
  stats->set_bytes_moved_unfused_hint(program.bytes_moved_unfused_hint);
  stats->set_bytes_moved_hint(bytes);
  return s;
}

}  // namespace coil::inductor
