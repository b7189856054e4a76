// TensorStorage: aligned blocks and the process-wide cache of large ones (see tensor_storage.h).
#include "runtime/tensor_storage.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace coil {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// Freed large blocks by capacity. Leaked on purpose (process lifetime: tensors may be freed
// during static destruction).
struct BlockCache {
  std::mutex mu;
  std::map<size_t, std::vector<uint8_t*>> free_blocks;
  StorageCacheStats stats;
  size_t limit = size_t{1} << 30;
};

BlockCache& Cache() {
  static BlockCache* cache = new BlockCache();
  return *cache;
}

// Physical memory plus swap: no allocation larger can ever be backed.
size_t MemoryAndSwapBytes() {
  static const size_t bytes = [] {
    struct sysinfo info;
    if (::sysinfo(&info) != 0) return SIZE_MAX;
    const unsigned __int128 total =
        (static_cast<unsigned __int128>(info.totalram) + info.totalswap) * info.mem_unit;
    return total > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(total);
  }();
  return bytes;
}

// Null when the system refuses (or `capacity` is absurd). A request above physical memory
// plus swap is refused here, not left to the allocator: glibc's malloc passes such an mmap to
// the kernel, whose overcommit heuristic refuses it, but jemalloc (the `coil` command's
// malloc) maps with MAP_NORESERVE, so the request "succeeds" and filling the tensor ends in
// the OOM killer instead of an out-of-memory error.
uint8_t* SystemAllocate(size_t capacity, size_t alignment) {
  if (capacity > SIZE_MAX / 2 || capacity > MemoryAndSwapBytes()) return nullptr;
  return static_cast<uint8_t*>(std::aligned_alloc(alignment, capacity));
}

}  // namespace

std::shared_ptr<TensorStorage> TensorStorage::Allocate(size_t bytes, Init init) {
  std::shared_ptr<TensorStorage> s = TryAllocate(bytes, init);
  if (s == nullptr) {
    std::fprintf(stderr, "coil: out of memory allocating a tensor of %zu bytes\n", bytes);
    std::abort();
  }
  return s;
}

std::shared_ptr<TensorStorage> TensorStorage::TryAllocate(size_t bytes, Init init) {
  if (bytes > SIZE_MAX / 2) return nullptr;
  uint8_t* data = nullptr;
  size_t capacity = 0;
  if (bytes >= kLargeBlockBytes) {
    capacity = RoundUp(bytes, kHugePage);
    BlockCache& cache = Cache();
    {
      std::lock_guard<std::mutex> lock(cache.mu);
      auto it = cache.free_blocks.find(capacity);
      if (it != cache.free_blocks.end() && !it->second.empty()) {
        data = it->second.back();
        it->second.pop_back();
        cache.stats.cached_bytes -= static_cast<int64_t>(capacity);
        ++cache.stats.hits;
      } else {
        ++cache.stats.misses;
      }
    }
    if (data == nullptr) {
      data = SystemAllocate(capacity, kHugePage);
      if (data == nullptr) return nullptr;
      // Fewer page faults and TLB misses; a hint only (THP may be off: then it does nothing).
      ::madvise(data, capacity, MADV_HUGEPAGE);
    }
  } else {
    capacity = RoundUp(bytes == 0 ? 1 : bytes, kAlignment);
    data = SystemAllocate(capacity, kAlignment);
    if (data == nullptr) return nullptr;
  }
  if (init == kZero) {
    std::memset(data, 0, bytes);
  } else {
#ifndef NDEBUG
    std::memset(data, 0xFF, bytes);
#endif
  }
  return std::shared_ptr<TensorStorage>(new TensorStorage(data, bytes, capacity));
}

bool TensorStorage::SystemGrants(size_t bytes) {
  uint8_t* data = SystemAllocate(RoundUp(bytes == 0 ? 1 : bytes, kHugePage), kHugePage);
  std::free(data);
  return data != nullptr;
}

TensorStorage::~TensorStorage() {
  if (capacity_ >= kLargeBlockBytes) {
    BlockCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    if (cache.stats.cached_bytes + static_cast<int64_t>(capacity_) <=
        static_cast<int64_t>(cache.limit)) {
      cache.free_blocks[capacity_].push_back(data_);
      cache.stats.cached_bytes += static_cast<int64_t>(capacity_);
      return;
    }
  }
  std::free(data_);
}

StorageCacheStats GetStorageCacheStats() {
  BlockCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.stats;
}

void TrimStorageCache() {
  BlockCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  for (auto& [capacity, blocks] : cache.free_blocks) {
    for (uint8_t* p : blocks) std::free(p);
  }
  cache.free_blocks.clear();
  cache.stats = StorageCacheStats();
}

void SetStorageCacheLimit(size_t bytes) {
  BlockCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  cache.limit = bytes;
  // Largest blocks first, until what is left fits.
  for (auto it = cache.free_blocks.rbegin();
       it != cache.free_blocks.rend() && cache.stats.cached_bytes > static_cast<int64_t>(bytes);
       ++it) {
    while (!it->second.empty() && cache.stats.cached_bytes > static_cast<int64_t>(bytes)) {
      std::free(it->second.back());
      it->second.pop_back();
      cache.stats.cached_bytes -= static_cast<int64_t>(it->first);
    }
  }
}

}  // namespace coil
