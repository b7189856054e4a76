// GoogleTest driver for a torch oracle suite: one test per case (static shapes) plus one per
// case rerun with symbolic input dimensions. Usage: oracle_test [--decompose] SUITE.pb
// With --decompose every case's op is decomposed into prims first (prims::Decompose).
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "tests/torch_oracle/oracle_runner.h"

namespace {

class OracleCaseTest : public testing::Test {
 public:
  OracleCaseTest(const coil::oracle::Case* c, coil::oracle::RunOptions options)
      : case_(c), options_(options) {}
  void TestBody() override {
    absl::Status s = coil::oracle::RunCase(*case_, options_);
    EXPECT_TRUE(s.ok()) << case_->name() << (options_.symbolic ? " (symbolic shapes)" : "")
                        << (options_.decompose ? " (decomposed)" : "") << ": " << s.message();
  }

 private:
  const coil::oracle::Case* case_;
  coil::oracle::RunOptions options_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  bool decompose = argc == 3 && std::string(argv[1]) == "--decompose";
  if (argc != 2 + decompose) {
    std::cerr << "usage: " << argv[0] << " [--decompose] SUITE.pb\n";
    return 2;
  }
  static coil::oracle::Suite suite;
  absl::StatusOr<coil::oracle::Suite> loaded = coil::oracle::LoadSuite(argv[argc - 1]);
  if (!loaded.ok()) {
    std::cerr << loaded.status() << "\n";
    return 2;
  }
  suite = *std::move(loaded);
  if (suite.cases_size() == 0) {
    std::cerr << "suite " << argv[1] << " has no cases\n";
    return 1;
  }
  for (const coil::oracle::Case& c : suite.cases()) {
    for (bool symbolic : {false, true}) {
      if (symbolic && c.static_only()) continue;
      std::string name = c.name() + (symbolic ? "/symbolic" : "");
      coil::oracle::RunOptions options{.symbolic = symbolic, .decompose = decompose};
      testing::RegisterTest(suite.name().c_str(), name.c_str(), nullptr, nullptr, __FILE__,
                            __LINE__, [&c, options]() -> testing::Test* {
                              return new OracleCaseTest(&c, options);
                            });
    }
  }
  return RUN_ALL_TESTS();
}
