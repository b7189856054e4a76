// CpuExecutable: validation at Create, the per-binding layout, buffers, kernels in order.
#include "runtime/cpu/executable.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/op_registry.h"
#include "ir/sym_expr.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/kernel_error.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/interpreter.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/tensor_storage.h"

namespace coil::cpu {
namespace {

using Bindings = absl::flat_hash_map<std::string, int64_t>;

// Loop iterations (elements) one ParallelFor chunk should hold at least.
constexpr int64_t kGrainWork = 16384;
// Below this many iterations in all a kernel runs on the calling thread: waking the pool costs
// several microseconds (more on a loaded machine), as much as this work (docs/cpu_backend.md,
// "Runtime performance").
constexpr int64_t kMinParallelWork = 65536;

struct BufferInfo {
  const proto::Buffer* proto = nullptr;
  DType dtype = proto::DTYPE_UNSPECIFIED;
  int64_t elem_size = 0;
  std::vector<SymExpr> shape;
  SymExpr arena_offset;
  int input_pos = -1;     // INPUT: the graph input it holds
  bool written = false;   // INPUT: some kernel stores into it
  // CONSTANT: its contiguous bytes, borrowed from the schedule's dense constant (see
  // Impl::constants_from) or owned by `constant` (a copy, or external data).
  const char* constant_data = nullptr;
  HostTensor constant;
  std::string Describe() const {
    return absl::StrCat("buffer ", proto->id(), " ('", proto->name(), "')");
  }
};

struct KernelInfo {
  const proto::Kernel* proto = nullptr;
  std::string where;  // "kernel 3 'fused_add'"
  std::vector<SymExpr> ranges;
  std::vector<std::vector<SymExpr>> loop_ranges;
  CoilKernelFn fn = nullptr;  // the body, or the extern's epilogue
  // EXTERN.
  AttrMap attrs;  // normalized; sym attributes still symbolic when `symbolic_attrs`
  bool symbolic_attrs = false;
};

// An EXTERN kernel's call under one binding: shapes and bound attributes; data pointers are
// set per run.
struct ExternCall {
  std::vector<ExternTensor> inputs;
  ExternTensor output;
  AttrMap attrs;
};

// Everything that depends on the symbol values only.
struct Layout {
  std::vector<int64_t> key;  // the bound symbols, in graph order (INT64_MIN: unbound)
  std::vector<std::vector<int64_t>> shapes;  // by buffer index
  std::vector<int64_t> bytes;
  std::vector<int64_t> offsets;  // INTERMEDIATE
  int64_t arena_bytes = 0;
  std::vector<int64_t> parallel;  // P per kernel (0: nothing to run)
  std::vector<int64_t> grain;
  std::vector<ExternCall> externs;  // by kernel index (empty for non-EXTERN kernels)
};

absl::StatusOr<SymExpr> Sym(const proto::SymExpr& p, absl::string_view what) {
  absl::StatusOr<SymExpr> e = SymExpr::FromProto(p);
  if (!e.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", e.status().message()));
  return e;
}

absl::StatusOr<int64_t> Product(absl::Span<const int64_t> dims, int64_t init = 1) {
  int64_t n = init;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative size ", d));
    if (__builtin_mul_overflow(n, d, &n)) return absl::InvalidArgumentError("size overflows int64");
  }
  return n;
}


bool HasSymbolicAttr(const AttrMap& attrs) {
  for (const auto& [name, value] : attrs) {
    if (const SymExpr* e = std::get_if<SymExpr>(&value); e && !e->is_constant()) return true;
    if (const SymList* l = std::get_if<SymList>(&value)) {
      for (const SymExpr& e : *l) {
        if (!e.is_constant()) return true;
      }
    }
  }
  return false;
}

// CONSTANT bytes at least this aligned are used in place (what malloc, and so HostTensor's
// storage, gives).
constexpr uintptr_t kConstantAlignment = 16;
constexpr char kInMemoryPath[] = "coil:in-memory";

// `graph` without constant bytes: each dense constant becomes external data at kInMemoryPath
// with its length, so Graph::FromProto still checks sizes but copies nothing.
proto::Graph StandInGraph(const proto::Graph& graph) {
  proto::Graph out;
  google::protobuf::FieldMask mask;
  const google::protobuf::Descriptor* d = proto::Graph::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    if (d->field(i)->name() != "constants") mask.add_paths(d->field(i)->name());
  }
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(
      graph, mask, google::protobuf::util::FieldMaskUtil::MergeOptions(), &out);
  for (const proto::Constant& c : graph.constants()) {
    proto::Constant* stand_in = out.add_constants();
    *stand_in->mutable_value() = c.value();
    if (c.has_external()) {
      *stand_in->mutable_external() = c.external();
    } else {
      stand_in->mutable_external()->set_path(kInMemoryPath);
      stand_in->mutable_external()->set_length(static_cast<int64_t>(c.raw().size()));
    }
  }
  return out;
}

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

}  // namespace

