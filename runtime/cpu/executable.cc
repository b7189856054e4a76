// CpuExecutable: Create (the schedule checked by schedule_validation.h), and Run: the
// per-binding layout (layout.h), buffer pointers, kernels in order, outputs.
#include "runtime/cpu/executable.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"
#include "ir/graph.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/internal/extern_epilogue.h"
#include "runtime/cpu/internal/layout.h"
#include "runtime/cpu/internal/schedule_validation.h"
#include "runtime/cpu/internal/transposed_operand.h"
#include "runtime/cpu/kernel_error.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/interpreter.h"
#include "runtime/tensor_storage.h"

namespace coil::cpu {
namespace {

using Bindings = absl::flat_hash_map<std::string, int64_t>;

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
  ValidatedSchedule checked;  // schedule_validation.h
  std::optional<Layout> layout;  // of the last run's symbol values
  std::unique_ptr<char, FreeDeleter> arena;
  int64_t arena_capacity = 0;
  // What each EXTERN kernel's implementation keeps across runs (primitives, packed weights).
  std::vector<ExternStateSlot> extern_states;  // by kernel index
  // Convolution epilogues that oneDNN can run as post-ops (extern_epilogue.h), by kernel
  // index; and whether the last run of each kernel ran its epilogue that way (profiles).
  std::vector<std::optional<EpilogueMatch>> post_ops;
  std::vector<bool> fused_last_run;
  // Per layout key, per kernel: whether the post-op path was measured faster than the
  // convolution plus its generated epilogue (kFused), slower (kUnfused), or not yet measured.
  enum Choice : int8_t { kUnmeasured, kFused, kUnfused };
  absl::flat_hash_map<std::vector<int64_t>, std::vector<Choice>> post_op_choices;
  bool measure_post_ops = true;  // false: the post-op path whenever it is possible
  bool measure_mm_post_ops = true;  // the same for aten.mm (COIL_MM_POST_OPS)
  // Transposing copies whose aten.mm reads their source as a transposed operand instead
  // (transposed_operand.h): per kernel index, whether it is such a copy (skipped in order),
  // and for each aten.mm its operands read that way.
  std::vector<bool> skipped_copy;
  std::vector<std::vector<TransposedOperand>> transposed_operands;
  // Squeeze-excitation multiplies that the 1x1 convolution right after them reads as a scaled
  // input (extern_epilogue.h, MatchScaledInput), by the convolution's kernel index; per run,
  // the convolution's ExternScaledInput when the multiply was skipped for it (else null).
  std::vector<std::optional<ScaledInputMatch>> scaled_inputs;
  std::vector<ExternScaledInput> scaled_args;
  std::vector<std::vector<float>> scale_copies;
  std::vector<const ExternScaledInput*> scaled_this_run;
  // Per-run scratch, kept to avoid allocations (runs are serialized).
  std::vector<char*> ptrs;
  std::vector<int64_t> symbols;
  // Profiling (SetProfiling): per kernel, in program order.
  bool profiling = false;
  std::vector<CpuExecutable::KernelTime> times;

  // Dense constant bytes by graph value id, in *constants_from.
  absl::flat_hash_map<int64_t, const std::string*> dense;

  absl::Status Init(const CpuExecutableOptions& options);
  absl::StatusOr<Layout*> LayoutFor(const Bindings& b);
  absl::Status EnsureArena(int64_t bytes);
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs);
  // Kernel `ki`'s convolution with its epilogue as oneDNN post-ops, straight into the
  // epilogue's buffer: false (nothing ran) when the buffers' shapes or places do not allow it
  // (a destination overlapping an operand) or oneDNN declines.
  absl::StatusOr<bool> RunWithPostOps(const Layout& l, size_t ki, const ExternCall& call);
  // Whether kernel `ki` runs its epilogue as post-ops under layout `l`: measured on the first
  // run of each layout, like the convolution's own layout (dnnl_conv.cc): the post-op path
  // and the convolution followed by the generated epilogue run kTrials times each, the best
  // time of each counts. Both paths write the same buffers, so the trials leave nothing
  // behind that the run after them does not overwrite; a residual the epilogue overwrites in
  // place is copied first and put back before each trial and the run.
  absl::StatusOr<bool> UsePostOps(const Layout& l, size_t ki, const ExternCall& call);
  // Kernel `ki`'s extern alone (the library or the reference kernel).
  absl::Status RunPlainExtern(size_t ki, const ExternCall& call);
  // Kernel `ki`'s aten.mm with its transposed operands (transposed_operands[ki]) read in
  // place; if the library declines, their copies run first and then the plain extern.
  absl::Status RunWithTransposedOperands(const Layout& l, size_t ki, ExternCall& call);
  // Kernel `ki`'s generated function (the body, or the extern's epilogue) over the pool.
  absl::Status RunGenerated(const Layout& l, size_t ki);
  // Whether convolution `conv` reads its scaled input this run (its multiply then does not
  // run): the call takes one, the buffers have the match's shapes, and nothing the
  // convolution writes overlaps the activation (the scale is copied). Sets scaled_this_run.
  bool PrepareScaledInput(Layout& l, size_t conv);
};

