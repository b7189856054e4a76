// coil::explain and the COIL_LOGS streams.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "capture/compile.h"
#include "capture/logging.h"
#include "capture/tensor.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ExplainTest, GraphsBreaksAndGuards) {
  int line = 0;
  auto fn = [&](const Tensor& x) {
    Tensor y = x.exp();
    line = __LINE__ + 1;
    double m = y.amax().item();
    return y / m;
  };
  Tensor x = Tensor::Rand({3, 4}, 1);
  Explanation e = explain(fn, x);
  EXPECT_EQ(e.graph_count, 2);
  ASSERT_EQ(e.breaks.size(), 1u);
  EXPECT_EQ(e.breaks[0].reason, "item() reads a tensor's value");
  EXPECT_EQ(e.breaks[0].op, "aten.amax");
  EXPECT_NE(e.breaks[0].location.find(absl::StrCat("explain_test.cc:", line, ":")),
            std::string::npos)
      << e.breaks[0].location;
  ASSERT_FALSE(e.guards.empty());
  EXPECT_EQ(e.guards[0], "arg0: f32[3, 4] contiguous cpu");
  ASSERT_EQ(e.graphs.size(), 2u);
  EXPECT_NE(e.graphs[0].find("aten.exp"), std::string::npos) << e.graphs[0];
  std::string text = e.ToString();
  EXPECT_NE(text.find("2 graph(s), 1 graph break(s)"), std::string::npos) << text;
}

TEST(ExplainTest, NoBreaksOneGraph) {
  Explanation e = explain([](const Tensor& a, const Tensor& b) { return a * b + a; },
                          Tensor::Rand({2}, 1), Tensor::Rand({2}, 2));
  EXPECT_EQ(e.graph_count, 1);
  EXPECT_TRUE(e.breaks.empty());
  EXPECT_EQ(e.guards.size(), 2u);
}

TEST(LogsTest, StreamsWriteOneLinePerEvent) {
  std::string path = ::testing::TempDir() + "/coil_logs.txt";
  std::remove(path.c_str());
  ConfigureLogs("graph_breaks,guards,dynamic,recompiles,output_code", path);
  auto f = compile([](const Tensor& x) {
    Tensor y = x * 2.0;
    if (y.size(0) > 2) y = y + 1.0;
    double s = y.sum().item();
    return y * s;
  });
  f(Tensor::Rand({3}, 1));
  f(Tensor::Rand({4}, 2));  // automatic dynamic: recompile with s0
  ConfigureLogs("");
  f(Tensor::Rand({5}, 3));  // logs off again
  std::string log = ReadFile(path);
  EXPECT_NE(log.find("[coil:graph_breaks] fn: graph break at "), std::string::npos) << log;
  EXPECT_NE(log.find("item() reads a tensor's value (op aten.sum)"), std::string::npos) << log;
  EXPECT_NE(log.find("[coil:recompiles] fn: recompiling (compile 2 of at most 8): arg0 dim 0"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("[coil:dynamic] fn: arg0 dim 0 changed (3 -> 4)"), std::string::npos) << log;
  EXPECT_NE(log.find("[coil:dynamic] fn: arg0 dim 0 = 4 is symbol s0 (automatic dynamic)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("[coil:guards] fn: guard 2 < s0"), std::string::npos) << log;
  EXPECT_NE(log.find("[coil:output_code] fn: graph for reference"), std::string::npos) << log;
  EXPECT_EQ(log.find("= 5"), std::string::npos) << log;
}

}  // namespace
}  // namespace coil
