// A consumer of @coil//prims:decompose alone: reads a text-IR graph, decomposes it into prims
// and prints it. Usage: decompose_only GRAPH.txt
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/parser.h"
#include "ir/printer.h"
#include "prims/decompose.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: decompose_only GRAPH.txt\n";
    return 2;
  }
  std::ifstream file(argv[1]);
  std::stringstream text;
  text << file.rdbuf();
  absl::StatusOr<coil::Graph> graph = coil::ParseGraph(text.str());
  if (!graph.ok()) {
    std::cerr << argv[1] << ": " << graph.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<bool> changed = coil::prims::Decompose(*graph);
  if (!changed.ok()) {
    std::cerr << "decompose: " << changed.status().message() << "\n";
    return 1;
  }
  std::cout << coil::PrintGraph(*graph);
  return 0;
}
