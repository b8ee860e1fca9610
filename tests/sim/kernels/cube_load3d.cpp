// LoadData 3-D (Load3Dv2, ascend_sim/load3d.h): the img2col block it writes to L0A (Zz) and L0B (transposed
// fractals), checked element by element against a direct img2col of the feature map computed here, and one
// planted bug per check.   usage: cube_load3d <variant>
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

int g_fail = 0;
#define EXPECT(c)                                                                   \
    do {                                                                            \
        if (!(c)) {                                                                 \
            std::printf("EXPECT failed: %s (cube_load3d.cpp:%d)\n", #c, __LINE__);  \
            ++g_fail;                                                               \
        }                                                                           \
    } while (0)

// A 32-channel (C1 = 2) 5 x 7 feature map in NC1HWC0, a 3 x 2 kernel with dilation (1, 2), stride (2, 1) and
// pads {left 1, right 0, top 1, bottom 2}: Ho = (5 + 3 - 3) / 2 + 1 = 3, Wo = (7 + 1 - 3) / 1 + 1 = 6, 18 rows,
// 2 x 3 x 2 x 16 = 192 columns. Loads the block rows [mStart, + mExt) x columns [kStart, + kExt).
constexpr uint32_t C1 = 2, H = 5, W = 7, KH = 3, KW = 2, SH = 2, SW = 1, DH = 1, DW = 2;
constexpr uint8_t PADS[4] = {1, 0, 1, 2};
constexpr uint32_t HO = 3, WO = 6;

float fmap(uint32_t c1, uint32_t h, uint32_t w, uint32_t c0) { return float(int((c1 * 131 + h * 17 + w * 5 + c0 * 3) % 61) - 30); }

// The img2col element (m, k) from the definition (ref_next §1.3), pad value 0.
float img2col(uint32_t m, uint32_t k) {
    if (m >= HO * WO) return 0.0f;
    const uint32_t c0 = k % 16, tap = k / 16 % (KH * KW), c1 = k / 16 / (KH * KW);
    const int ih = int(m / WO * SH + tap / KW * DH) - PADS[2], iw = int(m % WO * SW + tap % KW * DW) - PADS[0];
    return ih < 0 || ih >= int(H) || iw < 0 || iw >= int(W) ? 0.0f : fmap(c1, uint32_t(ih), uint32_t(iw), c0);
}

int load(bool toB, uint16_t mStart, uint16_t mExt, uint16_t kStart, uint16_t kExt) {
    half* x = reinterpret_cast<half*>(sim::GmAlloc(C1 * H * W * 16 * sizeof(half)));
    for (uint32_t c1 = 0; c1 < C1; ++c1)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t w = 0; w < W; ++w)
                for (uint32_t c0 = 0; c0 < 16; ++c0) x[((c1 * H + h) * W + w) * 16 + c0] = half(fmap(c1, h, w, c0));
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        pipe.InitBuffer(a1, C1 * H * W * 16 * sizeof(half));
        pipe.InitBuffer(a2, 32 * 192 * sizeof(half));
        pipe.InitBuffer(b2, 32 * 192 * sizeof(half));
        GlobalTensor<half> xg;
        xg.SetGlobalBuffer(x, C1 * H * W * 16);
        LocalTensor<half> l1 = a1.Get<half>(), l0 = toB ? b2.Get<half>() : a2.Get<half>();
        // GM (already NC1HWC0) -> L1: one fractal column of C1 x H x W rows of 16 channels
        DataCopy(l1, xg, Nd2NzParams(1, C1 * H * W, 16, 0, 16, C1 * H * W, 1, 0));
        SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        LoadData(l0, l1, LoadData3DParamsV2<half>(PADS, H, W, C1 * 16, kExt, mExt, kStart, mStart, SW, SH, KW, KH, DW, DH, false, false,
                                                  half(0.0f)));
        PipeBarrier<PIPE_ALL>();  // the scalar reads below wait for MTE1
        const uint32_t k1 = (kExt + 15) / 16;
        for (uint32_t i = 0; i < mExt; ++i) {
            for (uint32_t q = 0; q < kExt; ++q) {
                const uint32_t frac = (i / 16) * k1 + q / 16;
                const uint32_t at = frac * 256 + (toB ? (q % 16) * 16 + i % 16 : (i % 16) * 16 + q % 16);
                EXPECT(float(l0.GetValue(at)) == img2col(mStart + i, kStart + q));
            }
        }
    });
    sim::GmFree(x);
    return rc;
}

