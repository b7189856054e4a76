// A consumer of @coil//inductor (with @coil//prims:decompose before it): reads a text-IR graph,
// decomposes and schedules it, and prints one line per kernel. Usage: schedule_only GRAPH.txt
#include <fstream>
#include <iostream>
#include <sstream>

#include "inductor/schedule.h"
#include "ir/parser.h"
#include "prims/decompose.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: schedule_only GRAPH.txt\n";
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
  if (absl::StatusOr<bool> d = coil::prims::Decompose(*graph); !d.ok()) {
    std::cerr << "decompose: " << d.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<coil::proto::Schedule> schedule =
      coil::inductor::BuildSchedule(*std::move(graph));
  if (!schedule.ok()) {
    std::cerr << "schedule: " << schedule.status().message() << "\n";
    return 1;
  }
  for (const coil::proto::Kernel& k : schedule->kernels()) std::cout << "kernel " << k.name() << "\n";
  std::cout << schedule->kernels_size() << " kernels\n";
  return 0;
}
