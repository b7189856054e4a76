// prims.scatter on typed buffers (scatter.h).
#include "runtime/cpu/internal/scatter.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/attribute.h"

namespace coil::cpu::internal {
namespace {

// Row-major strides of `shape`.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
    s[d] = s[d + 1] * shape[d + 1];
  }
  return s;
}

// a + b, integers wrapping as the reference kernel's WrapAdd does.
template <typename T>
T AddValues(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// Writes or adds src at the indexed positions of out (already a copy of x); false when an
// index is out of [0, size) (the caller declines and the reference kernel reports it).
template <typename T, typename I>
bool ScatterTyped(const ExternTensor& index, const ExternTensor& src, const ExternTensor& out,
                  int64_t dim, bool add) {
  const std::vector<int64_t>& shape = index.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t n = index.numel();
  if (n == 0) return true;
  const I* idx = reinterpret_cast<const I*>(index.data);
  const T* s = reinterpret_cast<const T*>(src.data);
  T* o = reinterpret_cast<T*>(out.data);
  if (rank == 0) {  // a rank-0 scatter: index 0 is the only position
    if (idx[0] != 0) return false;
    o[0] = add ? AddValues(o[0], s[0]) : s[0];
    return true;
  }
  const std::vector<int64_t> out_strides = Strides(out.shape);
  const int64_t size = out.shape[dim], dim_stride = out_strides[dim];
  const int64_t inner = shape[rank - 1];
  std::vector<int64_t> pos(rank, 0);  // the index position of the row being walked
  for (int64_t row = 0; row < n; row += inner) {
    int64_t base = 0;  // the output offset of pos with dim's coordinate left out
    for (int64_t d = 0; d < rank; ++d) {
      if (d != dim) base += pos[d] * out_strides[d];
    }
    const int64_t last_stride = out_strides[rank - 1];
    // A row whose indices are all equal and land on a contiguous output row (an embedding's
    // gradient: one token's row, [tokens, E] into [vocab, E] along dim 0): one vectorizable
    // row update, the same element operations in the same order.
    bool same = dim != rank - 1 && last_stride == 1;
    for (int64_t j = 1; same && j < inner; ++j) same = idx[row + j] == idx[row];
    if (same) {
      const int64_t k = static_cast<int64_t>(idx[row]);
      if (k < 0 || k >= size) return false;
      T* __restrict orow = o + base + k * dim_stride;
      const T* __restrict srow = s + row;
      if (add) {
        for (int64_t j = 0; j < inner; ++j) orow[j] = AddValues(orow[j], srow[j]);
      } else {
        for (int64_t j = 0; j < inner; ++j) orow[j] = srow[j];
      }
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t k = static_cast<int64_t>(idx[row + j]);
        if (k < 0 || k >= size) return false;
        int64_t off = base + k * dim_stride;
        if (dim != rank - 1) off += j * last_stride;
        o[off] = add ? AddValues(o[off], s[row + j]) : s[row + j];
      }
    }
    for (int64_t d = rank - 2; d >= 0; --d) {  // next row
      if (++pos[d] < shape[d]) break;
      pos[d] = 0;
    }
  }
  return true;
}

template <typename T>
bool ScatterValues(const ExternTensor& index, const ExternTensor& src, const ExternTensor& out,
                   int64_t dim, bool add) {
  if (index.dtype == proto::INT64) return ScatterTyped<T, int64_t>(index, src, out, dim, add);
  return ScatterTyped<T, int32_t>(index, src, out, dim, add);
}

bool Overlap(const ExternTensor& a, const ExternTensor& b) {
  const int64_t na = a.numel() * ElementSize(a.dtype), nb = b.numel() * ElementSize(b.dtype);
  return na > 0 && nb > 0 && a.data < b.data + nb && b.data < a.data + na;
}

}  // namespace

absl::StatusOr<bool> Scatter(const ExternArgs& a) {
  if (a.inputs.size() != 3) return false;
  const ExternTensor &x = a.inputs[0], &index = a.inputs[1], &src = a.inputs[2], &out = a.output;
  absl::StatusOr<int64_t> dim_attr = GetInt(a.attrs, "dim");
  absl::StatusOr<std::string> reduce = GetString(a.attrs, "reduce");
  if (!dim_attr.ok() || !reduce.ok() || (*reduce != "none" && *reduce != "add")) return false;
  const DType t = x.dtype;
  if (t != proto::FLOAT32 && t != proto::FLOAT64 && t != proto::INT64 && t != proto::INT32) {
    return false;
  }
  if (index.dtype != proto::INT64 && index.dtype != proto::INT32) return false;
  // The meta function's contract, checked again on the concrete shapes (the reference kernel
  // reports any mismatch).
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t dim = *dim_attr;  // normalized: prims take dims in [0, rank)
  if (src.dtype != t || out.dtype != t || out.shape != x.shape || src.shape != index.shape ||
      static_cast<int64_t>(index.shape.size()) != rank || dim < 0 ||
      (rank > 0 && dim >= rank)) {
    return false;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim && index.shape[d] > x.shape[d]) return false;
  }
  // src or index sharing bytes with the output would be overwritten by the copy.
  if (Overlap(src, out) || Overlap(index, out)) return false;
  if (x.data != out.data && x.numel() > 0) {
    if (Overlap(x, out)) return false;
    std::memcpy(out.data, x.data, x.numel() * ElementSize(t));
  }
  const bool add = *reduce == "add";
  bool ok = false;
  switch (t) {
    case proto::FLOAT32: ok = ScatterValues<float>(index, src, out, dim, add); break;
    case proto::FLOAT64: ok = ScatterValues<double>(index, src, out, dim, add); break;
    case proto::INT64: ok = ScatterValues<int64_t>(index, src, out, dim, add); break;
    default: ok = ScatterValues<int32_t>(index, src, out, dim, add); break;
  }
  return ok;  // false: an index out of range; the reference kernel starts over and reports it
}

}  // namespace coil::cpu::internal
