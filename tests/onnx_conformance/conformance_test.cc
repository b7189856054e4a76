// The ONNX backend conformance suite as GoogleTest cases: one case per test folder of Debian's
// libonnx-testdata (suites node, pytorch-converted, pytorch-operator, simple), plus one
// pass-rate case per suite that has a target.
//
// A folder's case fails on wrong numbers, an import/run error that is not "unsupported", a
// crash or a timeout, and when its unsupported status disagrees with
// tests/onnx_conformance/unsupported.txt (the folders coil lacks something for, the same list
// for every pipeline): an unsupported folder that is not listed is a regression, a listed one
// that passes should leave the list. So each case checks one folder on its own and a sharded
// run does every folder once. Pass-rate targets (passed / all tests of the suite, from the list
// and the folder count, running nothing): node >= 70%, pytorch-converted >= 90%,
// pytorch-operator >= 90%. (They used to run the whole suite in one shard: a quarter of the
// conformance tests' time ran twice.)
// Usage: conformance_test [--pipeline=NAME] [DATA_DIR]; with --pipeline=schedule every
// imported graph goes through prims::Decompose and inductor and runs on the Schedule
// interpreter, with --pipeline=cpu through the compiled CPU backend (when linked), with the
// same targets and tolerances.
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/onnx_conformance/conformance.h"

namespace {

using coil::onnx_testing::Outcome;
using coil::onnx_testing::RunOptions;
using coil::onnx_testing::RunTest;
using coil::onnx_testing::TestResult;

struct SuiteTarget {
  const char* suite;
  double min_pass_rate;
};
// The targets. Keep them here even while the importer falls short: the rate cases fail
// until it reaches them.
constexpr SuiteTarget kTargets[] = {
    {"node", 0.70}, {"pytorch-converted", 0.90}, {"pytorch-operator", 0.90}};

std::string g_data_dir = coil::onnx_testing::kDefaultDataDir;
RunOptions g_options;

constexpr char kUnsupportedList[] = "tests/onnx_conformance/unsupported.txt";

// unsupported.txt's folders ("SUITE/FOLDER", the first word of each line; what is missing
// follows for the reader); empty when unreadable (the rate cases then fail, saying so).
const std::set<std::string>& ListedUnsupported() {
  static const auto* listed = [] {
    auto* keys = new std::set<std::string>();
    std::ifstream f(kUnsupportedList);
    std::string line;
    while (std::getline(f, line)) {
      if (!line.empty() && line[0] != '#') keys->insert(line.substr(0, line.find(' ')));
    }
    return keys;
  }();
  return *listed;
}

class FolderTest : public testing::Test {
 public:
  FolderTest(std::string dir, std::string key) : dir_(std::move(dir)), key_(std::move(key)) {}
  void TestBody() override {
    const TestResult r = RunTest(dir_, g_options);
    RecordProperty("result", std::string(coil::onnx_testing::OutcomeName(r.outcome)));
    const bool listed = ListedUnsupported().contains(key_);
    if (r.outcome == Outcome::kUnsupported) {
      RecordProperty("unsupported", r.unsupported);
      std::printf("unsupported: %s\n", r.message.c_str());
      EXPECT_TRUE(listed) << key_ << " is unsupported (" << r.message << ") but not listed in "
                          << kUnsupportedList << ": a regression, or add the line '" << key_
                          << "  " << r.unsupported << "'";
    } else if (r.outcome == Outcome::kPassed) {
      EXPECT_FALSE(listed) << key_ << " passes: delete its line from " << kUnsupportedList;
    }
    EXPECT_NE(r.outcome, Outcome::kFailed) << dir_ << ": " << r.message;
  }

 private:
  std::string dir_;
  std::string key_;  // SUITE/FOLDER, as unsupported.txt names it
};

// The suite's pass rate if every folder not listed as unsupported passes, which the folder
// cases check one by one; and that every listed folder exists.
class RateTest : public testing::Test {
 public:
  RateTest(std::string suite, double min_rate) : suite_(std::move(suite)), min_rate_(min_rate) {}
  void TestBody() override {
    std::vector<std::string> dirs =
        coil::onnx_testing::ListTestDirs(absl::StrCat(g_data_dir, "/", suite_));
    ASSERT_FALSE(dirs.empty()) << "no tests under " << g_data_dir << "/" << suite_;
    ASSERT_FALSE(ListedUnsupported().empty()) << "cannot read " << kUnsupportedList;
    std::set<std::string> folders;
    for (const std::string& d : dirs) folders.insert(d.substr(d.rfind('/') + 1));
    int unsupported = 0;
    const std::string prefix = suite_ + "/";
    for (const std::string& key : ListedUnsupported()) {
      if (key.rfind(prefix, 0) != 0) continue;
      EXPECT_TRUE(folders.contains(key.substr(prefix.size())))
          << kUnsupportedList << " lists " << key << ", which is not a test folder";
      ++unsupported;
    }
    const int total = static_cast<int>(dirs.size());
    const double rate = static_cast<double>(total - unsupported) / total;
    std::printf("%s: %d of %d tests supported (%.1f%%)\n", suite_.c_str(), total - unsupported,
                total, 100 * rate);
    EXPECT_GE(rate, min_rate_) << suite_ << ": " << total - unsupported << " of " << total
                               << " tests supported ("
                               << absl::StrFormat("%.1f%%", 100 * rate) << "), the target is "
                               << absl::StrFormat("%.0f%%", 100 * min_rate_);
  }

 private:
  std::string suite_;
  double min_rate_;
};

// "pytorch-converted" -> "pytorch_converted" (test suite names are identifiers).
std::string GTestName(absl::string_view s) { return absl::StrReplaceAll(s, {{"-", "_"}}); }

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0].rfind("--pipeline=", 0) == 0) {
    g_options.pipeline = args[0].substr(std::string("--pipeline=").size());
    args.erase(args.begin());
    if (g_options.pipeline != "reference" &&
        coil::onnx_testing::FindPipeline(g_options.pipeline) == nullptr) {
      std::fprintf(stderr, "unknown pipeline '%s' (not linked into this binary)\n",
                   g_options.pipeline.c_str());
      return 2;
    }
  }
  if (args.size() > 1 || (args.size() == 1 && args[0].rfind("--", 0) == 0)) {
    std::fprintf(stderr, "usage: %s [--pipeline=NAME] [DATA_DIR]\n", argv[0]);
    return 2;
  }
  if (args.size() == 1) g_data_dir = args[0];
  for (absl::string_view suite : coil::onnx_testing::kSuites) {
    std::vector<std::string> dirs =
        coil::onnx_testing::ListTestDirs(absl::StrCat(g_data_dir, "/", suite));
    if (dirs.empty()) {
      std::fprintf(stderr, "no ONNX tests under %s/%s (is libonnx-testdata installed?)\n",
                   g_data_dir.c_str(), std::string(suite).c_str());
      return 1;
    }
    for (const std::string& dir : dirs) {
      std::string name = dir.substr(dir.rfind('/') + 1);
      std::string key = absl::StrCat(suite, "/", name);
      testing::RegisterTest(
          GTestName(suite).c_str(), name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
          [dir, key]() -> testing::Test* { return new FolderTest(dir, key); });
    }
  }
  for (const SuiteTarget& t : kTargets) {
    testing::RegisterTest("pass_rate", GTestName(t.suite).c_str(), nullptr, nullptr, __FILE__,
                          __LINE__, [t]() -> testing::Test* {
                            return new RateTest(t.suite, t.min_pass_rate);
                          });
  }
  return RUN_ALL_TESTS();
}
