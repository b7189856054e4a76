// A consumer of @coil//capture/onnx alone: imports an ONNX model and prints the coil graph as
// text IR. Usage: onnx_import_only MODEL.onnx
#include <iostream>

#include "capture/onnx/onnx_importer.h"
#include "ir/printer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: onnx_import_only MODEL.onnx\n";
    return 2;
  }
  absl::StatusOr<coil::Graph> graph = coil::onnx::ImportOnnxFileAsGraph(argv[1]);
  if (!graph.ok()) {
    std::cerr << argv[1] << ": " << graph.status().message() << "\n";
    return 1;
  }
  std::cout << coil::PrintGraph(*graph);
  return 0;
}
