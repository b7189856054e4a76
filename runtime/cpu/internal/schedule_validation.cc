// ValidateSchedule (schedule_validation.h): a Schedule's buffers and kernels checked and
// resolved once, when a CpuExecutable is created.
#include "runtime/cpu/internal/schedule_validation.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "ir/channels_last.h"
#include "ir/op_registry.h"
#include "runtime/cpu/externs.h"
#include "runtime/interpreter.h"
#include "runtime/reference/kernel_registry.h"

namespace coil::cpu {
namespace {

// CONSTANT bytes at least this aligned are used in place (what malloc, and so HostTensor's
// storage, gives).
constexpr uintptr_t kConstantAlignment = 16;

absl::StatusOr<SymExpr> Sym(const proto::SymExpr& p, absl::string_view what) {
  absl::StatusOr<SymExpr> e = SymExpr::FromProto(p);
  if (!e.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", e.status().message()));
  return e;
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

// Appends kernel `k`'s KernelInfo to `v.kernels`, marking the INPUT buffers it writes.
absl::Status CheckKernel(const proto::Kernel& k,
                         const absl::flat_hash_map<int, CoilKernelFn>& table,
                         ValidatedSchedule& v) {
  const std::vector<int>& index_of_id = v.index_of_id;
  std::vector<BufferInfo>& buffers = v.buffers;
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
  if (k.parallel_dims() < 0 || k.parallel_dims() > k.ranges_size()) {
    return error("parallel_dims ", k.parallel_dims(), " is not between 0 and the rank ",
                 k.ranges_size());
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
      // The layout attribute of channels-last convolutions is no schema attribute
      // (ir/channels_last.h): checked apart, and kept for the extern.
      absl::StatusOr<ChannelsLast> cl = TakeChannelsLast(info.attrs);
      if (!cl.ok()) return error(cl.status().message());
      if (cl->any() && k.extern_op() != "aten.convolution") {
        return error("attribute '", kChannelsLastAttr, "' on ", k.extern_op(),
                     " (only aten.convolution takes it)");
      }
      if (absl::Status s = NormalizeAttrs(*schema, info.attrs); !s.ok()) {
        return error(s.message());
      }
      if (cl->any()) info.attrs[kChannelsLastAttr] = Attribute(IntList{cl->input, cl->output});
      info.symbolic_attrs = HasSymbolicAttr(info.attrs);
      break;
    }
    default:
      return error("has no kind");
  }
  v.kernels.push_back(std::move(info));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ValidatedSchedule> ValidateSchedule(
    const proto::Schedule& schedule, const Graph& graph,
    const absl::flat_hash_map<int, CoilKernelFn>& table,
    const absl::flat_hash_map<int64_t, const std::string*>& dense,
    const std::string& external_data_dir) {
  ValidatedSchedule out;
  std::vector<BufferInfo>& buffers = out.buffers;
  std::vector<int>& index_of_id = out.index_of_id;
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
        if (auto it = dense.find(v->id()); it != dense.end()) {
          const std::string* raw = it->second;
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
        absl::StatusOr<HostTensor> t = LoadConstant(*v, external_data_dir);
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
  out.arena_bytes = *std::move(arena);
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
    if (absl::Status s = CheckKernel(k, table, out); !s.ok()) return s;
  }
  for (const auto& [id, fn] : table) {
    if (!kernel_ids.contains(id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the kernel table has a function for kernel ", id,
                       ", which the schedule does not have"));
    }
  }
  return out;
}

}  // namespace coil::cpu
