// The Schedule interpreter: buffers and the arena, poisoning, kernels in order, results.
#include "runtime/schedule_interpreter.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/graph.h"
#include "runtime/internal/schedule_extern.h"
#include "runtime/internal/schedule_kernel.h"
#include "runtime/interpreter.h"

namespace coil {
namespace {

using schedule_internal::BufferMem;
using schedule_internal::CompiledKernel;
using SymBindings = absl::flat_hash_map<std::string, SymExpr>;

std::string Describe(const proto::Buffer& b) {
  return absl::StrCat("buffer ", b.id(), " ('", b.name(), "')");
}

// Everything one run owns: buffer memory and where it came from.
struct State {
  std::vector<std::unique_ptr<BufferMem>> owned;
  std::vector<BufferMem*> by_id;                     // index 0 unused
  std::vector<std::unique_ptr<std::string>> storage;  // inputs, constants, outputs
  std::vector<uint8_t> arena;
  absl::flat_hash_map<int, int> input_of_buffer;  // buffer id -> graph input position
};

uint8_t* NewStorage(State& st, std::string bytes) {
  st.storage.push_back(std::make_unique<std::string>(std::move(bytes)));
  return reinterpret_cast<uint8_t*>(st.storage.back()->data());
}

// Shapes, kinds and memory of every buffer (the arena is sized here too).
absl::Status SetUpBuffers(const proto::Schedule& s, const Graph& g,
                          absl::Span<const HostTensor> inputs, const SymBindings& sym,
                          const ScheduleInterpreterOptions& options, State& st) {
  int max_id = 0;
  for (const proto::Buffer& b : s.buffers()) max_id = std::max(max_id, b.id());
  // Ids index a table: a sparse huge id must not allocate gigabytes.
  if (max_id > s.buffers_size() + (1 << 16)) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer id ", max_id, " is out of range for ", s.buffers_size(), " buffers"));
  }
  st.by_id.assign(max_id + 1, nullptr);
  absl::StatusOr<int64_t> arena_bytes = schedule_internal::EvalConstant(
      s.memory_plan().arena_bytes(), sym);
  if (!arena_bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory plan arena_bytes: ", arena_bytes.status().message()));
  }
  if (*arena_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat("arena of ", *arena_bytes, " bytes"));
  }
  int64_t allocated = *arena_bytes;  // arena + OUTPUT buffers, against max_memory_bytes
  if (allocated > options.max_memory_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("arena of ", *arena_bytes,
                                                     " bytes exceeds the limit of ",
                                                     options.max_memory_bytes, " bytes"));
  }
  st.arena.assign(*arena_bytes, options.poison_dead_buffers ? 0xFF : 0);
  for (const proto::Buffer& pb : s.buffers()) {
    if (pb.id() <= 0 || st.by_id[pb.id()] != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(pb), ": ids must be >= 1 and unique"));
    }
    if (!IsValidDType(pb.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat(Describe(pb), " has no valid dtype"));
    }
    auto b = std::make_unique<BufferMem>();
    b->id = pb.id();
    b->name = pb.name();
    b->kind = pb.kind();
    b->dtype = pb.dtype();
    b->elem_size = ElementSize(pb.dtype());
    b->numel = 1;
    for (const proto::SymExpr& d : pb.shape()) {
      absl::StatusOr<int64_t> v = schedule_internal::EvalConstant(d, sym);
      if (!v.ok() || *v < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            Describe(pb), " shape: ", v.ok() ? absl::StrCat("negative size ", *v)
                                             : std::string(v.status().message())));
      }
      b->shape.push_back(*v);
    }
    // The byte size (and every partial product the strides use) must fit in int64.
    int64_t bytes = b->elem_size;
    for (int64_t d : b->shape) {
      if (d != 0 && __builtin_mul_overflow(bytes, d, &bytes)) {
        return absl::InvalidArgumentError(
            absl::StrCat(Describe(pb), " of shape [", absl::StrJoin(b->shape, ", "),
                         "] has a size that overflows int64"));
      }
    }
    for (int64_t d : b->shape) b->numel *= d;
    b->strides.assign(b->shape.size(), 1);
    for (int d = static_cast<int>(b->shape.size()) - 2; d >= 0; --d) {
      b->strides[d] = b->strides[d + 1] * b->shape[d + 1];
    }
    switch (pb.kind()) {
      case proto::Buffer::INPUT: {
        int pos = -1;
        for (size_t i = 0; i < g.inputs().size(); ++i) {
          if (g.inputs()[i]->id() == pb.graph_value()) pos = static_cast<int>(i);
        }
        if (pos < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              Describe(pb), ": graph value %", pb.graph_value(), " is not a graph input"));
        }
        if (inputs[pos].shape() != b->shape || inputs[pos].dtype() != b->dtype) {
          return absl::InvalidArgumentError(absl::StrCat(Describe(pb), " is ", DTypeName(b->dtype),
                                                         "[", absl::StrJoin(b->shape, ", "),
                                                         "], input ", pos, " is ",
                                                         inputs[pos].TypeString()));
        }
        st.input_of_buffer[pb.id()] = pos;
        b->data = NewStorage(st, inputs[pos].Bytes());
        break;
      }
      case proto::Buffer::CONSTANT: {
        const Value* v = g.FindValue(pb.graph_value());
        if (v == nullptr || v->kind() != Value::Kind::kConstant) {
          return absl::InvalidArgumentError(absl::StrCat(
              Describe(pb), ": graph value %", pb.graph_value(), " is not a constant"));
        }
        absl::StatusOr<HostTensor> t = LoadConstant(*v, options.external_data_dir);
        if (!t.ok()) return t.status();
        if (t->shape() != b->shape || t->dtype() != b->dtype) {
          return absl::InvalidArgumentError(absl::StrCat(Describe(pb), " does not match constant ",
                                                         t->TypeString()));
        }
        b->data = NewStorage(st, t->Bytes());
        break;
      }
      case proto::Buffer::INTERMEDIATE: {
        absl::StatusOr<int64_t> off = schedule_internal::EvalConstant(pb.arena_offset(), sym);
        if (!off.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(Describe(pb), " arena_offset: ", off.status().message()));
        }
        if (*off < 0 || *off > *arena_bytes - b->size_bytes()) {
          return absl::InvalidArgumentError(absl::StrCat(
              Describe(pb), " at arena offset ", *off, " with ", b->size_bytes(),
              " bytes does not fit in the arena of ", *arena_bytes, " bytes"));
        }
        b->data = st.arena.data() + *off;
        break;
      }
      case proto::Buffer::OUTPUT:
        if (__builtin_add_overflow(allocated, b->size_bytes(), &allocated) ||
            allocated > options.max_memory_bytes) {
          return absl::ResourceExhaustedError(absl::StrCat(
              Describe(pb), " of ", b->size_bytes(), " bytes: the arena and outputs exceed ",
              "the limit of ", options.max_memory_bytes, " bytes"));
        }
        b->data = NewStorage(st, std::string(b->size_bytes(), '\0'));
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(Describe(pb), " has no kind"));
    }
    st.by_id[pb.id()] = b.get();
    st.owned.push_back(std::move(b));
  }
  return absl::OkStatus();
}

