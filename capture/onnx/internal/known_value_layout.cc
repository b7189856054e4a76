// Layout folds of KnownValues (known_value.h): Gather, Slice, Concat, Transpose, Reshape and
// Expand move known elements without computing new ones.
#include "capture/onnx/internal/known_value.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace coil::onnx_internal {

absl::StatusOr<KnownValue> FoldGather(const KnownValue& data, const KnownValue& indices,
                                      int64_t axis) {
  KnownValue out;
  out.dtype = data.dtype;
  out.den = data.den;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape[d];
  for (int64_t d = axis + 1; d < data.rank(); ++d) inner *= data.shape[d];
  const int64_t n = data.shape[axis];
  out.shape.assign(data.shape.begin(), data.shape.begin() + axis);
  out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
  out.shape.insert(out.shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < indices.numel(); ++j) {
      int64_t idx = static_cast<int64_t>(indices.AsDouble(j));
      if (idx < -n || idx >= n) {
        return absl::InvalidArgumentError(
            absl::StrCat("index ", idx, " is out of bounds for size ", n));
      }
      if (idx < 0) idx += n;
      for (int64_t i = 0; i < inner; ++i) {
        int64_t src = (o * n + idx) * inner + i;
        if (!data.uses_ints()) {
          out.floats.push_back(data.floats[src]);
        } else {
          out.ints.push_back(data.ints[src]);
        }
      }
    }
  }
  return out;
}

StaticSlice NormalizeSlice(int64_t dim, int64_t start, int64_t end, int64_t step) {
  auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); };
  StaticSlice s;
  step = std::max(-kMaxSymConstant, std::min(step, kMaxSymConstant));
  s.step = step;
  if (step > 0) {
    start = start < 0 ? clamp(start + std::min(dim, kMaxSymConstant), 0, dim) : clamp(start, 0, dim);
    end = end < 0 ? clamp(end + std::min(dim, kMaxSymConstant), 0, dim) : clamp(end, 0, dim);
    s.start = start;
    s.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = start < 0 ? clamp(start + std::min(dim, kMaxSymConstant), -1, dim - 1) : clamp(start, -1, dim - 1);
    end = end < 0 ? clamp(end + std::min(dim, kMaxSymConstant), -1, dim - 1) : clamp(end, -1, dim - 1);
    s.start = start;
    s.count = start > end ? (start - end - 1) / (-step) + 1 : 0;
  }
  return s;
}

KnownValue FoldSlice(const KnownValue& data, int64_t axis, int64_t start, int64_t step,
                     int64_t count) {
  KnownValue out;
  out.dtype = data.dtype;
  out.den = data.den;
  out.shape = data.shape;
  out.shape[axis] = count;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape[d];
  for (int64_t d = axis + 1; d < data.rank(); ++d) inner *= data.shape[d];
  const int64_t n = data.shape[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t src = (o * n + start + j * step) * inner + i;
        if (!data.uses_ints()) {
          out.floats.push_back(data.floats[src]);
        } else {
          out.ints.push_back(data.ints[src]);
        }
      }
    }
  }
  return out;
}

absl::StatusOr<KnownValue> FoldConcat(const std::vector<const KnownValue*>& parts, int64_t axis) {
  KnownValue out;
  out.dtype = parts[0]->dtype;
  out.den = parts[0]->den;
  out.shape = parts[0]->shape;
  out.shape[axis] = 0;
  for (const KnownValue* p : parts) {
    if (p->rank() != out.rank() || p->dtype != out.dtype) {
      return absl::InvalidArgumentError("concatenated tensors differ in rank or type");
    }
    for (int64_t d = 0; d < out.rank(); ++d) {
      if (d != axis && p->shape[d] != out.shape[d]) {
        return absl::InvalidArgumentError(absl::StrCat("concatenated tensors differ in dimension ", d));
      }
    }
    out.shape[axis] += p->shape[axis];
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out.shape[d];
  for (int64_t o = 0; o < outer; ++o) {
    for (const KnownValue* p : parts) {
      int64_t chunk = p->numel() / std::max<int64_t>(outer, 1);
      if (outer == 0) chunk = 0;
      for (int64_t i = 0; i < chunk; ++i) {
        if (!parts[0]->uses_ints()) {
          out.floats.push_back(p->floats[o * chunk + i]);
        } else {
          out.ints.push_back(p->ints[o * chunk + i]);
        }
      }
    }
  }
  return out;
}

KnownValue FoldTranspose(const KnownValue& a, const std::vector<int64_t>& perm) {
  KnownValue out;
  out.dtype = a.dtype;
  out.den = a.den;
  for (int64_t p : perm) out.shape.push_back(a.shape[p]);
  std::vector<int64_t> in_stride(a.rank(), 1);
  for (int64_t d = a.rank() - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * a.shape[d + 1];
  std::vector<int64_t> idx(out.rank(), 0);
  for (int64_t flat = 0; flat < a.numel(); ++flat) {
    int64_t src = 0;
    for (int64_t d = 0; d < out.rank(); ++d) src += idx[d] * in_stride[perm[d]];
    if (!a.uses_ints()) {
      out.floats.push_back(a.floats[src]);
    } else {
      out.ints.push_back(a.ints[src]);
    }
    for (int64_t d = out.rank() - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

KnownValue FoldReshape(const KnownValue& a, std::vector<int64_t> shape) {
  KnownValue out = a;
  out.shape = std::move(shape);
  return out;
}

absl::StatusOr<KnownValue> FoldExpand(const KnownValue& a, const std::vector<int64_t>& shape) {
  absl::StatusOr<std::vector<int64_t>> out_shape = BroadcastShapes(a.shape, shape);
  if (!out_shape.ok()) return out_shape.status();
  KnownValue out;
  out.dtype = a.dtype;
  out.den = a.den;
  out.shape = *out_shape;
  for (int64_t i : BroadcastIndex(a.shape, *out_shape)) {
    if (!a.uses_ints()) {
      out.floats.push_back(a.floats[i]);
    } else {
      out.ints.push_back(a.ints[i]);
    }
  }
  return out;
}

}  // namespace coil::onnx_internal
