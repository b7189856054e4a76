// How codegen_cuda turns a Schedule's kernel sources into NVRTC programs, quickly:
//
// - Kernels whose code is the same once names are set aside (the kernel's symbol, its buffer
//   variables `b<id>`, comments) are compiled once: kernels address buffers through their own
//   table slots (runtime/cuda/kernel_abi.h), so resnet50's 50 generated kernels are 14 distinct
//   functions (the repeated bottleneck blocks' epilogues).
// - The distinct kernels are split into up to kMaxPrograms programs of about equal source size,
//   compiled on as many threads (NVRTC compiles one program on one thread).
//
// The split depends only on the sources (not on the machine's cores), so a module is the same
// wherever it is generated. Pure functions; codegen_cuda.cc uses them, cuda_program_split_test
// tests them. Not an API.
#ifndef COIL_CODEGEN_CUDA_INTERNAL_PROGRAM_SPLIT_H_
#define COIL_CODEGEN_CUDA_INTERNAL_PROGRAM_SPLIT_H_

#include <cstddef>
#include <string>
#include <vector>

namespace coil::codegen_cuda_internal {

inline constexpr int kMaxPrograms = 8;

// `text` (one kernel's __global__ function named `symbol`) with comments removed, `symbol`
// replaced by a placeholder and each buffer variable `b<digits>` renamed by order of first
// appearance: equal keys mean the same code up to which buffers the table slots name. The
// error record's kernel id (coil_fail) stays, so kernels that can report errors keep their own
// code.
std::string DedupeKey(const std::string& text, const std::string& symbol);

// For each kernel, the index of the first kernel with the same key (itself when it is the
// first): kernels[i] runs the code of kernels[RepresentativeOf(keys)[i]].
std::vector<int> RepresentativeOf(const std::vector<std::string>& keys);

// Splits items of the given sizes into min(max_programs, sizes.size()) programs (at least one,
// even for no items) of about equal total size: largest first, each into the lightest program
// so far (ties: the lowest index); each program's items in increasing order.
std::vector<std::vector<int>> SplitPrograms(const std::vector<size_t>& sizes,
                                            int max_programs = kMaxPrograms);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_PROGRAM_SPLIT_H_
