// Helpers shared by the reference kernels: broadcasting iteration over strided inputs,
// single-value dtype casts, elementwise maps, per-line iteration along one dim, and the
// output/element-copy/dim helpers of the data-movement kernels (shape, indexing).
//
//   // out[i] = a[i] + b[i] over the broadcast of a and b, computed in double, stored as f32:
//   HostTensor out = MapDouble({a, b}, out_shape, proto::FLOAT32, proto::FLOAT32,
//                              [](const double* v) { return v[0] + v[1]; });
//
// Inputs may be any strided views (transposed, sliced, expanded with stride 0, offset); every
// access goes through the input's strides.
#ifndef COIL_RUNTIME_REFERENCE_KERNEL_UTIL_H_
#define COIL_RUNTIME_REFERENCE_KERNEL_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/dtype.h"
#include "runtime/host_tensor.h"
#include "runtime/reference/kernel_registry.h"

namespace coil {

// Strides of `t` when broadcast (numpy rules, aligned from the right) to `shape`: 0 along
// broadcast and missing leading dims. CHECK-fails when `t` does not broadcast to `shape`.
std::vector<int64_t> BroadcastStrides(const HostTensor& t, absl::Span<const int64_t> shape);

// Calls fn(flat, offsets) for every element of `shape` in row-major order: `flat` is the
// row-major position and offsets[k] the storage offset of the element of inputs[k] broadcast to
// it (pass to HostTensor::LoadDouble / LoadInt).
template <typename Fn>
void ForEachBroadcast(absl::Span<const HostTensor> inputs, absl::Span<const int64_t> shape,
                      Fn&& fn) {
  std::vector<std::vector<int64_t>> strides;
  std::vector<int64_t> offsets;
  for (const HostTensor& t : inputs) {
    strides.push_back(BroadcastStrides(t, shape));
    offsets.push_back(t.offset());
  }
  int64_t flat = 0;
  const int64_t rank = static_cast<int64_t>(shape.size());
  ForEachIndex(shape, [&](absl::Span<const int64_t> index) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      int64_t off = inputs[k].offset();
      for (int64_t d = 0; d < rank; ++d) off += index[d] * strides[k][d];
      offsets[k] = off;
    }
    fn(flat++, absl::Span<const int64_t>(offsets));
  });
}

// `v` converted to dtype `t` and back, as a C++/PyTorch cast: floating types round to nearest
// even (float16/bfloat16 through float32, as c10), integral types truncate toward zero and wrap
// (NaN gives 0; out-of-range values saturate to int64 first), bool gives v != 0.
double CastDouble(double v, DType t);
// `v` wrapped into an integral dtype's range (bool: v != 0); floating dtypes leave it unchanged.
int64_t CastInt(int64_t v, DType t);

// Reads one element (storage offset `off`) converted to `compute`: as a double when `compute` is
// floating, else as an int64 (the integer read path is exact for int64).
double LoadAsDouble(const HostTensor& t, int64_t off, DType compute);
int64_t LoadAsInt(const HostTensor& t, int64_t off, DType compute);

// A Python-number attribute (int or float kind) converted to `compute`.
double ScalarAsDouble(const Attribute& a, DType compute);
int64_t ScalarAsInt(const Attribute& a, DType compute);

// The dtype torch computes a comparison or arithmetic in: torch.result_type over the inputs
// (rank-0 tensors count as zero-dim) and optional Python-number attributes.
DType ComputeDType(absl::Span<const HostTensor> inputs,
                   absl::Span<const Attribute* const> scalars = {});

// Elementwise maps over the broadcast of `inputs` to `shape`, producing a new contiguous tensor
// of `out_dtype`. MapDouble hands fn the inputs converted to `compute` as doubles and stores its
// double result (StoreDouble rounds); MapInt does the same with int64 values (StoreInt wraps).
template <typename Fn>  // double fn(const double* args)
HostTensor MapDouble(absl::Span<const HostTensor> inputs, const std::vector<int64_t>& shape,
                     DType out_dtype, DType compute, Fn&& fn) {
  HostTensor out = HostTensor::Zeros(out_dtype, shape);
  std::vector<double> args(inputs.size());
  ForEachBroadcast(inputs, shape, [&](int64_t flat, absl::Span<const int64_t> offs) {
    for (size_t k = 0; k < inputs.size(); ++k) args[k] = LoadAsDouble(inputs[k], offs[k], compute);
    out.StoreDouble(flat, fn(args.data()));
  });
  return out;
}

template <typename Fn>  // int64_t fn(const int64_t* args)
HostTensor MapInt(absl::Span<const HostTensor> inputs, const std::vector<int64_t>& shape,
                  DType out_dtype, DType compute, Fn&& fn) {
  HostTensor out = HostTensor::Zeros(out_dtype, shape);
  std::vector<int64_t> args(inputs.size());
  ForEachBroadcast(inputs, shape, [&](int64_t flat, absl::Span<const int64_t> offs) {
    for (size_t k = 0; k < inputs.size(); ++k) args[k] = LoadAsInt(inputs[k], offs[k], compute);
    out.StoreInt(flat, fn(args.data()));
  });
  return out;
}

// Wrapping int64 arithmetic (two's complement, no undefined behaviour on overflow).
inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// A zero-filled contiguous tensor of output `i`'s dtype and shape.
inline HostTensor NewOutput(const KernelContext& ctx, int i = 0) {
  return HostTensor::Zeros(ctx.output_dtypes[i], ctx.output_shapes[i]);
}

// Copies one element between storage offsets: through double when the destination is floating,
// int64 otherwise.
void CopyElem(const HostTensor& src, int64_t src_off, HostTensor& dst, int64_t dst_off);

// A dim the meta function already validated, wrapped into [0, rank) (meta::NormalizeDim);
// CHECK-fails when out of range, which is a compiler bug.
int64_t CheckedDim(int64_t dim, int64_t rank);

// Calls fn(x_offsets, out_offsets) once per line of `x` along `dim` (normalized), in row-major
// order of the other dims: the storage offsets of the line's elements in `x` and in `out` (of
// x's shape). A rank-0 `x` is one line of one element (softmax, cumsum).
template <typename Fn>  // void fn(const std::vector<int64_t>&, const std::vector<int64_t>&)
void ForEachLine(HostTensor x, HostTensor out, int64_t dim, Fn&& fn) {
  if (x.rank() == 0) {  // one element: work on 1-d views
    x = x.View({1}, {1}, x.offset());
    out = out.View({1}, {1}, out.offset());
  }
  std::vector<int64_t> lines = x.shape();
  const int64_t n = lines[dim];
  lines[dim] = 1;
  std::vector<int64_t> xo(n), oo(n);
  ForEachIndex(lines, [&](absl::Span<const int64_t> base) {
    std::vector<int64_t> idx(base.begin(), base.end());
    for (int64_t i = 0; i < n; ++i) {
      idx[dim] = i;
      xo[i] = x.StorageOffset(idx);
      oo[i] = out.StorageOffset(idx);
    }
    fn(xo, oo);
  });
}

}  // namespace coil

#endif  // COIL_RUNTIME_REFERENCE_KERNEL_UTIL_H_
