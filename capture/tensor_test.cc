// Eager Tensor semantics. Expected values were computed with PyTorch 1.13 (Debian's
// /usr/bin/python3); each test quotes the torch expression it mirrors.
#include "capture/tensor.h"

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// torch.arange(12, dtype=torch.float32).reshape(3, 4)
Tensor Arange12() {
  std::vector<double> v(12);
  for (int i = 0; i < 12; ++i) v[i] = i;
  return Tensor::FromValues(v, {3, 4});
}

std::vector<int64_t> Shape(const Tensor& t) {
  std::vector<int64_t> out;
  for (const SymInt& s : t.sizes()) out.push_back(s.hint());
  return out;
}

TEST(TensorViews, SliceSharesStorageAndInplaceWritesThrough) {
  Tensor x = Arange12();
  Tensor y = x.slice(1, 1, 3);  // x[:, 1:3]
  EXPECT_THAT(y.strides(), ElementsAre(4, 1));
  EXPECT_EQ(y.storage_offset(), 1);
  EXPECT_FALSE(y.is_contiguous());
  Tensor r = y.add_scalar_(1);
  EXPECT_EQ(r.impl(), y.impl());  // in-place returns self
  EXPECT_THAT(x.tolist(), ElementsAre(0, 2, 3, 3, 4, 6, 7, 7, 8, 10, 11, 11));
}

TEST(TensorViews, TransposeSharesStorage) {
  Tensor x = Arange12();
  Tensor t = x.transpose(0, 1);
  EXPECT_THAT(t.strides(), ElementsAre(1, 4));
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_FALSE(t.is_contiguous());
  Tensor r = t.add_(Tensor::Scalar(10));
  EXPECT_EQ(r.impl(), t.impl());
  EXPECT_THAT(x.tolist(), ElementsAre(10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21));
}

TEST(TensorViews, LayoutsMatchTorch) {
  Tensor x = Arange12();
  Tensor s = x.select(0, 1);
  EXPECT_THAT(s.strides(), ElementsAre(1));
  EXPECT_EQ(s.storage_offset(), 4);
  Tensor d = x.diagonal();
  EXPECT_THAT(d.strides(), ElementsAre(5));
  EXPECT_THAT(d.tolist(), ElementsAre(0, 5, 10));
  Tensor e = Tensor::Ones({3, 1}).expand({3, 4});
  EXPECT_THAT(e.strides(), ElementsAre(1, 0));
  Tensor u = x.unsqueeze(1);  // strides (4, 4, 1), contiguous
  EXPECT_THAT(u.strides(), ElementsAre(4, 4, 1));
  EXPECT_TRUE(u.is_contiguous());
  Tensor st = x.slice(0, 1).slice(1, 0, INT64_MAX, 2);  // x[1:, ::2]
  EXPECT_THAT(st.strides(), ElementsAre(4, 2));
  EXPECT_EQ(st.storage_offset(), 4);
  EXPECT_FALSE(st.is_contiguous());
  EXPECT_THAT(Shape(st), ElementsAre(2, 2));
}

TEST(TensorViews, ReshapeViewsWhenPossibleElseCopies) {
  Tensor x = Arange12();
  Tensor p = x.reshape({2, 6});
  EXPECT_THAT(p.strides(), ElementsAre(6, 1));
  p.fill_(7);  // shares storage: x sees it
  EXPECT_EQ(x.sum().item(), 84);
  Tensor y = Arange12();
  Tensor q = y.t().reshape({12});  // not viewable: a copy
  EXPECT_THAT(q.tolist(), ElementsAre(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11));
  q.zero_();
  EXPECT_EQ(y.sum().item(), 66);
}

TEST(TensorOperators, PythonScalarPromotion) {
  Tensor i = Tensor::FromValues({1, 2, 3}, {3}, proto::INT64);
  Tensor half = i * 0.5;  // torch: float32 [0.5, 1, 1.5]
  EXPECT_EQ(half.dtype(), proto::FLOAT32);
  EXPECT_THAT(half.tolist(), ElementsAre(0.5, 1, 1.5));
  EXPECT_EQ((i * 2).dtype(), proto::INT64);
  Tensor q = i / 2;  // true division
  EXPECT_EQ(q.dtype(), proto::FLOAT32);
  EXPECT_THAT(q.tolist(), ElementsAre(0.5, 1, 1.5));
  Tensor r = 2.0 / i;
  EXPECT_EQ(r.dtype(), proto::FLOAT32);
  EXPECT_THAT(r.tolist(), ElementsAre(2, 1, static_cast<float>(2.0 / 3.0)));
  EXPECT_EQ((i - 1).dtype(), proto::INT64);
  EXPECT_THAT((1 - i).tolist(), ElementsAre(0, -1, -2));
  Tensor gt = i > 1.0;
  EXPECT_EQ(gt.dtype(), proto::BOOL);
  EXPECT_THAT(gt.tolist(), ElementsAre(0, 1, 1));
  // f64 * 0.1 keeps the double scalar exactly.
  EXPECT_THAT((Tensor::Ones({2}, proto::FLOAT64) * 0.1).tolist(), ElementsAre(0.1, 0.1));
}

