// The NC1HWC0 route for a forward convolution with the weight as the left operand (channels on M, pixels on N,
// so Fixpipe writes NCHW rows), on the emulator's existing cube APIs: the feature map sits in L1 as
// [C1][H + 2 pad][pitch][C0] (zero border, pitch = W + 2 pad rounded up to 16 pixels); the 16 consecutive pixels of
// one tap (c1, ky, kx) are 512 contiguous bytes, i.e. exactly one Zn fractal of B[k = (c1, ky, kx, c0)][n = pixel]
// (inner offset (n % 16) x 16 + k % 16, ascendc_next.md §1.2), so a LoadData 2-D WITHOUT transpose moves it to L0B
// from a 32-B-aligned start: every tap is an address offset, padding is the zero border. (Load3Dv2 into L0B is no
// help here: its L0B form is B[k = pixel][n = (c, tap)], the weight-gradient operand.) The weight is
// W'[co][c1][ky][kx][c0] in GM (the layout a conversion pass would write), copied ND -> NZ and loaded Zz.
// One output row is one 16-pixel fractal column here (W = 13 <= 16); output columns past W are computed from the
// border / next row and never stored. Checked element by element against a direct convolution (small integers:
// every sum is exact).   usage: conv_nc1hwc0 <variant>
#include "kernel_operator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace AscendC;

namespace {

int g_fail = 0;
#define EXPECT(c)                                                                    \
    do {                                                                             \
        if (!(c)) {                                                                  \
            std::printf("EXPECT failed: %s (conv_nc1hwc0.cpp:%d)\n", #c, __LINE__);  \
            ++g_fail;                                                                \
        }                                                                            \
    } while (0)

constexpr uint32_t C = 32, C1 = 2, H = 5, W = 13, K = 20, KH = 3, KW = 3, PAD = 1;
constexpr uint32_t OH = H, OW = W, PITCH = 16, HP = H + 2 * PAD;  // pitch: W + 2 x pad rounded up to 16 pixels
constexpr uint32_t KBLK = C1 * KH * KW, DEPTH = KBLK * 16, MPAD = 32;

float xv(uint32_t c, uint32_t h, uint32_t w) { return float(int((c * 7 + h * 3 + w * 5) % 7) - 3); }
float wv(uint32_t k, uint32_t c, uint32_t y, uint32_t x) { return float(int((k * 5 + c * 3 + y * 7 + x) % 5) - 2); }

float conv_ref(uint32_t k, uint32_t oh, uint32_t ow) {
    float s = 0.0f;
    for (uint32_t c = 0; c < C; ++c)
        for (uint32_t y = 0; y < KH; ++y)
            for (uint32_t x = 0; x < KW; ++x) {
                const int ih = int(oh + y) - int(PAD), iw = int(ow + x) - int(PAD);
                if (ih >= 0 && ih < int(H) && iw >= 0 && iw < int(W)) s += xv(c, uint32_t(ih), uint32_t(iw)) * wv(k, c, y, x);
            }
    return s;
}

// plantTap: load one tap's fractal one pixel to the left (the bug a wrong offset would be)
int run(bool plantTap) {
    half* x = reinterpret_cast<half*>(sim::GmAlloc(C1 * H * W * 16 * sizeof(half)));    // NC1HWC0
    half* w = reinterpret_cast<half*>(sim::GmAlloc(K * DEPTH * sizeof(half)));           // [K][C1][KH][KW][C0]
    float* y = reinterpret_cast<float*>(sim::GmAlloc(K * OH * OW * sizeof(float)));      // NCHW
    for (uint32_t c = 0; c < C; ++c)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t q = 0; q < W; ++q) x[((c / 16 * H + h) * W + q) * 16 + c % 16] = half(xv(c, h, q));
    for (uint32_t k = 0; k < K; ++k)
        for (uint32_t c = 0; c < C; ++c)
            for (uint32_t a = 0; a < KH; ++a)
                for (uint32_t b = 0; b < KW; ++b) w[k * DEPTH + ((c / 16 * KH + a) * KW + b) * 16 + c % 16] = half(wv(k, c, a, b));
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(a1, MPAD * DEPTH * sizeof(half));
        pipe.InitBuffer(b1, C1 * HP * PITCH * 16 * sizeof(half));
        pipe.InitBuffer(a2, MPAD * DEPTH * sizeof(half));
        pipe.InitBuffer(b2, DEPTH * OH * 16 * sizeof(half));
        pipe.InitBuffer(co1, MPAD * OH * 16 * sizeof(float));
        GlobalTensor<half> xg, wg;
        GlobalTensor<float> yg;
        xg.SetGlobalBuffer(x, C1 * H * W * 16);
        wg.SetGlobalBuffer(w, K * DEPTH);
        yg.SetGlobalBuffer(y, K * OH * OW);
        LocalTensor<half> aL1 = a1.Get<half>(), fm = b1.Get<half>(), aL0 = a2.Get<half>(), bL0 = b2.Get<half>();
        LocalTensor<float> cL0 = co1.Get<float>();
        // GM -> L1: the zero border, then per c1 one copy of the H rows (W pixels of 32 B each) into the padded pitch
        InitConstValue(fm, InitConstValueParams<half>(1, static_cast<uint16_t>(C1 * HP * PITCH), 0, half(0.0f)));
        PipeBarrier<PIPE_MTE2>();
        for (uint32_t c1 = 0; c1 < C1; ++c1) {
            DataCopy(fm[((c1 * HP + PAD) * PITCH + PAD) * 16], xg[c1 * H * W * 16], DataCopyParams(H, W, 0, PITCH - W));
        }
        DataCopy(aL1, wg, Nd2NzParams(1, K, DEPTH, 0, DEPTH, MPAD, 1, 0));
        SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        for (uint32_t i = 0; i < MPAD / 16; ++i) {
            LoadData(aL0[i * KBLK * 256], aL1, LoadData2DParams(static_cast<uint16_t>(i), KBLK, MPAD / 16, 0, 0, false, 0));
        }
        // L1 -> L0B: per k block (c1, ky, kx) one call, one fractal per output row (rows are one 512-B pitch apart)
        for (uint32_t c1 = 0; c1 < C1; ++c1) {
            for (uint32_t ky = 0; ky < KH; ++ky) {
                for (uint32_t kx = 0; kx < KW; ++kx) {
                    const uint32_t kb = (c1 * KH + ky) * KW + kx;
                    const uint32_t at = ((c1 * HP + ky) * PITCH + kx - (plantTap && kb == 4 ? 1 : 0)) * 16;
                    LoadData(bL0[kb * OH * 256], fm[at], LoadData2DParams(0, OH, PITCH / 16, 0, 0, false, 0));
                }
            }
        }
        SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
        WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
        Mmad(cL0, aL0, bL0, MmadParams(K, OH * 16, DEPTH, 0, false, true));
        SetFlag<HardEvent::M_FIX>(EVENT_ID0);
        WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
        FixpipeParamsV220 fp(OW, K, MPAD, OH * OW, false);
        for (uint32_t r = 0; r < OH; ++r) Fixpipe(yg[r * OW], cL0[r * (MPAD / 16) * 256], fp);
    });
    for (uint32_t k = 0; k < K; ++k)
        for (uint32_t r = 0; r < OH; ++r)
            for (uint32_t q = 0; q < OW; ++q) {
                if (y[(k * OH + r) * OW + q] != conv_ref(k, r, q)) {
                    if (!plantTap) EXPECT(y[(k * OH + r) * OW + q] == conv_ref(k, r, q));
                    ++g_fail;
                    if (plantTap) goto done;
                }
            }
