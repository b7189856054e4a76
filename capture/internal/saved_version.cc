// Storage version counters (saved_version.h).
#include "capture/internal/saved_version.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ir/dtype.h"

namespace coil::capture_internal {
namespace {

struct Entry {
  uint64_t version = 0;
  std::string last_write;  // "aten.add_ (at file.cc:14)"
};

struct Versions {
  absl::Mutex mu;
  absl::flat_hash_map<const void*, Entry> by_storage ABSL_GUARDED_BY(mu);
};

Versions& Table() {
  static Versions* table = new Versions();  // never destroyed: used until exit
  return *table;
}

// The storage's identity: the address of its first element (a view's RawData() less its
// offset), shared by every tensor on that storage.
const void* StorageKey(const HostTensor& t) {
  if (!t.defined() || t.RawData() == nullptr) return nullptr;
  return t.RawData() - t.offset() * ElementSize(t.dtype());
}

}  // namespace

void BumpStorageVersion(const HostTensor& t, absl::string_view op, absl::string_view location) {
  const void* key = StorageKey(t);
  if (key == nullptr) return;
  Versions& v = Table();
  absl::MutexLock lock(&v.mu);
  Entry& e = v.by_storage[key];
  ++e.version;
  e.last_write = absl::StrCat(op, " (at ", location, ")");
}

SavedVersion SavedVersion::Of(const HostTensor& t) {
  const void* key = StorageKey(t);
  if (key == nullptr) return {};
  Versions& v = Table();
  absl::MutexLock lock(&v.mu);
  auto it = v.by_storage.find(key);
  return {it == v.by_storage.end() ? 0 : it->second.version};
}

absl::Status SavedVersion::Check(const HostTensor& t, absl::string_view op, int input,
                                 absl::string_view location) const {
  const void* key = StorageKey(t);
  if (key == nullptr) return absl::OkStatus();
  Versions& v = Table();
  absl::MutexLock lock(&v.mu);
  auto it = v.by_storage.find(key);
  const uint64_t now = it == v.by_storage.end() ? 0 : it->second.version;
  if (now == version) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "one of the variables needed for gradient computation has been modified by an inplace "
      "operation: input ", input, " (", t.TypeString(), ") of ", op, " (recorded at ", location,
      ") was saved at version ", version, " and is now at version ", now,
      it == v.by_storage.end() ? "" : absl::StrCat("; last written by ", it->second.last_write),
      " (compute the gradient before changing it, or change a clone())"));
}

}  // namespace coil::capture_internal
