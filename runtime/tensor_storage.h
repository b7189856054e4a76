// TensorStorage: the bytes behind a HostTensor, 64-byte aligned, with large blocks recycled.
//
//   std::shared_ptr<TensorStorage> s = TensorStorage::Allocate(bytes, TensorStorage::kZero);
//   uint8_t* p = s->data();   // 64-byte aligned; s->size() == bytes
//
// Alignment: every block starts on a 64-byte boundary (a cache line, an AVX-512 vector), so a
// generated kernel's vector stores into an output never straddle cache lines because of where
// the output starts (std::vector's 16-byte alignment made every 64-byte store of a large
// output touch two lines).
//
// Recycling: a block of at least kLargeBlockBytes is rounded up to whole 2 MiB pages, asked to
// be backed by transparent huge pages (madvise), and when its last HostTensor goes away it is
// kept in a process-wide cache (up to 1 GiB in all, SetStorageCacheLimit) for the next allocation of the
// same rounded size. A compiled program returning a 64 MiB output on every call otherwise pays
// the kernel's page faults and zero-filling on every call: 25 ms per call on the 2-core
// development machine, against 4 ms to copy those 64 MiB (docs/cpu_backend.md, "Runtime
// performance"). Small blocks come from aligned_alloc and go straight back to it.
//
// kUninitialized leaves the bytes as they are (the runtime's outputs, which kernels overwrite
// entirely); builds without NDEBUG fill them with 0xFF instead (a NaN in every float type) so a
// kernel that misses elements shows up in tests. All functions are thread-safe.
#ifndef COIL_RUNTIME_TENSOR_STORAGE_H_
#define COIL_RUNTIME_TENSOR_STORAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

namespace coil {

class TensorStorage {
 public:
  enum Init { kZero, kUninitialized };
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kLargeBlockBytes = size_t{1} << 20;

  // `bytes` may be 0 (data() is then still a valid, aligned, non-null pointer). Aborts with a
  // message when the system has no memory left, as operator new does.
  static std::shared_ptr<TensorStorage> Allocate(size_t bytes, Init init);
  // The same, but null when the system refuses the block: for sizes that come from user input
  // (HostTensor::Allocate turns it into an error). A refusal is what the allocator reports up
  // front (Linux overcommits: a block granted here may still run out of pages when touched).
  static std::shared_ptr<TensorStorage> TryAllocate(size_t bytes, Init init);
  // Whether the system grants a block of `bytes` now: one is allocated and freed at once,
  // untouched. For callers that are about to let code that uses Allocate (reference kernels)
  // create a tensor of a size that came from user input.
  static bool SystemGrants(size_t bytes);

  TensorStorage(const TensorStorage&) = delete;
  TensorStorage& operator=(const TensorStorage&) = delete;
  ~TensorStorage();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  TensorStorage(uint8_t* data, size_t size, size_t capacity)
      : data_(data), size_(size), capacity_(capacity) {}

  uint8_t* data_;
  size_t size_;
  size_t capacity_;  // the block's real size (a multiple of 2 MiB for large blocks)
};

// What the large-block cache has done since the process started (or the last Trim).
struct StorageCacheStats {
  int64_t hits = 0;          // large allocations served from the cache
  int64_t misses = 0;        // large allocations that went to the system
  int64_t cached_bytes = 0;  // bytes held by freed blocks now
};
StorageCacheStats GetStorageCacheStats();

// Returns every cached block to the system and resets the counters.
void TrimStorageCache();

// How many bytes freed large blocks may hold in all (default 1 GiB; 0 turns recycling off).
// Blocks already cached beyond a lowered limit are returned to the system.
void SetStorageCacheLimit(size_t bytes);

}  // namespace coil

#endif  // COIL_RUNTIME_TENSOR_STORAGE_H_