struct CpuExecutable::Impl {
  // Create: the whole schedule. CreateBorrowing: a copy without the dense constant bytes.
  proto::Schedule schedule;
  // Where the dense constant bytes live: &schedule (Create) or the caller's schedule
  // (CreateBorrowing), which outlives this executable.
  const proto::Schedule* constants_from = nullptr;
  // `schedule.graph()` with dense constants stood in for by in-memory markers (no bytes), so
  // building `graph` copies no constant data; the CONSTANT buffers point at the real bytes.
  Graph graph;
  KernelTable table;
  std::unique_ptr<ThreadPool> pool;
  std::vector<BufferInfo> buffers;
  std::vector<int> index_of_id;  // buffer id -> index in `buffers`, or -1
  std::vector<KernelInfo> kernels;
  SymExpr arena_bytes;
  std::optional<Layout> layout;  // of the last run's symbol values
  std::unique_ptr<char, FreeDeleter> arena;
  int64_t arena_capacity = 0;
  // What each EXTERN kernel's implementation keeps across runs (primitives, packed weights).
  std::vector<ExternStateSlot> extern_states;  // by kernel index
  // Per-run scratch, kept to avoid allocations (runs are serialized).
  std::vector<char*> ptrs;
  std::vector<int64_t> symbols;
  // Profiling (SetProfiling): per kernel, in program order.
  bool profiling = false;
  std::vector<CpuExecutable::KernelTime> times;

  // Dense constant bytes by graph value id, in *constants_from.
  absl::flat_hash_map<int64_t, const std::string*> dense;

  const std::string* DenseBytes(const Value& v) const {
    auto it = dense.find(v.id());
    return it == dense.end() ? nullptr : it->second;
  }
  absl::Status Init(const CpuExecutableOptions& options);
  absl::Status InitKernel(const proto::Kernel& k);
  absl::StatusOr<Layout*> LayoutFor(const Bindings& b);
  absl::Status EnsureArena(int64_t bytes);
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs);
};

