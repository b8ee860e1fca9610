// Planted bugs (and their correct twins) for the checks added with the concurrency / shadow-memory
// work: L1/L0 budgets, level-0 repeat range, UB-UNINIT, GM-RACE, SetAtomicAdd, SyncAll, HANG.
//   usage: checks2 <variant>     (exit 0 iff Launch reported no error and the variant's own checks hold)
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

// A TBuf has no queue events: data crossing pipes is synchronised by hand (ref_next §5.5).
template <AscendC::HardEvent E>
inline void PipeSync() {
    AscendC::SetFlag<E>(EVENT_ID0);
    AscendC::WaitFlag<E>(EVENT_ID0);
}

int g_fail = 0;
#define EXPECT(c)                                                                  \
    do {                                                                           \
        if (!(c)) {                                                                \
            std::printf("EXPECT failed: %s (checks2.cpp:%d)\n", #c, __LINE__);      \
            ++g_fail;                                                              \
        }                                                                          \
    } while (0)

int l1_overflow() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::A1, 1> a1;
        pipe.InitBuffer(a1, 2, 200 * 1024);
        TQue<TPosition::B1, 1> b1;
        pipe.InitBuffer(b1, 1, 200 * 1024);  // BUG: 600 KB of L1 (512 KB)
    });
}

int l0_overflow() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::A2> a2;
        pipe.InitBuffer(a2, 64 * 1024);  // fits L0A exactly
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(co1, 160 * 1024);  // BUG: L0C is 128 KB
    });
}

int cube_budgets_ok() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::A1, 1> a1;
        TQue<TPosition::A2, 1> a2;
        TQue<TPosition::B2, 1> b2;
        TQue<TPosition::CO1, 1> co1;
        TQue<TPosition::VECIN, 1> ub;
        pipe.InitBuffer(a1, 2, 256 * 1024);
        pipe.InitBuffer(a2, 2, 32 * 1024);
        pipe.InitBuffer(b2, 2, 32 * 1024);
        pipe.InitBuffer(co1, 2, 64 * 1024);
        pipe.InitBuffer(ub, 2, 96 * 1024);  // separate memories: all fit
    });
}

int level0_ok() {
    float* out = reinterpret_cast<float*>(sim::GmAlloc(256 * sizeof(float)));
    int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 3 * 256 * sizeof(float));
        LocalTensor<float> a = buf.Get<float>();
        LocalTensor<float> b = a[256];
        LocalTensor<float> c = a[512];
        Duplicate(a, 1.0f, 64, 4, 1, 8);  // 4 repeats x 64 floats = 256
        Duplicate(b, 2.0f, 64, 4, 1, 8);
        Duplicate(c, 0.0f, 256);
        uint64_t mask[2] = {0x00000000FFFFFFFFull, 0};  // first 32 floats of each repeat
        Add(c, a, b, mask, 4, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
        Add(c[32], a, b, 16, 1, BinaryRepeatParams());  // continuous mask: 16 floats
        GlobalTensor<float> g;
        g.SetGlobalBuffer(out, 256);
        PipeSync<HardEvent::V_MTE3>();
        DataCopy(g, c, 256);
    });
    EXPECT(out[0] == 3.0f && out[31] == 3.0f && out[32] == 3.0f && out[47] == 3.0f && out[48] == 0.0f && out[64] == 3.0f &&
           out[100] == 0.0f && out[255] == 0.0f);
    sim::GmFree(out);
    return rc;
}

int repeat_range() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64 * 1024);
        LocalTensor<float> a = buf.Get<float>();
        int32_t repeats = 300;
        Add(a, a, a, 64, repeats, BinaryRepeatParams());  // BUG: repeatTime > 255
    });
}

int dup_repeat_range() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 128 * 1024);
        LocalTensor<half> a = buf.Get<half>();
        Duplicate(a, half(1.0f), 128, 256, 1, 8);  // BUG: repeatTime = 256
    });
}