bool CpuExecutable::Impl::PrepareScaledInput(Layout& l, size_t conv) {
  scaled_this_run[conv] = nullptr;
  const ScaledInputMatch& m = *scaled_inputs[conv];
  const KernelInfo& k = checked.kernels[conv];
  ExternCall& call = l.externs[conv];
  if (call.input_offsets[0] != 0 || !call.inputs[0].view.empty()) return false;
  for (int i = 0; i < k.proto->extern_inputs_size(); ++i) {
    call.inputs[i].data = ptrs[k.proto->extern_inputs(i)] + call.input_offsets[i];
  }
  call.output.data = ptrs[k.proto->extern_output()];
  const std::vector<int64_t>& y = call.inputs[0].shape;
  const std::vector<int64_t>& x = l.shapes[checked.index_of_id[m.x_buffer]];
  const std::vector<int64_t>& scale = l.shapes[checked.index_of_id[m.scale_buffer]];
  if (y.size() != 4 || x != y || scale != std::vector<int64_t>{y[0], 1, 1, y[3]}) return false;
  ExternScaledInput& si = scaled_args[conv];
  si.x = ExternTensor{proto::FLOAT32, x, ptrs[m.x_buffer]};
  // The scale (N * C values) is copied: the memory plan may give its bytes, dead after the
  // multiply, to the convolution's result.
  std::vector<float>& copy = scale_copies[conv];
  copy.resize(scale[0] * scale[3]);
  std::memcpy(copy.data(), ptrs[m.scale_buffer], copy.size() * sizeof(float));
  si.scale = ExternTensor{proto::FLOAT32, scale, reinterpret_cast<char*>(copy.data())};
  si.steps.clear();
  for (const EpilogueMatch::Step& step : m.steps) si.steps.push_back({step.kind, step.lo, step.hi});
  si.hardsigmoid = m.hardsigmoid;
  // What the convolution writes: its result, and its epilogue's destination.
  auto bytes = [](const ExternTensor& t) { return t.numel() * int64_t{4}; };
  auto overlaps = [&](const char* a, int64_t an, const char* b, int64_t bn) {
    return a < b + bn && b < a + an;
  };
  std::vector<std::pair<const char*, int64_t>> written = {
      {call.output.data, call.output.numel() * static_cast<int64_t>(ElementSize(call.output.dtype))}};
  if (post_ops[conv].has_value()) {
    const int i = checked.index_of_id[post_ops[conv]->store_buffer];
    written.push_back({ptrs[post_ops[conv]->store_buffer], l.bytes[i]});
  }
  for (const auto& [w, n] : written) {
    if (overlaps(si.x.data, bytes(si.x), w, n)) return false;
  }
  if (!ConvolutionTakesScaledInput(ExternArgs{call.inputs, call.output, call.attrs,
                                              pool->num_threads(), &extern_states[conv],
                                              pool.get()})) {
    return false;
  }
  scaled_this_run[conv] = &si;
  return true;
}

absl::Status CpuExecutable::Impl::RunPlainExtern(size_t ki, const ExternCall& call) {
  const KernelInfo& k = checked.kernels[ki];
  absl::Status s = RunExtern(k.proto->extern_op(),
                             ExternArgs{call.inputs, call.output, call.attrs, pool->num_threads(),
                                        &extern_states[ki], pool.get(), scaled_this_run[ki]});
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(k.where, " (extern ", k.proto->extern_op(),
                                             "): ", s.message()));
}

