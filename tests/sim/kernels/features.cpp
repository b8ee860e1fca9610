// Positive semantics checks of the emulator: every supported API used correctly, results checked
// in C++. Prints "FAIL <what>" for each mismatch and "features: <n> checks, <k> failures".
#include "kernel_operator.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

int g_checks = 0, g_fails = 0;

void check(bool ok, const char* what, int line) {
    ++g_checks;
    if (!ok) {
        ++g_fails;
        std::printf("FAIL %s (features.cpp:%d)\n", what, line);
    }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

uint16_t hbits(half h) { return h.sim_bits; }

// ---- half / bfloat16_t scalar conversions --------------------------------------------------------
void scalar_types() {
    CHECK(hbits(half(1.0f)) == 0x3c00);
    CHECK(hbits(half(-2.0f)) == 0xc000);
    CHECK(hbits(half(65504.0f)) == 0x7bff);
    CHECK(hbits(half(65520.0f)) == 0x7c00);   // rounds to inf
    CHECK(hbits(half(65519.0f)) == 0x7bff);   // below the tie
    CHECK(hbits(half(5.9604645e-08f)) == 0x0001);  // smallest subnormal
    CHECK(hbits(half(2.9802322e-08f)) == 0x0000);  // tie -> even (0)
    CHECK(hbits(half(1.0f + 1.0f / 2048)) == 0x3c00);  // tie -> even
    CHECK(hbits(half(1.0f + 3.0f / 2048)) == 0x3c02);  // tie -> even (up)
    CHECK(hbits(half(0.1)) == 0x2e66);  // from double
    CHECK(hbits(half(3)) == 0x4200);    // from int
    CHECK(std::isnan(static_cast<float>(half(NAN))));
    CHECK(static_cast<float>(half::FromBits(0x0001)) == 5.9604644775390625e-08f);
    half h = 1.5f;
    h += 1;
    CHECK(static_cast<float>(h) == 2.5f);
    CHECK(h > 2.0f && h < 3);
    CHECK(bfloat16_t(1.0f).sim_bits == 0x3f80);
    CHECK(bfloat16_t(1.00390625f).sim_bits == 0x3f80);  // tie -> even
    CHECK(bfloat16_t(1.01171875f).sim_bits == 0x3f82);  // tie -> even (up)
    CHECK(static_cast<float>(bfloat16_t(3.0f)) == 3.0f);
    CHECK(static_cast<float>(half(bfloat16_t(0.5f))) == 0.5f);
}

// ---- vector ops on float --------------------------------------------------------------------------
void float_ops() {
    int rc = sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 8 * 64 * sizeof(float));
        LocalTensor<float> all = buf.Get<float>();
        LocalTensor<float> a = all[0], b = all[64], d = all[128];
        for (uint32_t i = 0; i < 64; ++i) {
            a.SetValue(i, static_cast<float>(i) - 20.0f);
            b.SetValue(i, 0.5f + static_cast<float>(i % 7));
        }
        Add(d, a, b, 64);
        CHECK(d.GetValue(5) == -15.0f + 5.5f);
        Sub(d, a, b, 64);
        CHECK(d.GetValue(5) == -15.0f - 5.5f);
        Mul(d, a, b, 64);
        CHECK(d.GetValue(3) == -17.0f * 3.5f);
        Div(d, a, b, 64);
        CHECK(d.GetValue(3) == -17.0f / 3.5f);
        Max(d, a, b, 64);
        CHECK(d.GetValue(3) == 3.5f && d.GetValue(40) == 20.0f);
        Min(d, a, b, 64);
        CHECK(d.GetValue(3) == -17.0f && d.GetValue(40) == 5.5f);
        Adds(d, a, 2.0f, 64);
        CHECK(d.GetValue(0) == -18.0f);
        Muls(d, a, 0.5, 64);  // double scalar converts to float
        CHECK(d.GetValue(1) == -9.5f);
        Maxs(d, a, 0.0f, 64);
        CHECK(d.GetValue(1) == 0.0f && d.GetValue(30) == 10.0f);
        Mins(d, a, 0.0f, 64);
        CHECK(d.GetValue(1) == -19.0f && d.GetValue(30) == 0.0f);
        Abs(d, a, 64);
        CHECK(d.GetValue(1) == 19.0f);
        Relu(d, a, 64);
        CHECK(d.GetValue(1) == 0.0f && d.GetValue(25) == 5.0f);
        LeakyRelu(d, a, 0.25f, 64);
        CHECK(d.GetValue(0) == -5.0f && d.GetValue(25) == 5.0f);
        // NaN in either operand propagates through Max / Min / Maxs / Mins / Relu
        a.SetValue(2, NAN);
        Max(d, a, b, 64);
        CHECK(std::isnan(d.GetValue(2)) && d.GetValue(3) == 3.5f);
        Min(d, b, a, 64);
        CHECK(std::isnan(d.GetValue(2)) && d.GetValue(3) == -17.0f);
        Maxs(d, a, 0.0f, 64);
        CHECK(std::isnan(d.GetValue(2)) && d.GetValue(30) == 10.0f);
        Mins(d, a, 0.0f, 64);
        CHECK(std::isnan(d.GetValue(2)) && d.GetValue(1) == -19.0f);
        Relu(d, a, 64);
        CHECK(std::isnan(d.GetValue(2)) && d.GetValue(1) == 0.0f);
        LeakyRelu(d, a, 0.25f, 64);
        CHECK(std::isnan(d.GetValue(2)) && d.GetValue(0) == -5.0f);
        a.SetValue(2, -18.0f);
        Exp(d, b, 64);
        CHECK(d.GetValue(1) == std::exp(1.5f));
        Ln(d, b, 64);
        CHECK(d.GetValue(1) == std::log(1.5f));
        Sqrt(d, b, 64);
        CHECK(d.GetValue(2) == std::sqrt(2.5f));
        Rsqrt(d, b, 64);
        CHECK(d.GetValue(2) == static_cast<float>(1.0 / std::sqrt(2.5)));
        Reciprocal(d, b, 64);
        CHECK(d.GetValue(2) == 1.0f / 2.5f);
        Duplicate(d, 7.0f, 64);
        CHECK(d.GetValue(63) == 7.0f);
        Adds(d, d, 1.0f, 64);  // in place
        CHECK(d.GetValue(10) == 8.0f);
        // count need not be a multiple of 32 B for compute (ref §4.2)
        Duplicate(d, 1.0f, 64);
        Adds(d, a, 100.0f, 5);
        CHECK(d.GetValue(4) == 84.0f && d.GetValue(5) == 1.0f);
        PipeBarrier<PIPE_V>();
    });
    CHECK(rc == 0);
}

