// The emulated Matmul API (ascend_sim/matmul.h): correct MIX use (Iterate/GetTensorC into UB and
// IterateAll to GM, transposes, bias, tails) checked against a host reference, and planted bugs.
//   usage: matmul <variant>     (exit 0 iff Launch reported no error and the variant's own checks hold)
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "kernel_tiling/kernel_tiling.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

using namespace AscendC;
using TCubeTiling = AscendC::tiling::TCubeTiling;

namespace {

int g_fail = 0;
#define EXPECT(c)                                                             \
    do {                                                                      \
        if (!(c)) {                                                           \
            std::printf("EXPECT failed: %s (matmul.cpp:%d)\n", #c, __LINE__); \
            ++g_fail;                                                         \
        }                                                                     \
    } while (0)

// FNV-1a of an output's bytes, printed so that runs with different thread counts can be compared byte for byte.
void print_hash(const char* name, const uint8_t* p, size_t bytes) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
    std::printf("%s %016llx\n", name, static_cast<unsigned long long>(h));
}

using AType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using BType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using CType = MatmulType<TPosition::VECIN, CubeFormat::ND, float>;
using CGmType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

TCubeTiling make_tiling(int M, int N, int K, int baseM, int baseN, int baseK, bool bias) {
    TCubeTiling t{};
    t.usedCoreNum = 1;
    t.M = M;
    t.N = N;
    t.Ka = t.Kb = K;
    t.singleCoreM = M;
    t.singleCoreN = N;
    t.singleCoreK = K;
    t.baseM = baseM;
    t.baseN = baseN;
    t.baseK = baseK;
    t.stepM = t.stepN = 1;
    t.stepKa = t.stepKb = 2;
    t.depthA1 = t.depthB1 = 4;
    t.dbL0A = t.dbL0B = 2;
    t.dbL0C = 1;
    t.isBias = bias ? 1 : 0;
    return t;
}

struct Data {
    int M, N, K;
    bool ta, tb, bias;
    uint8_t *a, *b, *bv, *c, *c2;
    std::vector<float> ref;
};

Data make(int M, int N, int K, bool ta, bool tb, bool bias) {
    Data d{M, N, K, ta, tb, bias, nullptr, nullptr, nullptr, nullptr, nullptr, {}};
    d.a = sim::GmAlloc(size_t(M) * K * 2);
    d.b = sim::GmAlloc(size_t(K) * N * 2);
    d.bv = sim::GmAlloc(size_t(N) * 4);
    d.c = sim::GmAlloc(size_t(M) * N * 4);
    d.c2 = sim::GmAlloc(size_t(M) * N * 4);
    half* a = reinterpret_cast<half*>(d.a);
    half* b = reinterpret_cast<half*>(d.b);
    float* bv = reinterpret_cast<float*>(d.bv);
    for (int i = 0; i < M * K; ++i) a[i] = half(float((i * 37) % 17 - 8) / 8.0f);
    for (int i = 0; i < K * N; ++i) b[i] = half(float((i * 11) % 13 - 6) / 4.0f);
    for (int j = 0; j < N; ++j) bv[j] = float(j % 5) - 2.0f;
    d.ref.assign(size_t(M) * N, 0.0f);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = bias ? bv[j] : 0.0;
            for (int k = 0; k < K; ++k) {
                const float av = float(ta ? a[k * M + i] : a[i * K + k]);
                const float bw = float(tb ? b[j * K + k] : b[k * N + j]);
                s += double(av) * double(bw);
            }
            d.ref[size_t(i) * N + j] = float(s);
        }
    return d;
}

