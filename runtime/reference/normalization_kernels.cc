// Reference kernels of softmax, the normalizations and dropout (schemas in
// ir/ops/normalization_ops.cc). Statistics are computed in double, variances are biased (as
// PyTorch's normalizations), parameters are read through their own strides.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/ops/meta_util.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/reference/philox.h"

namespace coil {

void RegisterNormalizationKernels(ReferenceKernels& k);

namespace {

using Outputs = absl::StatusOr<std::vector<HostTensor>>;

// One element of a normalization group: storage offsets in x and the output, and the index
// into the (1-d or trailing-shaped) parameters.
struct Member {
  int64_t x;
  int64_t out;
  std::vector<int64_t> param_index;
};

// Optional parameter tensors (weight, bias, ...): null when the node has no such input.
const HostTensor* Input(const KernelContext& ctx, size_t i) {
  return i < ctx.inputs.size() ? &ctx.inputs[i] : nullptr;
}

absl::Status CheckShape(const HostTensor* p, absl::string_view name,
                        const std::vector<int64_t>& expected) {
  if (p == nullptr || p->shape() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, " has shape [",
                                                 absl::StrJoin(p->shape(), ", "),
                                                 "], expected [", absl::StrJoin(expected, ", "),
                                                 "]"));
}

double Param(const HostTensor* p, const std::vector<int64_t>& index, double absent) {
  return p == nullptr ? absent : p->GetDouble(index);
}

// y = (x - mean) / sqrt(var + eps) * weight + bias over one group (rms: no centering,
// y = x / sqrt(mean(x^2) + eps) * weight).
void NormalizeGroup(const HostTensor& x, HostTensor& out, const std::vector<Member>& g,
                    double eps, const HostTensor* weight, const HostTensor* bias, bool rms) {
  double n = static_cast<double>(g.size());
  double mean = 0;
  if (!rms) {
    for (const Member& m : g) mean += x.LoadDouble(m.x);
    mean /= n;
  }
  double var = 0;
  for (const Member& m : g) var += (x.LoadDouble(m.x) - mean) * (x.LoadDouble(m.x) - mean);
  var /= n;
  double inv = 1.0 / std::sqrt(var + eps);
  for (const Member& m : g) {
    double y = (x.LoadDouble(m.x) - mean) * inv;
    out.StoreDouble(m.out, y * Param(weight, m.param_index, 1.0) + Param(bias, m.param_index, 0.0));
  }
}

absl::StatusOr<double> Eps(const KernelContext& ctx) { return GetFloat(ctx.attrs, "eps"); }

// softmax / log_softmax along one dim.
ReferenceKernel SoftmaxKernel(bool log) {
  return [log](const KernelContext& ctx) -> Outputs {
    const HostTensor& x = ctx.inputs[0];
    absl::StatusOr<int64_t> dim = GetInt(ctx.attrs, "dim");
    if (!dim.ok()) return dim.status();
    absl::StatusOr<int64_t> d = meta::NormalizeDim(*dim, x.rank());
    if (!d.ok()) return d.status();
    HostTensor out = NewOutput(ctx);
    auto value = [&](int64_t off) {
      return IsFloating(x.dtype()) ? x.LoadDouble(off) : static_cast<double>(x.LoadInt(off));
    };
    ForEachLine(x, out, *d, [&](const std::vector<int64_t>& xo, const std::vector<int64_t>& oo) {
      const int64_t n = static_cast<int64_t>(xo.size());
      // Shift by the max (nan if any is nan, as PyTorch: all -inf gives nan too).
      double m = -INFINITY;
      for (int64_t i = 0; i < n; ++i) {
        double v = value(xo[i]);
        if (std::isnan(v) || v > m) m = v;
        if (std::isnan(m)) break;
      }
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += std::exp(value(xo[i]) - m);
      for (int64_t i = 0; i < n; ++i) {
        double shifted = value(xo[i]) - m;
        out.StoreDouble(oo[i], log ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    });
    return std::vector<HostTensor>{out};
  };
}

// layer_norm and rms_norm: groups are x's trailing normalized_shape dims.
ReferenceKernel TrailingNormKernel(bool rms) {
  return [rms](const KernelContext& ctx) -> Outputs {
    const HostTensor& x = ctx.inputs[0];
    const HostTensor* weight = Input(ctx, 1);
    const HostTensor* bias = rms ? nullptr : Input(ctx, 2);
    absl::StatusOr<SymList> ns = GetSyms(ctx.attrs, "normalized_shape");
    if (!ns.ok()) return ns.status();
    int64_t k = static_cast<int64_t>(ns->size());
    if (k == 0 || k > x.rank()) {
      return absl::InvalidArgumentError("normalized_shape does not fit the input's rank");
    }
    int64_t lead = x.rank() - k;
    std::vector<int64_t> lead_shape(x.shape().begin(), x.shape().begin() + lead);
    std::vector<int64_t> trail_shape(x.shape().begin() + lead, x.shape().end());
    for (int64_t i = 0; i < k; ++i) {
      std::optional<int64_t> c = (*ns)[i].AsConstant();
      if (c.has_value() && *c != trail_shape[i]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input of shape [", absl::StrJoin(x.shape(), ", "),
            "] does not end with normalized_shape dim ", *c));
      }
    }
    absl::Status s = CheckShape(weight, "weight", trail_shape);
    if (s.ok()) s = CheckShape(bias, "bias", trail_shape);
    if (!s.ok()) return s;
    absl::StatusOr<double> eps = Eps(ctx);
    if (!eps.ok()) return eps.status();
    double e = *eps;
    HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
    if (rms && e == -1.0) {  // None: the machine epsilon of the computing dtype
      switch (out.dtype()) {
        case proto::FLOAT16: e = 0.0009765625; break;   // 2^-10
        case proto::BFLOAT16: e = 0.0078125; break;     // 2^-7
        case proto::FLOAT32: e = FLT_EPSILON; break;
        default: e = DBL_EPSILON; break;
      }
    }
    std::vector<int64_t> full(x.rank());
    ForEachIndex(lead_shape, [&](absl::Span<const int64_t> l) {
      std::copy(l.begin(), l.end(), full.begin());
      std::vector<Member> group;
      ForEachIndex(trail_shape, [&](absl::Span<const int64_t> t) {
        std::copy(t.begin(), t.end(), full.begin() + lead);
        group.push_back({x.StorageOffset(full), out.StorageOffset(full),
                         std::vector<int64_t>(t.begin(), t.end())});
      });
      NormalizeGroup(x, out, group, e, weight, bias, rms);
    });
    return std::vector<HostTensor>{out};
  };
}

// Training batch_norm: statistics of each channel over every other dim (biased variance for
// y), and the running statistics blended with momentum (unbiased variance), as PyTorch.
Outputs BatchNormTraining(const KernelContext& ctx, double eps) {
  const HostTensor& x = ctx.inputs[0];
  int64_t channels = x.shape()[1];
  int64_t count = channels == 0 ? 0 : x.numel() / channels;
  if (count <= 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected more than 1 value per channel when training, got input size [",
                     absl::StrJoin(x.shape(), ", "), "]"));
  }
  absl::StatusOr<double> momentum = GetFloat(ctx.attrs, "momentum");
  if (!momentum.ok()) return momentum.status();
  std::vector<double> sum(channels, 0.0), sq(channels, 0.0);
  ForEachIndex(x.shape(), [&](absl::Span<const int64_t> idx) { sum[idx[1]] += x.GetDouble(idx); });
  for (double& s : sum) s /= static_cast<double>(count);  // now the mean
  ForEachIndex(x.shape(), [&](absl::Span<const int64_t> idx) {
    double d = x.GetDouble(idx) - sum[idx[1]];
    sq[idx[1]] += d * d;
  });
  const HostTensor* weight = Input(ctx, 3);
  const HostTensor* bias = Input(ctx, 4);
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  ForEachIndex(x.shape(), [&](absl::Span<const int64_t> idx) {
    std::vector<int64_t> ci = {idx[1]};
    double var = sq[idx[1]] / static_cast<double>(count);
    double y = (x.GetDouble(idx) - sum[idx[1]]) / std::sqrt(var + eps);
    out.SetDouble(idx, y * Param(weight, ci, 1.0) + Param(bias, ci, 0.0));
  });
  HostTensor mean = HostTensor::Zeros(ctx.output_dtypes[1], ctx.output_shapes[1]);
  HostTensor var = HostTensor::Zeros(ctx.output_dtypes[2], ctx.output_shapes[2]);
  for (int64_t c = 0; c < channels; ++c) {
    std::vector<int64_t> ci = {c};
    double unbiased = sq[c] / static_cast<double>(count - 1);
    mean.SetDouble(ci, (1 - *momentum) * ctx.inputs[1].GetDouble(ci) + *momentum * sum[c]);
    var.SetDouble(ci, (1 - *momentum) * ctx.inputs[2].GetDouble(ci) + *momentum * unbiased);
  }
  return std::vector<HostTensor>{out, mean, var};
}

// Inference batch_norm: y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * w[c] + b[c].
Outputs BatchNorm(const KernelContext& ctx) {
  const HostTensor& x = ctx.inputs[0];
  std::vector<int64_t> c = {x.shape()[1]};
  const char* names[] = {"running_mean", "running_var", "weight", "bias"};
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    absl::Status s = CheckShape(&ctx.inputs[i], names[i - 1], c);
    if (!s.ok()) return s;
  }
  absl::StatusOr<double> eps = Eps(ctx);
  if (!eps.ok()) return eps.status();
  absl::StatusOr<bool> training = GetBool(ctx.attrs, "training");
  if (!training.ok()) return training.status();
  if (*training) return BatchNormTraining(ctx, *eps);
  const HostTensor* weight = Input(ctx, 3);
  const HostTensor* bias = Input(ctx, 4);
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  ForEachIndex(x.shape(), [&](absl::Span<const int64_t> idx) {
    std::vector<int64_t> ci = {idx[1]};
    double mean = ctx.inputs[1].GetDouble(ci);
    double var = ctx.inputs[2].GetDouble(ci);
    double y = (x.GetDouble(idx) - mean) / std::sqrt(var + *eps);
    out.SetDouble(idx, y * Param(weight, ci, 1.0) + Param(bias, ci, 0.0));
  });
  return std::vector<HostTensor>{out};
}

