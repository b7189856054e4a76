// coil: the command-line entry point. `coil help` lists the commands.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "tools/coil/bench_commands.h"
#include "tools/coil/compile_commands.h"
#include "tools/coil/graph_commands.h"
#include "tools/coil/inspect_commands.h"
#include "tools/coil/onnx_commands.h"
#include "tools/coil/prims_commands.h"
#include "tools/coil/schedule_commands.h"

namespace {

constexpr char kVersion[] = "0.1.0";

int Help() {
  std::printf(
      "coil %s: an ML compiler toolkit (capture, autograd, prims, inductor, codegen, runtime)\n"
      "\n"
      "usage: coil COMMAND [args]\n"
      "  print FILE       print a graph (binary coil.proto.Graph or text IR) as text IR\n"
      "  verify FILE      check a graph against the op registry\n"
      "  run FILE         run a graph (or an .onnx model) with the reference interpreter\n"
      "                   (see coil run --help)\n"
      "  import MODEL     import an ONNX model as a coil graph (-o GRAPH.pb or --text)\n"
      "  conformance      run the ONNX backend conformance suites (see coil conformance --help)\n"
      "  decompose FILE   functionalize and decompose a graph into prims (-o OUT or --text)\n"
      "  schedule FILE    fuse and plan a graph with inductor; print kernels and memory\n"
      "                   (see coil schedule --help)\n"
      "  compile MODEL    compile a model stage by stage with timings (see coil compile --help)\n"
      "  bench cpu        coil's CPU backend vs torch eager (see coil bench --help)\n"
      "  bench cuda       coil's CUDA backend vs torch eager / torch.compile on a GPU\n"
      "  bench train      training steps vs torch eager (see coil bench --help)\n"
      "  inspect DIR      open compile artifacts in the browser inspector (see coil inspect --help)\n"
      "  ops              list every registered op with its inputs and attributes\n"
      "  version          print the version\n",
      kVersion);
  return 0;
}

int Dispatch(int argc, char** argv) {
  if (argc < 2) return Help();
  std::string command = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (command == "print") return coil::cli::PrintCommand(rest);
  if (command == "verify") return coil::cli::VerifyCommand(rest);
  if (command == "run") return coil::cli::RunCommand(rest);
  if (command == "import") return coil::cli::ImportCommand(rest);
  if (command == "conformance") return coil::cli::ConformanceCommand(rest);
  if (command == "schedule") return coil::cli::ScheduleCommand(rest);
  if (command == "compile") return coil::cli::CompileCommand(rest);
  if (command == "decompose") return coil::cli::DecomposeCommand(rest);
  if (command == "bench") return coil::cli::BenchCommand(rest);
  if (command == "inspect") return coil::cli::InspectCommand(rest);
  if (command == "ops") return coil::cli::OpsCommand(rest);
  if (command == "version" || command == "--version") {
    std::printf("coil %s\n", kVersion);
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") return Help();
  std::fprintf(stderr, "coil: unknown command '%s' (try coil help)\n", command.c_str());
  return 2;
}

}  // namespace

// Output on stdout counts like a file: a write error (a full disk, /dev/full) is reported and
// fails the command, instead of being lost in the final flush.
int main(int argc, char** argv) {
  int status = Dispatch(argc, argv);
  errno = 0;
  std::cout.flush();
  bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || std::cout.fail();
  // Some file systems (NFS) report write-back errors only at close, which runs the file's
  // flush for every descriptor closed: close a duplicate, leaving stdout itself to exit().
  if (!failed) {
    const int copy = ::dup(STDOUT_FILENO);
    failed = copy >= 0 && ::close(copy) != 0 && errno != EINTR;
  }
  if (failed && status == 0) {
    std::fprintf(stderr, "coil: cannot write the standard output%s%s\n", errno != 0 ? ": " : "",
                 errno != 0 ? std::strerror(errno) : "");
    return 1;
  }
  return status;
}