// 2 AIV per launched block in MIX mode; each AIV computes a band of rows (SetTail for the last one).
int mix_ok(Data& d, int baseM, int baseN, int baseK) {
    SetKernelMode(KernelMode::MIX_MODE);
    TCubeTiling t = make_tiling(d.M, d.N, d.K, baseM, baseN, baseK, d.bias);
    const int cores = 4;
    t.usedCoreNum = cores;
    t.singleCoreM = (d.M + cores - 1) / cores;
    const int errors = sim::Launch(2, [&] {
        EXPECT(GetBlockNum() == 2 && GetTaskRation() == 2 && GetSubBlockIdx() == GetBlockIdx() % 2);
        const int idx = int(GetBlockIdx());
        const int m0 = idx * t.singleCoreM;
        if (m0 >= d.M) return;
        const int curM = d.M - m0 < t.singleCoreM ? d.M - m0 : t.singleCoreM;
        TPipe pipe;
        matmul::Matmul<AType, BType, CType, BiasType> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        GlobalTensor<half> aGm, bGm;
        GlobalTensor<float> biasGm, cGm;
        aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.a), uint64_t(d.M) * d.K);
        bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.b), uint64_t(d.K) * d.N);
        biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.bv), d.N);
        cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.c), uint64_t(d.M) * d.N);
        TQue<TPosition::VECIN, 1> cQue;
        pipe.InitBuffer(cQue, 2, t.baseM * t.baseN * sizeof(float));
        mm.SetTail(curM, d.N, d.K);
        mm.SetTensorA(aGm[d.ta ? m0 : m0 * d.K], d.ta);
        mm.SetTensorB(bGm, d.tb);
        if (d.bias) mm.SetBias(biasGm);
        const uint32_t mIter = (curM + t.baseM - 1) / t.baseM;
        uint32_t i = 0;
        while (mm.template Iterate<true>()) {
            const uint32_t mb = i % mIter, nb = i / mIter;  // iterateOrder 0: M moves fastest
            ++i;
            const uint32_t rows = uint32_t(curM) - mb * t.baseM < uint32_t(t.baseM) ? uint32_t(curM) - mb * t.baseM : t.baseM;
            const uint32_t cols = uint32_t(d.N) - nb * t.baseN < uint32_t(t.baseN) ? uint32_t(d.N) - nb * t.baseN : t.baseN;
            LocalTensor<float> c = cQue.AllocTensor<float>();
            mm.template GetTensorC<true>(c, false, true);
            cQue.EnQue(c);
            c = cQue.DeQue<float>();
            const uint32_t gap = (t.baseN * 4 - (cols * 4 + 31) / 32 * 32) / 32;
            DataCopyPad(cGm[uint64_t(m0 + mb * t.baseM) * d.N + nb * t.baseN], c,
                        DataCopyExtParams{uint16_t(rows), cols * 4, gap, uint32_t((d.N - cols) * 4), 0});
            cQue.FreeTensor(c);
        }
        mm.End();
    });
    const float* c = reinterpret_cast<const float*>(d.c);
    for (size_t k = 0; k < d.ref.size(); ++k) {
        const float e = d.ref[k] - c[k];
        if (e > 1e-3f || e < -1e-3f) {
            std::printf("mismatch at %zu: %g vs %g\n", k, double(c[k]), double(d.ref[k]));
            ++g_fail;
            break;
        }
    }
    print_hash("c", d.c, d.ref.size() * 4);
    return errors;
}

// `clear`: the tiling enables the bias (isBias = 1) and the kernel clears it after SetBias (ClearBias) or
// without any (DisableBias): the computation adds no bias (CANN ClearBias / DisableBias), and d.ref has none.
int iterate_all_ok(Data& d, const std::string& clear = "") {
    SetKernelMode(KernelMode::MIX_MODE);
    TCubeTiling t = make_tiling(d.M, d.N, d.K, 32, 32, 32, d.bias || !clear.empty());
    const int errors = sim::Launch(1, [&] {
        if (GetBlockIdx() != 0) return;
        TPipe pipe;
        matmul::Matmul<AType, BType, CGmType, BiasType> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        GlobalTensor<half> aGm, bGm;
        GlobalTensor<float> biasGm, cGm;
        aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.a), uint64_t(d.M) * d.K);
        bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.b), uint64_t(d.K) * d.N);
        biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.bv), d.N);
        cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.c2), uint64_t(d.M) * d.N);
        mm.SetTensorA(aGm, d.ta);
        mm.SetTensorB(bGm, d.tb);
        if (d.bias || clear == "clear") mm.SetBias(biasGm);
        if (clear == "clear") mm.ClearBias();
        if (clear == "disable") mm.DisableBias();
        mm.IterateAll(cGm);
        mm.End();
    });
    const float* c = reinterpret_cast<const float*>(d.c2);
    for (size_t k = 0; k < d.ref.size(); ++k) {
        const float e = d.ref[k] - c[k];
        if (e > 1e-3f || e < -1e-3f) {
            ++g_fail;
            break;
        }
    }
    print_hash("c2", d.c2, d.ref.size() * 4);
    return errors;
}