TEST(TensorOperators, TensorPromotionAndBroadcast) {
  Tensor i = Tensor::FromValues({1, 2, 3}, {3}, proto::INT64);
  EXPECT_EQ((i + Tensor::FromValues({0.5, 0.5, 0.5}, {3})).dtype(), proto::FLOAT32);
  Tensor i32 = Tensor::FromValues({1, 2, 3}, {3}, proto::INT32);
  EXPECT_EQ((i32 + i).dtype(), proto::INT64);
  // A zero-dim f64 does not promote a dimensioned f32.
  EXPECT_EQ((Tensor::Ones({2}) + Tensor::Scalar(1, proto::FLOAT64)).dtype(), proto::FLOAT32);
  Tensor col = Tensor::FromValues({1, 2}, {2, 1});
  Tensor row = Tensor::FromValues({10, 20, 30}, {3});
  Tensor s = col + row;
  EXPECT_THAT(Shape(s), ElementsAre(2, 3));
  EXPECT_THAT(s.tolist(), ElementsAre(11, 21, 31, 12, 22, 32));
  EXPECT_THAT((-col).tolist(), ElementsAre(-1, -2));
  EXPECT_THAT((col * row - row / 10.0).tolist(), ElementsAre(9, 18, 27, 19, 38, 57));
}

TEST(TensorValues, ItemTolistAndPrinting) {
  Tensor x = Tensor::FromValues({1.5, -2, 3, 4}, {2, 2});
  EXPECT_EQ(x.sum().item(), 6.5);
  EXPECT_THAT(x.tolist(), ElementsAre(1.5, -2, 3, 4));
  std::ostringstream os;
  os << x;
  EXPECT_EQ(os.str(), "tensor([[1.5, -2.], [3., 4.]], f32[2, 2])");
  std::ostringstream is;
  is << Tensor::FromValues({1, 0}, {2}, proto::BOOL) << " "
     << Tensor::FromValues({7, -3}, {2}, proto::INT32);
  EXPECT_EQ(is.str(), "tensor([true, false], bool[2]) tensor([7, -3], i32[2])");
  EXPECT_EQ(x.TypeString(), "f32[2, 2]");
  EXPECT_THAT([&] { return x.item(); }, ::testing::Throws<Error>());
}

TEST(TensorFactories, Basics) {
  Tensor z = Tensor::Zeros({2, 3}, proto::INT32);
  EXPECT_EQ(z.dtype(), proto::INT32);
  EXPECT_THAT(Shape(z), ElementsAre(2, 3));
  EXPECT_EQ(z.numel().hint(), 6);
  EXPECT_EQ(z.dim(), 2);
  EXPECT_THAT(Tensor::Ones({2}).tolist(), ElementsAre(1, 1));
  EXPECT_EQ(Tensor::Scalar(2.5).dim(), 0);
  EXPECT_EQ(Tensor::Scalar(2.5).item(), 2.5);
  EXPECT_EQ(z.device(), Device{});
  EXPECT_FALSE(z.is_lazy());
  EXPECT_FALSE(Tensor().defined());
  EXPECT_THROW(Tensor::FromValues({1, 2}, {3}), Error);
  EXPECT_THROW(Tensor::Zeros({-1}), Error);
}

TEST(TensorFactories, RandomIsDeterministicPerSeed) {
  std::vector<double> a = Tensor::Rand({1000}, 7).tolist();
  EXPECT_EQ(a, Tensor::Rand({1000}, 7).tolist());
  EXPECT_NE(a, Tensor::Rand({1000}, 8).tolist());
  double mean = 0;
  for (double v : a) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 1);
    mean += v / a.size();
  }
  EXPECT_NEAR(mean, 0.5, 0.05);
  Tensor n = Tensor::Randn({4000}, 3);
  EXPECT_EQ(n.tolist(), Tensor::Randn({4000}, 3).tolist());
  EXPECT_NEAR(n.mean().item(), 0, 0.05);
  EXPECT_NEAR(n.std().item(), 1, 0.05);
}

TEST(TensorErrors, ShapeMismatchNamesOpAndCallSite) {
  Tensor a = Tensor::Ones({2, 3});
  Tensor b = Tensor::Ones({4});
  int line = __LINE__ + 2;
  try {
    add(a, b);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("aten.add"));
    EXPECT_THAT(e.what(), HasSubstr("tensor_test.cc:" + std::to_string(line)));
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  }
  line = __LINE__ + 2;
  try {
    a.matmul(a);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("aten.matmul"));
    EXPECT_THAT(e.what(), HasSubstr("tensor_test.cc:" + std::to_string(line)));
  }
}

TEST(TensorErrors, BadArgumentsAreErrorsNotCrashes) {
  Tensor a = Tensor::Ones({2, 3});
  EXPECT_THROW(add(a, Tensor()), Error);
  EXPECT_THROW(a.size(2), Error);
  EXPECT_THROW(Tensor().dim(), Error);
  // weight missing but bias given: only trailing optional inputs may be left off.
  try {
    layer_norm(a, {3}, std::nullopt, Tensor::Zeros({3}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'bias' given without 'weight'"));
  }
  EXPECT_THROW(a.view({4, 2}), Error);
}

}  // namespace
}  // namespace coil