absl::Status CpuExecutable::Impl::Init(const CpuExecutableOptions& options) {
  int max_id = 0;
  for (const proto::Buffer& b : schedule.buffers()) max_id = std::max(max_id, b.id());
  if (max_id > schedule.buffers_size() + (1 << 16)) {
    return absl::InvalidArgumentError(absl::StrCat("buffer id ", max_id, " is out of range for ",
                                                   schedule.buffers_size(), " buffers"));
  }
  index_of_id.assign(max_id + 1, -1);
  bool has_intermediates = false;
  for (const proto::Buffer& pb : schedule.buffers()) {
    BufferInfo b;
    b.proto = &pb;
    if (pb.id() <= 0 || index_of_id[pb.id()] >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(b.Describe(), ": ids must be >= 1 and unique"));
    }
    if (!IsValidDType(pb.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat(b.Describe(), " has no valid dtype"));
    }
    b.dtype = pb.dtype();
    b.elem_size = ElementSize(pb.dtype());
    for (const proto::SymExpr& d : pb.shape()) {
      absl::StatusOr<SymExpr> e = Sym(d, absl::StrCat(b.Describe(), " shape"));
      if (!e.ok()) return e.status();
      b.shape.push_back(*std::move(e));
    }
    switch (pb.kind()) {
      case proto::Buffer::INPUT:
        for (size_t i = 0; i < graph.inputs().size(); ++i) {
          if (graph.inputs()[i]->id() == pb.graph_value()) b.input_pos = static_cast<int>(i);
        }
        if (b.input_pos < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              b.Describe(), ": graph value %", pb.graph_value(), " is not a graph input"));
        }
        break;
      case proto::Buffer::CONSTANT: {
        const Value* v = graph.FindValue(pb.graph_value());
        if (v == nullptr || v->kind() != Value::Kind::kConstant) {
          return absl::InvalidArgumentError(absl::StrCat(
              b.Describe(), ": graph value %", pb.graph_value(), " is not a constant"));
        }
        std::vector<int64_t> shape;
        for (const SymExpr& d : b.shape) shape.push_back(d.AsConstant().value_or(-1));
        if (*v->type().StaticShape() != shape || v->type().dtype != b.dtype) {
          return absl::InvalidArgumentError(
              absl::StrCat(b.Describe(), " does not match constant ", v->type().ToString()));
        }
        if (const std::string* raw = DenseBytes(*v)) {
          // FromProto checked the stand-in's length against the type.
          // In place when aligned as HostTensor storage is (kernels assume element alignment
          // only; 16 covers every dtype and SSE loads); otherwise one aligned copy.
          if (reinterpret_cast<uintptr_t>(raw->data()) % kConstantAlignment == 0) {
            b.constant_data = raw->data();
          } else {
            absl::StatusOr<HostTensor> t = HostTensor::FromBytes(b.dtype, shape, *raw);
            if (!t.ok()) return t.status();
            b.constant = *std::move(t);
            b.constant_data = reinterpret_cast<const char*>(b.constant.RawData());
          }
          break;
        }
        absl::StatusOr<HostTensor> t = LoadConstant(*v, options.external_data_dir);
        if (!t.ok()) return t.status();
        b.constant = t->Contiguous();
        b.constant_data = reinterpret_cast<const char*>(b.constant.RawData());
        break;
      }
      case proto::Buffer::INTERMEDIATE: {
        has_intermediates = true;
        absl::StatusOr<SymExpr> off = Sym(pb.arena_offset(), absl::StrCat(b.Describe(),
                                                                          " arena_offset"));
        if (!off.ok()) return off.status();
        b.arena_offset = *std::move(off);
        break;
      }
      case proto::Buffer::OUTPUT:
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(b.Describe(), " has no kind"));
    }
    index_of_id[pb.id()] = static_cast<int>(buffers.size());
    buffers.push_back(std::move(b));
  }
  if (has_intermediates && !schedule.has_memory_plan()) {
    return absl::InvalidArgumentError("the schedule has intermediate buffers but no memory plan");
  }
  absl::StatusOr<SymExpr> arena = Sym(schedule.memory_plan().arena_bytes(),
                                      "memory plan arena_bytes");
  if (!arena.ok()) return arena.status();
  arena_bytes = *std::move(arena);
  for (int id : schedule.outputs()) {
    if (id <= 0 || id > max_id || index_of_id[id] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("output buffer ", id, " does not exist"));
    }
  }
  absl::flat_hash_map<int, int> kernel_ids;
  for (const proto::Kernel& k : schedule.kernels()) {
    if (!kernel_ids.emplace(k.id(), 0).second) {
      return absl::InvalidArgumentError(absl::StrCat("kernel id ", k.id(), " is not unique"));
    }
    if (absl::Status s = InitKernel(k); !s.ok()) return s;
  }
  extern_states.resize(kernels.size());
  for (const auto& [id, fn] : table) {
    if (!kernel_ids.contains(id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the kernel table has a function for kernel ", id,
                       ", which the schedule does not have"));
    }
  }
  return absl::OkStatus();
}