// IterateAll<false>(C in GM, waitIterateAll = true) + WaitIterateAll (CANN "异步场景", atlas_ascendc_10_10015): the AIV
// copies C's first rows back into UB and out again after the wait. `mode`: "ok"; "read_early" copies before the wait;
// "no_wait" never waits; "wait_twice" waits once more than it issued; "cube_only" launches without the AIV (AIC_MODE).
int async_iterate_all(Data& d, const std::string& mode) {
    SetKernelMode(mode == "cube_only" ? KernelMode::AIC_MODE : KernelMode::MIX_MODE);
    TCubeTiling t = make_tiling(d.M, d.N, d.K, 32, 32, 32, d.bias);
    uint8_t* back = sim::GmAlloc(size_t(d.N) * 4);
    const int errors = sim::Launch(1, [&] {
        if (GetBlockIdx() != 0) return;
        TPipe pipe;
        matmul::Matmul<AType, BType, CGmType, BiasType> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        GlobalTensor<half> aGm, bGm;
        GlobalTensor<float> biasGm, cGm, backGm;
        aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.a), uint64_t(d.M) * d.K);
        bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.b), uint64_t(d.K) * d.N);
        biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.bv), d.N);
        cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.c2), uint64_t(d.M) * d.N);
        backGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(back), d.N);
        TBuf<TPosition::VECCALC> rowBuf;
        pipe.InitBuffer(rowBuf, (d.N * 4 + 31) / 32 * 32);
        LocalTensor<float> row = rowBuf.Get<float>();
        mm.SetTensorA(aGm, d.ta);
        mm.SetTensorB(bGm, d.tb);
        if (d.bias) mm.SetBias(biasGm);
        mm.template IterateAll<false>(cGm, 0, false, true);  // BUG: asynchronous outside a MIX kernel
        const DataCopyExtParams one{1, uint32_t(d.N * 4), 0, 0, 0};
        if (mode == "read_early") {
            DataCopyPad(row, cGm[d.N], one, DataCopyPadExtParams<float>{false, 0, 0, 0});  // BUG: read before WaitIterateAll
        }
        if (mode != "no_wait") mm.WaitIterateAll();
        if (mode == "wait_twice") mm.WaitIterateAll();  // BUG: a second wait
        DataCopyPad(row, cGm[d.N], one, DataCopyPadExtParams<float>{false, 0, 0, 0});
        SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        DataCopyPad(backGm, row, one);
        mm.End();  // BUG: End without WaitIterateAll
    });
    const float* c = reinterpret_cast<const float*>(d.c2);
    const float* b = reinterpret_cast<const float*>(back);
    for (size_t k = 0; k < d.ref.size(); ++k) {
        const float e = d.ref[k] - c[k], e2 = k >= size_t(d.N) && k < size_t(2 * d.N) ? d.ref[k] - b[k - d.N] : 0.0f;
        if (e > 1e-3f || e < -1e-3f || e2 > 1e-3f || e2 < -1e-3f) {
            ++g_fail;
            break;
        }
    }
    sim::GmFree(back);
    return errors;
}

