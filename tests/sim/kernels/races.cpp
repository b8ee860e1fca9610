// Pipe races (race.h): one planted bug per race class and a correctly synchronised twin of each.
//   usage: races <variant>   (exit 0 iff Launch reported no error and the variant's own checks hold)
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

int g_fail = 0;
#define EXPECT(c)                                                             \
    do {                                                                      \
        if (!(c)) {                                                           \
            std::printf("EXPECT failed: %s (races.cpp:%d)\n", #c, __LINE__);  \
            ++g_fail;                                                         \
        }                                                                     \
    } while (0)

constexpr uint32_t kN = 256;

// GM in / out of kN floats around one launch of `body(x, y)`.
template <class F>
int with_gm(F body, float* result = nullptr) {
    float* in = reinterpret_cast<float*>(sim::GmAlloc(4 * kN * sizeof(float)));
    float* out = reinterpret_cast<float*>(sim::GmAlloc(4 * kN * sizeof(float)));
    for (uint32_t i = 0; i < 4 * kN; ++i) in[i] = float(i);
    const int rc = sim::Launch(1, [&] {
        GlobalTensor<float> x, y;
        x.SetGlobalBuffer(in, 4 * kN);
        y.SetGlobalBuffer(out, 4 * kN);
        body(x, y);
    });
    if (result) std::memcpy(result, out, 4 * kN * sizeof(float));
    sim::GmFree(in);
    sim::GmFree(out);
    return rc;
}

// TBuf filled by MTE2, read by V (race 1 of ref_next §5.5).
int mte2_v(bool sync) {
    return with_gm([sync](GlobalTensor<float>& x, GlobalTensor<float>& y) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, kN * sizeof(float));
        LocalTensor<float> t = b.Get<float>();
        DataCopy(t, x, kN);
        if (sync) {
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        }
        Adds(t, t, 1.0f, kN);  // RACE: MTE2->V without sync
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(y, t, kN);
    });
}

// TBuf written by V, copied out by MTE3 (race 2).
int v_mte3(bool sync) {
    return with_gm([sync](GlobalTensor<float>&, GlobalTensor<float>& y) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, kN * sizeof(float));
        LocalTensor<float> t = b.Get<float>();
        Duplicate(t, 2.0f, kN);
        if (sync) {
            SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
        }
        DataCopy(y, t, kN);  // RACE: V->MTE3 without sync
    });
}

// Copy-through: MTE2 fills a buffer that MTE3 copies out. Through a VECOUT queue the queue's events
// (V -> MTE3) do not order MTE2 (race), a MTE2_MTE3 flag does.
int mte2_mte3(bool sync) {
    float out[4 * kN];
    const int rc = with_gm(
        [sync](GlobalTensor<float>& x, GlobalTensor<float>& y) {
            TPipe pipe;
            TQue<TPosition::VECOUT, 1> q;
            pipe.InitBuffer(q, 1, kN * sizeof(float));
            LocalTensor<float> t = q.AllocTensor<float>();
            DataCopy(t, x, kN);
            if (sync) {
                SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
                WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            }
            q.EnQue(t);
            t = q.DeQue<float>();
            DataCopy(y, t, kN);  // RACE: MTE2->MTE3 (the VECOUT queue orders V->MTE3 only)
            q.FreeTensor(t);
        },
        out);
    EXPECT(out[7] == 7.0f);
    return rc;
}

// One TBuf reused by a tile loop: the next tile's copy-in may overwrite data V still reads (race 3,
// write-after-read) unless V_MTE2 orders it.
int war_tbuf(bool sync) {
    return with_gm([sync](GlobalTensor<float>& x, GlobalTensor<float>& y) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> in, out;
        pipe.InitBuffer(in, kN * sizeof(float));
        pipe.InitBuffer(out, kN * sizeof(float));
        LocalTensor<float> a = in.Get<float>(), b = out.Get<float>();
        for (uint32_t i = 0; i < 4; ++i) {
            DataCopy(a, x[i * kN], kN);  // RACE: reloads `a` while Adds of the previous tile may still read it
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            if (i > 0) {
                SetFlag<HardEvent::MTE3_V>(EVENT_ID0);  // `b` is free again once the previous copy-out finished
                WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
            }
            Adds(b, a, 1.0f, kN);
            if (sync) {
                SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
                WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);
            }
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(y[i * kN], b, kN);
        }
    });
}

// Two MTE2 copies with overlapping destinations need PipeBarrier<PIPE_MTE2> (race 8: same pipe).
int mte2_overlap(bool barrier) {
    return with_gm([barrier](GlobalTensor<float>& x, GlobalTensor<float>& y) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 2 * kN * sizeof(float));
        LocalTensor<float> t = b.Get<float>();
        DataCopy(t, x, kN);
        if (barrier) PipeBarrier<PIPE_MTE2>();
        DataCopy(t[kN / 2], x[kN], kN);  // RACE: overlaps the previous copy's destination
        SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        DataCopy(y, t, kN + kN / 2);
    });
}