// ---- integer ops ----------------------------------------------------------------------------------
void int_ops() {
    int rc = sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        LocalTensor<int32_t> a = buf.Get<int32_t>(64);
        LocalTensor<int32_t> b = buf.GetWithOffset<int32_t>(64, 256);
        LocalTensor<int32_t> d = buf.GetWithOffset<int32_t>(64, 512);
        Duplicate(a, 7, 64);
        Duplicate(b, -3, 64);
        Add(d, a, b, 64);
        CHECK(d.GetValue(0) == 4);
        Mul(d, a, b, 64);
        CHECK(d.GetValue(0) == -21);
        Max(d, a, b, 64);
        CHECK(d.GetValue(0) == 7);
        Relu(d, b, 64);
        CHECK(d.GetValue(0) == 0);
        Adds(d, a, 2147483647, 64);  // wraps like the 32-bit hardware adder
        CHECK(d.GetValue(0) == static_cast<int32_t>(0x80000006u));
        LocalTensor<int16_t> s = buf.GetWithOffset<int16_t>(64, 1024);
        Duplicate(s, static_cast<int16_t>(300), 64);
        Mul(s, s, s, 64);
        CHECK(s.GetValue(0) == static_cast<int16_t>(90000 & 0xffff));
    });
    CHECK(rc == 0);
}

// ---- half ops with scalar overloads ---------------------------------------------------------------
void half_ops() {
    int rc = sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 3 * 128 * sizeof(half));
        LocalTensor<half> a = buf.Get<half>(128);
        LocalTensor<half> d = buf.GetWithOffset<half>(128, 256);
        Duplicate(a, 1.5f, 128);
        Muls(d, a, (half)0.5f, 128);
        CHECK(static_cast<float>(d.GetValue(0)) == 0.75f);
        Muls(d, a, 0.5f, 128);
        CHECK(static_cast<float>(d.GetValue(0)) == 0.75f);
        Adds(d, a, half(2.0f), 128);
        CHECK(static_cast<float>(d.GetValue(3)) == 3.5f);
        Duplicate(a, half(2048.0f), 128);
        Adds(d, a, 1.0f, 128);  // 2049 is not representable: ties to even -> 2048
        CHECK(static_cast<float>(d.GetValue(3)) == 2048.0f);
        Adds(d, a, 3.0f, 128);  // 2051 -> 2052
        CHECK(static_cast<float>(d.GetValue(3)) == 2052.0f);
    });
    CHECK(rc == 0);
}