absl::Status CpuExecutable::Impl::InitKernel(const proto::Kernel& k) {
  KernelInfo info;
  info.proto = &k;
  info.where = absl::StrCat("kernel ", k.id(), " '", k.name(), "'");
  auto error = [&](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(info.where, ": ", parts...));
  };
  auto known = [&](int id) {
    return id > 0 && id < static_cast<int>(index_of_id.size()) && index_of_id[id] >= 0;
  };
  for (const proto::SymExpr& r : k.ranges()) {
    absl::StatusOr<SymExpr> e = Sym(r, absl::StrCat(info.where, " ranges"));
    if (!e.ok()) return e.status();
    info.ranges.push_back(*std::move(e));
  }
  auto mark_written = [&](int id) {
    BufferInfo& b = buffers[index_of_id[id]];
    if (b.proto->kind() == proto::Buffer::INPUT) b.written = true;
  };
  for (const proto::Loop& l : k.loops()) {
    std::vector<SymExpr> lr;
    for (const proto::SymExpr& r : l.ranges()) {
      absl::StatusOr<SymExpr> e = Sym(r, absl::StrCat(info.where, " loop ranges"));
      if (!e.ok()) return e.status();
      lr.push_back(*std::move(e));
    }
    info.loop_ranges.push_back(std::move(lr));
    for (const proto::Expr& e : l.body()) {
      if (e.kind() != proto::Expr::LOAD && e.kind() != proto::Expr::STORE) continue;
      if (!known(e.buffer())) return error("expression ", e.id(), ": unknown buffer ", e.buffer());
      if (e.kind() == proto::Expr::STORE) mark_written(e.buffer());
    }
  }
  auto it = table.find(k.id());
  if (it != table.end()) info.fn = it->second;
  switch (k.kind()) {
    case proto::Kernel::POINTWISE:
    case proto::Kernel::REDUCTION:
      if (info.fn == nullptr) return error("no function in the kernel table");
      break;
    case proto::Kernel::EXTERN: {
      for (int id : k.extern_inputs()) {
        if (!known(id)) return error("unknown extern input buffer ", id);
      }
      if (!known(k.extern_output())) return error("unknown extern output buffer ", k.extern_output());
      mark_written(k.extern_output());
      if (k.loops_size() > 0 && info.fn == nullptr) {
        return error("no function in the kernel table for the epilogue of ", k.extern_op());
      }
      if (k.loops_size() == 0 && info.fn != nullptr) {
        return error("the kernel table has a function, but the extern ", k.extern_op(),
                     " has no epilogue");
      }
      const OpSchema* schema = OpRegistry::Global().Find(k.extern_op());
      if (schema == nullptr) return error("unknown extern op '", k.extern_op(), "'");
      if (ExternRegistry::Default().Find(k.extern_op()) == nullptr &&
          ReferenceKernels::Global().Find(k.extern_op()) == nullptr) {
        return absl::UnimplementedError(
            absl::StrCat(info.where, ": no implementation of extern op '", k.extern_op(), "'"));
      }
      for (const proto::NamedAttribute& a : k.extern_attrs()) {
        absl::StatusOr<Attribute> v = AttrFromProto(a.value());
        if (!v.ok()) return error("attribute '", a.name(), "': ", v.status().message());
        info.attrs[a.name()] = *std::move(v);
      }
      if (absl::Status s = NormalizeAttrs(*schema, info.attrs); !s.ok()) {
        return error(s.message());
      }
      info.symbolic_attrs = HasSymbolicAttr(info.attrs);
      break;
    }
    default:
      return error("has no kind");
  }
  kernels.push_back(std::move(info));
  return absl::OkStatus();
}

