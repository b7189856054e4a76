// ScheduleInterpreterBackend: the Schedule is the module; Load interprets it.
#include "tools/driver/schedule_backend.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/schedule_interpreter.h"

namespace coil::driver {
namespace {

class ScheduleLoaded : public Executable {
 public:
  explicit ScheduleLoaded(proto::KernelModule module) : module_(std::move(module)) {}
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) override {
    return InterpretSchedule(module_.schedule(), inputs);
  }

 private:
  proto::KernelModule module_;
};

class ScheduleBackendImpl : public Backend {
 public:
  explicit ScheduleBackendImpl(std::vector<std::string> epilogues)
      : epilogues_(std::move(epilogues)) {}
  std::string name() const override { return "schedule"; }
  BackendCapabilities capabilities() const override {
    BackendCapabilities c;
    c.inductor.extern_epilogues = epilogues_;
    c.externs = {"aten.mm", "aten.bmm", "aten.convolution"};
    return c;
  }
  // The epilogues are part of the options text the driver keys by.
  std::string CacheIdentity() const override { return "backend=schedule"; }
  absl::StatusOr<proto::KernelModule> Generate(proto::Schedule schedule) override {
    proto::KernelModule m;
    m.set_backend("schedule");
    *m.mutable_schedule() = std::move(schedule);
    return m;
  }
  absl::StatusOr<std::unique_ptr<Executable>> Load(proto::KernelModule module) override {
    if (module.backend() != "schedule") {
      return absl::FailedPreconditionError(absl::StrCat(
          "a module for backend '", module.backend(), "' given to the Schedule interpreter"));
    }
    return std::make_unique<ScheduleLoaded>(std::move(module));
  }

 private:
  std::vector<std::string> epilogues_;
};

}  // namespace

std::shared_ptr<Backend> ScheduleInterpreterBackend(std::vector<std::string> extern_epilogues) {
  return std::make_shared<ScheduleBackendImpl>(std::move(extern_epilogues));
}

}  // namespace coil::driver