// ---- Cast -----------------------------------------------------------------------------------------
void cast_ops() {
    int rc = sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 8192);
        LocalTensor<float> f = buf.Get<float>(64);
        LocalTensor<half> h = buf.GetWithOffset<half>(64, 256);
        LocalTensor<int32_t> i32 = buf.GetWithOffset<int32_t>(64, 512);
        LocalTensor<int8_t> i8 = buf.GetWithOffset<int8_t>(64, 1024);
        LocalTensor<bfloat16_t> bf = buf.GetWithOffset<bfloat16_t>(64, 1280);
        LocalTensor<float> f2 = buf.GetWithOffset<float>(64, 1536);
        const float vals[8] = {1.0f + 1.0f / 2048, -1.0f - 1.0f / 2048, 2.5f, -2.5f, 1.0f + 3.0f / 4096, 300.7f, -300.7f, 1e6f};
        for (uint32_t i = 0; i < 64; ++i) f.SetValue(i, vals[i % 8]);
        // float -> half
        Cast(h, f, RoundMode::CAST_NONE, 64);
        CHECK(hbits(h.GetValue(0)) == 0x3c00);  // tie -> even
        CHECK(hbits(h.GetValue(4)) == 0x3c01);  // 1 + 3/4096 -> nearest is 1 + 1/1024
        CHECK(hbits(h.GetValue(7)) == 0x7c00);  // overflow -> inf
        Cast(h, f, RoundMode::CAST_CEIL, 64);
        CHECK(hbits(h.GetValue(0)) == 0x3c01);
        CHECK(hbits(h.GetValue(1)) == 0xbc00);
        Cast(h, f, RoundMode::CAST_FLOOR, 64);
        CHECK(hbits(h.GetValue(0)) == 0x3c00);
        CHECK(hbits(h.GetValue(1)) == 0xbc01);
        Cast(h, f, RoundMode::CAST_TRUNC, 64);
        CHECK(hbits(h.GetValue(1)) == 0xbc00);
        CHECK(hbits(h.GetValue(7)) == 0x7bff);  // trunc never overflows to inf
        Cast(h, f, RoundMode::CAST_ROUND, 64);
        CHECK(hbits(h.GetValue(0)) == 0x3c01);  // tie -> away from zero
        CHECK(hbits(h.GetValue(1)) == 0xbc01);
        Cast(h, f, RoundMode::CAST_ODD, 64);
        CHECK(hbits(h.GetValue(0)) == 0x3c01);
        CHECK(hbits(h.GetValue(4)) == 0x3c01);
        // half -> float exact
        Cast(f2, h, RoundMode::CAST_NONE, 64);
        CHECK(f2.GetValue(2) == 2.5f);
        // float -> int32 with modes
        Cast(i32, f, RoundMode::CAST_RINT, 64);
        CHECK(i32.GetValue(2) == 2 && i32.GetValue(3) == -2 && i32.GetValue(5) == 301);
        Cast(i32, f, RoundMode::CAST_ROUND, 64);
        CHECK(i32.GetValue(2) == 3 && i32.GetValue(3) == -3);
        Cast(i32, f, RoundMode::CAST_FLOOR, 64);
        CHECK(i32.GetValue(3) == -3 && i32.GetValue(5) == 300);
        Cast(i32, f, RoundMode::CAST_CEIL, 64);
        CHECK(i32.GetValue(2) == 3 && i32.GetValue(6) == -300);
        Cast(i32, f, RoundMode::CAST_TRUNC, 64);
        CHECK(i32.GetValue(5) == 300 && i32.GetValue(6) == -300);
        // int32 -> float
        Cast(f2, i32, RoundMode::CAST_NONE, 64);
        CHECK(f2.GetValue(5) == 300.0f);
        // half -> int8 saturates (float -> int8 is not a documented pair: through half)
        Cast(h, f, RoundMode::CAST_NONE, 64);
        Cast(i8, h, RoundMode::CAST_RINT, 64);
        CHECK(i8.GetValue(5) == 127 && i8.GetValue(6) == -128 && i8.GetValue(2) == 2);
        // float -> bfloat16
        Cast(bf, f, RoundMode::CAST_RINT, 64);
        CHECK(static_cast<float>(bf.GetValue(2)) == 2.5f);
        CHECK(bf.GetValue(5).sim_bits == bfloat16_t(300.7f).sim_bits);
        Cast(bf, f, RoundMode::CAST_TRUNC, 64);
        CHECK(static_cast<float>(bf.GetValue(5)) == 300.0f);
        // float -> float rounds to an integral value (A2 documents RINT / FLOOR / CEIL / ROUND / TRUNC)
        Cast(f2, f, RoundMode::CAST_RINT, 64);
        CHECK(f2.GetValue(2) == 2.0f && f2.GetValue(3) == -2.0f && f2.GetValue(5) == 301.0f && f2.GetValue(7) == 1e6f);
        Cast(f2, f, RoundMode::CAST_FLOOR, 64);
        CHECK(f2.GetValue(0) == 1.0f && f2.GetValue(1) == -2.0f && f2.GetValue(6) == -301.0f);
        Cast(f2, f, RoundMode::CAST_CEIL, 64);
        CHECK(f2.GetValue(0) == 2.0f && f2.GetValue(1) == -1.0f);
        Cast(f2, f, RoundMode::CAST_ROUND, 64);
        CHECK(f2.GetValue(2) == 3.0f && f2.GetValue(3) == -3.0f);
        Cast(f2, f, RoundMode::CAST_TRUNC, 64);
        CHECK(f2.GetValue(5) == 300.0f && f2.GetValue(6) == -300.0f);
    });
    CHECK(rc == 0);
}

