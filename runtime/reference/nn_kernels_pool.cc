// Reference kernels of pooling: max, average and adaptive (average and max) pooling over the
// last 1, 2 or 3 dimensions. Each output element reduces its window directly.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/reference/nn_kernels_internal.h"

namespace coil::nn_kernels {
namespace {

// Visits every window position (one index per spatial dimension) of the window that starts at
// `start` with `count` positions `step` apart, skipping positions outside [0, limit).
template <typename Fn>
void ForEachWindowPosition(const std::vector<int64_t>& start, const std::vector<int64_t>& count,
                           const std::vector<int64_t>& step, absl::Span<const int64_t> limit,
                           Fn&& fn) {
  int64_t d = static_cast<int64_t>(start.size());
  std::vector<int64_t> pos(d);
  ForEachIndex(count, [&](absl::Span<const int64_t> k) {
    for (int64_t i = 0; i < d; ++i) {
      pos[i] = start[i] + k[i] * step[i];
      if (pos[i] < 0 || pos[i] >= limit[i]) return;
    }
    fn(absl::Span<const int64_t>(pos));
  });
}

// Calls fn(out_index, input_index_prefix) for every output element; the input index has the
// output's leading (batch, channel) coordinates and room for the spatial ones.
template <typename Fn>
void ForEachOutput(const HostTensor& out, int64_t d, Fn&& fn) {
  int64_t lead = out.rank() - d;
  std::vector<int64_t> xi(out.rank());
  int64_t flat = 0;
  ForEachIndex(out.shape(), [&](absl::Span<const int64_t> o) {
    std::copy(o.begin(), o.begin() + lead, xi.begin());
    fn(flat++, o.subspan(lead), xi);
  });
}

absl::StatusOr<std::vector<HostTensor>> Pool(const KernelContext& ctx, int64_t d, bool is_max) {
  const HostTensor& x = ctx.inputs[0];
  IntList kernel = ExpandedInts(ctx.attrs, "kernel_size", d);
  IntList stride = GetInts(ctx.attrs, "stride")->empty() ? kernel
                                                          : ExpandedInts(ctx.attrs, "stride", d);
  IntList padding = ExpandedInts(ctx.attrs, "padding", d);
  IntList dilation = is_max ? ExpandedInts(ctx.attrs, "dilation", d) : IntList(d, 1);
  bool count_include_pad = !is_max && *GetBool(ctx.attrs, "count_include_pad");
  int64_t divisor_override = HasAttr(ctx.attrs, "divisor_override")
                                 ? *GetInt(ctx.attrs, "divisor_override") : 0;
  int64_t lead = x.rank() - d;
  absl::Span<const int64_t> in_size = absl::MakeConstSpan(x.shape()).subspan(lead);
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  bool integral = !IsFloating(out.dtype());
  absl::Status status;
  std::vector<int64_t> start(d);
  ForEachOutput(out, d, [&](int64_t flat, absl::Span<const int64_t> o, std::vector<int64_t>& xi) {
    for (int64_t i = 0; i < d; ++i) start[i] = o[i] * stride[i] - padding[i];
    if (is_max) {
      double fbest = -std::numeric_limits<double>::infinity();
      int64_t ibest = std::numeric_limits<int64_t>::min();
      ForEachWindowPosition(start, kernel, dilation, in_size, [&](absl::Span<const int64_t> p) {
        std::copy(p.begin(), p.end(), xi.begin() + lead);
        if (integral) {
          ibest = std::max(ibest, x.GetInt(xi));
        } else {
          double v = x.GetDouble(xi);
          if (v > fbest || std::isnan(v)) fbest = v;  // NaN wins, as PyTorch
        }
      });
      if (integral) {
        out.StoreInt(flat, ibest);
      } else {
        out.StoreDouble(flat, fbest);
      }
      return;
    }
    // Average: the divisor counts padding positions (not those past the padded input)
    // unless count_include_pad is false; divisor_override replaces it.
    int64_t padded_count = 1, inside_count = 1;
    for (int64_t i = 0; i < d; ++i) {
      int64_t end = std::min(start[i] + kernel[i], in_size[i] + padding[i]);
      padded_count *= end - start[i];
      inside_count *= std::min(end, in_size[i]) - std::max<int64_t>(start[i], 0);
    }
    double fsum = 0;
    int64_t isum = 0;
    ForEachWindowPosition(start, kernel, dilation, in_size, [&](absl::Span<const int64_t> p) {
      std::copy(p.begin(), p.end(), xi.begin() + lead);
      if (integral) {
        isum = WrapAdd(isum, x.GetInt(xi));
      } else {
        fsum += x.GetDouble(xi);
      }
    });
    int64_t divisor = divisor_override != 0 ? divisor_override
                      : count_include_pad   ? padded_count
                                            : inside_count;
    if (integral) {
      if (divisor == 0) {
        status = absl::InvalidArgumentError("integer average pooling divides by zero");
        return;
      }
      out.StoreInt(flat, divisor == -1 ? WrapMul(isum, -1) : isum / divisor);
    } else {
      out.StoreDouble(flat, fsum / static_cast<double>(divisor));
    }
  });
  if (!status.ok()) return status;
  return std::vector<HostTensor>{out};
}

// Adaptive window [floor(o * in / out), ceil((o + 1) * in / out)), in exact integer math.
int64_t AdaptiveStart(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
int64_t AdaptiveEnd(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

absl::StatusOr<std::vector<HostTensor>> AdaptivePool(const KernelContext& ctx, int64_t d,
                                                     bool is_max) {
  const HostTensor& x = ctx.inputs[0];
  int64_t lead = x.rank() - d;
  absl::Span<const int64_t> in_size = absl::MakeConstSpan(x.shape()).subspan(lead);
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  absl::Span<const int64_t> out_size = absl::MakeConstSpan(out.shape()).subspan(lead);
  HostTensor indices;
  if (is_max) indices = HostTensor::Zeros(ctx.output_dtypes[1], ctx.output_shapes[1]);
  std::vector<int64_t> start(d), count(d), ones(d, 1);
  ForEachOutput(out, d, [&](int64_t flat, absl::Span<const int64_t> o, std::vector<int64_t>& xi) {
    for (int64_t i = 0; i < d; ++i) {
      start[i] = AdaptiveStart(o[i], out_size[i], in_size[i]);
      count[i] = AdaptiveEnd(o[i], out_size[i], in_size[i]) - start[i];
    }
    double sum = 0, best = -std::numeric_limits<double>::infinity();
    int64_t n = 0, best_index = -1;
    ForEachWindowPosition(start, count, ones, in_size, [&](absl::Span<const int64_t> p) {
      std::copy(p.begin(), p.end(), xi.begin() + lead);
      double v = x.GetDouble(xi);
      sum += v;
      ++n;
      // PyTorch starts from the window's first position and -inf, then takes larger values
      // and every NaN.
      if (best_index < 0 || v > best || std::isnan(v)) {
        best = v;
        best_index = 0;  // row-major position in the spatial plane
        for (int64_t i = 0; i < d; ++i) best_index = best_index * in_size[i] + p[i];
      }
    });
    if (is_max) {
      out.StoreDouble(flat, best);
      indices.StoreInt(flat, best_index);
    } else {
      out.StoreDouble(flat, sum / static_cast<double>(n));
    }
  });
  std::vector<HostTensor> result = {out};
  if (is_max) result.push_back(indices);
  return result;
}

}  // namespace

void RegisterPoolKernels(ReferenceKernels& k) {
  for (int64_t d = 1; d <= 3; ++d) {
    k.Register(absl::StrCat("aten.max_pool", d, "d"),
               [d](const KernelContext& ctx) { return Pool(ctx, d, /*is_max=*/true); });
    k.Register(absl::StrCat("aten.avg_pool", d, "d"),
               [d](const KernelContext& ctx) { return Pool(ctx, d, /*is_max=*/false); });
    k.Register(absl::StrCat("aten.adaptive_avg_pool", d, "d"),
               [d](const KernelContext& ctx) { return AdaptivePool(ctx, d, /*is_max=*/false); });
    k.Register(absl::StrCat("aten.adaptive_max_pool", d, "d"),
               [d](const KernelContext& ctx) { return AdaptivePool(ctx, d, /*is_max=*/true); });
  }
}

}  // namespace coil::nn_kernels