// A scalar write read by V: ordered by the compiler's auto-sync (default), a race without it.
int scalar_v() {
    return with_gm([](GlobalTensor<float>&, GlobalTensor<float>& y) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, kN * sizeof(float));
        LocalTensor<float> t = b.Get<float>();
        Duplicate(t, 0.0f, kN);
        PipeBarrier<PIPE_V>();
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        t.SetValue(3, 5.0f);
        Adds(t, t, 1.0f, kN);  // RACE without --cce-auto-sync: S->V
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(y, t, kN);
    });
}

// A GM round trip inside one block: MTE3 writes a workspace that MTE2 reads back (needs MTE3_MTE2).
int gm_roundtrip(bool sync) {
    return with_gm([sync](GlobalTensor<float>& x, GlobalTensor<float>& y) {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b, c;
        pipe.InitBuffer(b, kN * sizeof(float));
        pipe.InitBuffer(c, kN * sizeof(float));
        LocalTensor<float> t = b.Get<float>(), u = c.Get<float>();
        Duplicate(t, 3.0f, kN);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(y, t, kN);
        if (sync) {
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
        DataCopy(u, y, kN);  // RACE: reads GM the MTE3 copy may not have written yet
        (void)x;
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        Adds(u, u, 1.0f, kN);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(y[kN], u, kN);
    });
}

// A correct TQue pipeline: the queues' implicit events order every hand-off.
int queue_ok() {
    float out[4 * kN];
    const int rc = with_gm(
        [](GlobalTensor<float>& x, GlobalTensor<float>& y) {
            TPipe pipe;
            TQue<TPosition::VECIN, 2> qi;
            TQue<TPosition::VECOUT, 2> qo;
            pipe.InitBuffer(qi, 2, kN / 4 * sizeof(float));
            pipe.InitBuffer(qo, 2, kN / 4 * sizeof(float));
            for (uint32_t i = 0; i < 16; ++i) {
                LocalTensor<float> a = qi.AllocTensor<float>();
                DataCopy(a, x[i * kN / 4], kN / 4);
                qi.EnQue(a);
                a = qi.DeQue<float>();
                LocalTensor<float> b = qo.AllocTensor<float>();
                Muls(b, a, 2.0f, kN / 4);
                qi.FreeTensor(a);
                qo.EnQue(b);
                b = qo.DeQue<float>();
                DataCopy(y[i * kN / 4], b, kN / 4);
                qo.FreeTensor(b);
            }
        },
        out);
    EXPECT(out[1023] == 2046.0f);
    return rc;
}

// ---- cube: GM -> L1 (MTE2) -> L0A / L0B (MTE1) -> Mmad (M) -> Fixpipe (FIX) ------------------------------

constexpr uint32_t kM = 32, kK = 32, kNc = 32;

// `fixSync`: M_FIX before Fixpipe; `reuseSync`: FIX_M before the second Mmad reuses L0C. The second
// Mmad recomputes the tile, so both halves of C hold A x B.
int cube(bool fixSync, bool reuseSync) {
    half* a = reinterpret_cast<half*>(sim::GmAlloc(kM * kK * sizeof(half)));
    half* b = reinterpret_cast<half*>(sim::GmAlloc(kK * kNc * sizeof(half)));
    float* c = reinterpret_cast<float*>(sim::GmAlloc(2 * kM * kNc * sizeof(float)));
    for (uint32_t i = 0; i < kM * kK; ++i) a[i] = half(float((i * 7) % 11) - 5.0f);
    for (uint32_t i = 0; i < kK * kNc; ++i) b[i] = half(float((i * 3) % 7) - 3.0f);
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(a1, kM * kK * sizeof(half));
        pipe.InitBuffer(b1, kK * kNc * sizeof(half));
        pipe.InitBuffer(a2, kM * kK * sizeof(half));
        pipe.InitBuffer(b2, kK * kNc * sizeof(half));
        pipe.InitBuffer(co1, kM * kNc * sizeof(float));
        GlobalTensor<half> ag, bg;
        GlobalTensor<float> cg;
        ag.SetGlobalBuffer(a, kM * kK);
        bg.SetGlobalBuffer(b, kK * kNc);
        cg.SetGlobalBuffer(c, 2 * kM * kNc);
        LocalTensor<half> al1 = a1.Get<half>(), bl1 = b1.Get<half>(), al0 = a2.Get<half>(), bl0 = b2.Get<half>();
        LocalTensor<float> cl0 = co1.Get<float>();
        // ND -> NZ: row r, column d at (d / 16) * rows * 16 + r * 16 + d % 16
        DataCopy(al1, ag, Nd2NzParams(1, kM, kK, 0, kK, kM, 1, 0));
        DataCopy(bl1, bg, Nd2NzParams(1, kK, kNc, 0, kNc, kK, 1, 0));
        SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        for (uint32_t m1 = 0; m1 < kM / 16; ++m1)  // A: NZ -> Zz, one row of fractals per call
            LoadData(al0[m1 * (kK / 16) * 256], al1, LoadData2DParams(m1, kK / 16, kM / 16, 0, 0, false, 0));
        for (uint32_t k1 = 0; k1 < kK / 16; ++k1)  // B: NZ -> Zn, fractals transposed
            LoadData(bl0[k1 * (kNc / 16) * 256], bl1, LoadData2DParams(k1, kNc / 16, kK / 16, 0, 0, true, 0));
        SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
        WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
        Mmad(cl0, al0, bl0, MmadParams(kM, kNc, kK, 0, false, true));
        if (fixSync) {
            SetFlag<HardEvent::M_FIX>(EVENT_ID0);
            WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
        }
        FixpipeParamsV220 fp(kNc, kM, kM, kNc, false);
        Fixpipe(cg, cl0, fp);  // RACE: reads L0C before the Mmad finished
        if (reuseSync) {
            SetFlag<HardEvent::FIX_M>(EVENT_ID0);
            WaitFlag<HardEvent::FIX_M>(EVENT_ID0);
        }
        Mmad(cl0, al0, bl0, MmadParams(kM, kNc, kK, 0, false, true));  // RACE: overwrites L0C while Fixpipe may still read it
        SetFlag<HardEvent::M_FIX>(EVENT_ID1);
        WaitFlag<HardEvent::M_FIX>(EVENT_ID1);
        Fixpipe(cg[kM * kNc], cl0, fp);
    });
    bool ok = true;
    for (uint32_t i = 0; i < kM; ++i) {
        for (uint32_t j = 0; j < kNc; ++j) {
            float s = 0;
            for (uint32_t q = 0; q < kK; ++q) s += float(a[i * kK + q]) * float(b[q * kNc + j]);
            ok &= c[i * kNc + j] == s && c[kM * kNc + i * kNc + j] == s;
        }
    }
    EXPECT(ok);
    sim::GmFree(a);
    sim::GmFree(b);
    sim::GmFree(c);
    return rc;
}