absl::StatusOr<Layout*> CpuExecutable::Impl::LayoutFor(const Bindings& b) {
  std::vector<int64_t> key;
  for (const SymbolInfo& s : graph.symbols()) {
    auto it = b.find(s.name);
    key.push_back(it == b.end() ? INT64_MIN : it->second);
  }
  if (layout.has_value() && layout->key == key) return &*layout;
  layout.reset();
  Layout l;
  l.key = std::move(key);
  absl::StatusOr<int64_t> arena = arena_bytes.Evaluate(b);
  if (!arena.ok() || *arena < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "memory plan arena_bytes: ",
        arena.ok() ? absl::StrCat("negative size ", *arena) : std::string(arena.status().message())));
  }
  l.arena_bytes = *arena;
  for (const BufferInfo& buf : buffers) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : buf.shape) {
      absl::StatusOr<int64_t> v = d.Evaluate(b);
      if (!v.ok() || *v < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            buf.Describe(), " shape: ", v.ok() ? absl::StrCat("negative size ", *v)
                                               : std::string(v.status().message())));
      }
      shape.push_back(*v);
    }
    absl::StatusOr<int64_t> bytes = Product(shape, buf.elem_size);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(buf.Describe(), " of shape [",
                                                     absl::StrJoin(shape, ", "), "]: ",
                                                     bytes.status().message()));
    }
    int64_t offset = 0;
    if (buf.proto->kind() == proto::Buffer::INTERMEDIATE) {
      absl::StatusOr<int64_t> off = buf.arena_offset.Evaluate(b);
      if (!off.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(buf.Describe(), " arena_offset: ", off.status().message()));
      }
      if (*off < 0 || *off > l.arena_bytes - *bytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            buf.Describe(), " at arena offset ", *off, " with ", *bytes,
            " bytes does not fit in the arena of ", l.arena_bytes, " bytes"));
      }
      offset = *off;
    }
    l.shapes.push_back(std::move(shape));
    l.bytes.push_back(*bytes);
    l.offsets.push_back(offset);
  }
  for (const KernelInfo& k : kernels) {
    std::vector<int64_t> ranges;
    for (const SymExpr& r : k.ranges) {
      absl::StatusOr<int64_t> v = r.Evaluate(b);
      if (!v.ok() || *v < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            k.where, " ranges: ", v.ok() ? absl::StrCat("negative size ", *v)
                                         : std::string(v.status().message())));
      }
      ranges.push_back(*v);
    }
    const int prefix = ParallelPrefixRank(static_cast<int>(ranges.size()));
    absl::StatusOr<int64_t> p = Product(absl::MakeSpan(ranges).subspan(0, prefix));
    absl::StatusOr<int64_t> inner = Product(absl::MakeSpan(ranges).subspan(prefix));
    if (!p.ok() || !inner.ok()) return absl::InvalidArgumentError(absl::StrCat(k.where, ": ranges overflow"));
    // Work per prefix index: the inner outer dims times the Loops' iterations (an estimate:
    // a loop range that does not evaluate counts as 1).
    int64_t loop_work = 0;
    for (const std::vector<SymExpr>& lr : k.loop_ranges) {
      int64_t n = 1;
      for (const SymExpr& r : lr) {
        absl::StatusOr<int64_t> v = r.Evaluate(b);
        n = v.ok() && *v > 0 ? std::min<int64_t>(n * *v, int64_t{1} << 40) : n;
      }
      loop_work += n;
    }
    const int64_t row = std::max<int64_t>(1, std::min<int64_t>(*inner, int64_t{1} << 20) *
                                                 std::max<int64_t>(loop_work, 1));
    l.parallel.push_back(*p);
    // Too little work in all to pay for waking the pool: one chunk on the calling thread.
    const bool tiny = *p <= kMinParallelWork / row;
    l.grain.push_back(tiny ? std::max<int64_t>(*p, 1) : std::max<int64_t>(1, kGrainWork / row));
    l.externs.emplace_back();
    if (k.proto->kind() != proto::Kernel::EXTERN) continue;
    ExternCall& call = l.externs.back();
    auto tensor = [&](int id) {
      const int i = index_of_id[id];
      return ExternTensor{buffers[i].dtype, l.shapes[i], nullptr,
                          buffers[i].proto->kind() == proto::Buffer::CONSTANT};
    };
    for (int id : k.proto->extern_inputs()) call.inputs.push_back(tensor(id));
    call.output = tensor(k.proto->extern_output());
    call.attrs = k.attrs;
    if (k.symbolic_attrs) {
      if (absl::Status s = coil::BindSymAttrs(call.attrs, b); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat(k.where, ": ", s.message()));
      }
    }
  }
  layout = std::move(l);
  return &*layout;
}