// One kernel row (1 x 3, stride 1, pads left / right 1) of a 1 x 20 map into L0B: 20 img2col rows (32 loaded,
// rows 20.. hold the pad value), 48 columns; the L0B rate for stride 1 and one kernel row is 128 B / cycle.
int one_row_l0b() {
    constexpr uint32_t OW1 = 20;
    half* x = reinterpret_cast<half*>(sim::GmAlloc(OW1 * 16 * sizeof(half)));
    for (uint32_t w = 0; w < OW1; ++w)
        for (uint32_t c0 = 0; c0 < 16; ++c0) x[w * 16 + c0] = half(fmap(0, 0, w, c0));
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B2> b2;
        pipe.InitBuffer(a1, OW1 * 16 * sizeof(half));
        pipe.InitBuffer(b2, 32 * 48 * sizeof(half));
        GlobalTensor<half> xg;
        xg.SetGlobalBuffer(x, OW1 * 16);
        LocalTensor<half> l1 = a1.Get<half>(), l0 = b2.Get<half>();
        DataCopy(l1, xg, OW1 * 16);
        SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        const uint8_t pads[4] = {1, 1, 0, 0};
        LoadData(l0, l1, LoadData3DParamsV2<half>(pads, 1, OW1, 16, 48, 32, 0, 0, 1, 1, 3, 1, 1, 1, false, false, half(0.0f)));
        PipeBarrier<PIPE_ALL>();
        for (uint32_t i = 0; i < 32; ++i) {
            for (uint32_t q = 0; q < 48; ++q) {
                const int iw = int(i) + int(q / 16) - 1;
                const float want = i >= OW1 || iw < 0 || iw >= int(OW1) ? 0.0f : fmap(0, 0, uint32_t(iw), q % 16);
                EXPECT(float(l0.GetValue(((i / 16) * 3 + q / 16) * 256 + (q % 16) * 16 + i % 16)) == want);
            }
        }
    });
    sim::GmFree(x);
    return rc;
}

// One planted bug per check.
int bad(int which) {
    return sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2f;
        pipe.InitBuffer(a1, 64 * 8 * 8 * sizeof(half));
        pipe.InitBuffer(a2, 512 * sizeof(half));
        pipe.InitBuffer(b2f, 512 * sizeof(float));
        LocalTensor<half> l1 = a1.Get<half>(), l0 = a2.Get<half>();
        const uint8_t pads[4] = {1, 1, 1, 1};
        using P = LoadData3DParamsV2<half>;
        if (which == 0) LoadData(l0, l1, P(pads, 8, 8, 28, 16, 16, 0, 0, 1, 1, 3, 3, 1, 1, false, false, half(0.0f)));  // BUG: channelSize
        if (which == 1) LoadData(l0, l1, P(pads, 8, 8, 16, 16, 16, 8, 0, 1, 1, 3, 3, 1, 1, false, false, half(0.0f)));  // BUG: kStartPt
        if (which == 2) LoadData(l0, l1, P(pads, 8, 8, 16, 16, 8, 0, 0, 1, 1, 3, 3, 1, 1, false, false, half(0.0f)));  // BUG: mExtension
        if (which == 3) LoadData(l0, l1, P(pads, 8, 8, 16, 16, 16, 0, 0, 64, 1, 3, 3, 1, 1, false, false, half(0.0f)));  // BUG: stride
        if (which == 4) LoadData(l0, l1, P(pads, 8, 8, 16, 32, 16, 128, 0, 1, 1, 3, 3, 1, 1, false, false, half(0.0f)));  // BUG: past K
        if (which == 5) LoadData(l0[16], l1, P(pads, 8, 8, 16, 16, 16, 0, 0, 1, 1, 3, 3, 1, 1, false, false, half(0.0f)));  // BUG: dst align
        if (which == 6) LoadData(l0, l1, P(pads, 8, 8, 16, 144, 256, 0, 0, 1, 1, 3, 3, 1, 1, false, false, half(0.0f)));  // BUG: past L0A
        if (which == 7) LoadData(l0, l1, P(pads, 8, 8, 16, 16, 16, 0, 0, 1, 1, 3, 3, 1, 1, true, false, half(0.0f)));  // BUG: enTranspose
        if (which == 8) LoadData(l0, l1, P(pads, 8, 8, 20, 16, 16, 0, 0, 1, 1, 3, 3, 1, 1, false, false, half(0.0f)));  // BUG: small channels
        if (which == 9) {
            LocalTensor<float> l1f = a1.Get<float>(), l0bf = b2f.Get<float>();
            LoadData(l0bf, l1f, LoadData3DParamsV2<float>(pads, 8, 8, 8, 8, 16, 0, 0, 1, 1, 3, 3, 1, 1, false, false, 0.0f));  // BUG: b32 L0B
        }
        if (which == 10) LoadData(l0, l1, P(pads, 2, 2, 16, 16, 16, 0, 0, 1, 1, 9, 9, 1, 1, false, false, half(0.0f)));  // BUG: kernel too big
        if (which == 11) LoadData(l1, l0, P(pads, 8, 8, 16, 16, 16, 0, 0, 1, 1, 3, 3, 1, 1, false, false, half(0.0f)));  // BUG: src not L1
    });
}

struct Variant {
    const char* name;
    int (*fn)();
};

const Variant kVariants[] = {
    {"l0a_all", [] { return load(false, 0, 32, 0, 192); }},
    {"l0a_block", [] { return load(false, 16, 2, 48, 80); }},
    {"l0b_block", [] { return load(true, 0, 18, 32, 64); }},
    {"l0b_one_row", [] { return one_row_l0b(); }},
    {"channel_size", [] { return bad(0); }},
    {"k_start", [] { return bad(1); }},
    {"m_extension", [] { return bad(2); }},
    {"stride", [] { return bad(3); }},
    {"past_k", [] { return bad(4); }},
    {"dst_align", [] { return bad(5); }},
    {"past_l0a", [] { return bad(6); }},
    {"transpose", [] { return bad(7); }},
    {"small_channels", [] { return bad(8); }},
    {"b32_l0b", [] { return bad(9); }},
    {"kernel_too_big", [] { return bad(10); }},
    {"src_not_l1", [] { return bad(11); }},
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
    std::fprintf(stderr, "usage: cube_load3d <variant>\n");
    return 2;
}