// GetTensorC to GM with enSequentialWrite (the epilogue bands' slot, lowering/passes/epilogue_bands.py): each block
// lands at the start of a baseM x baseN slot, row i at i x baseN (CANN: "[baseM, baseN]" rather than its place in
// [singleCoreM, singleCoreN]); the AIV copies the slot's rows x cols to C. `slotElems`: the slot's bound (a planted
// bug passes one row less than a block needs).
int sequential_gm(Data& d, int baseM, int baseN, int baseK, uint64_t slotElems) {
    SetKernelMode(KernelMode::MIX_MODE);
    TCubeTiling t = make_tiling(d.M, d.N, d.K, baseM, baseN, baseK, d.bias);
    uint8_t* slotMem = sim::GmAlloc(size_t(baseM) * baseN * 4);
    const int errors = sim::Launch(1, [&] {
        if (GetBlockIdx() != 0) return;
        TPipe pipe;
        matmul::Matmul<AType, BType, CGmType, BiasType> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        GlobalTensor<half> aGm, bGm;
        GlobalTensor<float> biasGm, cGm, slot;
        aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.a), uint64_t(d.M) * d.K);
        bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.b), uint64_t(d.K) * d.N);
        biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.bv), d.N);
        cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.c), uint64_t(d.M) * d.N);
        slot.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(slotMem), slotElems);
        TQue<TPosition::VECIN, 1> cQue;
        pipe.InitBuffer(cQue, 1, t.baseM * t.baseN * sizeof(float));
        mm.SetTensorA(aGm, d.ta);
        mm.SetTensorB(bGm, d.tb);
        if (d.bias) mm.SetBias(biasGm);
        const uint32_t mIter = (d.M + t.baseM - 1) / t.baseM;
        uint32_t i = 0;
        while (mm.template Iterate<true>()) {
            const uint32_t mb = i % mIter, nb = i / mIter;
            ++i;
            const uint32_t rows = uint32_t(d.M) - mb * t.baseM < uint32_t(t.baseM) ? uint32_t(d.M) - mb * t.baseM : t.baseM;
            const uint32_t cols = uint32_t(d.N) - nb * t.baseN < uint32_t(t.baseN) ? uint32_t(d.N) - nb * t.baseN : t.baseN;
            mm.template GetTensorC<true>(slot, false, true);  // CHECK: slot
            LocalTensor<float> c = cQue.AllocTensor<float>();
            const uint32_t gap = (t.baseN * 4 - (cols * 4 + 31) / 32 * 32) / 32;
            DataCopyPad(c, slot, DataCopyExtParams{uint16_t(rows), cols * 4, uint32_t((t.baseN - cols) * 4), gap, 0},
                        DataCopyPadExtParams<float>{false, 0, 0, 0});
            SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);  // straight out again: no vector work in between
            WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            DataCopyPad(cGm[uint64_t(mb * t.baseM) * d.N + nb * t.baseN], c,
                        DataCopyExtParams{uint16_t(rows), cols * 4, gap, uint32_t((d.N - cols) * 4), 0});
            cQue.FreeTensor(c);
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);  // the next block's copy-in reuses the queue's buffer
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
        mm.End();
    });
    sim::GmFree(slotMem);
    const float* c = reinterpret_cast<const float*>(d.c);
    for (size_t k = 0; k < d.ref.size(); ++k) {
        const float e = d.ref[k] - c[k];
        if (e > 1e-3f || e < -1e-3f) {
            std::printf("mismatch at %zu: %g vs %g\n", k, double(c[k]), double(d.ref[k]));
            ++g_fail;
            break;
        }
    }
    return errors;
}

// Three blocks add float products into one 16 x 16 output with IterateAll(enAtomic = 1): block b's A has
// v_b in column 0 and B row 0 is ones, so block b adds v_b = 1, 1e8, -1e8 to every element. In block order
// (one thread) the sum is (1 + 1e8) - 1e8 = 0 in float (1 is lost); in another order it is 1. Block 0 sleeps
// before its add, so with parallel threads the others would add first unless atomic adds wait for their turn
// in block order (atomic_turn). `zero`: the host zeroes the output first (without it: ATOMIC-UNINIT).
int atomic_order(bool zero) {
    const int n = 16, blocks = 3;
    const float v[blocks] = {1.0f, 1e8f, -1e8f};
    uint8_t* a = sim::GmAlloc(size_t(blocks) * n * n * 4);
    uint8_t* b = sim::GmAlloc(size_t(n) * n * 4);
    uint8_t* c = sim::GmAlloc(size_t(n) * n * 4);
    float* af = reinterpret_cast<float*>(a);
    float* bf = reinterpret_cast<float*>(b);
    for (int k = 0; k < blocks * n * n; ++k) af[k] = (k % n == 0) ? v[k / (n * n)] : 0.0f;
    for (int k = 0; k < n * n; ++k) bf[k] = k < n ? 1.0f : 0.0f;
    if (zero) std::memset(c, 0, size_t(n) * n * 4);
    using FType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    TCubeTiling t = make_tiling(n, n, n, 16, 16, 16, false);
    const int errors = sim::Launch(blocks, [&] {
        const int idx = int(GetBlockIdx());
        TPipe pipe;
        matmul::Matmul<FType, FType, FType, FType> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        GlobalTensor<float> aGm, bGm, cGm;
        aGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(a) + idx * n * n, uint64_t(n) * n);
        bGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(b), uint64_t(n) * n);
        cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), uint64_t(n) * n);
        mm.SetTensorA(aGm);
        mm.SetTensorB(bGm);
        if (idx == 0) usleep(200000);  // block 0 comes late to its add
        mm.IterateAll(cGm, 1);  // BUG: accumulates into an output the kernel never zeroed (atomic_unzeroed)
        mm.End();
    });
    const float* cf = reinterpret_cast<const float*>(c);
    if (zero) {
        for (int k = 0; k < n * n; ++k) EXPECT(cf[k] == 0.0f);
    }
    print_hash("c", c, size_t(n) * n * 4);
    sim::GmFree(a);
    sim::GmFree(b);
    sim::GmFree(c);
    return errors;
}

