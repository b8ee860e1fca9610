// InitConstValue into L1 (ascend_sim/cube.h): the fill, its ordering with the Nd2Nz copies that follow on
// MTE2, and one planted bug per check.   usage: cube_fill <variant>
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

int g_fail = 0;
#define EXPECT(c)                                                                 \
    do {                                                                          \
        if (!(c)) {                                                               \
            std::printf("EXPECT failed: %s (cube_fill.cpp:%d)\n", #c, __LINE__);  \
            ++g_fail;                                                             \
        }                                                                         \
    } while (0)

// Fill 2 fractals of B1 with zeros (2 repeats of 16 blocks, a gap of 16 blocks: fractals 0 and 2 of 3),
// then copy 16 values into row 1 of fractal 0: the rest of fractal 0 and all of fractal 2 stay zero,
// fractal 1 keeps what it held.
int fill(bool barrier) {
    half* x = reinterpret_cast<half*>(sim::GmAlloc(16 * sizeof(half)));
    for (uint32_t i = 0; i < 16; ++i) x[i] = half(float(i + 1));
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::B1> b1;
        pipe.InitBuffer(b1, 3 * 256 * sizeof(half));
        GlobalTensor<half> xg;
        xg.SetGlobalBuffer(x, 16);
        LocalTensor<half> l1 = b1.Get<half>();
        DataCopy(l1[256], xg, Nd2NzParams(1, 16, 16, 0, 0, 16, 1, 0));  // fractal 1: 16 rows of the same values
        PipeBarrier<PIPE_MTE2>();
        InitConstValue(l1, InitConstValueParams<half>(2, 16, 16, half(0.0f)));
        if (barrier) PipeBarrier<PIPE_MTE2>();
        DataCopy(l1[16], xg, Nd2NzParams(1, 1, 16, 0, 16, 16, 1, 0));  // RACE: overwrites the fill
        SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
        for (uint32_t i = 0; i < 256; ++i) {
            EXPECT(float(l1.GetValue(i)) == (i >= 16 && i < 32 ? float(i - 15) : 0.0f));
            EXPECT(float(l1.GetValue(256 + i)) == float(i % 16 + 1));
            EXPECT(float(l1.GetValue(512 + i)) == 0.0f);
        }
    });
    sim::GmFree(x);
    return rc;
}

// One planted bug per check.
int bad(int which) {
    return sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::B2> b2;
        pipe.InitBuffer(b1, 512 * sizeof(half));
        pipe.InitBuffer(b2, 256 * sizeof(half));
        LocalTensor<half> l1 = b1.Get<half>();
        if (which == 0) InitConstValue(l1[1], InitConstValueParams<half>(1, 1, 0, half(0.0f)));  // BUG: misaligned
        if (which == 1) InitConstValue(l1, InitConstValueParams<half>(40000, 1, 0, half(0.0f)));  // BUG: repeatTimes
        if (which == 2) InitConstValue(l1, InitConstValueParams<half>(1, 32767, 0, half(0.0f)));  // BUG: past L1
        if (which == 3) InitConstValue(b2.Get<half>(), InitConstValueParams<half>(1, 1, 0, half(0.0f)));  // BUG: L0B
    });
}

struct Variant {
    const char* name;
    int (*fn)();
};

const Variant kVariants[] = {
    {"fill_ok", [] { return fill(true); }},
    {"fill_race", [] { return fill(false); }},
    {"misaligned", [] { return bad(0); }},
    {"repeat_range", [] { return bad(1); }},
    {"past_l1", [] { return bad(2); }},
    {"l0b", [] { return bad(3); }},
};

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        for (const Variant& v : kVariants) {
            if (std::strcmp(v.name, argv[1]) == 0) {
                const int rc = v.fn();
                return (rc != 0 || g_fail) ? 1 : 0;
            }
        }
    }
    std::fprintf(stderr, "usage: cube_fill <variant>\n");
    return 2;
}
