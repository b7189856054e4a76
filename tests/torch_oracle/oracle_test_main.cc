// GoogleTest driver for a torch oracle suite: one test per case (static shapes) plus one per
// case rerun with symbolic input dimensions. Usage: oracle_test SUITE.pb
#include <iostream>

#include "gtest/gtest.h"
#include "tests/torch_oracle/oracle_runner.h"

namespace {

class OracleCaseTest : public testing::Test {
 public:
  OracleCaseTest(const coil::oracle::Case* c, bool symbolic) : case_(c), symbolic_(symbolic) {}
  void TestBody() override {
    absl::Status s = coil::oracle::RunCase(*case_, symbolic_);
    EXPECT_TRUE(s.ok()) << case_->name() << (symbolic_ ? " (symbolic shapes)" : "") << ": "
                        << s.message();
  }

 private:
  const coil::oracle::Case* case_;
  bool symbolic_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " SUITE.pb\n";
    return 2;
  }
  static coil::oracle::Suite suite;
  absl::StatusOr<coil::oracle::Suite> loaded = coil::oracle::LoadSuite(argv[1]);
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
      testing::RegisterTest(suite.name().c_str(), name.c_str(), nullptr, nullptr, __FILE__,
                            __LINE__, [&c, symbolic]() -> testing::Test* {
                              return new OracleCaseTest(&c, symbolic);
                            });
    }
  }
  return RUN_ALL_TESTS();
}
