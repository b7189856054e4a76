// The interpreter's input-facing checks: external constants (read only inside the graph's
// folder, regular files only) and sizes fed by user input. One expected-error test per bad
// input.
#include "runtime/interpreter.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/graph.h"

namespace coil {
namespace {

std::string DataDir() {
  std::string dir = absl::StrCat(::testing::TempDir(), "/interpreter_test");
  ::mkdir(dir.c_str(), 0755);
  ::mkdir((dir + "/sub").c_str(), 0755);
  std::ofstream(dir + "/w.bin", std::ios::binary) << std::string(16, '\x01');
  return dir;
}

// A graph returning one external u8[16] constant at `path` (built in memory: no FromProto).
Graph ExternalConstant(const std::string& path, int64_t offset = 0) {
  Graph g("g");
  ConstantData d;
  d.external_path = path;
  d.external_offset = offset;
  d.external_length = 16;
  g.SetOutputs({g.AddConstant(TensorType(proto::UINT8, {16}), d)});
  return g;
}

absl::Status LoadError(const std::string& path, int64_t offset = 0) {
  Graph g = ExternalConstant(path, offset);
  absl::StatusOr<HostTensor> t = LoadConstant(*g.constants()[0], DataDir());
  return t.status();
}

TEST(LoadConstant, ExternalInsideTheFolder) {
  Graph g = ExternalConstant("w.bin");
  absl::StatusOr<HostTensor> t = LoadConstant(*g.constants()[0], DataDir());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->Bytes(), std::string(16, '\x01'));
  InterpreterOptions options;
  options.external_data_dir = DataDir();
  absl::StatusOr<std::vector<HostTensor>> out = Interpret(g, {}, options);
  ASSERT_TRUE(out.ok()) << out.status();
}

// ---- expected errors

TEST(LoadConstantErrors, AbsolutePath) {
  absl::Status s = LoadError("/etc/passwd");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "constant %0: external data path '/etc/passwd' must be relative to the model's folder");
}

TEST(LoadConstantErrors, DotDot) {
  absl::Status s = LoadError("../../../../../etc/passwd");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "constant %0: external data path '../../../../../etc/passwd' must not "
                         "contain '..' (it would leave the model's folder)");
}

TEST(LoadConstantErrors, InterpretChecksToo) {
  InterpreterOptions options;
  options.external_data_dir = DataDir();
  absl::StatusOr<std::vector<HostTensor>> out =
      Interpret(ExternalConstant("/etc/passwd"), {}, options);
  EXPECT_THAT(out.status().message(), ::testing::HasSubstr("must be relative"));
}

TEST(LoadConstantErrors, Directory) {
  absl::Status s = LoadError("sub");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            absl::StrCat("constant %0: cannot read '", DataDir(), "/sub': it is a directory, not a file"));
}

TEST(LoadConstantErrors, FifoDoesNotBlock) {
  std::string fifo = DataDir() + "/fifo.bin";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  absl::Status s = LoadError("fifo.bin");
  EXPECT_EQ(s.message(), absl::StrCat("constant %0: cannot read '", fifo,
                                      "': it is not a regular file (a FIFO or pipe)"));
}

TEST(LoadConstantErrors, Missing) {
  absl::Status s = LoadError("nope.bin");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), absl::StrCat("constant %0: cannot open '", DataDir(),
                                      "/nope.bin': No such file or directory"));
}

TEST(LoadConstantErrors, TooShort) {
  absl::Status s = LoadError("w.bin", /*offset=*/4);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), absl::StrCat("constant %0: '", DataDir(),
                                      "/w.bin' has 16 bytes, fewer than offset 4 + length 16"));
}

// ---- sizes that follow the inputs' symbols

// x: f32[s, 1...] expanded to `rank` dimensions of s: a small input, a huge output.
Graph ExpandToCube(int rank) {
  Graph g("g");
  SymExpr s = SymExpr::Symbol("s");
  std::vector<SymExpr> in_shape = {s};
  std::vector<SymExpr> out_shape = {s};
  for (int i = 1; i < rank; ++i) {
    in_shape.push_back(1);
    out_shape.push_back(s);
  }
  Value* x = g.AddInput(TensorType(proto::FLOAT32, in_shape), "x");
  Node* n = g.AddNode("aten.expand", {x}, {{"size", Attribute(SymList(out_shape))}},
                      {TensorType(proto::FLOAT32, out_shape)});
  g.SetOutputs({n->output(0)});
  return g;
}

TEST(InterpretErrors, OutputSizeOverflows) {
  std::vector<int64_t> shape = {int64_t{1} << 22, 1, 1};
  absl::StatusOr<std::vector<HostTensor>> out =
      Interpret(ExpandToCube(3), {HostTensor::Zeros(proto::FLOAT32, shape)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "node 0 %1 = aten.expand(%0): output %1: f32[4194304, 4194304, 4194304] is too "
            "large: its size overflows int64");
}

TEST(InterpretErrors, OutputLargerThanTheMemory) {
  // 4 TiB: a reference kernel's allocation used to abort "out of memory".
  std::vector<int64_t> shape = {int64_t{1} << 20, 1};
  absl::StatusOr<std::vector<HostTensor>> out =
      Interpret(ExpandToCube(2), {HostTensor::Zeros(proto::FLOAT32, shape)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(out.status().message(),
            "node 0 %1 = aten.expand(%0): output %1 (f32[1048576, 1048576], 4398046511104 "
            "bytes): out of memory");
}

}  // namespace
}  // namespace coil