// One vector kernel body with a switch for the UB-UNINIT variants.
int uninit(int which) {
    float* in = reinterpret_cast<float*>(sim::GmAlloc(128 * sizeof(float)));
    float* out = reinterpret_cast<float*>(sim::GmAlloc(128 * sizeof(float)));
    for (int i = 0; i < 128; ++i) in[i] = float(i) - 64.0f;
    int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> xb, yb, mb;
        pipe.InitBuffer(xb, 128 * sizeof(float));
        pipe.InitBuffer(yb, 128 * sizeof(float));
        pipe.InitBuffer(mb, 64);
        LocalTensor<float> x = xb.Get<float>();
        LocalTensor<float> y = yb.Get<float>();
        LocalTensor<uint8_t> m = mb.Get<uint8_t>();
        GlobalTensor<float> gi, go;
        gi.SetGlobalBuffer(in, 128);
        go.SetGlobalBuffer(out, 128);
        DataCopy(x, gi, 40);  // only 40 of the 128 elements are defined  (40 x 4 B = 160 B: 32-B multiple)
        PipeSync<HardEvent::MTE2_V>();
        switch (which) {
            case 0:  // BUG: copies 64 elements, 24 never written
                Abs(y, x, 64);
                PipeSync<HardEvent::V_MTE3>();
                DataCopy(go, y, 64);  // BUG: 24 of them never written
                break;
            case 1: {  // BUG: scalar read of an unwritten element
                float v = x.GetValue(50);
                (void)v;
                break;
            }
            case 2:  // OK: Compare over a whole 256-B repeat (64 floats) reads 24 unwritten elements,
                     // but only the 40 defined mask bits are used
                Compares(m, x, 0.0f, CMPMODE::LT, 64);
                Select(y, m, x, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 40);
                PipeSync<HardEvent::V_MTE3>();
                DataCopy(go, y, 40);
                break;
            case 3:  // BUG: Select with mask bits computed from unwritten data
                Compares(m, x, 0.0f, CMPMODE::LT, 64);
                Duplicate(y, 5.0f, 64);
                Select(y, m, y, 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 48);
                PipeSync<HardEvent::V_MTE3>();
                DataCopy(go, y, 48);
                break;
            case 4:  // OK: unwritten elements are overwritten by Duplicate before the copy
                Duplicate(y, 0.0f, 64);
                Add(y, y, x, 40);
                PipeSync<HardEvent::V_MTE3>();
                DataCopy(go, y, 64);
                break;
        }
    });
    if (which == 2) EXPECT(out[0] == -64.0f && out[39] == -25.0f);
    sim::GmFree(in);
    sim::GmFree(out);
    return rc;
}

// UB arenas are reused by later blocks and only the part a block reserved is reset: an even block
// reserves 4 KB more and defines it; an odd block (which may get that arena) reserves the same bytes and
// reads one it never wrote, which must still count as never written.
int uninit_reused_arena() {
    return sim::Launch(16, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> xb, yb;
        pipe.InitBuffer(xb, 64 * sizeof(float));
        LocalTensor<float> x = xb.Get<float>();
        Duplicate(x, 1.0f, 64);
        if (GetBlockIdx() % 2 == 0) {
            pipe.InitBuffer(yb, 1024 * sizeof(float));
            Duplicate(yb.Get<float>(), 7.0f, 1024);
        } else {
            pipe.Reset();
            pipe.InitBuffer(yb, 1024 * sizeof(float));
            LocalTensor<float> y = yb.Get<float>();
            float v = y.GetValue(1000);  // BUG: never written by this block
            (void)v;
        }
    });
}

// A row chunk whose length is not a whole 32-B block: the reduction must cover exactly the copied
// elements. The queue buffer held the previous (full) chunk, so stale but "written" data sits past the
// short chunk; a fresh AllocTensor and DataCopyPad's padding count as never written.
int stale_pad(int which) {
    float* in = reinterpret_cast<float*>(sim::GmAlloc(128 * sizeof(float)));
    for (int i = 0; i < 128; ++i) in[i] = 1.0f;
    float got = 0.0f;
    int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        TBuf<TPosition::VECCALC> tb, ob;
        pipe.InitBuffer(q, 1, 64 * sizeof(float));
        pipe.InitBuffer(tb, 64 * sizeof(float));
        pipe.InitBuffer(ob, 32);
        GlobalTensor<float> gi;
        gi.SetGlobalBuffer(in, 128);
        LocalTensor<float> x = q.AllocTensor<float>();  // chunk 0: 64 elements
        DataCopy(x, gi, 64);
        q.EnQue(x);
        x = q.DeQue<float>();
        q.FreeTensor(x);
        x = q.AllocTensor<float>();  // chunk 1: the last 10 elements (40 B)
        DataCopyPad(x, gi[64], DataCopyExtParams{1, 10 * sizeof(float), 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0});
        q.EnQue(x);
        x = q.DeQue<float>();
        LocalTensor<float> tmp = tb.Get<float>(), out = ob.Get<float>();
        const int32_t counts[] = {10, 16, 64};  // exact; the padded 32-B blocks; a whole repeat
        ReduceSum(out, x, tmp, counts[which]);
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        got = out.GetValue(0);  // BUG unless the count is exact: padding entered the sum
        q.FreeTensor(x);
    });
    if (which == 0) EXPECT(got == 10.0f);
    sim::GmFree(in);
    return rc;
}