absl::Status CpuExecutable::Impl::RunWithTransposedOperands(const Layout& l, size_t ki,
                                                             ExternCall& call) {
  const KernelInfo& k = checked.kernels[ki];
  for (const TransposedOperand& t : transposed_operands[ki]) {
    call.inputs[t.operand].data = ptrs[t.source_buffer];
    call.inputs[t.operand].transposed = true;
  }
  absl::StatusOr<bool> done = false;
  if (const ExternImpl* impl = ExternRegistry::Default().Find(k.proto->extern_op())) {
    done = (*impl)(ExternArgs{call.inputs, call.output, call.attrs, pool->num_threads(),
                              &extern_states[ki], pool.get()});
  }
  for (const TransposedOperand& t : transposed_operands[ki]) {
    call.inputs[t.operand].data =
        ptrs[k.proto->extern_inputs(t.operand)] + call.input_offsets[t.operand];
    call.inputs[t.operand].transposed = false;
  }
  if (!done.ok()) {
    return absl::Status(done.status().code(), absl::StrCat(k.where, " (extern ",
                                                           k.proto->extern_op(),
                                                           "): ", done.status().message()));
  }
  if (*done) return absl::OkStatus();
  // Declined: the copies now (their sources are unwritten inputs, their results live until
  // this kernel), then the extern as usual.
  for (const TransposedOperand& t : transposed_operands[ki]) {
    if (absl::Status s = RunGenerated(l, t.copy_kernel); !s.ok()) return s;
  }
  return RunPlainExtern(ki, call);
}

absl::Status CpuExecutable::Impl::RunGenerated(const Layout& l, size_t ki) {
  const KernelInfo& k = checked.kernels[ki];
  if (k.fn == nullptr || l.parallel[ki] == 0) return absl::OkStatus();
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
  return absl::OkStatus();
}

absl::StatusOr<bool> CpuExecutable::Impl::UsePostOps(const Layout& l, size_t ki,
                                                     const ExternCall& call) {
  if (post_op_choices.size() >= 16 && !post_op_choices.contains(l.key)) post_op_choices.clear();
  const bool mm = checked.kernels[ki].proto->extern_op() == "aten.mm";
  if (!(mm ? measure_mm_post_ops : measure_post_ops)) return true;
  std::vector<Choice>& choices = post_op_choices[l.key];
  choices.resize(checked.kernels.size(), kUnmeasured);
  if (choices[ki] != kUnmeasured) return choices[ki] == kFused;
  constexpr int kTrials = 3;
  // An epilogue written in place over its residual consumes the residual: each trial starts
  // from a copy of it, and so does the run after the trials.
  std::vector<char> residual;
  char* dst = nullptr;
  const EpilogueMatch& m = *post_ops[ki];
  for (const EpilogueMatch::Step& s : m.steps) {
    if (s.kind != ExternEpilogueStep::kAdd || ptrs[s.buffer] != ptrs[m.store_buffer]) continue;
    const int i = checked.index_of_id[s.buffer];
    int64_t n = ElementSize(checked.buffers[i].dtype);
    for (int64_t d : l.shapes[i]) n *= d;
    dst = ptrs[s.buffer];
    residual.assign(dst, dst + n);
  }
  auto restore = [&] {
    if (dst != nullptr) std::memcpy(dst, residual.data(), residual.size());
  };
  double fused_s = 1e300, unfused_s = 1e300;
  for (int t = 0; t < kTrials; ++t) {
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> fused = RunWithPostOps(l, ki, call);
    if (!fused.ok()) return fused.status();
    if (!*fused) {  // declined (shapes, places, oneDNN): the generated epilogue it is
      choices[ki] = kUnfused;
      return false;
    }
    fused_s = std::min(fused_s, std::chrono::duration<double>(
                                    std::chrono::steady_clock::now() - start).count());
    restore();
    start = std::chrono::steady_clock::now();
    if (absl::Status s = RunPlainExtern(ki, call); !s.ok()) return s;
    if (absl::Status s = RunGenerated(l, ki); !s.ok()) return s;
    unfused_s = std::min(unfused_s, std::chrono::duration<double>(
                                        std::chrono::steady_clock::now() - start).count());
    restore();
  }
  choices[ki] = fused_s <= unfused_s ? kFused : kUnfused;
  return choices[ki] == kFused;
}

