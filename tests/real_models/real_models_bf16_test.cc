// `--precision bf16` end to end on real models through the CPU backend: torch 1.13 exports the
// f32 model at test time (export_models.py, random weights, fixed seed, batch axis dynamic),
// the compile driver runs it with DriverOptions::precision = kBF16 (prims' autocast pass:
// products and convolutions in bf16, norms and softmax in f32), and its output is compared with
// torch's f32 output at batch sizes 1 and 3: max|coil - torch| / max|torch| within autocast's
// tolerance (3e-2, as `coil run --check --precision bf16`) and above 1e-4 (below it no bf16
// rounding happened: the casts were lost). Also: every convolution and matrix product in the
// Schedule is a bf16 extern (what runtime/cpu's oneDNN bf16 primitives take, or the reference
// kernels where oneDNN declines: either path must meet the tolerance, so the test does not
// depend on the CPU). Models: resnet18 (a small CNN, 64x64 images) and a 2-layer
// nn.TransformerEncoder (d_model 256, 8 heads).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capture/onnx/onnx_importer.h"
#include "codegen_cpu/cpu_program.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "runtime/tensor_compare.h"
#include "tests/onnx_conformance/onnx_tensor.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"

namespace {

constexpr double kBf16Tolerance = 3e-2;
constexpr double kBf16Floor = 1e-4;
constexpr char kScript[] = "tests/real_models/export_models.py";

void CheckModelBf16(const std::string& model, int min_bf16_externs) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/bf16_", model);
  const std::string cmd =
      absl::StrCat("OMP_NUM_THREADS=1 /usr/bin/python3 ", kScript, " ", model, " ", dir);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "export failed: " << cmd;
  absl::StatusOr<coil::proto::Graph> imported = coil::onnx::ImportOnnxFile(dir + "/model.onnx");
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<coil::Graph> graph = coil::Graph::FromProto(*imported);
  ASSERT_TRUE(graph.ok()) << graph.status();

  coil::driver::DriverOptions options;
  options.backend = coil::driver::CpuBackend();
  options.cache = nullptr;
  options.keep_intermediates = false;
  options.external_data_dir = dir;
  options.precision = coil::prims::Precision::kBF16;
  absl::StatusOr<coil::driver::CompileResult> compiled =
      coil::driver::CompileGraph(*std::move(graph), options);
  ASSERT_TRUE(compiled.ok()) << model << ": " << compiled.status();
  ASSERT_NE(compiled->executable, nullptr) << model << ": " << compiled->load_error;

  // The products and convolutions run as bf16 externs.
  const coil::proto::Schedule& schedule =
      coil::driver::AsCpuProgram(*compiled->executable)->module().schedule();
  int bf16_externs = 0;
  for (const coil::proto::Kernel& k : schedule.kernels()) {
    if (k.extern_op() != "aten.mm" && k.extern_op() != "aten.bmm" &&
        k.extern_op() != "aten.convolution") {
      continue;
    }
    for (const coil::proto::Buffer& b : schedule.buffers()) {
      if (b.id() != k.extern_output()) continue;
      EXPECT_EQ(b.dtype(), coil::proto::BFLOAT16)
          << model << ": " << k.name() << " -> " << b.name();
      if (b.dtype() == coil::proto::BFLOAT16) ++bf16_externs;
    }
  }
  EXPECT_GE(bf16_externs, min_bf16_externs) << model;

  for (int batch : {1, 3}) {
    const std::string set = absl::StrCat(dir, "/batch_", batch);
    absl::StatusOr<coil::HostTensor> x =
        coil::onnx_testing::ReadOnnxTensorFile(set + "/input_0.pb");
    absl::StatusOr<coil::HostTensor> want =
        coil::onnx_testing::ReadOnnxTensorFile(set + "/output_0.pb");
    ASSERT_TRUE(x.ok()) << x.status();
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<coil::HostTensor>> got = compiled->executable->Run({*x});
    ASSERT_TRUE(got.ok()) << model << " batch " << batch << ": " << got.status();
    ASSERT_EQ(got->size(), 1u);
    const coil::HostTensor& y = (*got)[0];
    ASSERT_EQ(y.dtype(), want->dtype()) << "outputs keep the model's type";
    ASSERT_EQ(y.shape(), want->shape());
    const double err = coil::MaxRelativeError(y, *want, coil::NanPolicy::kNanIsError);
    std::printf("%s --precision bf16 (cpu) batch %d: relative error %.3g\n", model.c_str(), batch,
                err);
    EXPECT_LE(err, kBf16Tolerance) << model << " batch " << batch;
    EXPECT_GE(err, kBf16Floor) << model << " batch " << batch << ": no bf16 rounding happened";
  }
}

// 20 convolutions (the downsampling shortcuts included) and the classifier's product.
TEST(RealModelsBf16, resnet18) { CheckModelBf16("resnet18", 21); }
// Per layer: the attention's input and output projections, two batched products, the MLP's two.
TEST(RealModelsBf16, transformer_encoder) { CheckModelBf16("transformer_encoder", 8); }

}  // namespace
