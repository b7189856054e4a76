// ComputeLayout (layout.h): shapes, sizes, arena offsets, parallel splits and extern calls of
// one binding of a CpuExecutable's symbols.
#include "runtime/cpu/internal/layout.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "runtime/cpu/internal/extern_view.h"
#include "runtime/cpu/kernel_abi.h"
#include "runtime/interpreter.h"

namespace coil::cpu {
namespace {

using Bindings = absl::flat_hash_map<std::string, int64_t>;

// Loop iterations (elements) one ParallelFor chunk should hold at least.
constexpr int64_t kGrainWork = 16384;
// Below this many iterations in all a kernel runs on the calling thread: waking the pool costs
// several microseconds (more on a loaded machine), as much as this work (docs/cpu_backend.md,
// "Runtime performance"). On 4 threads or more, kernels of two grains or more split
// (kMinParallelWorkMany): since a job wakes only the workers its chunks can use (thread_pool.h),
// such a kernel wakes 1-3 workers, and on the 16-core Xeon the GPT decoder's training step
// (~45 kernels of 65,536 iterations or fewer) went from 5.40-5.85 to 4.80-4.96 ms at 16 threads
// and 6.85 to 6.06 ms at 4 (docs/benchmarks.md). On 2 or 3 threads, where a wake-up is a
// larger share, the old bound.
constexpr int64_t kMinParallelWork = 65536;
constexpr int64_t kMinParallelWorkMany = kGrainWork;

// The chunk size of a kernel whose split spans its last dim too (Kernel.parallel_dims = rank: a
// column reduction), `positions` of rows of `cols`: whole rows while there are rows enough for
// the threads (a chunk inside a row reads parts of the rows' cache lines: mobilenet_v3_large's
// pools at batch 16, 16 threads), else about `threads` equal chunks, so that one row divides
// between them (an image's pool at batch 1). At least `grain`.
int64_t SpanningGrain(int64_t grain, int64_t positions, int64_t cols, int threads) {
  if (cols <= 0 || threads <= 1) return grain;
  if (positions / cols >= threads) return (std::max(grain, cols) + cols - 1) / cols * cols;
  return std::max(grain, (positions + threads - 1) / threads);
}

// The bound for a pool of `threads`, or COIL_CPU_MIN_PARALLEL_WORK when it holds a number >= 1
// (read once; for A/B measurements).
int64_t MinParallelWork(int threads) {
  static const int64_t env = [] {
    const char* text = std::getenv("COIL_CPU_MIN_PARALLEL_WORK");
    if (text == nullptr) return int64_t{0};
    char* end = nullptr;
    const long long n = std::strtoll(text, &end, 10);
    return end != text && *end == '\0' && n >= 1 ? static_cast<int64_t>(n) : int64_t{0};
  }();
  if (env > 0) return env;
  return threads >= 4 ? kMinParallelWorkMany : kMinParallelWork;
}

absl::StatusOr<int64_t> Product(absl::Span<const int64_t> dims, int64_t init = 1) {
  int64_t n = init;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative size ", d));
    if (__builtin_mul_overflow(n, d, &n)) return absl::InvalidArgumentError("size overflows int64");
  }
  return n;
}

}  // namespace

std::vector<int64_t> LayoutKey(const Graph& graph, const Bindings& b) {
  std::vector<int64_t> key;
  for (const SymbolInfo& s : graph.symbols()) {
    auto it = b.find(s.name);
    // A value symbol (a dropout's counter offset) changes every call and sizes nothing: it
    // stays out of the key, so a new value reuses the layout (and its measured choices).
    if (!s.value_of.empty()) {
      key.push_back(0);
      continue;
    }
    key.push_back(it == b.end() ? INT64_MIN : it->second);
  }
  return key;
}

