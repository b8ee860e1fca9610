// ascend_sim/impl/gemm_rt.h - gemm_f32: register-blocked (6 x 16, unrolled so the 12 accumulators stay in
// registers) micro-kernel over k-blocks with each kc x 16 panel of B packed contiguous, with an
// AVX2 build of the same code chosen at run time, and row panels split over threads. Every C element
// is accumulated in k order with separate multiply and add (no fused multiply-add), so the result is
// the same on every host and for every blocking.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_GEMM_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_GEMM_RT_H

#include <pthread.h>

namespace AscendC::sim::detail {

typedef float gemm_v8 __attribute__((vector_size(32)));

inline constexpr uint32_t kGemmMR = 6, kGemmNR = 16, kGemmKC = 256;

#define ASCEND_SIM_GEMM_BODY                                                                                                 \
    alignas(32) float pb[kGemmKC * kGemmNR];                                                                                \
    for (uint32_t k0 = 0; k0 < K; k0 += kGemmKC) {                                                                          \
        const uint32_t kc = K - k0 < kGemmKC ? K - k0 : kGemmKC;                                                             \
        uint32_t j0 = 0;                                                                                                    \
        for (; j0 + kGemmNR <= cols; j0 += kGemmNR) {                                                                        \
            /* the kc x 16 panel of B, packed contiguous (B's rows are often a power-of-two apart) */                       \
            for (uint32_t k = 0; k < kc; ++k) __builtin_memcpy(pb + k * kGemmNR, B + uint64_t(k0 + k) * ldb + j0, 4 * kGemmNR); \
            uint32_t i0 = 0;                                                                                                \
            for (; i0 + kGemmMR <= rows; i0 += kGemmMR) {                                                                    \
                gemm_v8 c[kGemmMR][2];                                                                                      \
                _Pragma("GCC unroll 6") for (uint32_t r = 0; r < kGemmMR; ++r) {                                                                     \
                    __builtin_memcpy(&c[r][0], C + (i0 + r) * ldc + j0, 32);                                                 \
                    __builtin_memcpy(&c[r][1], C + (i0 + r) * ldc + j0 + 8, 32);                                             \
                }                                                                                                           \
                const float* a = A + i0 * lda + k0;                                                                         \
                const float* b = pb;                                                                                        \
                for (uint32_t k = 0; k < kc; ++k, b += kGemmNR) {                                                           \
                    gemm_v8 b0, b1;                                                                                         \
                    __builtin_memcpy(&b0, b, 32);                                                                           \
                    __builtin_memcpy(&b1, b + 8, 32);                                                                       \
                    _Pragma("GCC unroll 6") for (uint32_t r = 0; r < kGemmMR; ++r) {                                                                 \
                        const float av = a[r * lda + k];                                                                    \
                        const gemm_v8 va = {av, av, av, av, av, av, av, av};                                                \
                        const gemm_v8 p0 = va * b0, p1 = va * b1;                                                           \
                        c[r][0] = c[r][0] + p0;                                                                             \
                        c[r][1] = c[r][1] + p1;                                                                             \
                    }                                                                                                       \
                }                                                                                                           \
                _Pragma("GCC unroll 6") for (uint32_t r = 0; r < kGemmMR; ++r) {                                                                     \
                    __builtin_memcpy(C + (i0 + r) * ldc + j0, &c[r][0], 32);                                                 \
                    __builtin_memcpy(C + (i0 + r) * ldc + j0 + 8, &c[r][1], 32);                                             \
                }                                                                                                           \
            }                                                                                                               \
            for (; i0 < rows; ++i0) { /* row tail */                                                                        \
                gemm_v8 c0, c1;                                                                                             \
                __builtin_memcpy(&c0, C + i0 * ldc + j0, 32);                                                               \
                __builtin_memcpy(&c1, C + i0 * ldc + j0 + 8, 32);                                                           \
                const float* b = pb;                                                                                        \
                for (uint32_t k = 0; k < kc; ++k, b += kGemmNR) {                                                           \
                    gemm_v8 b0, b1;                                                                                         \
                    __builtin_memcpy(&b0, b, 32);                                                                           \
                    __builtin_memcpy(&b1, b + 8, 32);                                                                       \
                    const float av = A[i0 * lda + k0 + k];                                                                  \
                    const gemm_v8 va = {av, av, av, av, av, av, av, av};                                                    \
                    const gemm_v8 p0 = va * b0, p1 = va * b1;                                                               \
                    c0 = c0 + p0;                                                                                           \
                    c1 = c1 + p1;                                                                                           \
                }                                                                                                           \
                __builtin_memcpy(C + i0 * ldc + j0, &c0, 32);                                                               \
                __builtin_memcpy(C + i0 * ldc + j0 + 8, &c1, 32);                                                           \
            }                                                                                                               \
        }                                                                                                                   \
        for (uint32_t i = 0; i < rows; ++i) { /* column tail */                                                              \
            for (uint32_t j = j0; j < cols; ++j) {                                                                          \
                float acc = C[i * ldc + j];                                                                                 \
                for (uint32_t k = 0; k < kc; ++k) {                                                                         \
                    const float p = A[i * lda + k0 + k] * B[uint64_t(k0 + k) * ldb + j];                                    \
                    acc = acc + p;                                                                                          \
                }                                                                                                           \
                C[i * ldc + j] = acc;                                                                                       \
            }                                                                                                               \
        }                                                                                                                   \
    }

__attribute__((target("avx2"))) inline void gemm_f32_avx2(float* C, uint64_t ldc, const float* A, uint64_t lda, const float* B,
                                                          uint64_t ldb, uint32_t rows, uint32_t cols, uint32_t K) {
    ASCEND_SIM_GEMM_BODY
}

inline void gemm_f32_generic(float* C, uint64_t ldc, const float* A, uint64_t lda, const float* B, uint64_t ldb, uint32_t rows,
                             uint32_t cols, uint32_t K) {
    ASCEND_SIM_GEMM_BODY
}

#undef ASCEND_SIM_GEMM_BODY

inline void gemm_f32_serial(float* C, uint64_t ldc, const float* A, uint64_t lda, const float* B, uint64_t ldb, uint32_t rows, uint32_t cols,
                            uint32_t K) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) {
        gemm_f32_avx2(C, ldc, A, lda, B, ldb, rows, cols, K);
    } else {
        gemm_f32_generic(C, ldc, A, lda, B, ldb, rows, cols, K);
    }
}