// Buffers a kernel reads and writes (from its bodies and extern fields).
void Accesses(const proto::Kernel& k, std::vector<int>& reads, std::vector<int>& writes) {
  for (int id : k.extern_inputs()) reads.push_back(id);
  if (k.extern_output() != 0) writes.push_back(k.extern_output());
  for (const proto::Loop& l : k.loops()) {
    for (const proto::Expr& e : l.body()) {
      if (e.kind() == proto::Expr::LOAD) reads.push_back(e.buffer());
      if (e.kind() == proto::Expr::STORE) writes.push_back(e.buffer());
    }
  }
}

// [Note: poisoning] Per INTERMEDIATE buffer: the kernel that first writes it and the last
// kernel that touches it. Before kernel k, buffers first written at k are poisoned (except
// in-place ones, which share their bytes with a buffer read at k); after kernel k, buffers last
// used at k are poisoned, sparing only the bytes of live buffers declared in place over them
// (Buffer.in_place with Buffer.reuses naming the dying buffer). Any other overlap of live
// buffers is a planning bug and shows up as NaN.
class Poisoner {
 public:
  Poisoner(const proto::Schedule& s, const State& st) : st_(st) {
    for (int k = 0; k < s.kernels_size(); ++k) {
      std::vector<int> reads, writes;
      Accesses(s.kernels(k), reads, writes);
      for (int id : writes) {
        if (!IsIntermediate(id)) continue;
        Life& l = life_[id];
        if (l.first_write < 0) l.first_write = k;
        l.last_use = std::max(l.last_use, k);
      }
      for (int id : reads) {
        if (IsIntermediate(id)) life_[id].last_use = std::max(life_[id].last_use, k);
      }
    }
    for (const proto::Buffer& b : s.buffers()) {
      if (b.in_place() && life_.contains(b.id())) {
        life_[b.id()].in_place = true;
        life_[b.id()].reuses = b.reuses();
      }
    }
  }

