// The test-only KernelModule driver: buffers, arena, externs, kernels in order.
#include "codegen_cpu/testing/jit_runner.h"

#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/op_registry.h"
#include "ir/sym_expr.h"
#include "ir/tensor_type.h"
#include "runtime/cpu/kernel_abi.h"
#include "runtime/cpu/kernel_error.h"
#include "runtime/interpreter.h"
#include "runtime/reference/kernel_registry.h"

namespace coil::testing {
namespace {

using Bindings = absl::flat_hash_map<std::string, int64_t>;

absl::StatusOr<int64_t> Eval(const proto::SymExpr& e, const Bindings& b) {
  if (e.kind() == proto::SymExpr::KIND_UNSPECIFIED && e.args_size() == 0) return 0;
  absl::StatusOr<SymExpr> s = SymExpr::FromProto(e);
  if (!s.ok()) return s.status();
  return s->Evaluate(b);
}

struct Buf {
  const proto::Buffer* proto = nullptr;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
  char* data = nullptr;
};

// The extern's reference kernel on buffer memory (as runtime/internal/schedule_extern.cc).
absl::Status RunExtern(const proto::Kernel& k, absl::flat_hash_map<int, Buf>& bufs,
                       const Bindings& symbols) {
  const ReferenceKernel* fn = ReferenceKernels::Global().Find(k.extern_op());
  if (fn == nullptr) return absl::UnimplementedError(absl::StrCat("no kernel for ", k.extern_op()));
  for (const proto::ExternView& v : k.extern_input_views()) {
    if (v.dims_size() != 0) {  // read whole below: refuse rather than misread
      return absl::UnimplementedError("jit_runner: extern input views (use CpuProgram)");
    }
  }
  if (k.extern_output_shape_size() > 0 || k.extern_output_view().dims_size() > 0) {
    return absl::UnimplementedError("jit_runner: extern_output_shape (use CpuProgram)");
  }
  std::vector<HostTensor> args;
  for (int id : k.extern_inputs()) {
    const Buf& b = bufs.at(id);
    absl::StatusOr<HostTensor> t =
        HostTensor::FromBytes(b.proto->dtype(), b.shape, std::string(b.data, b.bytes));
    if (!t.ok()) return t.status();
    args.push_back(*std::move(t));
  }
  AttrMap attrs;
  for (const proto::NamedAttribute& a : k.extern_attrs()) {
    absl::StatusOr<Attribute> v = AttrFromProto(a.value());
    if (!v.ok()) return v.status();
    attrs[a.name()] = *std::move(v);
  }
  const OpSchema* schema = OpRegistry::Global().Find(k.extern_op());
  if (schema == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown op ", k.extern_op()));
  if (absl::Status s = NormalizeAttrs(*schema, attrs); !s.ok()) return s;
  for (auto& [name, value] : attrs) {
    std::vector<SymExpr*> exprs;
    if (SymExpr* e = std::get_if<SymExpr>(&value)) exprs.push_back(e);
    if (SymList* l = std::get_if<SymList>(&value)) {
      for (SymExpr& e : *l) exprs.push_back(&e);
    }
    for (SymExpr* e : exprs) {
      absl::StatusOr<int64_t> v = e->Evaluate(symbols);
      if (!v.ok()) return v.status();
      *e = SymExpr(*v);
    }
  }
  const Buf& out = bufs.at(k.extern_output());
  std::vector<std::vector<int64_t>> shapes = {out.shape};
  std::vector<DType> dtypes = {out.proto->dtype()};
  KernelContext ctx{args, attrs, shapes, dtypes};
  absl::StatusOr<std::vector<HostTensor>> r = (*fn)(ctx);
  if (!r.ok()) return r.status();
  std::string bytes = (*r)[0].Bytes();
  if (static_cast<int64_t>(bytes.size()) != out.bytes) {
    return absl::InternalError(absl::StrCat("extern ", k.extern_op(), " wrote ", bytes.size(),
                                            " bytes into a buffer of ", out.bytes));
  }
  if (!bytes.empty()) std::memcpy(out.data, bytes.data(), bytes.size());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<HostTensor>> RunWithJit(const proto::KernelModule& module,
                                                   const CpuJitModule& jit,
                                                   absl::Span<const HostTensor> inputs,
                                                   int chunks) {
  const proto::Schedule& s = module.schedule();
  absl::StatusOr<Graph> g = Graph::FromProto(s.graph());
  if (!g.ok()) return g.status();
  absl::StatusOr<Bindings> bind = BindSymbols(*g, inputs);
  if (!bind.ok()) return bind.status();
  std::vector<int64_t> symbols;
  for (const proto::Symbol& sym : s.graph().symbols()) {
    auto it = bind->find(sym.name());
    symbols.push_back(it == bind->end() ? 0 : it->second);
  }
  absl::StatusOr<int64_t> arena_bytes = Eval(s.memory_plan().arena_bytes(), *bind);
  if (!arena_bytes.ok()) return arena_bytes.status();
  std::vector<std::unique_ptr<char[]>> storage;
  // 64-byte aligned, as the runtime allocates (runtime/cpu/kernel_abi.h).
  auto alloc = [&](int64_t n) {
    storage.push_back(std::make_unique<char[]>(n + 64));
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage.back().get());
    return reinterpret_cast<char*>((p + 63) / 64 * 64);
  };
  char* arena = alloc(*arena_bytes);
  std::memset(arena, 0xFF, *arena_bytes);

  absl::flat_hash_map<int, Buf> bufs;
  int max_id = 0;
  for (const proto::Buffer& pb : s.buffers()) {
    Buf b;
    b.proto = &pb;
    b.bytes = ElementSize(pb.dtype());
    for (const proto::SymExpr& d : pb.shape()) {
      absl::StatusOr<int64_t> v = Eval(d, *bind);
      if (!v.ok()) return v.status();
      b.shape.push_back(*v);
      b.bytes *= *v;
    }
    switch (pb.kind()) {
      case proto::Buffer::INPUT:
      case proto::Buffer::CONSTANT: {
        HostTensor t;
        if (pb.kind() == proto::Buffer::INPUT) {
          for (size_t i = 0; i < g->inputs().size(); ++i) {
            if (g->inputs()[i]->id() == pb.graph_value()) t = inputs[i];
          }
        } else {
          absl::StatusOr<HostTensor> c = LoadConstant(*g->FindValue(pb.graph_value()), "");
          if (!c.ok()) return c.status();
          t = *c;
        }
        std::string bytes = t.Bytes();
        b.data = alloc(b.bytes);
        std::memcpy(b.data, bytes.data(), std::min<int64_t>(bytes.size(), b.bytes));
        break;
      }
      case proto::Buffer::INTERMEDIATE: {
        absl::StatusOr<int64_t> off = Eval(pb.arena_offset(), *bind);
        if (!off.ok()) return off.status();
        b.data = arena + *off;
        break;
      }
      default:
        b.data = alloc(b.bytes);
        std::memset(b.data, 0xFF, b.bytes);
        break;
    }
    max_id = std::max(max_id, pb.id());
    bufs[pb.id()] = b;
  }
  std::vector<char*> table(max_id + 1, nullptr);
  for (const auto& [id, b] : bufs) table[id] = b.data;

  for (const proto::Kernel& k : s.kernels()) {
    if (k.kind() == proto::Kernel::EXTERN) {
      if (absl::Status st = RunExtern(k, bufs, *bind); !st.ok()) {
        return absl::Status(st.code(), absl::StrCat("kernel ", k.id(), ": ", st.message()));
      }
    }
    CoilKernelFn fn = jit.Find(k.id());
    if (fn == nullptr) {
      if (k.loops_size() > 0) return absl::NotFoundError(absl::StrCat("no function for kernel ", k.id()));
      continue;
    }
    const int rank = k.ranges_size();
    const int prefix = cpu::ParallelPrefixRank(rank, k.parallel_dims());
    int64_t p = 1;
    for (int d = 0; d < prefix; ++d) {
      absl::StatusOr<int64_t> v = Eval(k.ranges(d), *bind);
      if (!v.ok()) return v.status();
      p *= *v;
    }
    const int64_t step = std::max<int64_t>(1, (p + chunks - 1) / chunks);
    CoilKernelError error{};
    for (int64_t begin = 0; begin < p; begin += step) {
      fn(begin, std::min(p, begin + step), table.data(), symbols.data(), &error);
    }
    if (error.failed != 0) {
      return cpu::KernelErrorStatus(error, absl::StrCat("kernel ", k.id(), " '", k.name(), "'"));
    }
  }
  std::vector<HostTensor> out;
  for (int id : s.outputs()) {
    const Buf& b = bufs.at(id);
    absl::StatusOr<HostTensor> t =
        HostTensor::FromBytes(b.proto->dtype(), b.shape, std::string(b.data, b.bytes));
    if (!t.ok()) return t.status();
    out.push_back(*std::move(t));
  }
  return out;
}

}  // namespace coil::testing
