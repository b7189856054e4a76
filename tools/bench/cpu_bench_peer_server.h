// A peer script kept running beside `coil bench cpu --peers`: torch_peers.py --serve, started
// through /bin/sh with its standard input and output on pipes to this process (its standard
// error passes through). It prints its first pass (exports, compiles, checks) as one JSON line,
// then answers one line per request ("time MODEL BATCH" -> one PeerRound JSON line) until its
// input closes. This is what lets each row's systems be timed in rounds, in alternation with
// coil's, while torch.compile's compile happens once per row (cpu_bench_rounds.h).
//
//   absl::StatusOr<std::unique_ptr<PeerServer>> s = PeerServer::Start("python3 torch_peers.py
//       ... --serve");
//   absl::StatusOr<std::string> first = (*s)->ReadLine();
//   absl::StatusOr<std::string> round = (*s)->Ask("time resnet50 1");
//   (*s)->Finish();   // closes its input, waits: an error unless it exited with status 0
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_PEER_SERVER_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_PEER_SERVER_H_

#include <sys/types.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace coil::bench {

class PeerServer {
 public:
  // Starts `command` under /bin/sh -c. Errors: pipes or fork failed (the exec's failure shows
  // as the shell's exit status 127 at the first ReadLine).
  static absl::StatusOr<std::unique_ptr<PeerServer>> Start(const std::string& command);
  // Closes its input and waits for it (no error reported; Finish reports).
  ~PeerServer();
  PeerServer(const PeerServer&) = delete;
  PeerServer& operator=(const PeerServer&) = delete;

  // The next line of its output, without the newline. Error when the output ends first: the
  // script's exit status and the command are in the message.
  absl::StatusOr<std::string> ReadLine();
  // Writes `request` and a newline, then ReadLine(). Error when it has exited.
  absl::StatusOr<std::string> Ask(const std::string& request);
  // Closes its input and waits: an error unless it exited with status 0.
  absl::Status Finish();

 private:
  PeerServer(std::string command, pid_t pid, int to_child, FILE* from_child)
      : command_(std::move(command)), pid_(pid), to_child_(to_child), from_child_(from_child) {}
  // Waits for the child (once); its exit status as text ("exit status 1", "killed by signal 9").
  std::string Wait();

  std::string command_;
  pid_t pid_;
  int to_child_;      // its standard input; -1 once closed
  FILE* from_child_;  // its standard output
  int wait_status_ = -1;
  bool waited_ = false;
};

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_PEER_SERVER_H_
