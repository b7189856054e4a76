// SymInt: plain integers in eager mode (Python semantics for / and %), symbolic expressions
// with guards recorded on the active trace (a recording fake Trace here).
#include "capture/sym_int.h"

#include <sstream>
#include <string>
#include <vector>

#include "capture/internal/trace.h"
#include "absl/strings/str_cat.h"
#include "capture/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

using capture_internal::ScopedActiveTrace;

TEST(SymIntEager, ArithmeticIsPlainIntegers) {
  SymInt a = 7, b = int64_t{-2};
  EXPECT_FALSE(a.is_symbolic());
  EXPECT_EQ((a + b).hint(), 5);
  EXPECT_EQ((a - b).hint(), 9);
  EXPECT_EQ((a * b).hint(), -14);
  // Python: 7 // -2 == -4, 7 % -2 == -1, -7 // 2 == -4, -7 % 2 == 1.
  EXPECT_EQ((a / b).hint(), -4);
  EXPECT_EQ((a % b).hint(), -1);
  EXPECT_EQ((SymInt(-7) / 2).hint(), -4);
  EXPECT_EQ((SymInt(-7) % 2).hint(), 1);
  EXPECT_FALSE((a / b).is_symbolic());
  EXPECT_TRUE(a > b);
  EXPECT_TRUE(a >= 7);
  EXPECT_TRUE(a == 7);
  EXPECT_TRUE(a != b);
  EXPECT_FALSE(a < b);
  EXPECT_TRUE(b <= -2);
  EXPECT_EQ(a.guard_int(), 7);
  std::ostringstream os;
  os << a;
  EXPECT_EQ(os.str(), "7");
}

TEST(SymIntEager, TensorSizesAreConcrete) {
  Tensor x = Tensor::Zeros({2, 3});
  EXPECT_FALSE(x.size(0).is_symbolic());
  EXPECT_EQ(x.size(-1).hint(), 3);
  EXPECT_TRUE(x.size(0) * 4 == 8);
  Tensor y = x.reshape({x.size(0) * x.size(1), -1});
  EXPECT_EQ(y.dim(), 2);
  EXPECT_EQ(y.size(0).hint(), 6);
}

// Records guards; nothing else is used.
class GuardRecorder : public capture_internal::Trace {
 public:
  std::vector<Tensor> Record(absl::string_view, const std::vector<Tensor>&, AttrMap,
                             const std::source_location&) override {
    return {};
  }
  HostTensor Materialize(const Tensor&, absl::string_view, const std::source_location&) override {
    return {};
  }
  void RecordGuard(proto::Guard::Relation relation, const SymExpr& lhs, const SymExpr& rhs,
                   bool holds, const std::source_location&) override {
    guards.push_back(absl::StrCat(proto::Guard::Relation_Name(relation), " ", lhs.ToString(),
                                  " ", rhs.ToString(), holds ? "" : " (fails)"));
  }
  std::vector<std::string> guards;
};

TEST(SymIntTracing, ComparisonsRecordTheRelationThatHolds) {
  SymInt s(SymExpr::Symbol("s0"), 5);
  GuardRecorder rec;
  {
    ScopedActiveTrace scope(&rec);
    EXPECT_TRUE(capture_internal::ActiveTrace() == &rec);
    EXPECT_TRUE(s > 2);     // 2 < s0
    EXPECT_FALSE(s < 3);    // 3 <= s0
    EXPECT_TRUE(s == 5);    // s0 == 5
    EXPECT_TRUE(s != 4);    // s0 != 4
    EXPECT_EQ(s.guard_int(), 5);
    EXPECT_TRUE(SymInt(3) < 4);  // no symbols: no guard
  }
  EXPECT_EQ(capture_internal::ActiveTrace(), nullptr);
  EXPECT_THAT(rec.guards, ::testing::ElementsAre("LT 2 s0", "LE 3 s0", "EQ s0 5", "NE s0 4",
                                                 "EQ s0 5"));
  // Arithmetic stays symbolic with hints.
  SymInt t = s * 4 + 1;
  EXPECT_TRUE(t.is_symbolic());
  EXPECT_EQ(t.hint(), 21);
  EXPECT_EQ((s / 2).hint(), 2);
  EXPECT_TRUE((s / 2).is_symbolic());
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), t.expr().ToString());
  // Outside a trace comparisons record nothing.
  EXPECT_TRUE(s > 2);
  EXPECT_EQ(rec.guards.size(), 5u);
}

}  // namespace
}  // namespace coil
