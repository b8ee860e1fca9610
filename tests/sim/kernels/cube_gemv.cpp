// Mmad with m = 1 (ascend_sim/cube.h) is GEMV mode: L0A holds a plain vector of k elements, not Zz fractals
// (Mmad.md; atlas_ascendc_10_10019).   usage: cube_gemv <variant>
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

// A = [1, 2, ..., 32] as a vector in L0A, B = ones [32 x 16]: every C[0][j] is 1 + ... + 32 = 528 in GEMV mode
// (a Zz reading would take A[0][16:32] from the second fractal and give another sum).
int gemv() {
    half* a = reinterpret_cast<half*>(sim::GmAlloc(32 * sizeof(half)));
    float* c = reinterpret_cast<float*>(sim::GmAlloc(16 * sizeof(float)));
    for (uint32_t i = 0; i < 32; ++i) a[i] = half(float(i + 1));
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(a1, 2 * 256 * sizeof(half));
        pipe.InitBuffer(b1, 2 * 256 * sizeof(half));
        pipe.InitBuffer(a2, 2 * 256 * sizeof(half));
        pipe.InitBuffer(b2, 2 * 256 * sizeof(half));
        pipe.InitBuffer(co1, 256 * sizeof(float));
        GlobalTensor<half> ag;
        GlobalTensor<float> cg;
        ag.SetGlobalBuffer(a, 32);
        cg.SetGlobalBuffer(c, 16);
        LocalTensor<half> aL1 = a1.Get<half>(), bL1 = b1.Get<half>(), aL0 = a2.Get<half>(), bL0 = b2.Get<half>();
        LocalTensor<float> cL0 = co1.Get<float>();
        InitConstValue(aL1, InitConstValueParams<half>(1, 32, 0, half(0.0f)));
        PipeBarrier<PIPE_MTE2>();
        DataCopy(aL1, ag, Nd2NzParams(1, 1, 32, 0, 32, 1, 1, 0));  // one row of 32: contiguous in L1
        InitConstValue(bL1, InitConstValueParams<half>(1, 32, 0, half(1.0f)));
        SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        LoadData(aL0, aL1, LoadData2DParams(0, 2, 1, 0, 0, false, 0));
        LoadData(bL0, bL1, LoadData2DParams(0, 2, 1, 0, 0, false, 0));
        SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
        WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
        Mmad(cL0, aL0, bL0, MmadParams(1, 16, 32, 0, false, true));
        SetFlag<HardEvent::M_FIX>(EVENT_ID0);
        WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
        Fixpipe(cg, cL0, FixpipeParamsV220(16, 1, 16, 16, false));
    });
    int bad = 0;
    for (uint32_t j = 0; j < 16; ++j) {
        if (c[j] != 528.0f) {
            std::printf("C[0][%u] = %g, want 528 (GEMV reads A as a vector)\n", j, c[j]);
            ++bad;
        }
    }
    sim::GmFree(a);
    sim::GmFree(c);
    return rc != 0 || bad != 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "gemv") == 0) return gemv();
    std::fprintf(stderr, "usage: cube_gemv gemv\n");
    return 2;
}
