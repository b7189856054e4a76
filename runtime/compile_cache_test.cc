// CompileCache: round trip, corrupt entries (flipped byte, truncation, garbage) detected,
// deleted and reported as misses, COIL_CACHE=off, atomic stores, key properties.
#include "runtime/compile_cache.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

namespace fs = std::filesystem;

// A fresh directory under $TEST_TMPDIR (never the real home cache).
std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/compile_cache_test/" + name;
  fs::remove_all(dir);
  return dir;
}

proto::KernelModule SampleModule(int size) {
  proto::KernelModule m;
  m.set_backend("cpu");
  m.set_object_code(std::string(size, '\x7f'));
  m.set_cpu("znver3");
  m.set_cpu_features("+avx2,+fma");
  proto::CompiledKernel* k = m.add_kernels();
  k->set_kernel_id(3);
  k->set_symbol("coil_k3_add");
  k->set_source("define void @coil_k3_add() { ret void }");
  return m;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  return names;
}

// Under `bazel test` the default cache lies in the sandbox ($HOME is $TEST_TMPDIR there), so
// tests of CpuBackend / the CLI never write the real home cache. Runs first: Default() reads
// the environment once.
TEST(CompileCacheTest, DefaultIsInsideTestTmpdir) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  if (tmp == nullptr) GTEST_SKIP() << "not under bazel test";
  const CompileCache& cache = CompileCache::Default();
  if (cache.enabled()) {
    EXPECT_EQ(cache.dir().rfind(tmp, 0), 0u) << cache.dir();
  }
}

TEST(CompileCacheTest, StoreLookupRoundTrip) {
  CompileCache cache(FreshDir("round_trip"));
  ASSERT_TRUE(cache.enabled());
  auto miss = cache.Lookup("abc123");
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_FALSE(miss->has_value());

  proto::KernelModule m = SampleModule(1000);
  ASSERT_TRUE(cache.Store("abc123", m).ok());
  auto hit = cache.Lookup("abc123");
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ((*hit)->SerializeAsString(), m.SerializeAsString());

  // Overwrite: the newest module wins.
  proto::KernelModule m2 = SampleModule(10);
  ASSERT_TRUE(cache.Store("abc123", m2).ok());
  hit = cache.Lookup("abc123");
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->object_code().size(), 10u);
  EXPECT_EQ(cache.corrupt_entries(), 0);
}

TEST(CompileCacheTest, BadKeysAreRejected) {
  CompileCache cache(FreshDir("bad_keys"));
  EXPECT_EQ(cache.Lookup("../etc/passwd").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.Store("", SampleModule(1)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.Store(std::string(200, 'a'), SampleModule(1)).code(),
            absl::StatusCode::kInvalidArgument);
}

// Each corruption of a stored entry is a miss; the file is deleted; the next Store works.
TEST(CompileCacheTest, CorruptEntriesAreDetectedDeletedAndMissed) {
  CompileCache cache(FreshDir("corrupt"));
  const std::string key = "k0";
  ASSERT_TRUE(cache.Store(key, SampleModule(4096)).ok());
  const std::string good = ReadFile(cache.EntryPath(key));
  ASSERT_GT(good.size(), 4096u);

  std::vector<std::pair<std::string, std::string>> cases;
  for (size_t at : {size_t{0}, size_t{9}, size_t{13}, size_t{20}, size_t{28}, size_t{36},
                    size_t{41}, good.size() / 2, good.size() - 1}) {
    std::string flipped = good;
    flipped[at] ^= 0x10;
    cases.push_back({absl::StrCat("flip byte ", at), flipped});
  }
  cases.push_back({"truncated to half", good.substr(0, good.size() / 2)});
  cases.push_back({"truncated by one", good.substr(0, good.size() - 1)});
  cases.push_back({"header only", good.substr(0, 40)});
  cases.push_back({"header cut", good.substr(0, 30)});
  {
    std::string old_version = good;
    old_version[8] = 1;  // a format-1 entry
    cases.push_back({"format version 1", old_version});
  }
  cases.push_back({"empty", ""});
  cases.push_back({"trailing garbage", good + "xx"});
  int expected_corrupt = 0;
  for (const auto& [name, bytes] : cases) {
    SCOPED_TRACE(name);
    WriteFile(cache.EntryPath(key), bytes);
    auto r = cache.Lookup(key);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->has_value());
    EXPECT_EQ(cache.corrupt_entries(), ++expected_corrupt);
    EXPECT_FALSE(fs::exists(cache.EntryPath(key)));
    // Rebuilt: a fresh store is a hit again.
    ASSERT_TRUE(cache.Store(key, SampleModule(4096)).ok());
    r = cache.Lookup(key);
    ASSERT_TRUE(r.ok() && r->has_value());
  }
}

// An entry copied under another key's name does not serve that key.
TEST(CompileCacheTest, EntryUnderWrongNameIsCorrupt) {
  CompileCache cache(FreshDir("wrong_name"));
  ASSERT_TRUE(cache.Store("aaaa", SampleModule(10)).ok());
  fs::copy_file(cache.EntryPath("aaaa"), cache.EntryPath("bbbb"));
  auto r = cache.Lookup("bbbb");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(cache.corrupt_entries(), 1);
}

// Expected errors: an entry that is not a regular file is an error (a miss to the driver),
// never a hang (a FIFO used to block the open forever) or a parse of a folder; Store then
// replaces the FIFO.
TEST(CompileCacheTest, FifoEntryIsAnErrorNotAHang) {
  CompileCache cache(FreshDir("fifo"));
  fs::create_directories(cache.dir());
  ASSERT_EQ(::mkfifo(cache.EntryPath("ffff").c_str(), 0600), 0);
  auto r = cache.Lookup("ffff");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(r.status().message(), absl::StrCat("compile cache: ", cache.EntryPath("ffff"),
                                               " is not a regular file (entries are files)"));
  ASSERT_TRUE(cache.Store("ffff", SampleModule(10)).ok());
  r = cache.Lookup("ffff");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->has_value());
}

