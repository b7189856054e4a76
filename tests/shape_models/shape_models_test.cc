// Shape-arithmetic models through the ONNX frontend (issue 15, item 9): torch 1.13 exports each
// model at test time (export_shape_models.py writes into $TEST_TMPDIR), coil imports it once
// into one graph, and the graph runs at every recorded input shape on the reference interpreter
// and, compiled once by the driver with the CPU backend, on the CPU. torch's outputs are the
// oracle: max|coil - torch| / max|torch| <= 1e-4.
//
// The models compute operands from shapes inside the graph: a windowed-attention partition pads
// H and W to a multiple of the window ((7 - h % 7) % 7 through Shape, Gather, Mod, Sub,
// Concat, ConstantOfShape, Reshape, Slice, Transpose, Cast), attention splits heads with
// Reshape([batch, -1, heads, dim]) from Shape + Gather + Concat, and slices take bounds
// computed from the length (L // 2, -(L // 2), L - L // 4), torch's floor division exports a
// sign fix-up (Where over Mod and Less), and Resize sizes come from floor(h * 0.5) in floating
// point and from another tensor's shape. With static shapes these fold to
// constants; with symbolic ones they become SymExprs, and no run-time shape computation is left.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capture/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "runtime/tensor_compare.h"
#include "tests/onnx_conformance/onnx_tensor.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"

namespace {

constexpr double kMaxRelativeError = 1e-4;
constexpr char kScript[] = "tests/shape_models/export_shape_models.py";

struct Model {
  std::string dir;
  coil::Graph graph;
  int sets = 0;
};

// Exports `name` with torch and imports it.
Model ExportAndImport(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  Model m{absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name), coil::Graph("none"), 0};
  std::string cmd = absl::StrCat("OMP_NUM_THREADS=1 /usr/bin/python3 ", kScript, " ", name, " ", m.dir);
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "export failed: " << cmd;
  std::ifstream sets(m.dir + "/sets");
  sets >> m.sets;
  absl::StatusOr<coil::Graph> g = coil::onnx::ImportOnnxFileAsGraph(m.dir + "/model.onnx");
  EXPECT_TRUE(g.ok()) << name << ": import: " << g.status();
  if (g.ok()) m.graph = *std::move(g);
  return m;
}

// Nodes that compute a value from a shape at run time: the importer materializes a symbolic
// size as sum(ones(s)); none may be left when every shape operand was folded.
int RunTimeShapeNodes(const coil::Graph& g) {
  int n = 0;
  for (const coil::Node* node : g.nodes()) n += node->op() == "aten.ones";
  return n;
}

using Runner = std::function<absl::StatusOr<std::vector<coil::HostTensor>>(const coil::HostTensor&)>;

void CheckSets(const std::string& name, const Model& m, const Runner& run, const char* stage) {
  ASSERT_GT(m.sets, 0);
  for (int i = 0; i < m.sets; ++i) {
    std::string set = absl::StrCat(m.dir, "/set_", i);
    absl::StatusOr<coil::HostTensor> x = coil::onnx_testing::ReadOnnxTensorFile(set + "/input_0.pb");
    absl::StatusOr<coil::HostTensor> want = coil::onnx_testing::ReadOnnxTensorFile(set + "/output_0.pb");
    ASSERT_TRUE(x.ok()) << x.status();
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<coil::HostTensor>> got = run(*x);
    ASSERT_TRUE(got.ok()) << name << " (" << stage << ") input " << x->TypeString() << ": " << got.status();
    ASSERT_EQ(got->size(), 1u);
    const coil::HostTensor& y = (*got)[0];
    ASSERT_EQ(y.shape(), want->shape()) << name << " (" << stage << "): " << y.TypeString()
                                        << " vs torch " << want->TypeString();
    double err = coil::MaxRelativeError(y, *want, coil::NanPolicy::kNanIsError);
    std::printf("%s (%s) input %s: relative error %.3g\n", name.c_str(), stage,
                x->TypeString().c_str(), err);
    EXPECT_LE(err, kMaxRelativeError) << name << " (" << stage << ") input " << x->TypeString();
  }
}

// Imports once, runs every recorded shape on the interpreter, then compiles once for the CPU
// and runs every shape again.
void CheckModel(const std::string& name, int want_symbols) {
  Model m = ExportAndImport(name);
  if (testing::Test::HasFailure()) return;
  ASSERT_TRUE(coil::Verify(m.graph).ok()) << coil::Verify(m.graph);
  EXPECT_EQ(static_cast<int>(m.graph.symbols().size()), want_symbols) << coil::PrintGraph(m.graph);
  EXPECT_EQ(RunTimeShapeNodes(m.graph), 0) << "a shape operand is computed at run time:\n"
                                           << coil::PrintGraph(m.graph);
  const coil::Graph& graph = m.graph;
  auto interpret = [&graph](const coil::HostTensor& x) { return coil::Interpret(graph, {x}); };
  CheckSets(name, m, interpret, "reference");

  coil::driver::DriverOptions options;
  options.backend = coil::driver::CpuBackend();
  options.cache = nullptr;
  options.keep_intermediates = false;
  options.external_data_dir = m.dir;
  absl::StatusOr<coil::driver::CompileResult> cpu = coil::driver::CompileGraph(std::move(m.graph), options);
  ASSERT_TRUE(cpu.ok()) << name << ": cpu backend: " << cpu.status();
  ASSERT_NE(cpu->executable, nullptr) << name << ": cpu load: " << cpu->load_error;
  coil::driver::Executable& program = *cpu->executable;
  auto run_cpu = [&program](const coil::HostTensor& x) { return program.Run({x}); };
  CheckSets(name, m, run_cpu, "cpu");
}

// H and W symbolic; three sizes: padded on both axes, on W only (H = 14 is a multiple of 7),
// and a feature map smaller than one window.
TEST(ShapeModels, WindowPadSymbolic) { CheckModel("window_pad", 2); }
// The same export with static shapes: every pad amount folds to a constant.
TEST(ShapeModels, WindowPadStatic) { CheckModel("window_pad_static", 0); }
TEST(ShapeModels, HeadsReshape) { CheckModel("heads_reshape", 2); }
TEST(ShapeModels, SliceFromShape) { CheckModel("slice_from_shape", 2); }
// torch's floor division on sizes: the exported sign fix-up folds away.
TEST(ShapeModels, FloorDivide) { CheckModel("floor_divide", 2); }
// Resize sizes from floating-point size arithmetic and from the input's shape.
TEST(ShapeModels, Interpolate) { CheckModel("interpolate", 2); }

}  // namespace
