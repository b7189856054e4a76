// PeerServer: a child process on two pipes (see cpu_bench_peer_server.h).
#include "tools/bench/cpu_bench_peer_server.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace coil::bench {

absl::StatusOr<std::unique_ptr<PeerServer>> PeerServer::Start(const std::string& command) {
  // A write to a script that exited must be an error here, not SIGPIPE's end of this process.
  signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (pipe(in) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  if (pipe(out) != 0) {
    close(in[0]);
    close(in[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    signal(SIGPIPE, SIG_DFL);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  FILE* from = fdopen(out[0], "r");
  if (from == nullptr) {
    close(out[0]);
    close(in[1]);
    waitpid(pid, nullptr, 0);
    return absl::InternalError(absl::StrCat("fdopen: ", std::strerror(errno)));
  }
  return std::unique_ptr<PeerServer>(new PeerServer(command, pid, in[1], from));
}

PeerServer::~PeerServer() {
  if (to_child_ >= 0) close(to_child_);
  Wait();
  std::fclose(from_child_);
}

std::string PeerServer::Wait() {
  if (!waited_) {
    int status = 0;
    pid_t r;
    do {
      r = waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    wait_status_ = r == pid_ ? status : -1;
    waited_ = true;
  }
  if (wait_status_ == -1) return "waitpid failed";
  if (WIFEXITED(wait_status_)) return absl::StrCat("exit status ", WEXITSTATUS(wait_status_));
  if (WIFSIGNALED(wait_status_)) return absl::StrCat("killed by signal ", WTERMSIG(wait_status_));
  return "stopped";
}

absl::StatusOr<std::string> PeerServer::ReadLine() {
  std::string line;
  for (int c; (c = std::fgetc(from_child_)) != EOF;) {
    if (c == '\n') return line;
    line.push_back(static_cast<char>(c));
  }
  if (to_child_ >= 0) {
    close(to_child_);
    to_child_ = -1;
  }
  return absl::InternalError(absl::StrCat("the peer script's output ended (", Wait(),
                                          "; its messages are above): ", command_));
}

absl::StatusOr<std::string> PeerServer::Ask(const std::string& request) {
  const std::string line = request + "\n";
  size_t done = 0;
  while (to_child_ >= 0 && done < line.size()) {
    const ssize_t n = write(to_child_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(absl::StrCat("cannot write '", request, "' to the peer script (",
                                              std::strerror(errno), "): ", command_));
    }
    done += static_cast<size_t>(n);
  }
  if (to_child_ < 0) {
    return absl::InternalError(absl::StrCat("the peer script has exited: ", command_));
  }
  return ReadLine();
}

absl::Status PeerServer::Finish() {
  if (to_child_ >= 0) {
    close(to_child_);
    to_child_ = -1;
  }
  const std::string how = Wait();
  if (how == "exit status 0") return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("the peer script failed (", how, "; its messages are above): ", command_));
}

}  // namespace coil::bench
