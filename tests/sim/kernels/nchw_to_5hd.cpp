// The vector conversion the NC1HWC0 conv route needs (docs/design.md, session 30), as a hand-written AIV kernel on
// the emulator: x [N][C][H][W] -> xw [N][C1][H][W][16] (channels zero-padded to C1 x 16) and the weight
// w [K][C][KH][KW] -> w' [K][C1][KH][KW][16], each through DataCopyPad (16 channel rows into UB, 32-B aligned),
// Duplicate (the missing channels), one TransDataTo5HD (16-bit) and a contiguous copy out. Odd sizes on purpose
// (C = 37: the last channel block holds 5; H x W = 63 and a chunk of 24 pixels: rows and repeats not multiples of
// 16). Checked element by element.   usage: nchw_to_5hd <variant>
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

int g_fail = 0;
#define EXPECT(c)                                                                   \
    do {                                                                            \
        if (!(c)) {                                                                 \
            std::printf("EXPECT failed: %s (nchw_to_5hd.cpp:%d)\n", #c, __LINE__);  \
            ++g_fail;                                                               \
        }                                                                           \
    } while (0)

constexpr uint32_t N = 2, C = 37, H = 7, W = 9, HW = H * W, C1 = (C + 15) / 16, K = 20, TAPS = 9;
constexpr uint32_t CHUNK = 24, CHUNK_PAD = 32;  // pixels per task; its UB row pitch (a multiple of 16)
constexpr uint32_t CHUNKS = (HW + CHUNK - 1) / CHUNK, BLOCKS = 4;

float xv(uint32_t n, uint32_t c, uint32_t p) { return float(int((n * 13 + c * 7 + p * 3) % 101) - 50); }
float wv(uint32_t k, uint32_t c, uint32_t t) { return float(int((k * 11 + c * 5 + t) % 29) - 14); }

// missRow: plant a bug, the padded channel rows are not zeroed (they keep an earlier task's channels)
int run(bool missRow) {
    half* x = reinterpret_cast<half*>(sim::GmAlloc(N * C * HW * sizeof(half)));
    half* w = reinterpret_cast<half*>(sim::GmAlloc(K * C * TAPS * sizeof(half)));
    half* xw = reinterpret_cast<half*>(sim::GmAlloc(N * C1 * HW * 16 * sizeof(half)));
    half* ww = reinterpret_cast<half*>(sim::GmAlloc(K * C1 * TAPS * 16 * sizeof(half)));
    for (uint32_t n = 0; n < N; ++n)
        for (uint32_t c = 0; c < C; ++c)
            for (uint32_t p = 0; p < HW; ++p) x[(n * C + c) * HW + p] = half(xv(n, c, p));
    for (uint32_t k = 0; k < K; ++k)
        for (uint32_t c = 0; c < C; ++c)
            for (uint32_t t = 0; t < TAPS; ++t) w[(k * C + c) * TAPS + t] = half(wv(k, c, t));
    const int rc = sim::Launch(BLOCKS, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> sb, db;
        pipe.InitBuffer(sb, 16 * CHUNK_PAD * sizeof(half));
        pipe.InitBuffer(db, CHUNK_PAD * 16 * sizeof(half));
        LocalTensor<half> src = sb.Get<half>(), dst = db.Get<half>();
        GlobalTensor<half> xg, wg, xwg, wwg;
        xg.SetGlobalBuffer(x, N * C * HW);
        wg.SetGlobalBuffer(w, K * C * TAPS);
        xwg.SetGlobalBuffer(xw, N * C1 * HW * 16);
        wwg.SetGlobalBuffer(ww, K * C1 * TAPS * 16);
        LocalTensor<half> d[16], s[16];
        // x: tasks (image, channel block, pixel chunk), round-robin over the blocks
        for (uint32_t task = GetBlockIdx(); task < N * C1 * CHUNKS; task += GetBlockNum()) {
            const uint32_t n = task / (C1 * CHUNKS), c1 = task / CHUNKS % C1, p0 = task % CHUNKS * CHUNK;
            const uint32_t cc = C - c1 * 16 < 16 ? C - c1 * 16 : 16, len = HW - p0 < CHUNK ? HW - p0 : CHUNK;
            const uint32_t lenPad = (len + 15) / 16 * 16;
            DataCopyPad(src, xg[(n * C + c1 * 16) * HW + p0],
                        DataCopyExtParams(cc, len * sizeof(half), (HW - len) * sizeof(half), (CHUNK_PAD - lenPad) * sizeof(half) / 32, 0),
                        DataCopyPadExtParams<half>(false, 0, 0, half(0.0f)));
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            for (uint32_t c = cc; c < 16 && !missRow; ++c) Duplicate(src[c * CHUNK_PAD], half(0.0f), CHUNK_PAD);
            for (uint32_t i = 0; i < 16; ++i) {
                s[i] = src[i * CHUNK_PAD];
                d[i] = dst[i * 16];
            }
            // one repeat still adds the rep strides (the documented quirk): pass 0 then
            const bool one = lenPad == 16;
            TransDataTo5HD(d, s, TransDataTo5HDParams(false, false, static_cast<uint8_t>(lenPad / 16), one ? 0 : 16, one ? 0 : 1));
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(xwg[((n * C1 + c1) * HW + p0) * 16], dst, len * 16);
            PipeBarrier<PIPE_ALL>();  // the next task's copy-in and transpose reuse both buffers
        }
        // w: tasks (output channel, channel block): 16 rows of TAPS taps, each padded to 16 by the copy
        for (uint32_t task = GetBlockIdx(); task < K * C1; task += GetBlockNum()) {
            const uint32_t k = task / C1, c1 = task % C1, cc = C - c1 * 16 < 16 ? C - c1 * 16 : 16;
            DataCopyPad(src, wg[(k * C + c1 * 16) * TAPS], DataCopyExtParams(cc, TAPS * sizeof(half), 0, 0, 0),
                        DataCopyPadExtParams<half>(false, 0, 0, half(0.0f)));
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            for (uint32_t c = cc; c < 16; ++c) Duplicate(src[c * 16], half(0.0f), 16);
            for (uint32_t i = 0; i < 16; ++i) {
                s[i] = src[i * 16];
                d[i] = dst[i * 16];
            }
            TransDataTo5HD(d, s, TransDataTo5HDParams(false, false, 1, 0, 0));
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(wwg[(k * C1 + c1) * TAPS * 16], dst, TAPS * 16);
            PipeBarrier<PIPE_ALL>();
        }
    });
    {
        for (uint32_t n = 0; n < N; ++n)
            for (uint32_t c = 0; c < C1 * 16; ++c)
                for (uint32_t p = 0; p < HW; ++p)
                    EXPECT(float(xw[((n * C1 + c / 16) * HW + p) * 16 + c % 16]) == (c < C ? xv(n, c, p) : 0.0f));
        for (uint32_t k = 0; k < K; ++k)
            for (uint32_t c = 0; c < C1 * 16; ++c)
                for (uint32_t t = 0; t < TAPS; ++t)
                    EXPECT(float(ww[((k * C1 + c / 16) * TAPS + t) * 16 + c % 16]) == (c < C ? wv(k, c, t) : 0.0f));
    }
    sim::GmFree(x);
    sim::GmFree(w);
    sim::GmFree(xw);
    sim::GmFree(ww);
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "convert") == 0) return (run(false) != 0 || g_fail) ? 1 : 0;
    if (argc > 1 && std::strcmp(argv[1], "missing_zero_rows") == 0) return (run(true) != 0 || g_fail) ? 1 : 0;
    std::fprintf(stderr, "usage: nchw_to_5hd convert|missing_zero_rows\n");
    return 2;
}