struct GemmPart {
    float* C;
    uint64_t ldc;
    const float* A;
    uint64_t lda;
    const float* B;
    uint64_t ldb;
    uint32_t rows, cols, K;
};

inline void* gemm_part_main(void* p) {
    const GemmPart& g = *static_cast<const GemmPart*>(p);
    gemm_f32_serial(g.C, g.ldc, g.A, g.lda, g.B, g.ldb, g.rows, g.cols, g.K);
    return nullptr;
}

inline uint32_t g_gemmThreads = 1;  // set by Launch from ASCEND_SIM_THREADS

ASCEND_SIM_RT void gemm_f32(float* C, uint64_t ldc, const float* A, uint64_t lda, const float* B, uint64_t ldb, uint32_t rows, uint32_t cols,
                            uint32_t K) {
    if (rows == 0 || cols == 0 || K == 0) return;
    const uint32_t threads = g_gemmThreads;
    const double work = double(rows) * cols * K;
    if (threads <= 1 || work < 4e6 || rows < 2 * kGemmMR) {
        gemm_f32_serial(C, ldc, A, lda, B, ldb, rows, cols, K);
        return;
    }
    // rows split into `threads` parts (multiples of the micro-kernel height); the caller's thread takes one
    uint32_t n = threads;
    const uint32_t panels = (rows + kGemmMR - 1) / kGemmMR;
    if (n > panels) n = panels;
    GemmPart parts[64];
    pthread_t tids[64];
    bool started[64] = {};
    uint32_t r0 = 0;
    for (uint32_t t = 0; t < n; ++t) {
        const uint32_t p0 = panels * t / n, p1 = panels * (t + 1) / n;
        const uint32_t r1 = p1 * kGemmMR < rows ? p1 * kGemmMR : rows;
        r0 = p0 * kGemmMR;
        parts[t] = GemmPart{C + r0 * ldc, ldc, A + r0 * lda, lda, B, ldb, r1 - r0, cols, K};
    }
    for (uint32_t t = 1; t < n; ++t) started[t] = pthread_create(&tids[t], nullptr, gemm_part_main, &parts[t]) == 0;
    gemm_part_main(&parts[0]);
    for (uint32_t t = 1; t < n; ++t) {
        if (started[t]) {
            pthread_join(tids[t], nullptr);
        } else {
            gemm_part_main(&parts[t]);
        }
    }
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_GEMM_RT_H