absl::Status CpuExecutable::Impl::EnsureArena(int64_t bytes) {
  if (arena != nullptr && bytes <= arena_capacity) return absl::OkStatus();
  const int64_t capacity = std::max<int64_t>(64, (bytes + 63) / 64 * 64);
  arena.reset(static_cast<char*>(std::aligned_alloc(64, capacity)));
  arena_capacity = arena != nullptr ? capacity : 0;
  if (arena == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate an arena of ", bytes,
                                                     " bytes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<HostTensor>> CpuExecutable::Impl::Run(
    absl::Span<const HostTensor> inputs) {
  // Input checks (with the graph interpreter's messages) happen in BindSymbols.
  absl::StatusOr<Bindings> bindings = BindSymbols(graph, inputs);
  if (!bindings.ok()) return bindings.status();
  absl::StatusOr<Layout*> lp = LayoutFor(*bindings);
  if (!lp.ok()) return lp.status();
  Layout& l = **lp;
  symbols.clear();
  for (int64_t v : l.key) symbols.push_back(v == INT64_MIN ? 0 : v);
  if (absl::Status s = EnsureArena(l.arena_bytes); !s.ok()) return s;

  ptrs.assign(index_of_id.size(), nullptr);
  std::vector<HostTensor> copies(buffers.size());  // non-contiguous inputs
  std::vector<std::shared_ptr<TensorStorage>> outs(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInfo& b = buffers[i];
    char*& ptr = ptrs[b.proto->id()];
    switch (b.proto->kind()) {
      case proto::Buffer::INPUT: {
        const HostTensor& in = inputs[b.input_pos];
        if (in.shape() != l.shapes[i]) {
          return absl::InvalidArgumentError(absl::StrCat(
              b.Describe(), " is ", DTypeName(b.dtype), "[", absl::StrJoin(l.shapes[i], ", "),
              "], input ", b.input_pos, " is ", in.TypeString()));
        }
        if (in.IsContiguous()) {
          ptr = reinterpret_cast<char*>(in.RawData());
        } else {
          copies[i] = in.Contiguous();
          ptr = reinterpret_cast<char*>(copies[i].RawData());
        }
        break;
      }
      case proto::Buffer::CONSTANT:
        ptr = const_cast<char*>(b.constant_data);  // kernels never write CONSTANT buffers
        break;
      case proto::Buffer::INTERMEDIATE:
        ptr = arena.get() + l.offsets[i];
        break;
      case proto::Buffer::OUTPUT:
        // Every element of an output is written by its kernels: no zero fill (and large
        // outputs come back from the storage cache, without page faults).
        outs[i] = TensorStorage::TryAllocate(l.bytes[i], TensorStorage::kUninitialized);
        if (outs[i] == nullptr) {  // sizes follow the inputs' symbols: an error, not an abort
          return absl::ResourceExhaustedError(absl::StrCat(
              b.Describe(), ": cannot allocate ", l.bytes[i], " bytes for an output"));
        }
        ptr = reinterpret_cast<char*>(outs[i]->data());
        break;
      default:
        break;
    }
  }

  for (size_t ki = 0; ki < kernels.size(); ++ki) {
    const KernelInfo& k = kernels[ki];
    const auto start = profiling ? std::chrono::steady_clock::now()
                                 : std::chrono::steady_clock::time_point();
    if (k.proto->kind() == proto::Kernel::EXTERN) {
      ExternCall& call = l.externs[ki];
      for (int i = 0; i < k.proto->extern_inputs_size(); ++i) {
        call.inputs[i].data = ptrs[k.proto->extern_inputs(i)];
      }
      call.output.data = ptrs[k.proto->extern_output()];
      absl::Status s = RunExtern(k.proto->extern_op(),
                                 ExternArgs{call.inputs, call.output, call.attrs,
                                            pool->num_threads(), &extern_states[ki]});
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat(k.where, " (extern ", k.proto->extern_op(),
                                                   "): ", s.message()));
      }
    }
    if (k.fn != nullptr && l.parallel[ki] != 0) {
      const CoilKernelFn fn = k.fn;
      char* const* bufs = ptrs.data();
      const int64_t* syms = symbols.data();
      // Data errors (a bad gather index, an integer division by zero): every slice finishes,
      // the first report wins (kernel_abi.h), ParallelFor's join orders it before this read.
      CoilKernelError error{};
      pool->ParallelFor(l.parallel[ki], l.grain[ki], [&](int64_t begin, int64_t end) {
        fn(begin, end, bufs, syms, &error);
      });
      if (error.failed != 0) return KernelErrorStatus(error, k.where);
    }
    if (profiling) {
      times[ki].calls += 1;
      times[ki].total_ms += std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start)
                                .count();
    }
  }

  // Stores into non-contiguous inputs go back to the caller's tensors (contiguous ones were
  // written in place).
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInfo& b = buffers[i];
    if (!b.written || !copies[i].defined()) continue;
    HostTensor dst = inputs[b.input_pos];
    uint8_t* base = dst.RawData() - dst.offset() * b.elem_size;
    const uint8_t* src = copies[i].RawData();
    int64_t n = 0;
    ForEachIndex(dst.shape(), [&](absl::Span<const int64_t> idx) {
      std::memcpy(base + dst.StorageOffset(idx) * b.elem_size, src + n++ * b.elem_size,
                  b.elem_size);
    });
  }

  std::vector<HostTensor> results;
  std::vector<bool> adopted(buffers.size(), false);
  for (int id : schedule.outputs()) {
    const int i = index_of_id[id];
    const BufferInfo& b = buffers[i];
    if (b.proto->kind() == proto::Buffer::INPUT) {
      results.push_back(inputs[b.input_pos]);
      continue;
    }
    absl::StatusOr<HostTensor> t =
        b.proto->kind() == proto::Buffer::OUTPUT && !adopted[i]
            ? HostTensor::AdoptStorage(b.dtype, l.shapes[i], outs[i])
            : HostTensor::FromBytes(b.dtype, l.shapes[i], std::string(ptrs[id], l.bytes[i]));
    if (!t.ok()) return t.status();
    adopted[i] = true;
    results.push_back(*std::move(t));
  }
  return results;
}