TEST(CompileCacheTest, DirectoryEntryIsAnError) {
  CompileCache cache(FreshDir("dir_entry"));
  fs::create_directories(cache.EntryPath("dddd"));
  auto r = cache.Lookup("dddd");
  EXPECT_EQ(r.status().message(), absl::StrCat("compile cache: ", cache.EntryPath("dddd"),
                                               " is not a regular file (entries are files)"));
}

TEST(CompileCacheTest, DisabledCacheStoresNothing) {
  CompileCache cache("");
  EXPECT_FALSE(cache.enabled());
  EXPECT_TRUE(cache.Store("k", SampleModule(10)).ok());
  auto r = cache.Lookup("k");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
}

TEST(CompileCacheTest, EnvironmentSelectsDirectoryOrOff) {
  const std::string tmp = FreshDir("env");
  ::setenv("XDG_CACHE_HOME", tmp.c_str(), 1);
  ::unsetenv("COIL_CACHE");
  EXPECT_EQ(CompileCache::FromEnvironment().dir(), tmp + "/coil");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", tmp.c_str(), 1);
  EXPECT_EQ(CompileCache::FromEnvironment().dir(), tmp + "/.cache/coil");
  for (const char* off : {"off", "OFF", "0", "false"}) {
    ::setenv("COIL_CACHE", off, 1);
    EXPECT_FALSE(CompileCache::FromEnvironment().enabled()) << off;
  }
  ::setenv("COIL_CACHE", "on", 1);
  EXPECT_TRUE(CompileCache::FromEnvironment().enabled());
  ::unsetenv("COIL_CACHE");
}

// Stores leave only complete entries under final names (no temporary files), and readers
// racing with writers see a miss or a complete module, never a corrupt one.
TEST(CompileCacheTest, StoresAreAtomic) {
  CompileCache cache(FreshDir("atomic"));
  const proto::KernelModule big = SampleModule(1 << 20);
  const std::string want = big.SerializeAsString();
  std::vector<std::thread> threads;
  std::atomic<int> bad{0}, hits{0};
  for (int w = 0; w < 3; ++w) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        if (!cache.Store("shared", big).ok()) ++bad;
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 100; ++i) {
      auto r = cache.Lookup("shared");
      if (!r.ok()) {
        ++bad;
      } else if (r->has_value()) {
        ++hits;
        if ((*r)->SerializeAsString() != want) ++bad;
      }
    }
  });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(cache.corrupt_entries(), 0);
  EXPECT_EQ(Files(cache.dir()), std::vector<std::string>{"shared.kmc"});
}

TEST(CompileCacheTest, KeyCoversScheduleOptionsAndFeatures) {
  proto::Schedule s;
  s.add_kernels()->set_id(1);
  const std::string k = CacheKey(s, "opt_level=3", "+avx2");
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k, CacheKey(s, "opt_level=3", "+avx2"));
  EXPECT_NE(k, CacheKey(s, "opt_level=2", "+avx2"));
  EXPECT_NE(k, CacheKey(s, "opt_level=3", "+avx2,+avx512f"));
  // Field boundaries matter: moving text between options and features changes the key.
  EXPECT_NE(CacheKey(s, "ab", "c"), CacheKey(s, "a", "bc"));
  proto::Schedule s2 = s;
  s2.add_kernels()->set_id(2);
  EXPECT_NE(k, CacheKey(s2, "opt_level=3", "+avx2"));
}

TEST(CompileCacheTest, KeyOfCoversContentOptionsAndFeatures) {
  const std::string k = CacheKeyOf("graph:0123", "o", "f");
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k, CacheKeyOf("graph:0123", "o", "f"));
  EXPECT_NE(k, CacheKeyOf("graph:0124", "o", "f"));
  EXPECT_NE(k, CacheKeyOf("graph:0123", "o2", "f"));
  EXPECT_NE(k, CacheKeyOf("graph:0123", "o", "f2"));
  EXPECT_NE(CacheKeyOf("ab", "c", "d"), CacheKeyOf("a", "bc", "d"));
}

// The entry's layout: the full key follows the 40-byte header, and the payload's bytes are
// covered by the checksum (a payload edited together with its length still fails).
TEST(CompileCacheTest, EntryHoldsFullKeyAndChecksummedPayload) {
  CompileCache cache(FreshDir("layout"));
  const std::string key = "0123456789abcdef0123456789abcdef";
  ASSERT_TRUE(cache.Store(key, SampleModule(100)).ok());
  const std::string bytes = ReadFile(cache.EntryPath(key));
  EXPECT_EQ(bytes.substr(0, 8), "COILKMC\n");
  EXPECT_EQ(bytes[8], static_cast<char>(kCompileCacheFormatVersion));
  EXPECT_EQ(bytes.substr(40, key.size()), key);
  EXPECT_EQ(bytes.substr(40 + key.size()), SampleModule(100).SerializeAsString());
  // Same length, one object-code byte changed (still a valid proto): the checksum catches it.
  std::string edited = bytes;
  edited[edited.size() - 60] ^= 0x01;
  WriteFile(cache.EntryPath(key), edited);
  auto r = cache.Lookup(key);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(cache.corrupt_entries(), 1);
}

}  // namespace
}  // namespace coil
