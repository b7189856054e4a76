// The extern registry, dispatch, and the reference-kernel fallback.
#include "runtime/cpu/externs.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/channels_last.h"
#include "ir/op_registry.h"
#include "ir/tensor_type.h"
#include "runtime/channels_last_copy.h"
#include "runtime/cpu/internal/attention.h"
#include "runtime/cpu/internal/extern_view.h"
#include "runtime/cpu/internal/scatter.h"
#include "runtime/host_tensor.h"
#include "runtime/reference/kernel_registry.h"

namespace coil::cpu {
namespace {

int64_t Bytes(const ExternTensor& t) { return t.numel() * ElementSize(t.dtype); }

// The ops whose implementations read viewed inputs (ExternTensor::view) or decline them.
bool ReadsViews(absl::string_view op) { return op == "aten.mm" || op == "aten.bmm"; }

bool AnyView(const ExternArgs& args) {
  for (const ExternTensor& t : args.inputs) {
    if (!t.view.empty()) return true;
  }
  return !args.output.view.empty();
}

}  // namespace

int64_t ExternTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const ExternRegistry& ExternRegistry::Default() {
  static const ExternRegistry* registry = [] {
    auto* r = new ExternRegistry();
    RegisterDnnlExterns(*r);
    r->Register("prims.scatter", internal::Scatter);  // typed loops, not through double
    r->Register("aten.scaled_dot_product_attention", internal::Attention);  // fused, blocked
    return r;
  }();
  return *registry;
}

void ExternRegistry::Register(absl::string_view op, ExternImpl impl) {
  impls_[op] = std::move(impl);
}

const ExternImpl* ExternRegistry::Find(absl::string_view op) const {
  auto it = impls_.find(op);
  return it == impls_.end() ? nullptr : &it->second;
}

void ExternRegistry::RegisterFused(absl::string_view op, FusedExternImpl impl) {
  fused_[op] = std::move(impl);
}

const FusedExternImpl* ExternRegistry::FindFused(absl::string_view op) const {
  auto it = fused_.find(op);
  return it == fused_.end() ? nullptr : &it->second;
}

absl::StatusOr<bool> RunExternFused(absl::string_view op, const ExternArgs& args,
                                    absl::Span<const ExternEpilogueStep> epilogue) {
  const FusedExternImpl* impl = ExternRegistry::Default().FindFused(op);
  if (impl == nullptr) return false;
  return (*impl)(args, epilogue);
}

absl::Status RunReferenceExtern(absl::string_view op, const ExternArgs& args) {
  const ReferenceKernel* fn = ReferenceKernels::Global().Find(op);
  if (fn == nullptr) {
    return absl::UnimplementedError(absl::StrCat("no reference kernel for extern op '", op, "'"));
  }
  const OpSchema* schema = OpRegistry::Global().Find(op);
  if (schema == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown op '", op, "'"));
  // Activations stored channels-last (ir/channels_last.h): computed on NCHW copies.
  AttrMap attrs = args.attrs;
  absl::StatusOr<ChannelsLast> cl = TakeChannelsLast(attrs);
  if (!cl.ok()) return cl.status();
  if (cl->any() && (args.inputs.empty() || args.inputs[0].shape.size() != 4 ||
                    args.output.shape.size() != 4)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute '", kChannelsLastAttr, "' needs a rank-4 input 0 and output"));
  }
  std::vector<HostTensor> inputs;
  std::vector<TensorType> types;
  for (const ExternTensor& t : args.inputs) {
    std::string bytes(Bytes(t), '\0');
    if (!bytes.empty()) {
      if (t.view.empty()) {
        std::memcpy(bytes.data(), t.data, bytes.size());
      } else {
        GatherView(t, bytes.data());
      }
    }
    absl::StatusOr<HostTensor> h = HostTensor::FromBytes(t.dtype, t.shape, std::move(bytes));
    if (!h.ok()) return h.status();
    if (cl->input && inputs.empty()) *h = FromChannelsLastTensor(*h);
    types.push_back(TensorType(h->dtype(), {h->shape().begin(), h->shape().end()}));
    inputs.push_back(*std::move(h));
  }
  // The reference kernel trusts its arguments (as after Verify): the call must type-check
  // against the op's meta function and produce exactly the output buffer's type.
  absl::StatusOr<std::vector<TensorType>> want = InferOutputTypes(*schema, types, attrs);
  if (!want.ok()) return want.status();
  const std::vector<int64_t> out_shape =
      cl->output ? FromChannelsLast(args.output.shape) : args.output.shape;
  const TensorType out_type(args.output.dtype, {out_shape.begin(), out_shape.end()});
  if (want->empty() || (*want)[0] != out_type) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the op's result ", want->empty() ? std::string("(none)") : (*want)[0].ToString(),
        " does not match the output buffer's ", out_type.ToString()));
  }
  std::vector<std::vector<int64_t>> shapes = {out_shape};
  std::vector<DType> dtypes = {args.output.dtype};
  KernelContext ctx{inputs, attrs, shapes, dtypes};
  absl::StatusOr<std::vector<HostTensor>> results = (*fn)(ctx);
  if (!results.ok()) return results.status();
  if (results->empty()) return absl::InternalError("the reference kernel returned no output");
  const HostTensor r = cl->output && (*results)[0].rank() == 4
                           ? ToChannelsLastTensor((*results)[0])
                           : (*results)[0];
  if (r.shape() != args.output.shape || r.dtype() != args.output.dtype) {
    return absl::InternalError(absl::StrCat("the reference kernel returned ", r.TypeString(),
                                            " for an output of ", out_type.ToString()));
  }
  const std::string bytes = r.Bytes();
  if (bytes.empty()) return absl::OkStatus();
  if (args.output.view.empty()) {
    std::memcpy(args.output.data, bytes.data(), bytes.size());
  } else {
    ScatterView(bytes.data(), args.output);
  }
  return absl::OkStatus();
}

absl::Status RunExtern(absl::string_view op, const ExternArgs& args) {
  const bool viewed = AnyView(args);
  const ExternImpl* impl = ExternRegistry::Default().Find(op);
  if (impl != nullptr && (!viewed || ReadsViews(op))) {
    absl::StatusOr<bool> done = (*impl)(args);
    if (!done.ok()) return done.status();
    if (*done) return absl::OkStatus();
  }
  if (viewed && impl != nullptr) {
    // Declined or not read: the implementation gets contiguous copies of the viewed inputs.
    // A viewed output: the result into a contiguous copy, then written through the view.
    std::vector<std::vector<char>> copies;
    std::vector<ExternTensor> inputs(args.inputs.begin(), args.inputs.end());
    for (ExternTensor& t : inputs) {
      if (t.view.empty()) continue;
      copies.emplace_back(Bytes(t));
      GatherView(t, copies.back().data());
      t.data = copies.back().data();
      t.view.clear();
    }
    ExternTensor output = args.output;
    std::vector<char> result;
    if (!output.view.empty()) {
      result.resize(Bytes(output));
      output.data = result.data();
      output.view.clear();
    }
    absl::Status s = RunExtern(op, ExternArgs{inputs, output, args.attrs, args.num_threads,
                                              args.state, args.pool});
    if (s.ok() && !args.output.view.empty() && !result.empty()) {
      ScatterView(result.data(), args.output);
    }
    return s;
  }
  if (args.scaled_input != nullptr) {  // the reference kernel would read the unwritten input
    return absl::InternalError(absl::StrCat(op, ": a scaled input that no implementation took"));
  }
  return RunReferenceExtern(op, args);
}

}  // namespace coil::cpu