// ---- Compare / Compares / Select -------------------------------------------------------------------
void select_ops() {
    int rc = sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf, mbuf;
        pipe.InitBuffer(buf, 4 * 128 * sizeof(float));
        pipe.InitBuffer(mbuf, 64);
        LocalTensor<float> a = buf.Get<float>(128);
        LocalTensor<float> b = buf.GetWithOffset<float>(128, 512);
        LocalTensor<float> d = buf.GetWithOffset<float>(128, 1024);
        LocalTensor<uint8_t> m = mbuf.Get<uint8_t>();
        for (uint32_t i = 0; i < 128; ++i) {
            a.SetValue(i, static_cast<float>(i));
            b.SetValue(i, 64.0f);
        }
        Compare(m, a, b, CMPMODE::LT, 128);
        CHECK(m.GetValue(0) == 0xff && m.GetValue(7) == 0xff && m.GetValue(8) == 0x00 && m.GetValue(15) == 0x00);
        Compares(m, a, 2.0f, CMPMODE::EQ, 64);
        CHECK(m.GetValue(0) == 0x04 && m.GetValue(1) == 0x00);
        Compares(m, a, 9.0f, CMPMODE::GE, 64);
        CHECK(m.GetValue(0) == 0x00 && m.GetValue(1) == 0xfe && m.GetValue(2) == 0xff);
        Compare(m, a, b, CMPMODE::LT, 128);
        Select(d, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);
        CHECK(d.GetValue(10) == 10.0f && d.GetValue(100) == 64.0f);
        Select(d, m, a, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 128);
        CHECK(d.GetValue(10) == 10.0f && d.GetValue(100) == -1.0f);
        // CMPMASK mode: one repeat of mask bits (64 for float) reused for every repeat
        Compares(m, a, 32.0f, CMPMODE::LT, 64);
        Select(d, m, a, b, SELMODE::VSEL_CMPMASK_SPR, 128);
        CHECK(d.GetValue(10) == 10.0f && d.GetValue(40) == 64.0f && d.GetValue(74) == 74.0f && d.GetValue(104) == 64.0f);
    });
    CHECK(rc == 0);
}

