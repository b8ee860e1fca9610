// TransDataTo5HD (ascend_sim/transdata.h): NCHW -> NC1HWC0 of a 16-channel tile in UB, checked element by element
// against the definition, in both forms (LocalTensor array, uint64_t addresses), the repeatTimes = 1 stride quirk,
// and one planted bug per check.   usage: transdata5hd <variant>
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

int g_fail = 0;
#define EXPECT(c)                                                                    \
    do {                                                                             \
        if (!(c)) {                                                                  \
            std::printf("EXPECT failed: %s (transdata5hd.cpp:%d)\n", #c, __LINE__);  \
            ++g_fail;                                                                \
        }                                                                            \
    } while (0)

constexpr uint32_t P = 80;  // pixels per channel row: 5 repeats of 16

float value(uint32_t c, uint32_t p) { return float(int((c * 37 + p * 11) % 97) - 48); }

// 16 channel rows of P pixels (NCHW) -> P pixels x 16 channels (NC1HWC0 with C1 = 1), then back to GM.
int convert(bool addressForm, bool onceWithStride) {
    half* out = reinterpret_cast<half*>(sim::GmAlloc(P * 16 * sizeof(half)));
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> sb, db;
        pipe.InitBuffer(sb, 16 * P * sizeof(half));
        pipe.InitBuffer(db, P * 16 * sizeof(half));
        LocalTensor<half> src = sb.Get<half>(), dst = db.Get<half>();
        for (uint32_t c = 0; c < 16; ++c)
            for (uint32_t p = 0; p < P; ++p) src.SetValue(c * P + p, half(value(c, p)));
        Duplicate(dst, half(0.0f), P * 16);
        if (onceWithStride) {
            // repeatTimes = 1 still adds the rep strides once: source blocks move by 2 (pixels 32..47 of each channel
            // row), destination blocks by 16 (pixel group 1 of the NC1HWC0 tile); pixel group 0 keeps its zeros
            LocalTensor<half> d[16], s[16];
            for (uint32_t i = 0; i < 16; ++i) {
                d[i] = dst[i * 16];
                s[i] = src[i * P];
            }
            TransDataTo5HD(d, s, TransDataTo5HDParams(false, false, 1, 16, 2));
            PipeBarrier<PIPE_V>();
            for (uint32_t p = 0; p < 16; ++p)
                for (uint32_t c = 0; c < 16; ++c) EXPECT(float(dst.GetValue((16 + p) * 16 + c)) == value(c, 32 + p));
            for (uint32_t i = 0; i < 16 * 16; ++i) EXPECT(float(dst.GetValue(i)) == 0.0f);
            return;
        }
        const TransDataTo5HDParams prm(false, false, P / 16, 16, 1);
        if (addressForm) {
            uint64_t d[16], s[16];
            for (uint32_t i = 0; i < 16; ++i) {
                d[i] = reinterpret_cast<uint64_t>(dst[i * 16].GetPhyAddr());
                s[i] = reinterpret_cast<uint64_t>(src[i * P].GetPhyAddr());
            }
            TransDataTo5HD<half>(d, s, prm);
        } else {
            LocalTensor<half> d[16], s[16];
            for (uint32_t i = 0; i < 16; ++i) {
                d[i] = dst[i * 16];
                s[i] = src[i * P];
            }
            TransDataTo5HD(d, s, prm);
        }
        PipeBarrier<PIPE_V>();
        for (uint32_t p = 0; p < P; ++p)
            for (uint32_t c = 0; c < 16; ++c) EXPECT(float(dst.GetValue(p * 16 + c)) == value(c, p));
        GlobalTensor<half> og;
        og.SetGlobalBuffer(out, P * 16);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(og, dst, P * 16);
    });
    sim::GmFree(out);
    return rc;
}

// One planted bug per check.
int bad(int which) {
    half* out = reinterpret_cast<half*>(sim::GmAlloc(256 * sizeof(half)));
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> sb, db, fb;
        pipe.InitBuffer(sb, 16 * 64 * sizeof(half));
        pipe.InitBuffer(db, 256 * sizeof(half));
        pipe.InitBuffer(fb, 512 * sizeof(float));
        LocalTensor<half> src = sb.Get<half>(), dst = db.Get<half>();
        Duplicate(src, half(1.0f), 16 * 64);
        LocalTensor<half> d[16], s[16];
        for (uint32_t i = 0; i < 16; ++i) {
            d[i] = dst[i * 16];
            s[i] = src[i * 64];
        }
        if (which == 0) {
            s[3] = src[3 * 64 + 8];
            TransDataTo5HD(d, s, TransDataTo5HDParams(false, false, 1, 0, 0));  // BUG: src align
        }
        if (which == 1) TransDataTo5HD(d, s, TransDataTo5HDParams(false, false, 2, 16, 1));  // BUG: dst past its tensor
        if (which == 2) {
            LocalTensor<float> f = fb.Get<float>(), fd[16], fs[16];
            for (uint32_t i = 0; i < 16; ++i) {
                fd[i] = f[i * 8];
                fs[i] = f[256 + i * 8];
            }
            TransDataTo5HD(fd, fs, TransDataTo5HDParams(false, false, 1, 0, 0));  // BUG: b32
        }
        if (which == 3) TransDataTo5HD(d, s, TransDataTo5HDParams(true, false, 1, 0, 0));  // BUG: high half
        if (which == 4) {
            uint64_t da[16], sa[16];
            for (uint32_t i = 0; i < 16; ++i) {
                da[i] = reinterpret_cast<uint64_t>(dst[i * 16].GetPhyAddr());
                sa[i] = reinterpret_cast<uint64_t>(src[i * 64].GetPhyAddr());
            }
            sa[5] = reinterpret_cast<uint64_t>(out);
            TransDataTo5HD<half>(da, sa, TransDataTo5HDParams(false, false, 1, 0, 0));  // BUG: address outside UB
        }
        if (which == 5) {
            TBuf<TPosition::VECCALC> ub;
            pipe.InitBuffer(ub, 16 * 16 * sizeof(half));
            LocalTensor<half> fresh = ub.Get<half>();
            s[7] = fresh[0];  // never written: channel 7 of every destination pixel is undefined
            TransDataTo5HD(d, s, TransDataTo5HDParams(false, false, 1, 0, 0));
            GlobalTensor<half> og;
            og.SetGlobalBuffer(out, 256);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(og, dst, 256);  // BUG: uninit reaches GM
        }
    });
    sim::GmFree(out);
    return rc;
}

struct Variant {
    const char* name;
    int (*fn)();
};

const Variant kVariants[] = {
    {"tensors", [] { return convert(false, false); }},
    {"addresses", [] { return convert(true, false); }},
    {"once_with_stride", [] { return convert(false, true); }},
    {"src_align", [] { return bad(0); }},
    {"dst_past", [] { return bad(1); }},
    {"b32", [] { return bad(2); }},
    {"high_half", [] { return bad(3); }},
    {"outside_ub", [] { return bad(4); }},
    {"uninit", [] { return bad(5); }},
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
    std::fprintf(stderr, "usage: transdata5hd <variant>\n");
    return 2;
}
