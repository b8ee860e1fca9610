// ascend_sim/gemm.h - the cube's matrix multiply for the Matmul API (and Mmad): C += A x B in fp32,
// every element accumulated in k order (so results do not depend on the blocking or the thread count).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_GEMM_H
#define ASCEND_SIM_ASCEND_SIM_GEMM_H

#include "core.h"

namespace AscendC::sim::detail {

// C[i * ldc + j] += sum over k of A[i * lda + k] * B[k * ldb + j] for i < rows, j < cols, k < K, each
// sum formed left to right in fp32 (the product rounded to fp32 first: exact for f16 / bf16 operands).
// Uses AVX2 when the host has it and several threads for large products (ASCEND_SIM_THREADS).
ASCEND_SIM_RT void gemm_f32(float* C, uint64_t ldc, const float* A, uint64_t lda, const float* B, uint64_t ldb, uint32_t rows, uint32_t cols,
                            uint32_t K);

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_GEMM_H
