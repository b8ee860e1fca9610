// half-precision numerics check: a TBuf-based kernel (manual SetFlag/WaitFlag sync) computes
// several ops on f16 inputs; the test compares the result with torch.
//   usage: half_ops <in.bin> <out.bin> <n>
//   in.bin : a f16[n], b f16[n], c f32[n]
//   out.bin: add, sub, mul, div, exp, sqrt(|a|), muls(a, 0.3), cast(c -> f16), reciprocal(b),
//            cast(a -> f32)   (f16[n] each, the last f32[n])
#include "kernel_operator.h"

#include <cstdio>
#include <cstdlib>

using namespace AscendC;

constexpr int kOps16 = 9;

extern "C" __global__ __aicore__ void half_ops(GM_ADDR in, GM_ADDR out, uint32_t n) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    const uint32_t len = n / GetBlockNum();
    const uint32_t off = len * GetBlockIdx();
    GlobalTensor<half> aGm, bGm, outGm;
    GlobalTensor<float> cGm, out32Gm;
    aGm.SetGlobalBuffer((__gm__ half*)in + off, len);
    bGm.SetGlobalBuffer((__gm__ half*)in + n + off, len);
    cGm.SetGlobalBuffer((__gm__ float*)((__gm__ half*)in + 2 * n) + off, len);
    outGm.SetGlobalBuffer((__gm__ half*)out, uint64_t(kOps16) * n);
    out32Gm.SetGlobalBuffer((__gm__ float*)((__gm__ half*)out + uint64_t(kOps16) * n) + off, len);

    TPipe pipe;
    TBuf<TPosition::VECCALC> aBuf, bBuf, cBuf, rBuf, r32Buf;
    pipe.InitBuffer(aBuf, len * sizeof(half));
    pipe.InitBuffer(bBuf, len * sizeof(half));
    pipe.InitBuffer(cBuf, len * sizeof(float));
    pipe.InitBuffer(rBuf, kOps16 * len * sizeof(half));
    pipe.InitBuffer(r32Buf, len * sizeof(float));
    LocalTensor<half> a = aBuf.Get<half>(), b = bBuf.Get<half>(), r = rBuf.Get<half>();
    LocalTensor<float> c = cBuf.Get<float>(), r32 = r32Buf.Get<float>();

    DataCopy(a, aGm, len);
    DataCopy(b, bGm, len);
    DataCopy(c, cGm, len);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);

    Add(r[0 * len], a, b, len);
    Sub(r[1 * len], a, b, len);
    Mul(r[2 * len], a, b, len);
    Div(r[3 * len], a, b, len);
    Exp(r[4 * len], a, len);
    Abs(r[5 * len], a, len);
    PipeBarrier<PIPE_V>();
    Sqrt(r[5 * len], r[5 * len], len);
    Muls(r[6 * len], a, (half)0.3f, len);
    Cast(r[7 * len], c, RoundMode::CAST_NONE, len);
    Reciprocal(r[8 * len], b, len);
    Cast(r32, a, RoundMode::CAST_NONE, len);

    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    for (int k = 0; k < kOps16; ++k) DataCopy(outGm[uint64_t(k) * n + off], r[k * len], len);
    DataCopy(out32Gm, r32, len);
}

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: half_ops <in.bin> <out.bin> <n>\n");
        return 2;
    }
    const uint32_t n = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
    const size_t inBytes = size_t(n) * (2 + 2 + 4), outBytes = size_t(n) * (2 * kOps16 + 4);
    uint8_t* in = sim::GmAlloc(inBytes);
    uint8_t* out = sim::GmAlloc(outBytes);
    FILE* f = std::fopen(argv[1], "rb");
    if (!f || std::fread(in, 1, inBytes, f) != inBytes) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    std::fclose(f);
    const int errors = sim::Launch(2, [&] { half_ops(in, out, n); });
    f = std::fopen(argv[2], "wb");
    if (!f || std::fwrite(out, 1, outBytes, f) != outBytes) {
        std::fprintf(stderr, "cannot write %s\n", argv[2]);
        return 2;
    }
    std::fclose(f);
    sim::GmFree(in);
    sim::GmFree(out);
    return errors ? 1 : 0;
}
