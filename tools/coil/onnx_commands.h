// `coil import` (ONNX model -> coil graph) and `coil conformance` (the ONNX backend test suites
// through the importer and a backend). Each returns the process exit code.
#ifndef COIL_TOOLS_COIL_ONNX_COMMANDS_H_
#define COIL_TOOLS_COIL_ONNX_COMMANDS_H_

#include <string>
#include <vector>

namespace coil::cli {

int ImportCommand(const std::vector<std::string>& argv);
int ConformanceCommand(const std::vector<std::string>& argv);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_ONNX_COMMANDS_H_