done:
    if (plantTap) g_fail = g_fail ? 0 : 1;  // the planted offset must change the result
    sim::GmFree(x);
    sim::GmFree(w);
    sim::GmFree(y);
    return rc;
}

// Tiles at the scale (benchmarks/bench_conv_route.py): 64 input channels (C1 = 4), interior output rows of
// 256 pixels (W padding 1: pitch 272), 128 output channels, k = 576 in steps of 128 (L0B holds 128 x 256 halves).
// The weight W' is copied into L1 once (147 KB, resident); each output row copies its 3 halo rows (one copy per
// c1), then per k step loads L0A / L0B, Mmad, and one Fixpipe writes the row. `blocks` blocks each compute the same
// `rows` rows into their own output slice (so the cost model sees that many active cube cores); block 0's rows
// are checked against a direct convolution.
int tile(uint32_t blocks, uint32_t rows) {
    constexpr uint32_t TC = 64, TC1 = 4, TW = 256, TK = 128, TP = 272, TKB = TC1 * 9, TDEPTH = TKB * 16, STEP = 8;
    const uint32_t TH = rows + 2;
    auto xt = [](uint32_t c, uint32_t h, uint32_t q) { return float(int((c * 5 + h * 3 + q * 7) % 7) - 3); };
    auto wt = [](uint32_t k, uint32_t c, uint32_t t) { return float(int((k * 3 + c * 5 + t) % 5) - 2); };
    half* x = reinterpret_cast<half*>(sim::GmAlloc(TC1 * TH * TW * 16 * sizeof(half)));
    half* w = reinterpret_cast<half*>(sim::GmAlloc(TK * TDEPTH * sizeof(half)));
    float* y = reinterpret_cast<float*>(sim::GmAlloc(uint64_t(blocks) * TK * rows * TW * sizeof(float)));
    for (uint32_t c = 0; c < TC; ++c)
        for (uint32_t h = 0; h < TH; ++h)
            for (uint32_t q = 0; q < TW; ++q) x[((c / 16 * TH + h) * TW + q) * 16 + c % 16] = half(xt(c, h, q));
    for (uint32_t k = 0; k < TK; ++k)
        for (uint32_t c = 0; c < TC; ++c)
            for (uint32_t t = 0; t < 9; ++t) w[k * TDEPTH + (c / 16 * 9 + t) * 16 + c % 16] = half(wt(k, c, t));
    const int rc = sim::Launch(blocks, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(a1, TK * TDEPTH * sizeof(half));
        pipe.InitBuffer(b1, TC1 * 3 * TP * 16 * sizeof(half));
        pipe.InitBuffer(a2, TK * STEP * 16 * sizeof(half));
        pipe.InitBuffer(b2, STEP * 16 * TW * sizeof(half));
        pipe.InitBuffer(co1, TK * TW * sizeof(float));
        GlobalTensor<half> xg, wg;
        GlobalTensor<float> yg;
        xg.SetGlobalBuffer(x, TC1 * TH * TW * 16);
        wg.SetGlobalBuffer(w, TK * TDEPTH);
        yg.SetGlobalBuffer(y + uint64_t(GetBlockIdx()) * TK * rows * TW, TK * rows * TW);
        LocalTensor<half> aL1 = a1.Get<half>(), fm = b1.Get<half>(), aL0 = a2.Get<half>(), bL0 = b2.Get<half>();
        LocalTensor<float> cL0 = co1.Get<float>();
        DataCopy(aL1, wg, Nd2NzParams(1, TK, TDEPTH, 0, TDEPTH, TK, 1, 0));
        InitConstValue(fm, InitConstValueParams<half>(1, static_cast<uint16_t>(TC1 * 3 * TP), 0, half(0.0f)));
        PipeBarrier<PIPE_MTE2>();
        for (uint32_t r = 0; r < rows; ++r) {
            if (r != 0) {
                SetFlag<HardEvent::MTE1_MTE2>(EVENT_ID0);  // the previous row's L0B loads are done with the halo rows
                WaitFlag<HardEvent::MTE1_MTE2>(EVENT_ID0);
            }
            for (uint32_t c1 = 0; c1 < TC1; ++c1) {
                DataCopy(fm[(c1 * 3 * TP + 1) * 16], xg[(c1 * TH + r) * TW * 16], DataCopyParams(3, TW, 0, TP - TW));
            }
            SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
            for (uint32_t kb0 = 0; kb0 < TKB; kb0 += STEP) {
                const uint32_t nk = TKB - kb0 < STEP ? TKB - kb0 : STEP;
                for (uint32_t i = 0; i < TK / 16; ++i) {
                    LoadData(aL0[i * nk * 256], aL1, LoadData2DParams(static_cast<uint16_t>(kb0 * (TK / 16) + i), static_cast<uint8_t>(nk), TK / 16,
                                                                      0, 0, false, 0));
                }
                for (uint32_t j = 0; j < nk; ++j) {
                    const uint32_t kb = kb0 + j, c1 = kb / 9, ky = kb % 9 / 3, kx = kb % 3;
                    LoadData(bL0[j * (TW / 16) * 256], fm[((c1 * 3 + ky) * TP + kx) * 16], LoadData2DParams(0, TW / 16, 1, 0, 0, false, 0));
                }
                SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
                WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
                if (r != 0 && kb0 == 0) {
                    SetFlag<HardEvent::FIX_M>(EVENT_ID0);  // the previous row's Fixpipe has read L0C
                    WaitFlag<HardEvent::FIX_M>(EVENT_ID0);
                }
                Mmad(cL0, aL0, bL0, MmadParams(TK, TW, static_cast<uint16_t>(nk * 16), 0, false, kb0 == 0));
                SetFlag<HardEvent::M_MTE1>(EVENT_ID0);
                WaitFlag<HardEvent::M_MTE1>(EVENT_ID0);
            }
            SetFlag<HardEvent::M_FIX>(EVENT_ID0);
            WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
            Fixpipe(yg[r * TW], cL0, FixpipeParamsV220(TW, TK, TK, rows * TW, false));
        }
    });
    for (uint32_t k = 0; k < TK && g_fail <= 5; ++k)
        for (uint32_t r = 0; r < rows; ++r)
            for (uint32_t q = 0; q < TW; ++q) {
                float ref = 0.0f;
                for (uint32_t c = 0; c < TC; ++c)
                    for (uint32_t t = 0; t < 9; ++t) {
                        const int iw = int(q + t % 3) - 1;
                        if (iw >= 0 && iw < int(TW)) ref += xt(c, r + t / 3, uint32_t(iw)) * wt(k, c, t);
                    }
                EXPECT(y[(k * rows + r) * TW + q] == ref);
            }
    sim::GmFree(x);
    sim::GmFree(w);
    sim::GmFree(y);
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 3 && std::strcmp(argv[1], "tile") == 0) {
        return (tile(uint32_t(std::atoi(argv[2])), uint32_t(std::atoi(argv[3]))) != 0 || g_fail) ? 1 : 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "conv") == 0) return (run(false) != 0 || g_fail) ? 1 : 0;
    if (argc > 1 && std::strcmp(argv[1], "planted_tap") == 0) return (run(true) != 0 || g_fail) ? 1 : 0;
    std::fprintf(stderr, "usage: conv_nc1hwc0 conv|planted_tap|tile <blocks> <rows>\n");
    return 2;
}
