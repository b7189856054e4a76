// cuDNN 9, loaded with dlopen("libcudnn.so.9") on first use, like cuBLASLt (cublaslt.h): nothing
// links against it, so binaries start without it and convolutions run on the host instead,
// saying so (executable.h). Only the handle calls and the backend ("graph") API are declared,
// with the few enum values the runtime uses written out as cudnn_graph.h (cudnn_backend.h) of
// cuDNN 9 defines them, so no cuDNN header is needed to build.
//
//   absl::StatusOr<const Cudnn*> dnn = Cudnn::Get();
//   if (!dnn.ok()) ...;  // FailedPrecondition "no cuDNN (libcudnn.so.9: ...)"
//   absl::Status s = (*dnn)->Check((*dnn)->BackendFinalize(d), "cudnnBackendFinalize", where);
#ifndef COIL_RUNTIME_CUDA_CUDNN_H_
#define COIL_RUNTIME_CUDA_CUDNN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace coil::cuda {

namespace dnn {
using Status = int;                    // cudnnStatus_t
inline constexpr Status kSuccess = 0;  // CUDNN_STATUS_SUCCESS
using Handle = struct CoilCudnnContext*;
using Desc = void*;                     // cudnnBackendDescriptor_t
using Stream = struct CoilCudaStream*;  // cudaStream_t (a CUstream)

// cudnnDataType_t.
inline constexpr int kFloat = 0, kDouble = 1, kHalf = 2, kBfloat16 = 9;
// cudnnConvolutionMode_t.
inline constexpr int kCrossCorrelation = 1;
// cudnnPointwiseMode_t.
inline constexpr int kPointwiseAdd = 0, kPointwiseReluFwd = 100;
// cudnnBackendHeurMode_t.
inline constexpr int kHeurModeA = 3, kHeurModeFallback = 2;
// cudnnBackendNumericalNote_t.
inline constexpr int kNoteTensorCore = 0, kNoteDownConvertInputs = 1,
                     kNoteReducedPrecisionReduction = 2, kNoteFft = 3, kNoteWinograd = 5,
                     kNoteWinogradTile13x13 = 8;

// cudnnBackendDescriptorType_t.
enum DescType : int {
  kPointwiseDescriptor = 0,
  kConvolutionDescriptor = 1,
  kEngineDescriptor = 2,
  kEngineCfgDescriptor = 3,
  kEngineHeurDescriptor = 4,
  kExecutionPlanDescriptor = 5,
  kOperationConvolutionForwardDescriptor = 10,
  kOperationPointwiseDescriptor = 13,
  kOperationGraphDescriptor = 15,
  kVariantPackDescriptor = 16,
  kTensorDescriptor = 17,
};

// cudnnBackendAttributeType_t.
enum AttrType : int {
  kTypeHandle = 0,
  kTypeDataType = 1,
  kTypeBoolean = 2,
  kTypeInt64 = 3,
  kTypeFloat = 4,
  kTypeDouble = 5,
  kTypeVoidPtr = 6,
  kTypeConvolutionMode = 7,
  kTypeHeurMode = 8,
  kTypeNumericalNote = 11,
  kTypePointwiseMode = 14,
  kTypeBackendDescriptor = 15,
};

// cudnnBackendAttributeName_t.
enum Attr : int {
  kPointwiseMode = 0,
  kPointwiseMathPrec = 1,
  kConvolutionCompType = 100,
  kConvolutionConvMode = 101,
  kConvolutionDilations = 102,
  kConvolutionFilterStrides = 103,
  kConvolutionPostPaddings = 104,
  kConvolutionPrePaddings = 105,
  kConvolutionSpatialDims = 106,
  kEngineHeurMode = 200,
  kEngineHeurOperationGraph = 201,
  kEngineHeurResults = 202,
  kEngineCfgEngine = 300,
  kEngineCfgWorkspaceSize = 303,
  kExecutionPlanHandle = 400,
  kExecutionPlanEngineConfig = 401,
  kExecutionPlanWorkspaceSize = 402,
  kOperationConvolutionForwardAlpha = 700,
  kOperationConvolutionForwardBeta = 701,
  kOperationConvolutionForwardConvDesc = 702,
  kOperationConvolutionForwardW = 703,
  kOperationConvolutionForwardX = 704,
  kOperationConvolutionForwardY = 705,
  kOperationPointwisePwDescriptor = 750,
  kOperationPointwiseXDesc = 751,
  kOperationPointwiseBDesc = 752,
  kOperationPointwiseYDesc = 753,
  kOperationGraphHandle = 800,
  kOperationGraphOps = 801,
  kTensorByteAlignment = 900,
  kTensorDataType = 901,
  kTensorDimensions = 902,
  kTensorStrides = 903,
  kTensorUniqueId = 906,
  kTensorIsVirtual = 907,
  kVariantPackUniqueIds = 1000,
  kVariantPackDataPointers = 1001,
  kVariantPackWorkspace = 1003,
  kEngineNumericalNote = 1303,
};
}  // namespace dnn

struct Cudnn {
  size_t (*GetVersion)();
  dnn::Status (*Create)(dnn::Handle*);
  dnn::Status (*Destroy)(dnn::Handle);
  dnn::Status (*SetStream)(dnn::Handle, dnn::Stream);
  const char* (*GetErrorString)(dnn::Status);
  void (*GetLastErrorString)(char*, size_t);  // may be null (older 9.x)
  dnn::Status (*BackendCreateDescriptor)(int type, dnn::Desc*);
  dnn::Status (*BackendDestroyDescriptor)(dnn::Desc);
  dnn::Status (*BackendFinalize)(dnn::Desc);
  dnn::Status (*BackendSetAttribute)(dnn::Desc, int name, int type, int64_t count,
                                     const void* values);
  dnn::Status (*BackendGetAttribute)(dnn::Desc, int name, int type, int64_t requested,
                                     int64_t* count, void* values);
  dnn::Status (*BackendExecute)(dnn::Handle, dnn::Desc plan, dnn::Desc variant_pack);
  // cudnnGetVersion (90100 for 9.1.0) and where the library was found.
  size_t version = 0;
  std::string path;

  // The process-wide library, loaded once from the first of libcudnn.so.9, libcudnn.so and the
  // CUDA toolkit's lib64 folders. FailedPrecondition "no cuDNN (... each name tried and why
  // ...)" when none loads, one lacks an entry point, or its major version is not 9.
  static absl::StatusOr<const Cudnn*> Get();
  // The same from `names` (dlopen's search for each), not cached: tests use a name that does not
  // exist to see the error.
  static absl::StatusOr<const Cudnn*> Load(const std::vector<std::string>& names);

  // OK for CUDNN_STATUS_SUCCESS, else an Internal error "<call> for <where>: <cuDNN's text>".
  absl::Status Check(dnn::Status s, const char* call, const std::string& where) const;
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_CUDNN_H_