// group_norm (and instance_norm, one group per channel): statistics over (channels of one
// group) x (all spatial dims), per sample.
Outputs GroupNormWith(const KernelContext& ctx, int64_t groups) {
  const HostTensor& x = ctx.inputs[0];
  const HostTensor* weight = Input(ctx, 1);
  const HostTensor* bias = Input(ctx, 2);
  int64_t channels = x.shape()[1];
  if (groups <= 0 || channels % groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected the number of channels (", channels, ") to be divisible by num_groups=",
        groups));
  }
  absl::Status s = CheckShape(weight, "weight", {channels});
  if (s.ok()) s = CheckShape(bias, "bias", {channels});
  if (!s.ok()) return s;
  absl::StatusOr<double> eps = Eps(ctx);
  if (!eps.ok()) return eps.status();
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  int64_t per_group = channels / groups;
  // Within a group: the channel offset and the spatial dims.
  std::vector<int64_t> inner = x.shape();
  inner[0] = 1;
  inner[1] = per_group;
  std::vector<int64_t> full(x.rank());
  for (int64_t n = 0; n < x.shape()[0]; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<Member> group;
      ForEachIndex(inner, [&](absl::Span<const int64_t> i) {
        std::copy(i.begin(), i.end(), full.begin());
        full[0] = n;
        full[1] = g * per_group + i[1];
        group.push_back({x.StorageOffset(full), out.StorageOffset(full), {full[1]}});
      });
      NormalizeGroup(x, out, group, *eps, weight, bias, false);
    }
  }
  return std::vector<HostTensor>{out};
}

