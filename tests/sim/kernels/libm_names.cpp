// Kernels may be named like C library functions (extern "C" tanh / floor / sqrt / abs / div): the
// emulation header must neither declare those names nor call them behind the kernel's back.
#include "kernel_operator.h"

#include <cstdio>

using namespace AscendC;

namespace {
int g_floorCalls = 0;
}

extern "C" __global__ __aicore__ void tanh(GM_ADDR, GM_ADDR) {}
extern "C" __global__ __aicore__ void abs(GM_ADDR) {}
extern "C" __global__ __aicore__ void div(GM_ADDR) {}
extern "C" __global__ __aicore__ void sqrt(GM_ADDR) {}
extern "C" __global__ __aicore__ void floor(GM_ADDR) { ++g_floorCalls; }

// Uses the emulator paths that would otherwise reach libm sqrt / floor / round / nearbyint.
extern "C" __global__ __aicore__ void rounding(GM_ADDR out) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4 * 64 * sizeof(float));
    LocalTensor<float> x = buf.Get<float>(64), y = buf.GetWithOffset<float>(64, 256);
    LocalTensor<int32_t> i = buf.GetWithOffset<int32_t>(64, 512);
    Duplicate(x, -2.5f, 64);
    Rsqrt(y, x, 64);  // sqrt of a negative number: NaN, no errno path
    Sqrt(y[8], x, 8);
    Cast(i, x, RoundMode::CAST_FLOOR, 64);
    Cast(i[8], x, RoundMode::CAST_ROUND, 8);
    Cast(i[16], x, RoundMode::CAST_RINT, 8);
    Cast(i[24], x, RoundMode::CAST_CEIL, 8);
    GlobalTensor<int32_t> g;
    g.SetGlobalBuffer((__gm__ int32_t*)out, 8);
    g.SetValue(0, i.GetValue(0));
    g.SetValue(1, i.GetValue(8));
    g.SetValue(2, i.GetValue(16));
    g.SetValue(3, i.GetValue(24));
    g.SetValue(4, y.GetValue(0) != y.GetValue(0) ? 1 : 0);
    g.SetValue(5, y.GetValue(8) != y.GetValue(8) ? 1 : 0);
}

int main() {
    uint8_t* out = sim::GmAlloc(8 * sizeof(int32_t));
    const int errors = sim::Launch(1, [&] { rounding(out); });
    const int32_t* o = reinterpret_cast<const int32_t*>(out);
    std::printf("floor=%d round=%d rint=%d ceil=%d nan=%d,%d calls=%d\n", o[0], o[1], o[2], o[3], o[4], o[5], g_floorCalls);
    sim::GmFree(out);
    return errors ? 1 : 0;
}
