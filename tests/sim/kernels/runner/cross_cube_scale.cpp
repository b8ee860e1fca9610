// A hand-written AIC-driven MIX kernel for `ascend-sim run` ("kernel_type": "mix"), CATLASS style: the AIC computes
// S = A @ B (32 x 32 x 32, f16 -> fp32) with the low-level cube API into a GM workspace slot and sets flag 1 (mode 2);
// each AIV waits, scales its 16 rows by 2 and writes them to C. One AI Core per launched block, 32 rows each.
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void cross_cube_scale(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR workspace)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    constexpr uint32_t M = 32, K = 32, N = 32, ROWS = 16;
    SetSyncBaseAddr(0);
    TPipe pipe;
    if ASCEND_IS_AIC {
        const uint32_t core = uint32_t(GetBlockIdx());
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(a1, M * K * sizeof(half));
        pipe.InitBuffer(b1, K * N * sizeof(half));
        pipe.InitBuffer(a2, M * K * sizeof(half));
        pipe.InitBuffer(b2, K * N * sizeof(half));
        pipe.InitBuffer(co1, M * N * sizeof(float));
        GlobalTensor<half> aGm, bGm;
        GlobalTensor<float> sGm;
        aGm.SetGlobalBuffer((__gm__ half*)a + core * M * K, M * K);
        bGm.SetGlobalBuffer((__gm__ half*)b, K * N);
        sGm.SetGlobalBuffer((__gm__ float*)workspace + core * M * N, M * N);
        LocalTensor<half> aL1 = a1.Get<half>(), bL1 = b1.Get<half>(), aL0 = a2.Get<half>(), bL0 = b2.Get<half>();
        LocalTensor<float> cL0 = co1.Get<float>();
        DataCopy(aL1, aGm, Nd2NzParams(1, M, K, 0, K, M, 1, 0));
        DataCopy(bL1, bGm, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
        SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        for (uint32_t m1 = 0; m1 < M / 16; ++m1)
            LoadData(aL0[m1 * (K / 16) * 256], aL1, LoadData2DParams(m1, K / 16, M / 16, 0, 0, false, 0));
        for (uint32_t k1 = 0; k1 < K / 16; ++k1)
            LoadData(bL0[k1 * (N / 16) * 256], bL1, LoadData2DParams(k1, N / 16, K / 16, 0, 0, true, 0));
        SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
        WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
        Mmad(cL0, aL0, bL0, MmadParams(M, N, K, 0, false, true));
        SetFlag<HardEvent::M_FIX>(EVENT_ID0);
        WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
        Fixpipe(sGm, cL0, FixpipeParamsV220(N, M, M, N, false));
        CrossCoreSetFlag<2, PIPE_FIX>(1);
    }
    if ASCEND_IS_AIV {
        const uint32_t core = uint32_t(GetBlockIdx() / GetSubBlockNum());
        const uint32_t r0 = uint32_t(GetSubBlockIdx()) * ROWS;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, ROWS * N * sizeof(float));
        LocalTensor<float> t = buf.Get<float>();
        GlobalTensor<float> sGm, cGm;
        sGm.SetGlobalBuffer((__gm__ float*)workspace + core * M * N + r0 * N, ROWS * N);
        cGm.SetGlobalBuffer((__gm__ float*)c + core * M * N + r0 * N, ROWS * N);
        CrossCoreWaitFlag(1);
        DataCopy(t, sGm, ROWS * N);
        PipeBarrier<PIPE_ALL>();
        Muls(t, t, 2.0f, ROWS * N);
        PipeBarrier<PIPE_ALL>();
        DataCopy(cGm, t, ROWS * N);
    }
}