absl::StatusOr<Layout> ComputeLayout(const ValidatedSchedule& schedule, std::vector<int64_t> key,
                                     const Bindings& b, int threads) {
  const std::vector<BufferInfo>& buffers = schedule.buffers;
  const std::vector<int>& index_of_id = schedule.index_of_id;
  const std::vector<KernelInfo>& kernels = schedule.kernels;
  Layout l;
  l.key = std::move(key);
  absl::StatusOr<int64_t> arena = schedule.arena_bytes.Evaluate(b);
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
    const int prefix =
        ParallelPrefixRank(static_cast<int>(ranges.size()), k.proto->parallel_dims());
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
    const bool tiny = *p <= MinParallelWork(threads) / row;
    int64_t grain = tiny ? std::max<int64_t>(*p, 1) : std::max<int64_t>(1, kGrainWork / row);
    if (!tiny && prefix == static_cast<int>(ranges.size()) && prefix >= 2) {
      grain = SpanningGrain(grain, *p, ranges.back(), threads);
    }
    l.grain.push_back(grain);
    l.externs.emplace_back();
    if (k.proto->kind() != proto::Kernel::EXTERN) continue;
    ExternCall& call = l.externs.back();
    auto tensor = [&](int id) {
      const int i = index_of_id[id];
      return ExternTensor{buffers[i].dtype, l.shapes[i], nullptr,
                          buffers[i].proto->kind() == proto::Buffer::CONSTANT};
    };
    for (int id : k.proto->extern_inputs()) call.inputs.push_back(tensor(id));
    call.input_offsets.assign(call.inputs.size(), 0);
    // Inputs read as strided views of their buffers (extern_view.h): none, or one per input.
    if (k.proto->extern_input_views_size() != 0 &&
        k.proto->extern_input_views_size() != static_cast<int>(call.inputs.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          k.where, ": ", k.proto->extern_input_views_size(), " input views for ",
          call.inputs.size(), " inputs"));
    }
    if (k.proto->extern_output_view().dims_size() > 0 && k.proto->extern_output_shape_size() > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(k.where, ": both an output view and an output shape"));
    }
    for (int i = 0; i < k.proto->extern_input_views_size(); ++i) {
      const proto::ExternView& pv = k.proto->extern_input_views(i);
      if (pv.dims_size() == 0) continue;
      ExternTensor& t = call.inputs[i];
      absl::StatusOr<EvaluatedView> v = EvaluateView(pv, b, t.numel());
      if (!v.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(k.where, " input ", i, ": ", v.status().message()));
      }
      t.shape = v->shape;
      t.view = std::move(v->factors);
      call.input_offsets[i] = v->offset * ElementSize(t.dtype);
    }
    call.output = tensor(k.proto->extern_output());
    if (k.proto->extern_output_view().dims_size() > 0) {  // the result written through strides
      absl::StatusOr<EvaluatedView> v =
          EvaluateView(k.proto->extern_output_view(), b, call.output.numel());
      if (!v.ok() || v->offset != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            k.where, " output: ", v.ok() ? "a view with an offset" : v.status().message()));
      }
      int64_t n = 1;
      for (int64_t d : v->shape) n *= d;
      if (n != call.output.numel()) {
        return absl::InvalidArgumentError(
            absl::StrCat(k.where, ": the output view does not cover its buffer"));
      }
      // Every element written once: the factors, by stride, must tile the buffer exactly.
      std::vector<ExternFactor> all;
      for (const std::vector<ExternFactor>& fs : v->factors) all.insert(all.end(), fs.begin(), fs.end());
      std::sort(all.begin(), all.end(),
                [](const ExternFactor& a, const ExternFactor& b) { return a.stride < b.stride; });
      int64_t covered = 1;
      for (const ExternFactor& f : all) {
        if (f.stride != covered) {
          return absl::InvalidArgumentError(
              absl::StrCat(k.where, ": the output view writes an element twice"));
        }
        covered *= f.size;
      }
      call.output.shape = v->shape;
      call.output.view = std::move(v->factors);
    }
    if (k.proto->extern_output_shape_size() > 0) {  // the buffer is a reshape of the result
      std::vector<int64_t> shape;
      for (const proto::SymExpr& d : k.proto->extern_output_shape()) {
        absl::StatusOr<SymExpr> e = SymExpr::FromProto(d);
        absl::StatusOr<int64_t> v = e.ok() ? e->Evaluate(b) : e.status();
        if (!v.ok() || *v < 0) {
          return absl::InvalidArgumentError(absl::StrCat(k.where, ": extern_output_shape: ",
                                                         v.ok() ? "negative" : v.status().message()));
        }
        shape.push_back(*v);
      }
      const int64_t numel = call.output.numel();
      call.output.shape = std::move(shape);
      if (call.output.numel() != numel) {
        return absl::InvalidArgumentError(
            absl::StrCat(k.where, ": extern_output_shape is no reshape of the output buffer"));
      }
    }
    call.attrs = k.attrs;
    if (k.symbolic_attrs) {
      if (absl::Status s = coil::BindSymAttrs(call.attrs, b); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat(k.where, ": ", s.message()));
      }
    }
  }
  return l;
}

}  // namespace coil::cpu
