// HostTensor: a concrete CPU tensor (dtype, shape, strides, offset, shared storage).
//
// It is what the reference interpreter computes with, and what `coil run` feeds and prints.
// Views share storage. Element access goes through double (floating types) or int64
// (integral and bool), which is exact for every supported dtype and keeps kernels
// dtype-generic:
//
//   HostTensor t = HostTensor::Zeros(proto::FLOAT32, {2, 3});
//   t.SetDouble({1, 2}, 4.5);
//   double v = t.GetDouble({1, 2});
#ifndef COIL_RUNTIME_HOST_TENSOR_H_
#define COIL_RUNTIME_HOST_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/dtype.h"
#include "ir/proto/graph.pb.h"
#include "runtime/tensor_storage.h"

namespace coil {

class HostTensor {
 public:
  HostTensor() = default;

  // Contiguous, zero-filled. The shape must be valid (CHECK-fails on a negative dimension or a
  // size past int64, aborts when out of memory): shapes fed by user input go through Allocate.
  static HostTensor Zeros(DType dtype, std::vector<int64_t> shape);
  // Contiguous, zero-filled (TensorStorage::kZero) or not (kUninitialized), for shapes that come
  // from user input (--dim values, bound symbols): errors instead of crashes. InvalidArgument
  // for a negative dimension or a byte size past int64 (ByteSize), ResourceExhausted when the
  // system refuses the memory ("cannot allocate f32[1048576, 1048576] (4398046511104 bytes):
  // out of memory").
  static absl::StatusOr<HostTensor> Allocate(DType dtype, std::vector<int64_t> shape,
                                             TensorStorage::Init init);
  // The byte size of a contiguous `dtype` tensor of `shape`, computed with overflow checks:
  // InvalidArgument for a negative dimension or a size past int64 ("f32[4294967296,
  // 4294967296, 4294967296] is too large: its size overflows int64").
  static absl::StatusOr<int64_t> ByteSize(DType dtype, absl::Span<const int64_t> shape);
  // Contiguous from little-endian bytes (size must match; error otherwise).
  static absl::StatusOr<HostTensor> FromBytes(DType dtype, std::vector<int64_t> shape,
                                              std::string bytes);
  // Contiguous from doubles (rounded to the dtype).
  static HostTensor FromDoubles(DType dtype, std::vector<int64_t> shape,
                                absl::Span<const double> values);
  static absl::StatusOr<HostTensor> FromProto(const proto::TensorValue& p);
  // Contiguous, with unspecified contents (torch.empty): for results every element of which
  // is about to be written (see TensorStorage::kUninitialized). The shape must be valid, as
  // for Zeros.
  static HostTensor Empty(DType dtype, std::vector<int64_t> shape);
  // Contiguous over `storage` without copying it (the CPU runtime's outputs); its size must
  // be the shape's byte size (error otherwise).
  static absl::StatusOr<HostTensor> AdoptStorage(DType dtype, std::vector<int64_t> shape,
                                                 std::shared_ptr<TensorStorage> storage);
  proto::TensorValue ToProto() const;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const;
  bool IsContiguous() const;
  bool defined() const { return storage_ != nullptr; }
  // The address of the element at `offset()` (storage is shared: writes through it are seen by
  // every tensor on that storage, as with StoreDouble). Null when undefined.
  uint8_t* RawData() const;
  // Whether both are views of one storage (a write through one may be seen by the other).
  bool SharesStorageWith(const HostTensor& other) const {
    return storage_ != nullptr && storage_ == other.storage_;
  }

  // A view sharing storage with new shape/strides/offset (in elements); CHECKs bounds.
  HostTensor View(std::vector<int64_t> shape, std::vector<int64_t> strides, int64_t offset) const;
  // A contiguous copy (or this tensor when already contiguous).
  HostTensor Contiguous() const;
  // Writes the elements in row-major order, in this dtype, to `dst` (numel x element size
  // bytes; must not overlap this tensor's storage). Strided views copy at memory speed
  // (runtime/strided_copy.h).
  void CopyElementsTo(uint8_t* dst) const;
  // A contiguous copy converted to another dtype (PyTorch's .to(dtype) semantics:
  // float -> int truncates toward zero, -> bool tests != 0).
  HostTensor To(DType dtype) const;
  // Contiguous little-endian bytes.
  std::string Bytes() const;

  // Element access by multi-index (size == rank) or by storage element offset.
  double GetDouble(absl::Span<const int64_t> index) const;
  int64_t GetInt(absl::Span<const int64_t> index) const;
  void SetDouble(absl::Span<const int64_t> index, double v);
  void SetInt(absl::Span<const int64_t> index, int64_t v);
  int64_t StorageOffset(absl::Span<const int64_t> index) const;
  double LoadDouble(int64_t storage_offset) const;
  int64_t LoadInt(int64_t storage_offset) const;
  // Store rounds to the dtype: floats round to nearest even, integers wrap like C++ casts
  // from int64 (as PyTorch), bool stores v != 0.
  void StoreDouble(int64_t storage_offset, double v);
  void StoreInt(int64_t storage_offset, int64_t v);

  // Every element in row-major order, as doubles (for comparisons and printing).
  std::vector<double> ToDoubles() const;
  // "f32[2, 3]".
  std::string TypeString() const;

 private:
  DType dtype_ = proto::DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  int64_t offset_ = 0;
  std::shared_ptr<TensorStorage> storage_;
};

// Calls fn(index) for every multi-index of `shape` in row-major order.
template <typename Fn>
void ForEachIndex(absl::Span<const int64_t> shape, Fn&& fn) {
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(shape.size(), 0);
  while (true) {
    fn(absl::Span<const int64_t>(index));
    int64_t k = static_cast<int64_t>(shape.size()) - 1;
    while (k >= 0 && ++index[k] == shape[k]) index[k--] = 0;
    if (k < 0) return;
  }
}

}  // namespace coil

#endif  // COIL_RUNTIME_HOST_TENSOR_H_
