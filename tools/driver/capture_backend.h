// The one adapter between coil::compile's Backend (capture/backend.h: Graph -> CompiledGraph)
// and the compile driver: any driver::Backend becomes a capture Backend whose Compile runs
// CompileGraph (prims, inductor, the backend's codegen and load, through the compile cache).
//
//   coil::CompileOptions o;
//   o.backend = driver::CaptureBackend(driver::CpuBackend());
#ifndef COIL_TOOLS_DRIVER_CAPTURE_BACKEND_H_
#define COIL_TOOLS_DRIVER_CAPTURE_BACKEND_H_

#include <memory>

#include "autograd/partition.h"
#include "capture/backend.h"
#include "tools/driver/driver.h"

namespace coil::driver {

// `options.backend` is replaced by `backend`; the rest is used for every compile.
// `partition` is the training compiles' (CompileTraining) partition: min-cut by default;
// kSaveEverything for comparisons (`coil bench train`).
std::shared_ptr<coil::Backend> CaptureBackend(std::shared_ptr<Backend> backend,
                                              DriverOptions options = {},
                                              autograd::PartitionOptions partition = {});

}  // namespace coil::driver

#endif  // COIL_TOOLS_DRIVER_CAPTURE_BACKEND_H_
