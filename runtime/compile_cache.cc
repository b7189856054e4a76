// CompileCache: entry files with a checksummed header, atomic stores, corrupt-entry recovery.
#include "runtime/compile_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "ir/bulk_hash.h"

namespace coil {
namespace {

constexpr char kMagic[8] = {'C', 'O', 'I', 'L', 'K', 'M', 'C', '\n'};
constexpr size_t kHeaderBytes = 40;
constexpr uint64_t kChecksumSeed = 0x636f696c6b6d6332ULL;  // "coilkmc2"
constexpr uint64_t kKeySeed = 0x636f696c6b657932ULL;       // "coilkey2"
constexpr size_t kMaxKeyLength = 128;

// The payload's BulkHash128 (ir/bulk_hash.h), ~10 GB/s.
Hash128 Checksum(absl::string_view payload) { return BulkHash128(payload, kChecksumSeed); }

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t GetLe(absl::string_view s, size_t offset, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(s[offset + i])) << (8 * i);
  }
  return v;
}

absl::Status CheckKey(const std::string& key) {
  bool ok = !key.empty() && key.size() <= kMaxKeyLength;
  for (char c : key) ok = ok && (absl::ascii_isalnum(c) || c == '_' || c == '-');
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "compile cache key must be 1-", kMaxKeyLength, " characters of [0-9A-Za-z_-]; got '",
      key.substr(0, 40), key.size() > 40 ? "...'" : "'"));
}

// Why `bytes` is not a valid entry for `key`, or "" when it is (then *module is set).
std::string Parse(absl::string_view bytes, const std::string& key, proto::KernelModule* module) {
  if (bytes.size() < kHeaderBytes) return "truncated header";
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return "bad magic";
  const uint64_t version = GetLe(bytes, 8, 4);
  if (version != kCompileCacheFormatVersion) {
    return absl::StrCat("format version ", version, ", expected ", kCompileCacheFormatVersion);
  }
  const uint64_t key_length = GetLe(bytes, 12, 4);
  const uint64_t payload_length = GetLe(bytes, 16, 8);
  const Hash128 checksum{GetLe(bytes, 24, 8), GetLe(bytes, 32, 8)};
  if (key_length > kMaxKeyLength || payload_length > bytes.size() ||
      kHeaderBytes + key_length + payload_length != bytes.size()) {
    return absl::StrCat("length mismatch (file ", bytes.size(), " bytes, header says ",
                        kHeaderBytes, " + ", key_length, " + ", payload_length, ")");
  }
  if (bytes.substr(kHeaderBytes, key_length) != key) return "key mismatch";
  absl::string_view payload = bytes.substr(kHeaderBytes + key_length);
  if (Checksum(payload) != checksum) return "checksum mismatch";
  if (!module->ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return "payload is not a KernelModule";
  }
  return "";
}

bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string ErrnoText() { return std::strerror(errno); }

// Identifies this build of the running executable: size and modification time.
std::string BuildId() {
  static const std::string* id = [] {
    struct stat st;
    if (::stat("/proc/self/exe", &st) != 0) return new std::string("unknown");
    return new std::string(absl::StrCat(st.st_size, ":", st.st_mtim.tv_sec, ".",
                                        st.st_mtim.tv_nsec));
  }();
  return *id;
}

}  // namespace

CompileCache& CompileCache::Default() {
  static CompileCache* cache = new CompileCache(FromEnvironment());
  return *cache;
}

CompileCache CompileCache::FromEnvironment() {
  const char* mode = std::getenv("COIL_CACHE");
  if (mode != nullptr) {
    std::string m = absl::AsciiStrToLower(mode);
    if (m == "off" || m == "0" || m == "false" || m == "no") return CompileCache("");
  }
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return CompileCache(absl::StrCat(xdg, "/coil"));
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return CompileCache(absl::StrCat(home, "/.cache/coil"));
  return CompileCache("");
}

CompileCache::CompileCache(std::string dir) : dir_(std::move(dir)) {}

std::string CompileCache::EntryPath(const std::string& key) const {
  return absl::StrCat(dir_, "/", key, ".kmc");
}