// One AIV, 64 x 64 x 64 halves; `bug` selects the planted mistake.
int planted(const std::string& bug) {
    SetKernelMode(KernelMode::MIX_MODE);
    Data d = make(64, 64, 64, false, false, bug != "bias_not_set" ? false : true);
    TCubeTiling t = make_tiling(64, 64, 64, 32, 32, 32, d.bias);
    if (bug == "bad_fractal") t.baseM = 40;  // BUG: base sizes must be multiples of 16
    if (bug == "l0a_overflow") t.baseM = t.baseK = 256;
    if (bug == "l0c_overflow") t.baseM = t.baseN = 256;
    if (bug == "l1_overflow") t.depthA1 = t.depthB1 = 40, t.baseM = t.baseN = 128, t.baseK = 64;
    return sim::Launch(1, [&] {
        if (GetBlockIdx() != 0) return;
        TPipe pipe;
        matmul::Matmul<AType, BType, CType, BiasType> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);  // CHECK: tiling
        GlobalTensor<half> aGm, bGm;
        GlobalTensor<float> biasGm;
        aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.a), 64 * 64);
        bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(d.b), 64 * 64);
        biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(d.bv), 64);
        TQue<TPosition::VECIN, 1> cQue;
        pipe.InitBuffer(cQue, 1, 32 * 32 * sizeof(float));
        LocalTensor<float> c = cQue.AllocTensor<float>();
        if (bug != "missing_a") mm.SetTensorA(aGm);
        mm.SetTensorB(bGm);
        if (bug == "get_without_iterate") {
            mm.template GetTensorC<true>(c, false, true);  // BUG: no Iterate before GetTensorC
        }
        if (bug == "iterate_after_end") {
            mm.End();
            mm.template Iterate<true>();  // BUG: Iterate after End
        }
        while (mm.template Iterate<true>()) {  // BUG: missing SetTensorA / SetBias
            mm.template GetTensorC<true>(c, false, true);
        }
        cQue.FreeTensor(c);
        mm.End();
    });
}

}  // namespace

int main(int argc, char** argv) {
    const std::string v = argc > 1 ? argv[1] : "";
    int errors = -1;
    if (v == "mix_ok") {
        Data d = make(75, 50, 40, false, false, true);  // M, N, K not multiples of the base blocks
        errors = mix_ok(d, 32, 32, 16);
        Data d2 = make(33, 47, 70, true, true, false);  // both operands transposed
        errors += mix_ok(d2, 16, 32, 32);
    } else if (v == "sequential_gm_ok") {
        Data d = make(75, 50, 40, false, false, true);  // tail blocks: 11 rows, 18 columns
        errors = sequential_gm(d, 32, 32, 16, 32 * 32);
    } else if (v == "sequential_gm_small_slot") {
        Data d = make(75, 50, 40, false, false, true);
        errors = sequential_gm(d, 32, 32, 16, 31 * 32);  // BUG: the slot holds one row less than a block
    } else if (v == "iterate_all_ok") {
        Data d = make(50, 70, 33, false, true, true);
        errors = iterate_all_ok(d);
    } else if (v.rfind("async_", 0) == 0) {
        Data d = make(50, 70, 33, false, true, true);
        errors = async_iterate_all(d, v.substr(6));
    } else if (v == "cleared_bias_ok" || v == "disabled_bias_ok") {
        Data d = make(50, 70, 33, false, true, false);  // the reference without bias
        errors = iterate_all_ok(d, v == "cleared_bias_ok" ? "clear" : "disable");
    } else if (v == "atomic_order_ok" || v == "atomic_unzeroed") {
        errors = atomic_order(v == "atomic_order_ok");
    } else {
        errors = planted(v);
    }
    return errors == 0 && g_fail == 0 ? 0 : 1;
}