CpuExecutable::CpuExecutable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CpuExecutable::~CpuExecutable() = default;

absl::StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::Create(
    proto::Schedule schedule, KernelTable kernels, const CpuExecutableOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->schedule = std::move(schedule);
  impl->constants_from = &impl->schedule;
  const proto::Graph stand_in = StandInGraph(impl->schedule.graph());
  return Finish(std::move(impl), stand_in, std::move(kernels), options);
}

absl::StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::CreateBorrowing(
    const proto::Schedule* schedule, KernelTable kernels, const CpuExecutableOptions& options) {
  auto impl = std::make_unique<Impl>();
  // Everything but the graph's constants (a few KB for resnet18), then stand-ins for those.
  google::protobuf::FieldMask mask;
  const google::protobuf::Descriptor* d = proto::Schedule::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    if (d->field(i)->name() != "graph") mask.add_paths(d->field(i)->name());
  }
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(
      *schedule, mask, google::protobuf::util::FieldMaskUtil::MergeOptions(), &impl->schedule);
  *impl->schedule.mutable_graph() = StandInGraph(schedule->graph());
  impl->constants_from = schedule;
  const proto::Graph& stand_in = impl->schedule.graph();  // lives in *impl, on the heap
  return Finish(std::move(impl), stand_in, std::move(kernels), options);
}

absl::StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::Finish(
    std::unique_ptr<Impl> impl, const proto::Graph& stand_in, KernelTable kernels,
    const CpuExecutableOptions& options) {
  impl->table = std::move(kernels);
  absl::StatusOr<Graph> graph = Graph::FromProto(stand_in);
  if (!graph.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("schedule graph: ", graph.status().message()));
  }
  impl->graph = *std::move(graph);
  for (const proto::Constant& c : impl->constants_from->graph().constants()) {
    if (!c.has_external()) impl->dense[c.value().id()] = &c.raw();
  }
  if (absl::Status s = impl->Init(options); !s.ok()) return s;
  impl->pool = std::make_unique<ThreadPool>(options.num_threads);
  return std::unique_ptr<CpuExecutable>(new CpuExecutable(std::move(impl)));
}

absl::StatusOr<std::vector<HostTensor>> CpuExecutable::Run(absl::Span<const HostTensor> inputs) {
  absl::MutexLock lock(&mu_);
  return impl_->Run(inputs);
}

void CpuExecutable::SetProfiling(bool on) {
  absl::MutexLock lock(&mu_);
  impl_->profiling = on;
  impl_->times.assign(impl_->kernels.size(), KernelTime());
  for (size_t i = 0; i < impl_->kernels.size(); ++i) {
    const proto::Kernel& k = *impl_->kernels[i].proto;
    KernelTime& t = impl_->times[i];
    t.kernel = k.name();
    t.kind = k.kind() == proto::Kernel::EXTERN    ? absl::StrCat("extern ", k.extern_op())
             : k.kind() == proto::Kernel::REDUCTION ? "reduction"
                                                    : "pointwise";
  }
}

std::vector<CpuExecutable::KernelTime> CpuExecutable::Profile() {
  absl::MutexLock lock(&mu_);
  return impl_->times;
}

int CpuExecutable::num_threads() const { return impl_->pool->num_threads(); }

}  // namespace coil::cpu