absl::StatusOr<std::optional<proto::KernelModule>> CompileCache::Lookup(const std::string& key) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  if (!enabled()) return std::nullopt;
  const std::string path = EntryPath(key);
  // O_NONBLOCK: a FIFO planted as an entry must not block the open (it is refused below).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    return absl::InternalError(
        absl::StrCat("compile cache: cannot open ", path, ": ", ErrnoText()));
  }
  // One mapping of the file (pages populated up front), parsed in place: no copy of the entry
  // before the proto parser's own copy of its bytes fields.
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string error = ErrnoText();
    ::close(fd);
    return absl::InternalError(absl::StrCat("compile cache: cannot stat ", path, ": ", error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InternalError(
        absl::StrCat("compile cache: ", path, " is not a regular file (entries are files)"));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* mapped = nullptr;
  if (size > 0) {
    mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (mapped == MAP_FAILED) {
      std::string error = ErrnoText();
      ::close(fd);
      return absl::InternalError(absl::StrCat("compile cache: cannot map ", path, ": ", error));
    }
  }
  ::close(fd);
  absl::string_view bytes(static_cast<const char*>(mapped), size);
  proto::KernelModule module;
  std::string why = Parse(bytes, key, &module);
  if (mapped != nullptr) ::munmap(mapped, size);
  if (why.empty()) return module;
  ++corrupt_entries_;
  std::remove(path.c_str());
  std::fprintf(stderr, "coil: compile cache entry %s is corrupt (%s); deleted, rebuilding\n",
               path.c_str(), why.c_str());
  return std::nullopt;
}

absl::Status CompileCache::Store(const std::string& key, const proto::KernelModule& module) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  if (!enabled()) return absl::OkStatus();
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("compile cache: cannot create ", dir_, ": ", ec.message()));
  }
  std::string payload;
  if (!module.SerializeToString(&payload)) {
    return absl::InternalError("compile cache: cannot serialize the KernelModule");
  }
  const Hash128 checksum = Checksum(payload);
  std::string header(kMagic, sizeof(kMagic));
  PutU32(header, kCompileCacheFormatVersion);
  PutU32(header, static_cast<uint32_t>(key.size()));
  PutU64(header, payload.size());
  PutU64(header, checksum.lo);
  PutU64(header, checksum.hi);
  header += key;

  static std::atomic<uint64_t> counter{0};
  const std::string final_path = EntryPath(key);
  const std::string temp_path =
      absl::StrCat(final_path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("compile cache: cannot create ", temp_path, ": ", ErrnoText()));
  }
  // No fsync (compile_cache.h says why): after a crash an entry is complete or fails its
  // checksum and is rebuilt.
  bool ok = WriteAll(fd, header) && WriteAll(fd, payload);
  std::string error = ok ? "" : ErrnoText();
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = ErrnoText();
  }
  if (ok && ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    ok = false;
    error = ErrnoText();
  }
  if (!ok) {
    ::unlink(temp_path.c_str());
    return absl::InternalError(
        absl::StrCat("compile cache: cannot write ", final_path, ": ", error));
  }
  return absl::OkStatus();
}

std::string CacheKeyOf(absl::string_view content, absl::string_view options,
                       absl::string_view cpu_features) {
  // Length-prefixed fields so that no two different inputs concatenate to the same text.
  std::string material;
  auto add = [&material](absl::string_view field) {
    absl::StrAppend(&material, field.size(), ":", field, ";");
  };
  add("coil compile cache key");
  add(kCoilVersion);
  add(absl::StrCat(kCompileCacheFormatVersion));
#ifdef __VERSION__
  add(__VERSION__);
#endif
  add(BuildId());
  add(options);
  add(cpu_features);
  add(content);
  return BulkHash128(material, kKeySeed).Hex();
}

std::string CacheKey(const proto::Schedule& schedule, absl::string_view options,
                     absl::string_view cpu_features) {
  std::string serialized;
  {
    google::protobuf::io::StringOutputStream stream(&serialized);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    schedule.SerializeToCodedStream(&coded);
  }
  return CacheKeyOf(absl::StrCat("schedule:", BulkHash128(serialized).Hex()), options,
                    cpu_features);
}

}  // namespace coil