// ---- DataCopy forms, DataCopyPad, TQue round trip, sync, poison ------------------------------------
void copy_ops() {
    const uint32_t rows = 4, cols = 20;  // 20 floats = 80 B per row: not 32-B aligned
    float* x = reinterpret_cast<float*>(sim::GmAlloc(rows * cols * sizeof(float)));
    float* y = reinterpret_cast<float*>(sim::GmAlloc(rows * cols * sizeof(float)));
    float* s = reinterpret_cast<float*>(sim::GmAlloc(64 * sizeof(float)));
    float* t = reinterpret_cast<float*>(sim::GmAlloc(64 * sizeof(float)));
    for (uint32_t i = 0; i < rows * cols; ++i) {
        x[i] = static_cast<float>(i);
        y[i] = -1.0f;
    }
    for (uint32_t i = 0; i < 64; ++i) {
        s[i] = static_cast<float>(i);
        t[i] = -1.0f;
    }
    int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        TBuf<TPosition::VECCALC> tmp;
        pipe.InitBuffer(q, 1, rows * 32 * sizeof(float));
        pipe.InitBuffer(tmp, 64 * sizeof(float));
        GlobalTensor<float> xg, yg, sg, tg;
        xg.SetGlobalBuffer(x, rows * cols);
        yg.SetGlobalBuffer(y, rows * cols);
        sg.SetGlobalBuffer(s, 64);
        tg.SetGlobalBuffer(t, 64);

        LocalTensor<float> a = q.AllocTensor<float>();
        CHECK(std::isnan(a.GetPhyAddr()[0]));  // fresh UB is poisoned (GetValue would report UB-UNINIT)
        // GM->UB: rows of 20 floats (80 B), each landing 32-B aligned in UB as 96 B blocks
        // (24 floats); the 4 padding floats get 7.
        DataCopyPad(a, xg, DataCopyExtParams{static_cast<uint16_t>(rows), cols * 4, 0, 0, 0}, DataCopyPadExtParams<float>{true, 0, 4, 7.0f});
        q.EnQue(a);
        a = q.DeQue<float>();
        CHECK(a.GetValue(0) == 0.0f && a.GetValue(19) == 19.0f && a.GetValue(20) == 7.0f && a.GetValue(23) == 7.0f);
        CHECK(a.GetValue(24) == 20.0f && a.GetValue(24 * 3 + 19) == 79.0f);
        Adds(a, a, 1000.0f, rows * 24);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);  // a VECIN queue's events order MTE2 -> V only
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        // UB->GM: the 20 data floats of UB rows 0 and 1 to GM rows 0 and 2 (dstStride = one row in bytes)
        DataCopyPad(yg, a, DataCopyExtParams{2, cols * 4, 0, cols * 4, 0});
        q.FreeTensor(a);

        // strided DataCopy (32-B units): take 2 blocks of 8 floats, skipping 1 block in GM
        LocalTensor<float> u = tmp.Get<float>();
        Duplicate(u, 0.0f, 64);
        SetFlag<HardEvent::V_MTE2>(0);
        WaitFlag<HardEvent::V_MTE2>(0);
        DataCopy(u, sg, DataCopyParams{2, 1, 1, 0});
        SetFlag<HardEvent::MTE2_V>(EVENT_ID1);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID1);
        CHECK(u.GetValue(0) == 0.0f && u.GetValue(7) == 7.0f && u.GetValue(8) == 16.0f && u.GetValue(15) == 23.0f);
        DataCopy(tg[8], u, DataCopyParams{2, 1, 0, 2});
        // UB -> UB and ReinterpretCast
        DataCopy(u[32], u, 16);
        CHECK(u.GetValue(40) == 16.0f);
        LocalTensor<uint32_t> bits = u.ReinterpretCast<uint32_t>();
        CHECK(bits.GetSize() == 64 && bits.GetValue(40) == 0x41800000u);
        TEventID ev = pipe.FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(ev);
        WaitFlag<HardEvent::V_MTE3>(ev);
        DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(tg);
        CHECK(tg.GetValue(0) == -1.0f);
        CHECK(xg[10].GetSize() == rows * cols - 10);
    });
    CHECK(rc == 0);
    CHECK(y[0] == 1000.0f && y[19] == 1019.0f && y[20] == -1.0f && y[39] == -1.0f && y[40] == 1020.0f && y[59] == 1039.0f && y[60] == -1.0f);
    CHECK(t[7] == -1.0f && t[8] == 0.0f && t[15] == 7.0f && t[16] == -1.0f && t[31] == -1.0f && t[32] == 16.0f && t[40] == -1.0f);
    sim::GmFree(x);
    sim::GmFree(y);
    sim::GmFree(s);
    sim::GmFree(t);
}

// ---- blocks: index / count, fresh state per block --------------------------------------------------
void blocks() {
    int32_t* out = reinterpret_cast<int32_t*>(sim::GmAlloc(8 * 8 * sizeof(int32_t)));
    int rc = sim::Launch(8, [&] {
        TPipe pipe;
        TQue<TPosition::VECOUT, 2> q;
        pipe.InitBuffer(q, 2, 8 * sizeof(int32_t));
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(out + 8 * GetBlockIdx(), 8);
        LocalTensor<int32_t> t = q.AllocTensor<int32_t>();
        Duplicate(t, static_cast<int32_t>(GetBlockIdx() * 100 + GetBlockNum()), 8);
        q.EnQue(t);
        t = q.DeQue<int32_t>();
        DataCopy(g, t, 8);
        q.FreeTensor(t);
    });
    CHECK(rc == 0);
    CHECK(out[0] == 8 && out[8 * 7 + 7] == 708);
    sim::GmFree(out);
}

}  // namespace

int main() {
    scalar_types();
    float_ops();
    int_ops();
    half_ops();
    cast_ops();
    select_ops();
    copy_ops();
    blocks();
    std::printf("features: %d checks, %d failures\n", g_checks, g_fails);
    return g_fails ? 1 : 0;
}
