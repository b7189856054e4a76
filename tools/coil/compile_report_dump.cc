// compile_report_dump REPORT.pb: prints a CompileReport one fact per line, for the shell tests
// of `coil compile` (an independent reader of report.pb: it only parses the proto).
//
//   model mlp.txt
//   option backend=cpu
//   stage import graph nodes=2 bytes=431 seconds=0.00012
//   stage inductor schedule kernels=3 bytes=2810 seconds=0.0004
//   stage codegen_cpu kernel_module kernels=2 bytes=9123 object_bytes=4096 seconds=0.03
//   pass inductor.fuse_vertical 0.0012 changed
//   timing load 0.0011
//   cpu_timing load 0.0010             (the process's CPU seconds in the stage, every thread)
//   log autotune fused+epilogues, 1 threads: median ...
//
// Exit 1 (with a message) when the file cannot be read or is not a CompileReport.
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "ir/proto/report.pb.h"

namespace {

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: compile_report_dump REPORT.pb\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "compile_report_dump: cannot open '%s'\n", argv[1]);
    return 1;
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  coil::proto::CompileReport report;
  if (!report.ParseFromString(bytes.str())) {
    std::fprintf(stderr, "compile_report_dump: '%s' is not a coil.proto.CompileReport\n", argv[1]);
    return 1;
  }
  std::printf("model %s\n", report.model().c_str());
  std::printf("coil_version %s\n", report.coil_version().c_str());
  // Sorted by key so the output is stable.
  std::map<std::string, std::string> options(report.options().begin(), report.options().end());
  for (const auto& [key, value] : options) std::printf("option %s=%s\n", key.c_str(), value.c_str());
  for (const coil::proto::StageArtifact& s : report.stages()) {
    std::printf("stage %s ", s.stage().c_str());
    switch (s.payload_case()) {
      case coil::proto::StageArtifact::kGraph:
        std::printf("graph nodes=%d bytes=%zu", s.graph().nodes_size(), s.graph().ByteSizeLong());
        break;
      case coil::proto::StageArtifact::kSchedule:
        std::printf("schedule kernels=%d bytes=%zu", s.schedule().kernels_size(),
                    s.schedule().ByteSizeLong());
        break;
      case coil::proto::StageArtifact::kKernelModule:
        std::printf("kernel_module kernels=%d bytes=%zu object_bytes=%zu",
                    s.kernel_module().kernels_size(), s.kernel_module().ByteSizeLong(),
                    s.kernel_module().object_code().size());
        break;
      case coil::proto::StageArtifact::kCapture:
        std::printf("capture graphs=%d", s.capture().graphs_size());
        break;
      case coil::proto::StageArtifact::kAutograd:
        std::printf(
            "autograd joint_nodes=%d forward_nodes=%d forward_inputs=%d forward_outputs=%d "
            "backward_nodes=%d backward_inputs=%d backward_outputs=%d saved=%d saved_bytes=%lld",
            s.autograd().joint().nodes_size(), s.autograd().forward().nodes_size(),
            s.autograd().forward().inputs_size(), s.autograd().forward().outputs_size(),
            s.autograd().backward().nodes_size(), s.autograd().backward().inputs_size(),
            s.autograd().backward().outputs_size(), s.autograd().saved_values_size(),
            static_cast<long long>(s.autograd().saved_bytes()));
        break;
      case coil::proto::StageArtifact::PAYLOAD_NOT_SET:
        std::printf("none");
        break;
    }
    std::printf(" seconds=%.9g\n", s.seconds());
  }
  for (const coil::proto::StageTiming& t : report.timings()) {
    std::printf("timing %s %.9g\n", t.stage().c_str(), t.seconds());
    std::printf("cpu_timing %s %.9g\n", t.stage().c_str(), t.cpu_seconds());
  }
  for (const coil::proto::PassRun& p : report.passes()) {
    std::printf("pass %s.%s %.9g %s%s\n", p.pipeline().c_str(), p.pass().c_str(), p.seconds(),
                p.changed() ? "changed" : "unchanged", p.dump().empty() ? "" : " dumped");
  }
  for (const coil::proto::LogLine& l : report.logs()) {
    std::printf("log %s %s\n", l.channel().c_str(), l.text().c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
