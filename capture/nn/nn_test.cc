// coil::nn modules against torch.nn (Debian's torch 1.13): nn_cases.py builds each torch
// module, exports its state_dict, inputs and outputs; here the coil module of the same
// configuration loads the state_dict and must reproduce the outputs in eager mode.
// Usage: nn_test NN_CASES.pb
#include <cmath>
#include <iostream>
#include <map>
#include <string>

#include "capture/compile.h"
#include "capture/nn/nn.h"
#include "capture/nn/test_values.h"
#include "gtest/gtest.h"

namespace coil::nn {
namespace {

const std::map<std::string, HostTensor>* g_values = nullptr;

Tensor Value(const std::string& name) {
  auto it = g_values->find(name);
  if (it == g_values->end()) throw std::runtime_error("no value " + name + " in the cases file");
  return Tensor::FromHost(it->second);
}

// Loads case `name`'s parameters into `m`, runs `run` and compares with name/expected.
template <typename M, typename Run>
void Check(const std::string& name, M& m, Run run, double rtol = 1e-4, double atol = 1e-5) {
  ASSERT_TRUE(m.LoadParameters(*g_values, name + ".").ok())
      << m.LoadParameters(*g_values, name + ".").message();
  Tensor out = run(m);
  absl::Status s = AllClose(out.host(), g_values->at(name + "/expected"), rtol, atol);
  EXPECT_TRUE(s.ok()) << name << ": " << s.message();
}

template <typename M>
void CheckUnary(const std::string& name, M& m, double rtol = 1e-4, double atol = 1e-5) {
  Check(name, m, [&](const M& mod) { return mod(Value(name + "/x")); }, rtol, atol);
}

TEST(NnTorch, Linear) {
  Linear fc(5, 3);
  CheckUnary("linear", fc);
  Linear nobias(5, 3, /*seed=*/1, /*bias=*/false);
  CheckUnary("linear_nobias", nobias);
}

TEST(NnTorch, Conv2d) {
  Conv2d conv(3, 4, {3, 3}, 0, {.stride = {2, 2}, .padding = {1, 1}});
  CheckUnary("conv", conv);
  Conv2d grouped(4, 6, {3, 1}, 0,
                 {.padding = {1, 0}, .dilation = {2, 1}, .groups = 2, .bias = false});
  CheckUnary("conv_groups", grouped);
}

TEST(NnTorch, LayerNorm) {
  LayerNorm ln({6});
  CheckUnary("layer_norm", ln);
  LayerNorm ln2({3, 6}, 1e-3);
  CheckUnary("layer_norm_2d", ln2);
  LayerNorm plain({6}, 1e-5, /*elementwise_affine=*/false);
  CheckUnary("layer_norm_noaffine", plain);
}

TEST(NnTorch, BatchNorm2d) {
  BatchNorm2d bn(4, 1e-3);
  CheckUnary("batch_norm", bn);
}

TEST(NnTorch, Embedding) {
  Embedding emb(10, 4);
  CheckUnary("embedding", emb, 0, 0);
  Embedding padded(10, 4, 0, /*padding_idx=*/0);
  CheckUnary("embedding_padding", padded, 0, 0);
}

TEST(NnTorch, MultiheadAttention) {
  for (bool sdpa : {true, false}) {
    SCOPED_TRACE(sdpa ? "sdpa" : "explicit matmuls");
    MultiheadAttention mha(8, 2, 0, {.batch_first = true, .use_sdpa = sdpa});
    CheckUnary("mha", mha);
    MultiheadAttention causal(8, 2, 0, {.batch_first = true, .causal = true, .use_sdpa = sdpa});
    CheckUnary("mha_causal", causal);
    MultiheadAttention seq_first(8, 4, 0, {.causal = true, .use_sdpa = sdpa});
    CheckUnary("mha_seq_first", seq_first);
    MultiheadAttention nobias(6, 3, 0, {.bias = false, .batch_first = true, .use_sdpa = sdpa});
    CheckUnary("mha_nobias", nobias);
    MultiheadAttention cross(8, 2, 0, {.batch_first = true, .use_sdpa = sdpa});
    Check("mha_cross", cross, [](const MultiheadAttention& m) {
      return m(Value("mha_cross/query"), Value("mha_cross/key"), Value("mha_cross/value"));
    });
  }
}

// An explicit torch-style mask (bool True = not attended) equals the causal option; a float
// mask of 0 / -inf is the same mask.
TEST(NnTorch, MultiheadAttentionMasks) {
  for (bool sdpa : {true, false}) {
    MultiheadAttention m(8, 2, 0, {.batch_first = true, .use_sdpa = sdpa});
    ASSERT_TRUE(m.LoadParameters(*g_values, "mha_causal.").ok());
    std::vector<double> bits, additive;
    for (int i = 0; i < 5; ++i) {
      for (int j = 0; j < 5; ++j) {
        bits.push_back(j > i);
        additive.push_back(j > i ? -INFINITY : 0.0);
      }
    }
    Tensor x = Value("mha_causal/x");
    const HostTensor& want = g_values->at("mha_causal/expected");
    Tensor bool_mask = Tensor::FromValues(bits, {5, 5}, proto::BOOL);
    EXPECT_TRUE(AllClose(m(x, x, x, bool_mask).host(), want, 1e-4, 1e-5).ok());
    Tensor float_mask = Tensor::FromValues(additive, {5, 5});
    EXPECT_TRUE(AllClose(m(x, x, x, float_mask).host(), want, 1e-4, 1e-5).ok());
    // Combined with the causal option the same mask changes nothing.
    m.options.causal = true;
    EXPECT_TRUE(AllClose(m(x, x, x, bool_mask).host(), want, 1e-4, 1e-5).ok());
    EXPECT_TRUE(AllClose(m(x, x, x, float_mask).host(), want, 1e-4, 1e-5).ok());
  }
}

TEST(NnTorch, Activations) {
  GELU gelu;
  CheckUnary("gelu", gelu);
  GELU gelu_tanh("tanh");
  CheckUnary("gelu_tanh", gelu_tanh);
  ReLU relu;
  CheckUnary("relu", relu);
  SiLU silu;
  CheckUnary("silu", silu);
}

// ---- compiled (coil::compile, reference backend) equals eager, shapes symbolic ----

template <typename M>
void CheckCompiled(const std::string& name, M& m, DynamicMode dynamic) {
  ASSERT_TRUE(m.LoadParameters(*g_values, name + ".").ok());
  Tensor x = Value(name + "/x");
  auto f = compile([&](const Tensor& t) { return m(t); }, {.dynamic = dynamic, .name = name});
  absl::Status s = AllClose(f(x).host(), m(x).host(), 1e-5, 1e-6);
  EXPECT_TRUE(s.ok()) << name << " compiled: " << s.message();
  EXPECT_EQ(f.stats().graph_breaks, 0) << name;
  EXPECT_EQ(f.stats().graphs_compiled, 1) << name;
}

TEST(NnCompiled, EveryModuleMatchesEager) {
  for (DynamicMode dynamic : {DynamicMode::kStatic, DynamicMode::kDynamic}) {
    SCOPED_TRACE(dynamic == DynamicMode::kStatic ? "static" : "dynamic");
    Linear fc(5, 3);
    CheckCompiled("linear", fc, dynamic);
    Conv2d conv(3, 4, {3, 3}, 0, {.stride = {2, 2}, .padding = {1, 1}});
    CheckCompiled("conv", conv, dynamic);
    LayerNorm ln({3, 6}, 1e-3);
    CheckCompiled("layer_norm_2d", ln, dynamic);
    BatchNorm2d bn(4, 1e-3);
    CheckCompiled("batch_norm", bn, dynamic);
    Embedding emb(10, 4);
    CheckCompiled("embedding", emb, dynamic);
    GELU gelu("tanh");
    CheckCompiled("gelu_tanh", gelu, dynamic);
    SiLU silu;
    CheckCompiled("silu", silu, dynamic);
    for (bool sdpa : {true, false}) {
      MultiheadAttention mha(8, 4, 0, {.causal = true, .use_sdpa = sdpa});
      CheckCompiled("mha_seq_first", mha, dynamic);
    }
  }
}

// ---- init and loading (no torch needed) ----

double MaxAbs(const Tensor& t) {
  double m = 0;
  for (double v : t.tolist()) m = std::max(m, std::abs(v));
  return m;
}

TEST(NnInit, DeterministicAndWithinTorchBounds) {
  Linear a(16, 8, /*seed=*/7), b(16, 8, /*seed=*/7), c(16, 8, /*seed=*/8);
  EXPECT_EQ(a.weight.tolist(), b.weight.tolist());
  EXPECT_NE(a.weight.tolist(), c.weight.tolist());
  EXPECT_NE(a.weight.tolist(), std::vector<double>(a.weight.tolist().size(), a.weight.tolist()[0]));
  EXPECT_LE(MaxAbs(a.weight), 0.25);  // 1/sqrt(16)
  EXPECT_GT(MaxAbs(a.weight), 0.2);   // uses the range (128 draws)
  EXPECT_LE(MaxAbs(a.bias), 0.25);

  Conv2d conv(2, 4, {3, 3}, 3);
  EXPECT_LE(MaxAbs(conv.weight), 1.0 / std::sqrt(18.0));
  MultiheadAttention mha(8, 2, 5);
  EXPECT_LE(MaxAbs(mha.in_proj_weight), std::sqrt(6.0 / 32.0));
  EXPECT_EQ(MaxAbs(mha.in_proj_bias), 0.0);
  EXPECT_EQ(MaxAbs(mha.out_proj.bias), 0.0);
  EXPECT_LE(MaxAbs(mha.out_proj.weight), 1.0 / std::sqrt(8.0));

  Embedding emb(5, 3, 1, /*padding_idx=*/-1);
  EXPECT_EQ(*emb.padding_idx, 4);
  std::vector<double> w = emb.weight.tolist();
  EXPECT_EQ(std::vector<double>(w.end() - 3, w.end()), std::vector<double>(3, 0.0));

  LayerNorm ln({4});
  EXPECT_EQ(ln.weight.tolist(), std::vector<double>(4, 1.0));
  BatchNorm2d bn(3);
  EXPECT_EQ(bn.running_var.tolist(), std::vector<double>(3, 1.0));
}

TEST(NnLoad, NamesFollowTorchStateDict) {
  MultiheadAttention mha(8, 2);
  std::vector<std::string> names;
  for (auto& [name, t] : mha.NamedTensors("attn.")) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"attn.in_proj_weight", "attn.in_proj_bias",
                                             "attn.out_proj.weight", "attn.out_proj.bias"}));
  BatchNorm2d bn(2, 1e-5, /*affine=*/false);
  EXPECT_EQ(bn.NamedTensors().size(), 2u);
}

