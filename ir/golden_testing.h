// Golden-file tests: compare a test's text output with a checked-in file, or rewrite the file
// from the current code on request. Shared by inductor's Schedule goldens and codegen_cpu's
// LLVM IR goldens.
//
//   ExpectMatchesGolden(ScheduleText(s), "inductor/testdata/softmax.schedule.txt");
//
// With COIL_UPDATE_GOLDENS=1 under `bazel run` (which sets BUILD_WORKSPACE_DIRECTORY) the file
// in the source tree is rewritten instead and the check passes; review the diff with git.
#ifndef COIL_IR_GOLDEN_TESTING_H_
#define COIL_IR_GOLDEN_TESTING_H_

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace coil::testing_golden {

// The whole file at `path` (workspace-relative in a test's runfiles), "" when unreadable.
inline std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// EXPECTs that `text` equals the golden file `golden` (workspace-relative), or rewrites it
// (see above). `what` names the input in the failure message.
inline void ExpectMatchesGolden(const std::string& text, const std::string& golden,
                                const std::string& what) {
  const char* update = std::getenv("COIL_UPDATE_GOLDENS");
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (update != nullptr && std::string(update) == "1") {
    ASSERT_NE(workspace, nullptr) << "COIL_UPDATE_GOLDENS=1 needs `bazel run` (it writes into "
                                     "the source tree at BUILD_WORKSPACE_DIRECTORY)";
    std::ofstream out(std::string(workspace) + "/" + golden);
    out << text;
    ASSERT_TRUE(out.good()) << "cannot write " << golden;
    std::printf("wrote %s\n", golden.c_str());
    return;
  }
  const std::string expected = ReadText(golden);
  ASSERT_FALSE(expected.empty()) << golden << " is missing or empty (see the test's header)";
  EXPECT_EQ(text, expected) << what << " changed; if intended, rewrite " << golden
                            << " with COIL_UPDATE_GOLDENS=1 bazel run <the test>";
}

}  // namespace coil::testing_golden

#endif  // COIL_IR_GOLDEN_TESTING_H_
