// CompileCache: the on-disk cache of compiled KernelModules (serialized proto bytes), so a
// second compile of the same graph or Schedule skips code generation. No LLVM, no codegen
// dependency.
//
//   CompileCache& cache = CompileCache::Default();   // ~/.cache/coil, or off
//   std::string key = CacheKeyOf(content_fingerprint, "opt_level=3 ... LLVM 16", cpu);
//   absl::StatusOr<std::optional<proto::KernelModule>> hit = cache.Lookup(key);
//   ... on a miss: generate, then cache.Store(key, module);
//
// Two kinds of keys share the directory: graph-level keys (tools/driver/driver.h: the
// graph's StructuralHash128 + every pipeline option; a hit skips prims, inductor and codegen)
// and schedule-level keys (CacheKey below: a Schedule's deterministic serialization, for a
// caller that caches Schedules it built itself). Both are 128-bit BulkHash128 values (ir/bulk_hash.h) over
// length-prefixed material that also holds kCoilVersion, kCompileCacheFormatVersion, the C++
// compiler and this build of the running executable.
//
// Directory: $XDG_CACHE_HOME/coil, else $HOME/.cache/coil; COIL_CACHE=off (or 0, false, no)
// disables the cache. Default() reads the environment once per process.
//
// Entry file "<dir>/<key>.kmc" (format version 2):
//   offset 0   8 bytes  magic "COILKMC\n"
//          8   u32 LE   format version (kCompileCacheFormatVersion)
//         12   u32 LE   key length K
//         16   u64 LE   payload length N
//         24   2 x u64 LE  checksum of the payload: BulkHash128 (lo, hi), seeded
//         40   K bytes  the full key the entry was written under (must equal the looked-up key)
//       40+K   N bytes  payload: proto::KernelModule serialized
// A hit is verified by the stored key (a 128-bit hash of everything the module depends on) and
// the checksum; nothing is serialized again to verify it. Lookup maps the file once
// (MAP_POPULATE), checks it and parses the payload from the mapping (entries are replaced by
// rename and never rewritten in place, so a mapped entry cannot shrink under a reader).
//
// Durability: Store writes a temporary file in the same directory ("<key>.kmc.tmp.<pid>.<n>")
// and renames it over the final name, so concurrent readers see a complete old or new entry,
// never a partial one. It does not fsync: a cache entry is disposable, and after a crash or
// power loss an entry that did not reach the disk whole (empty, truncated, torn) fails the
// length or checksum check, is deleted and rebuilt, while an fsync of resnet18's 46 MB entry
// would cost a miss tens to hundreds of milliseconds. Lookup treats an entry whose magic,
// version, lengths, key, checksum or proto do not check out as corrupt: it deletes the file,
// prints one line to stderr and reports a miss. It never returns a module other than the one
// stored under that key. An entry path that is not a regular file (a FIFO, a folder) is an
// error, never a hang: Lookup opens without blocking and checks the file's kind.
//
// The cache has no eviction: delete the directory to reclaim space.
#ifndef COIL_RUNTIME_COMPILE_CACHE_H_
#define COIL_RUNTIME_COMPILE_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/proto/kernel_module.pb.h"
#include "ir/proto/schedule.pb.h"

namespace coil {

// Bumped when the entry layout or a key's definition changes; older entries then read as
// corrupt (or are never looked up) and are rebuilt. 2: 40-byte header, BulkHash128 checksum,
// graph-level keys.
inline constexpr uint32_t kCompileCacheFormatVersion = 2;
// coil's version as it enters cache keys. Bump it when generated code changes meaning.
inline constexpr absl::string_view kCoilVersion = "0.1.0";

class CompileCache {
 public:
  // The process-wide cache configured from the environment (read once, on first call).
  static CompileCache& Default();
  // A cache configured from the environment now (not cached): what Default() holds.
  static CompileCache FromEnvironment();
  // A cache in `dir` (created on the first Store); an empty `dir` is a disabled cache.
  explicit CompileCache(std::string dir);

  CompileCache(const CompileCache& other) : CompileCache(other.dir_) {}
  CompileCache& operator=(const CompileCache&) = delete;

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // The module stored under `key`, or nullopt when there is none, it is corrupt (deleted and
  // reported on stderr), or the cache is disabled. Errors: a key that is not 1-128 characters
  // of [0-9A-Za-z_-] (InvalidArgument); an entry that exists but cannot be read (Internal).
  absl::StatusOr<std::optional<proto::KernelModule>> Lookup(const std::string& key);

  // Writes `module` under `key` atomically (temporary file + rename), replacing any entry.
  // OK and no-op when disabled. Errors: a bad key (InvalidArgument); I/O (Internal).
  absl::Status Store(const std::string& key, const proto::KernelModule& module);

  // The path of `key`'s entry ("<dir>/<key>.kmc").
  std::string EntryPath(const std::string& key) const;

  // How many corrupt entries this object has detected and deleted.
  int corrupt_entries() const { return corrupt_entries_.load(); }

 private:
  std::string dir_;
  std::atomic<int> corrupt_entries_{0};
};

// A cache key (32 lowercase hex digits) for compiling `schedule` with `options` (code
// generator options and its compiler's version, e.g. "opt_level=3 cpu= compiler=LLVM 16.0.6")
// for a CPU described by `cpu_features` (CPU name and ISA features). Also covers the schedule's
// deterministic serialization, kCoilVersion, kCompileCacheFormatVersion, the C++ compiler that
// built coil, and this build of the running executable (its size and modification time), so a
// rebuilt coil never reuses modules of an older build.
std::string CacheKey(const proto::Schedule& schedule, absl::string_view options,
                     absl::string_view cpu_features);

// A cache key (32 lowercase hex digits) for `content` (a fingerprint of what is compiled, e.g.
// "graph:<StructuralHash128 hex>") with `options` and `cpu_features`; covers the same build and
// version material as CacheKey.
std::string CacheKeyOf(absl::string_view content, absl::string_view options,
                       absl::string_view cpu_features);

}  // namespace coil

#endif  // COIL_RUNTIME_COMPILE_CACHE_H_