TEST(NnLoad, ErrorsNameTheKeyAndChangeNothing) {
  Linear fc(5, 3);
  std::vector<double> before = fc.weight.tolist();
  std::map<std::string, HostTensor> values = {
      {"weight", HostTensor::Zeros(proto::FLOAT32, {3, 5})}};
  absl::Status s = fc.LoadParameters(values);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no value for 'bias'"), std::string::npos) << s.message();

  values["bias"] = HostTensor::Zeros(proto::FLOAT32, {4});
  s = fc.LoadParameters(values);
  EXPECT_NE(s.message().find("'bias' is f32[4]"), std::string::npos) << s.message();

  values["bias"] = HostTensor::Zeros(proto::FLOAT32, {3});
  values["weights"] = HostTensor::Zeros(proto::FLOAT32, {3});
  s = fc.LoadParameters(values);
  EXPECT_NE(s.message().find("'weights' names no parameter"), std::string::npos) << s.message();
  EXPECT_EQ(fc.weight.tolist(), before);

  values.erase("weights");
  ASSERT_TRUE(fc.LoadParameters(values).ok());
  EXPECT_EQ(MaxAbs(fc.weight), 0.0);
}

// The comparison the torch tests rely on does reject differences.
TEST(NnTestValues, AllCloseRejectsMismatches) {
  HostTensor a = HostTensor::FromDoubles(proto::FLOAT32, {3}, {1.0, 2.0, 3.0});
  HostTensor b = HostTensor::FromDoubles(proto::FLOAT32, {3}, {1.0, 2.001, 3.0});
  EXPECT_TRUE(AllClose(a, a, 0, 0).ok());
  EXPECT_TRUE(AllClose(a, b, 1e-3, 0).ok());
  absl::Status s = AllClose(a, b, 1e-4, 1e-5);
  EXPECT_NE(s.message().find("element 1"), std::string::npos) << s.message();
  EXPECT_FALSE(AllClose(a, HostTensor::FromDoubles(proto::FLOAT32, {1, 3}, {1, 2, 3}), 1, 1).ok());
  HostTensor n = HostTensor::FromDoubles(proto::FLOAT32, {3}, {1.0, NAN, 3.0});
  EXPECT_FALSE(AllClose(a, n, 1, 1).ok());
  EXPECT_TRUE(AllClose(n, n, 0, 0).ok());
}

TEST(NnErrors, BadConfigurationsThrow) {
  EXPECT_THROW(MultiheadAttention(10, 3), Error);
  EXPECT_THROW(Conv2d(3, 4, {3, 3}, 0, {.groups = 2}), Error);
  EXPECT_THROW(GELU("fast"), Error);
  EXPECT_THROW(Embedding(4, 2, 0, 7), Error);
}

}  // namespace
}  // namespace coil::nn

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " NN_CASES.pb\n";
    return 2;
  }
  auto values = coil::nn::ReadNamedValues(argv[1]);
  if (!values.ok()) {
    std::cerr << values.status() << "\n";
    return 2;
  }
  coil::nn::g_values = &*values;
  return RUN_ALL_TESTS();
}