Outputs GroupNorm(const KernelContext& ctx) {
  absl::StatusOr<int64_t> groups = GetInt(ctx.attrs, "num_groups");
  if (!groups.ok()) return groups.status();
  return GroupNormWith(ctx, *groups);
}

Outputs InstanceNorm(const KernelContext& ctx) {
  int64_t channels = ctx.inputs[0].shape()[1];
  if (channels == 0) {  // no groups at all: nothing to compute
    return std::vector<HostTensor>{HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0])};
  }
  return GroupNormWith(ctx, channels);
}

// y = x / (k + alpha * sum(x^2 over channels [c - size/2, c + (size-1)/2]) / size)^beta.
Outputs LocalResponseNorm(const KernelContext& ctx) {
  const HostTensor& x = ctx.inputs[0];
  absl::StatusOr<int64_t> size = GetInt(ctx.attrs, "size");
  absl::StatusOr<double> alpha = GetFloat(ctx.attrs, "alpha");
  absl::StatusOr<double> beta = GetFloat(ctx.attrs, "beta");
  absl::StatusOr<double> k = GetFloat(ctx.attrs, "k");
  for (const absl::Status& s : {size.status(), alpha.status(), beta.status(), k.status()}) {
    if (!s.ok()) return s;
  }
  int64_t channels = x.shape()[1];
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  ForEachIndex(x.shape(), [&](absl::Span<const int64_t> idx) {
    std::vector<int64_t> j(idx.begin(), idx.end());
    double sum = 0;
    for (int64_t c = idx[1] - *size / 2; c <= idx[1] + (*size - 1) / 2; ++c) {
      if (c < 0 || c >= channels) continue;  // zero padding
      j[1] = c;
      sum += x.GetDouble(j) * x.GetDouble(j);
    }
    double div = std::pow(*k + *alpha * sum / static_cast<double>(*size), *beta);
    out.SetDouble(idx, x.GetDouble(idx) / div);
  });
  return std::vector<HostTensor>{out};
}