absl::StatusOr<bool> CpuExecutable::Impl::RunWithPostOps(const Layout& l, size_t ki,
                                                          const ExternCall& call) {
  const EpilogueMatch& m = *post_ops[ki];
  auto tensor = [&](int id) {
    const int i = checked.index_of_id[id];
    return ExternTensor{checked.buffers[i].dtype, l.shapes[i], ptrs[id]};
  };
  auto overlap = [](const ExternTensor& a, const ExternTensor& b) {
    const char *a0 = a.data, *b0 = b.data;
    const char* a1 = a.data + a.numel() * static_cast<int64_t>(ElementSize(a.dtype));
    const char* b1 = b.data + b.numel() * static_cast<int64_t>(ElementSize(b.dtype));
    return a0 < b1 && b0 < a1;
  };
  ExternTensor out = tensor(m.store_buffer);
  const std::vector<int64_t> stored_shape = out.shape;
  // An aten.mm writing its result as a reshape (extern_output_shape): the epilogue's
  // destination as the [m, n] matrix, the same bytes.
  if (checked.kernels[ki].proto->extern_op() == "aten.mm" &&
      out.numel() == call.output.numel() && call.output.view.empty()) {
    out.shape = call.output.shape;
  }
  // f32, or bf16 (--precision bf16; also an f32 epilogue of a bf16 result).
  if ((out.dtype != proto::FLOAT32 && out.dtype != proto::BFLOAT16) ||
      out.shape != call.output.shape) {
    return false;
  }
  for (const ExternTensor& in : call.inputs) {
    if (overlap(out, in)) return false;
  }
  std::vector<ExternTensor> residuals;
  residuals.reserve(m.steps.size());
  std::vector<ExternEpilogueStep> steps;
  for (const EpilogueMatch::Step& s : m.steps) {
    ExternEpilogueStep step{s.kind, s.lo, s.hi, nullptr};
    if (s.kind == ExternEpilogueStep::kAdd) {
      residuals.push_back(tensor(s.buffer));
      // The destination itself (the epilogue writes in place over the residual: a `sum`
      // post-op), or bytes apart from it.
      const bool in_place = residuals.back().data == out.data &&
                            checked.kernels[ki].proto->extern_op() == "aten.convolution";
      if (residuals.back().shape != stored_shape || residuals.back().dtype != out.dtype ||
          (!in_place && overlap(out, residuals.back()))) {
        return false;
      }
      residuals.back().shape = out.shape;
      step.other = &residuals.back();
    }
    if (s.kind == ExternEpilogueStep::kBias) {  // [n]: one value per column of the result
      residuals.push_back(tensor(s.buffer));
      if (residuals.back().shape.size() != 1 || out.shape.empty() ||
          residuals.back().shape[0] != out.shape.back() || residuals.back().dtype != out.dtype ||
          overlap(out, residuals.back())) {
        return false;
      }
      step.other = &residuals.back();
    }
    steps.push_back(step);
  }
  return RunExternFused(
      checked.kernels[ki].proto->extern_op(),
      ExternArgs{call.inputs, out, call.attrs, pool->num_threads(), &extern_states[ki], pool.get(),
                 scaled_this_run[ki]},
      steps);
}