// An image-to-column gather (lowering/emit/conv.py): two Nd2Nz copies on MTE2 fill fractal rows 0 and 1 of
// the same L1 fractal columns (interleaved 32-byte blocks, no common byte: clean); with `overlap` the second
// copy writes row 0 again, which nothing orders after the first (a real WAW on one pipe).
int gather(bool overlap) {
    half* x = reinterpret_cast<half*>(sim::GmAlloc(64 * sizeof(half)));
    for (uint32_t i = 0; i < 64; ++i) x[i] = half(float(i));
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::B1> b1;
        pipe.InitBuffer(b1, 2 * 256 * sizeof(half));
        GlobalTensor<half> xg;
        xg.SetGlobalBuffer(x, 64);
        LocalTensor<half> l1 = b1.Get<half>();
        // 2 fractal columns of one row: 32 elements, blocks 256 elements apart
        DataCopy(l1, xg, Nd2NzParams(1, 1, 32, 0, 32, 16, 1, 0));
        DataCopy(l1[overlap ? 0 : 16], xg[32], Nd2NzParams(1, 1, 32, 0, 32, 16, 1, 0));  // RACE: same fractal row
    });
    sim::GmFree(x);
    return rc;
}

struct Variant {
    const char* name;
    int (*fn)();
};

const Variant kVariants[] = {
    {"mte2_v_ok", [] { return mte2_v(true); }},
    {"mte2_v_race", [] { return mte2_v(false); }},
    {"v_mte3_ok", [] { return v_mte3(true); }},
    {"v_mte3_race", [] { return v_mte3(false); }},
    {"mte2_mte3_ok", [] { return mte2_mte3(true); }},
    {"mte2_mte3_race", [] { return mte2_mte3(false); }},
    {"war_tbuf_ok", [] { return war_tbuf(true); }},
    {"war_tbuf_race", [] { return war_tbuf(false); }},
    {"mte2_overlap_ok", [] { return mte2_overlap(true); }},
    {"mte2_overlap_race", [] { return mte2_overlap(false); }},
    {"scalar_v", scalar_v},
    {"gm_roundtrip_ok", [] { return gm_roundtrip(true); }},
    {"gm_roundtrip_race", [] { return gm_roundtrip(false); }},
    {"queue_ok", queue_ok},
    {"cube_ok", [] { return cube(true, true); }},
    {"gather_ok", [] { return gather(false); }},
    {"gather_overlap_race", [] { return gather(true); }},
    {"cube_fix_race", [] { return cube(false, true); }},
    {"cube_reuse_race", [] { return cube(true, false); }},
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
    std::fprintf(stderr, "usage: races <variant>\n");
    return 2;
}