// Each block writes `per` floats at offset start(b) of one GM array.
int gm_writes(uint32_t blocks, uint32_t per, uint32_t stride, bool atomic, float* result) {
    float* out = reinterpret_cast<float*>(sim::GmAlloc(1024 * sizeof(float)));
    for (int i = 0; i < 1024; ++i) out[i] = 0.0f;
    int rc = sim::Launch(blocks, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, per * sizeof(float));
        LocalTensor<float> t = b.Get<float>();
        Duplicate(t, 0.1f * float(GetBlockIdx() + 1), per);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(out + GetBlockIdx() * stride, per);
        if (atomic) SetAtomicAdd<float>();
        PipeSync<HardEvent::V_MTE3>();
        DataCopy(g, t, per);
        if (atomic) SetAtomicNone();
    });
    if (result) std::memcpy(result, out, 16 * sizeof(float));
    sim::GmFree(out);
    return rc;
}

int gm_race() { return gm_writes(4, 64, 32, false, nullptr); }  // BUG: blocks overlap by 32 floats
int gm_disjoint() { return gm_writes(4, 64, 64, false, nullptr); }
int atomic_ok() {
    float r1[16], r2[16];
    int rc = gm_writes(8, 64, 0, true, r1);
    rc += gm_writes(8, 64, 0, true, r2);
    float want = 0.0f;
    for (int b = 0; b < 8; ++b) want += 0.1f * float(b + 1);  // block order, as the emulator adds
    EXPECT(std::memcmp(r1, r2, sizeof r1) == 0);
    EXPECT(r1[0] == want && r1[15] == want);
    std::printf("atomic sum=%.9g\n", double(r1[0]));
    return rc;
}

// Two phases separated by SyncAll: each block publishes a value in a GM workspace, then block 0
// sums them; every block also overwrites another block's slot after the barrier (not a race).
int syncall_ok() {
    const uint32_t n = 8;
    float* ws = reinterpret_cast<float*>(sim::GmAlloc(n * 8 * sizeof(float)));
    float* out = reinterpret_cast<float*>(sim::GmAlloc(8 * sizeof(float)));
    int rc = sim::Launch(n, [&] {
        GlobalTensor<float> w, o;
        w.SetGlobalBuffer(ws, n * 8);
        o.SetGlobalBuffer(out, 8);
        const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
        w.SetValue(b * 8, float(b + 1));
        SyncAll();
        if (b == 0) {
            float s = 0;
            for (uint32_t i = 0; i < n; ++i) s += w.GetValue(i * 8);
            o.SetValue(0, s);
        }
        SyncAll();
        w.SetValue(((b + 1) % n) * 8, 0.0f);
    });
    EXPECT(out[0] == 36.0f);
    sim::GmFree(ws);
    sim::GmFree(out);
    return rc;
}

int syncall_hang() {
    return sim::Launch(4, [] {
        if (GetBlockIdx() == 2) return;  // BUG: block 2 never reaches the barrier
        SyncAll();
    });
}

int spin() {
    volatile uint64_t c = 0;
    return sim::Launch(2, [&] {
        for (;;) c = c + 1;  // BUG: never ends
    });
}

struct Variant {
    const char* name;
    int (*fn)();
};

const Variant kVariants[] = {
    {"l1_overflow", l1_overflow},
    {"l0_overflow", l0_overflow},
    {"cube_budgets_ok", cube_budgets_ok},
    {"level0_ok", level0_ok},
    {"repeat_range", repeat_range},
    {"dup_repeat_range", dup_repeat_range},
    {"uninit_copy", [] { return uninit(0); }},
    {"uninit_getvalue", [] { return uninit(1); }},
    {"uninit_compare_ok", [] { return uninit(2); }},
    {"uninit_select", [] { return uninit(3); }},
    {"uninit_overwritten_ok", [] { return uninit(4); }},
    {"uninit_reused_arena", uninit_reused_arena},
    {"pad_exact_ok", [] { return stale_pad(0); }},
    {"pad_block_reduce", [] { return stale_pad(1); }},
    {"pad_stale_reduce", [] { return stale_pad(2); }},
    {"gm_race", gm_race},
    {"gm_disjoint", gm_disjoint},
    {"atomic_ok", atomic_ok},
    {"syncall_ok", syncall_ok},
    {"syncall_hang", syncall_hang},
    {"spin", spin},
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
    std::fprintf(stderr, "usage: checks2 <variant>\n");
    return 2;
}
