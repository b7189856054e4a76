// ScheduleInterpreterBackend: the Schedule is the module; Load interprets it.
#include "tools/driver/schedule_backend.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/schedule_interpreter.h"

namespace coil::driver {
namespace {

class ScheduleLoaded : public Executable {
 public:
  ScheduleLoaded(proto::KernelModule module, std::string external_data_dir)
      : module_(std::move(module)), external_data_dir_(std::move(external_data_dir)) {}
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs) override {
    ScheduleInterpreterOptions options;
    options.external_data_dir = external_data_dir_;
    return InterpretSchedule(module_.schedule(), inputs, options);
  }

 private:
  proto::KernelModule module_;
  std::string external_data_dir_;
};

class ScheduleBackendImpl : public Backend {
 public:
  ScheduleBackendImpl(std::vector<std::string> epilogues, std::string external_data_dir)
      : epilogues_(std::move(epilogues)), external_data_dir_(std::move(external_data_dir)) {}
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
    return std::make_unique<ScheduleLoaded>(std::move(module), external_data_dir_);
  }

 private:
  std::vector<std::string> epilogues_;
  std::string external_data_dir_;
};

}  // namespace

std::shared_ptr<Backend> ScheduleInterpreterBackend(std::vector<std::string> extern_epilogues,
                                                    std::string external_data_dir) {
  return std::make_shared<ScheduleBackendImpl>(std::move(extern_epilogues),
                                               std::move(external_data_dir));
}

}  // namespace coil::driver
