// BulkHash128's throughput against a copy of the same buffer (memcpy) measured in the same run:
// the compile cache hashes every constant byte of a graph, so this is the cost per GB of weights.
//
//   bazel run -c opt //tools/bench:bulk_hash_bench   # prints GB/s and the ratio to memcpy
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ir/bulk_hash.h"

namespace {

double BestSeconds(int reps, const auto& fn) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

}  // namespace

int main() {
  const size_t n = size_t{256} << 20;
  std::string src(n, '\0');
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<char>(i * 2654435761u >> 13);
  std::string dst(n, '\0');
  uint64_t sink = 0;
  const double hash = BestSeconds(5, [&] { sink ^= coil::BulkHash128(src).lo; });
  const double copy = BestSeconds(5, [&] {
    std::memcpy(dst.data(), src.data(), n);
    sink ^= static_cast<unsigned char>(dst[n / 2]);
  });
  std::printf("BulkHash128 %.2f GB/s, memcpy %.2f GB/s (reads and writes), hash/copy %.2fx "
              "(256 MiB, best of 5; %llx)\n",
              n / hash / 1e9, n / copy / 1e9, copy / hash, static_cast<unsigned long long>(sink));
  return 0;
}