absl::Status CpuExecutable::Impl::Init(const CpuExecutableOptions& options) {
  absl::StatusOr<ValidatedSchedule> v =
      ValidateSchedule(schedule, graph, table, dense, options.external_data_dir);
  if (!v.ok()) return v.status();
  checked = *std::move(v);
  extern_states.resize(checked.kernels.size());
  post_ops.resize(checked.kernels.size());
  fused_last_run.assign(checked.kernels.size(), false);
  skipped_copy.assign(checked.kernels.size(), false);
  scaled_inputs.assign(checked.kernels.size(), std::nullopt);
  scaled_args.assign(checked.kernels.size(), ExternScaledInput());
  scale_copies.assign(checked.kernels.size(), {});
  scaled_this_run.assign(checked.kernels.size(), nullptr);
  transposed_operands.assign(checked.kernels.size(), {});
  // COIL_MM_TRANSPOSED=0 (read when the executable is made) keeps every transposing copy.
  const char* transposed_env = std::getenv("COIL_MM_TRANSPOSED");
  if (transposed_env == nullptr || std::string(transposed_env) != "0") {
    for (const TransposedOperand& t : FindTransposedOperands(schedule)) {
      if (checked.kernels[t.copy_kernel].fn == nullptr) continue;
      skipped_copy[t.copy_kernel] = true;
      transposed_operands[t.extern_kernel].push_back(t);
    }
  }
  // COIL_CONV_POST_OPS (read when the executable is made): unset, the post-op path where it
  // was measured faster (UsePostOps); =1 wherever possible, unmeasured; =all also with
  // residual adds (slow in oneDNN 2.6: extern_epilogue.h); =0 never.
  const char* env = std::getenv("COIL_CONV_POST_OPS");
  const std::string mode = env != nullptr ? env : "";
  measure_post_ops = mode != "1" && mode != "all";
  // COIL_MM_POST_OPS: f32 aten.mm epilogues (bias, GELU, relu, residual adds) as the matmul's
  // bias and post-ops; unset, where measured faster; =1 wherever possible; =0 never.
  const char* mm_env = std::getenv("COIL_MM_POST_OPS");
  const std::string mm_mode = mm_env != nullptr ? mm_env : "";
  measure_mm_post_ops = mm_mode != "1";
  // Scalar f32 constants (GELU's, in ONNX exports) by buffer id.
  const ScalarConstant scalar = [this](int id) -> std::optional<double> {
    if (id < 0 || id >= static_cast<int>(checked.index_of_id.size()) ||
        checked.index_of_id[id] < 0) {
      return std::nullopt;
    }
    const BufferInfo& b = checked.buffers[checked.index_of_id[id]];
    if (b.proto->kind() != proto::Buffer::CONSTANT || !b.shape.empty() ||
        b.dtype != proto::FLOAT32 || b.constant_data == nullptr) {
      return std::nullopt;
    }
    float v;
    std::memcpy(&v, b.constant_data, sizeof v);
    return v;
  };
  for (size_t i = 0; i < checked.kernels.size(); ++i) {
    if (checked.kernels[i].fn == nullptr) continue;
    const bool mm = checked.kernels[i].proto->extern_op() == "aten.mm";
    // (A transposed operand's copy is skipped for the plain extern, which reads its source.)
    if (mm && !transposed_operands[i].empty()) continue;
    if (mm ? mm_mode != "0" : mode != "0") {
      post_ops[i] = MatchExternEpilogue(schedule, static_cast<int>(i), mode == "all", scalar);
    }
  }
  // COIL_CONV_SCALED_INPUT=0 (read when the executable is made) runs every multiply.
  const char* scaled_env = std::getenv("COIL_CONV_SCALED_INPUT");
  if (scaled_env == nullptr || std::string(scaled_env) != "0") {
    for (size_t i = 1; i < checked.kernels.size(); ++i) {
      if (checked.kernels[i - 1].fn == nullptr || skipped_copy[i - 1]) continue;
      scaled_inputs[i] = MatchScaledInput(schedule, static_cast<int>(i - 1), static_cast<int>(i));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Layout*> CpuExecutable::Impl::LayoutFor(const Bindings& b) {
  std::vector<int64_t> key = LayoutKey(graph, b);
  if (layout.has_value() && layout->key == key) return &*layout;
  layout.reset();
  absl::StatusOr<Layout> l = ComputeLayout(checked, std::move(key), b, pool->num_threads());
  if (!l.ok()) return l.status();
  layout = *std::move(l);
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
  // Value symbols are not in the layout's key (LayoutKey): their values come from this call.
  for (size_t j = 0; j < graph.symbols().size(); ++j) {
    if (!graph.symbols()[j].value_of.empty()) symbols[j] = bindings->at(graph.symbols()[j].name);
  }
  if (absl::Status s = EnsureArena(l.arena_bytes); !s.ok()) return s;
  const std::vector<BufferInfo>& buffers = checked.buffers;
  const std::vector<int>& index_of_id = checked.index_of_id;
  const std::vector<KernelInfo>& kernels = checked.kernels;

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
    // A multiply the next convolution reads as its scaled input: nothing to run.
    const bool scaled_next = ki + 1 < kernels.size() && scaled_inputs[ki + 1].has_value() &&
                             PrepareScaledInput(l, ki + 1);
    if (k.proto->kind() == proto::Kernel::EXTERN) {
      ExternCall& call = l.externs[ki];
      for (int i = 0; i < k.proto->extern_inputs_size(); ++i) {
        call.inputs[i].data = ptrs[k.proto->extern_inputs(i)] + call.input_offsets[i];
      }
      call.output.data = ptrs[k.proto->extern_output()];
      absl::StatusOr<bool> fused = false;
      if (post_ops[ki].has_value()) {
        fused = UsePostOps(l, ki, call);
        if (fused.ok() && *fused) fused = RunWithPostOps(l, ki, call);
        if (!fused.ok()) {
          return absl::Status(fused.status().code(),
                              absl::StrCat(k.where, " (extern ", k.proto->extern_op(),
                                           " with its epilogue): ", fused.status().message()));
        }
      }
      fused_last_run[ki] = *fused;
      if (!*fused) {
        absl::Status s = transposed_operands[ki].empty()
                             ? RunPlainExtern(ki, call)
                             : RunWithTransposedOperands(l, ki, call);
        if (!s.ok()) return s;
      }
    }
    if (!fused_last_run[ki] && !skipped_copy[ki] && !scaled_next) {
      if (absl::Status s = RunGenerated(l, ki); !s.ok()) return s;
    }
    if (profiling) {
      if (ki + 1 < kernels.size() && scaled_inputs[ki + 1].has_value()) {
        times[ki].kind = scaled_next ? "skipped (the next kernel's scaled input)" : "pointwise";
      }
      if (k.proto->kind() == proto::Kernel::EXTERN) {
        times[ki].kind = absl::StrCat("extern ", k.proto->extern_op(),
                                      scaled_this_run[ki] != nullptr ? " + scaled input" : "",
                                      fused_last_run[ki] ? " + post-ops" : "",
                                      transposed_operands[ki].empty() ? ""
                                                                      : " (transposed operand)");
      }
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
  // With externs, the generated kernels may run on OpenMP's team, oneDNN's threads
  // (COIL_CPU_POOL, dnnl_api.h); a program of generated kernels alone keeps its own.
  const bool has_extern = std::any_of(
      impl->checked.kernels.begin(), impl->checked.kernels.end(),
      [](const KernelInfo& k) { return k.proto->kind() == proto::Kernel::EXTERN; });
  // COIL_POOL_SPIN_US (read per executable; for A/B measurements) overrides the 20 us spin.
  int spin_us = 20;
  if (const char* v = std::getenv("COIL_POOL_SPIN_US"); v != nullptr && *v != 0) {
    spin_us = std::max(0, std::atoi(v));
  }
  impl->pool = std::make_unique<ThreadPool>(options.num_threads, spin_us,
                                            has_extern ? ExternThreadTeam() : nullptr);
  return std::unique_ptr<CpuExecutable>(new CpuExecutable(std::move(impl)));
}

absl::StatusOr<std::vector<HostTensor>> CpuExecutable::Run(absl::Span<const HostTensor> inputs) {
  absl::MutexLock lock(&mu_);
  return impl_->Run(inputs);
}

void CpuExecutable::SetProfiling(bool on) {
  absl::MutexLock lock(&mu_);
  impl_->profiling = on;
  impl_->times.assign(impl_->checked.kernels.size(), KernelTime());
  for (size_t i = 0; i < impl_->checked.kernels.size(); ++i) {
    const proto::Kernel& k = *impl_->checked.kernels[i].proto;
    KernelTime& t = impl_->times[i];
    t.kernel = k.name();
    t.kind = k.kind() == proto::Kernel::EXTERN    ? absl::StrCat("extern ", k.extern_op())
             : k.kind() == proto::Kernel::REDUCTION ? "reduction"
                                                    : "pointwise";
    if (impl_->skipped_copy[i]) t.kind = "skipped (mm operand)";
  }
}

std::vector<CpuExecutable::KernelTime> CpuExecutable::Profile() {
  absl::MutexLock lock(&mu_);
  return impl_->times;
}

int CpuExecutable::num_threads() const { return impl_->pool->num_threads(); }

}  // namespace coil::cpu
