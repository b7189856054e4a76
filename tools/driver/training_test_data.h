// Test support for tools/driver:training_test: torch 1.13's numbers as text lines
// `name dim... : value...` (written by training_*.py), and graph-building helpers.
#ifndef COIL_TOOLS_DRIVER_TRAINING_TEST_DATA_H_
#define COIL_TOOLS_DRIVER_TRAINING_TEST_DATA_H_

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "runtime/host_tensor.h"
#include "tools/driver/backend.h"

namespace coil::driver::testing {

// The data files, from the command line (training_test.cc's main).
struct DataPaths {
  std::string mlp, optimizers, cnn;
};
DataPaths& Paths();

// The compiled backend this test binary trains on: the CPU backend in training_test
// (training_test_backend_cpu.cc), the CUDA backend in training_cuda_test
// (training_test_backend_cuda.cc). The Schedule interpreter's runs are in both.
std::shared_ptr<Backend> CompiledBackend();
// OK where CompiledBackend() can run (the CUDA one needs a driver and a GPU), else why not.
absl::Status CompiledBackendAvailable();

#define SKIP_WITHOUT_COMPILED_BACKEND()                                              \
  if (absl::Status s = ::coil::driver::testing::CompiledBackendAvailable(); !s.ok()) { \
    GTEST_SKIP() << "skipped: " << s.message();                                      \
  }

struct Named {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

inline std::map<std::string, Named> LoadData(const std::string& path) {
  std::map<std::string, Named> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string name, tok;
    s >> name;
    Named n;
    while (s >> tok && tok != ":") n.shape.push_back(std::stoll(tok));
    double v;
    while (s >> v) n.values.push_back(v);
    out[name] = n;
  }
  return out;
}

inline HostTensor F32(const Named& n) {
  return HostTensor::FromDoubles(proto::FLOAT32, n.shape, n.values);
}

inline Value* Op(GraphBuilder& b, const std::string& op, std::vector<Value*> in,
                 AttrMap attrs = {}) {
  absl::StatusOr<Value*> v = b.Op(op, std::move(in), std::move(attrs));
  EXPECT_TRUE(v.ok()) << v.status();
  return *v;
}

}  // namespace coil::driver::testing

#endif  // COIL_TOOLS_DRIVER_TRAINING_TEST_DATA_H_
