// A main for every coil fuzz target outside libFuzzer: runs LLVMFuzzerTestOneInput over files
// (and every prefix of each, so truncated inputs are covered too). Arguments are files or
// folders (a regression test passes its seed corpus, relative to the runfiles root). Used by
// the *_fuzzer_regression_test targets and by the non-fuzz builds of the fuzzers (to replay
// crashes); see tools/build_defs/fuzz.bzl. `--whole-files` first: each file once, no prefixes.
// Under a sharded Bazel test (TEST_TOTAL_SHARDS) shard i of n replays the runs whose index
// (over the sorted files and their prefixes) is i modulo n.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> roots;
  bool prefixes = true;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--whole-files") {
      prefixes = false;
    } else {
      roots.emplace_back(argv[i]);
    }
  }
  if (roots.empty()) {
    std::cerr << "usage: " << argv[0] << " [--whole-files] FILE_OR_FOLDER...\n";
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& root : roots) {
    if (std::filesystem::is_directory(root)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.push_back(root);
    }
  }
  if (files.empty()) {
    std::cerr << "no inputs found\n";
    return 1;
  }
  std::sort(files.begin(), files.end());
  size_t shards = 1, shard = 0;
  if (const char* total = std::getenv("TEST_TOTAL_SHARDS")) {
    const char* index = std::getenv("TEST_SHARD_INDEX");
    shards = std::strtoul(total, nullptr, 10);
    shard = index != nullptr ? std::strtoul(index, nullptr, 10) : 0;
    if (shards == 0 || shard >= shards) {
      std::cerr << "bad shard " << shard << " of " << shards << "\n";
      return 2;
    }
    // Tells Bazel this binary shards its work.
    if (const char* status = std::getenv("TEST_SHARD_STATUS_FILE")) std::ofstream{status};
  }
  size_t runs = 0, index = 0;
  for (const auto& f : files) {
    std::string data = ReadFile(f);
    std::cerr << "running " << f.string() << " (" << data.size() << " bytes)\n";
    for (size_t n = prefixes ? 0 : data.size(); n <= data.size(); ++n, ++index) {
      if (index % shards != shard) continue;
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), n);
      ++runs;
    }
  }
  std::cerr << files.size() << " files, " << runs << " runs (shard " << shard + 1 << " of "
            << shards << "), no crash\n";
  return 0;
}