  void Before(int k) {
    for (const auto& [id, l] : life_) {
      if (l.first_write == k && !l.in_place) Fill(*st_.by_id[id], {});
    }
  }

  void After(int k) {
    for (const auto& [id, l] : life_) {
      if (l.last_use != k) continue;
      std::vector<std::pair<const uint8_t*, const uint8_t*>> spare;
      for (const auto& [other, o] : life_) {
        if (o.in_place && o.reuses == id && o.first_write >= 0 && o.first_write <= k &&
            o.last_use > k) {
          const BufferMem& b = *st_.by_id[other];
          spare.push_back({b.data, b.data + b.size_bytes()});
        }
      }
      Fill(*st_.by_id[id], spare);
    }
  }

 private:
  struct Life {
    int first_write = -1;
    int last_use = -1;
    bool in_place = false;
    int reuses = 0;
  };

  bool IsIntermediate(int id) const {
    return id > 0 && id < static_cast<int>(st_.by_id.size()) && st_.by_id[id] != nullptr &&
           st_.by_id[id]->kind == proto::Buffer::INTERMEDIATE;
  }

  // Poisons b's bytes outside the `spare` ranges.
  static void Fill(const BufferMem& b,
                   const std::vector<std::pair<const uint8_t*, const uint8_t*>>& spare) {
    const uint8_t pattern = IsFloating(b.dtype) ? 0xFF : 0xA5;  // all-ones is NaN in every float
    uint8_t* lo = b.data;
    uint8_t* hi = b.data + b.size_bytes();
    std::vector<std::pair<uint8_t*, uint8_t*>> parts = {{lo, hi}};
    for (const auto& [slo, shi] : spare) {
      std::vector<std::pair<uint8_t*, uint8_t*>> next;
      for (auto [plo, phi] : parts) {
        if (shi <= plo || slo >= phi) {
          next.push_back({plo, phi});
          continue;
        }
        if (slo > plo) next.push_back({plo, const_cast<uint8_t*>(slo)});
        if (shi < phi) next.push_back({const_cast<uint8_t*>(shi), phi});
      }
      parts = std::move(next);
    }
    for (auto [plo, phi] : parts) std::memset(plo, pattern, phi - plo);
  }

  const State& st_;
  absl::flat_hash_map<int, Life> life_;
};

// A buffer's current contents as a new tensor.
absl::StatusOr<HostTensor> ToTensor(const BufferMem& b) {
  return HostTensor::FromBytes(
      b.dtype, b.shape, std::string(reinterpret_cast<const char*>(b.data), b.size_bytes()));
}

}  // namespace