// Dropout: the identity with train=false; with train=true element i (row-major) is kept,
// times 1 / (1 - p), where philox_uniform(seed, offset + i) < 1 - p (the same f32 value
// the decomposition's prims.philox_uniform draws), zero otherwise.
Outputs Dropout(const KernelContext& ctx) {
  absl::StatusOr<bool> train = GetBool(ctx.attrs, "train");
  if (!train.ok()) return train.status();
  absl::StatusOr<double> p = GetFloat(ctx.attrs, "p");
  if (!p.ok()) return p.status();
  if (!*train || *p == 0) return std::vector<HostTensor>{ctx.inputs[0].To(ctx.output_dtypes[0])};
  absl::StatusOr<int64_t> seed = GetInt(ctx.attrs, "seed");
  if (!seed.ok()) return seed.status();
  absl::StatusOr<int64_t> offset = GetInt(ctx.attrs, "offset");
  if (!offset.ok()) return offset.status();
  const HostTensor& x = ctx.inputs[0];
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  int64_t i = 0;
  ForEachIndex(x.shape(), [&](absl::Span<const int64_t> idx) {
    bool keep = PhiloxUniformAt(*seed, *offset + i++) < static_cast<float>(1 - *p);
    out.SetDouble(idx, keep ? x.GetDouble(idx) * (1 / (1 - *p)) : 0.0);
  });
  return std::vector<HostTensor>{out};
}

}  // namespace

void RegisterNormalizationKernels(ReferenceKernels& k) {
  k.Register("aten.softmax", SoftmaxKernel(false));
  k.Register("aten.log_softmax", SoftmaxKernel(true));
  k.Register("aten.layer_norm", TrailingNormKernel(false));
  k.Register("aten.rms_norm", TrailingNormKernel(true));
  k.Register("aten.batch_norm", BatchNorm);
  k.Register("aten.group_norm", GroupNorm);
  k.Register("aten.instance_norm", InstanceNorm);
  k.Register("aten.local_response_norm", LocalResponseNorm);
  k.Register("aten.dropout", Dropout);
}

}  // namespace coil