absl::StatusOr<std::vector<HostTensor>> InterpretSchedule(
    const proto::Schedule& schedule, absl::Span<const HostTensor> inputs,
    const ScheduleInterpreterOptions& options) {
  absl::StatusOr<Graph> graph = Graph::FromProto(schedule.graph());
  if (!graph.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("schedule graph: ", graph.status().message()));
  }
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> bindings =
      BindSymbols(*graph, inputs);
  if (!bindings.ok()) return bindings.status();
  SymBindings sym;
  for (const auto& [name, v] : *bindings) sym[name] = SymExpr(v);

  State st;
  if (absl::Status s = SetUpBuffers(schedule, *graph, inputs, sym, options, st); !s.ok()) {
    return s;
  }
  // Compile every kernel first: a malformed schedule fails before any input is written.
  std::vector<CompiledKernel> compiled;
  for (const proto::Kernel& k : schedule.kernels()) {
    absl::StatusOr<CompiledKernel> c = schedule_internal::CompileKernel(k, sym, st.by_id);
    if (!c.ok()) return c.status();
    compiled.push_back(*std::move(c));
  }
  // The work, before any of it runs: a schedule from untrusted bytes must not hang.
  int64_t iterations = 0;
  for (const CompiledKernel& c : compiled) {
    int64_t inner = 0;
    for (const schedule_internal::CompiledLoop& l : c.loops) {
      if (__builtin_add_overflow(inner, std::max<int64_t>(l.count, 1), &inner)) inner = INT64_MAX;
    }
    int64_t n;
    if (__builtin_mul_overflow(c.count, inner, &n) ||
        __builtin_add_overflow(iterations, n, &iterations) ||
        iterations > options.max_iterations) {
      return absl::ResourceExhaustedError(absl::StrCat(
          c.where, ": the schedule's loops exceed the limit of ", options.max_iterations,
          " iterations"));
    }
  }
  std::unique_ptr<Poisoner> poison;
  if (options.poison_dead_buffers) poison = std::make_unique<Poisoner>(schedule, st);
  std::vector<bool> input_written(inputs.size(), false);
  for (int k = 0; k < schedule.kernels_size(); ++k) {
    const proto::Kernel& kernel = schedule.kernels(k);
    if (poison) poison->Before(k);
    if (kernel.kind() == proto::Kernel::EXTERN) {
      absl::Status s = schedule_internal::RunExtern(kernel, st.by_id, *bindings);
      if (!s.ok()) return s;
    }
    if (absl::Status s = schedule_internal::RunCompiledKernel(compiled[k]); !s.ok()) return s;
    if (poison) poison->After(k);
    std::vector<int> reads, writes;
    Accesses(kernel, reads, writes);
    for (int id : writes) {
      auto it = st.input_of_buffer.find(id);
      if (it != st.input_of_buffer.end()) input_written[it->second] = true;
    }
  }
  // Stores into INPUT buffers write through to the caller's tensors.
  for (const auto& [id, pos] : st.input_of_buffer) {
    if (!input_written[pos]) continue;
    const BufferMem& b = *st.by_id[id];
    HostTensor dst = inputs[pos];  // shares the caller's storage
    int64_t i = 0;
    ForEachIndex(dst.shape(), [&](absl::Span<const int64_t> idx) {
      schedule_internal::Val v = schedule_internal::LoadRaw(b.data + i * b.elem_size, b.dtype);
      if (IsFloating(b.dtype)) {
        dst.StoreDouble(dst.StorageOffset(idx), v.d);
      } else {
        dst.StoreInt(dst.StorageOffset(idx), v.i);
      }
      ++i;
    });
  }
  std::vector<HostTensor> outputs;
  for (int id : schedule.outputs()) {
    if (id <= 0 || id >= static_cast<int>(st.by_id.size()) || st.by_id[id] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("output buffer ", id, " does not exist"));
    }
    auto in = st.input_of_buffer.find(id);
    if (in != st.input_of_buffer.end()) {
      outputs.push_back(inputs[in->second]);
      continue;
    }
    absl::StatusOr<HostTensor> t = ToTensor(*st.by_id[id]);
    if (!t.ok()) return t.status();
    outputs.push_back(*std::move(t));
  }
  return outputs;
}

}  // namespace coil
