// Hand-written AscendC kernels, each with ONE planted bug, selected by argv[1].
// The faulting line carries a `// BUG:<variant>` marker; tests/sim/test_emulator.py looks the
// marker up to know which line the emulator must report.
//   usage: bugs <variant>
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

float* gm_floats(size_t n, float fill = 0.0f) {
    float* p = reinterpret_cast<float*>(sim::GmAlloc(n * sizeof(float)));
    for (size_t i = 0; i < n; ++i) p[i] = fill;
    return p;
}

void print_floats(const char* tag, const float* p, size_t n) {
    std::printf("%s=", tag);
    for (size_t i = 0; i < n; ++i) std::printf("%s%g", i ? " " : "", p[i]);
    std::printf("\n");
}

// ---- TPipe / UB budget ------------------------------------------------------------------------

int ub_overflow() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> inQueue;
        TQue<TPosition::VECOUT, 1> outQueue;
        pipe.InitBuffer(inQueue, 2, 64 * 1024);
        pipe.InitBuffer(outQueue, 2, 40 * 1024);  // BUG:ub_overflow (128 KB + 80 KB > 192 KB)
    });
}

int buffer_limit() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> bufs[65];
        for (int i = 0; i < 65; ++i) {
            pipe.InitBuffer(bufs[i], 32);  // BUG:buffer_limit (65th buffer)
        }
    });
}

// ---- DataCopy ---------------------------------------------------------------------------------

int datacopy_align() {
    const uint32_t n = 104;  // 416 B
    float* x = gm_floats(n);
    float* z = gm_floats(n, -7.0f);
    for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> inQueue;
        TQue<TPosition::VECOUT, 1> outQueue;
        GlobalTensor<float> xGm, zGm;
        xGm.SetGlobalBuffer(x, n);
        zGm.SetGlobalBuffer(z, n);
        pipe.InitBuffer(inQueue, 1, n * sizeof(float));
        pipe.InitBuffer(outQueue, 1, n * sizeof(float));
        LocalTensor<float> a = inQueue.AllocTensor<float>();
        DataCopy(a, xGm, n);
        inQueue.EnQue(a);
        a = inQueue.DeQue<float>();
        LocalTensor<float> b = outQueue.AllocTensor<float>();
        Adds(b, a, 1.0f, n);
        outQueue.EnQue(b);
        inQueue.FreeTensor(a);
        b = outQueue.DeQue<float>();
        DataCopy(zGm, b, 100);  // BUG:datacopy_align (400 B: hardware copies 384 B = 96 elements)
        outQueue.FreeTensor(b);
    });
    print_floats("z", z, n);
    return rc;
}

// Correct DataCopyPad use on A2; on a target without DataCopyPad it is the bug.
int datacopypad() {
    const uint32_t n = 100;  // 400 B, not 32-B aligned
    float* x = gm_floats(n);
    float* z = gm_floats(128, -7.0f);
    for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
    int padOk = 1;
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> inQueue;
        TQue<TPosition::VECOUT, 1> outQueue;
        GlobalTensor<float> xGm, zGm;
        xGm.SetGlobalBuffer(x, n);
        zGm.SetGlobalBuffer(z, n);
        pipe.InitBuffer(inQueue, 1, n * sizeof(float));
        pipe.InitBuffer(outQueue, 1, n * sizeof(float));
        LocalTensor<float> a = inQueue.AllocTensor<float>();
        DataCopyPad(a, xGm, DataCopyExtParams{1, n * sizeof(float), 0, 0, 0}, DataCopyPadExtParams<float>{true, 0, 4, -1.0f});  // BUG:datacopypad
        inQueue.EnQue(a);
        a = inQueue.DeQue<float>();
        for (uint32_t i = 0; i < n; ++i) padOk &= a.GetValue(i) == static_cast<float>(i);
        for (uint32_t i = n; i < 104; ++i) padOk &= a.GetPhyAddr()[i] == -1.0f;
        LocalTensor<float> b = outQueue.AllocTensor<float>();
        Adds(b, a, 1.0f, n);
        outQueue.EnQue(b);
        inQueue.FreeTensor(a);
        b = outQueue.DeQue<float>();
        DataCopyPad(zGm, b, DataCopyExtParams{1, n * sizeof(float), 0, 0, 0});
        outQueue.FreeTensor(b);
    });
    std::printf("pad_ok=%d\n", padOk);
    print_floats("z", z, 128);
    return rc;
}

int ub_align() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 256 * sizeof(float));
        LocalTensor<float> t = buf.Get<float>();
        Duplicate(t, 1.0f, 256);
        Adds(t[8], t[3], 1.0f, 16);  // BUG:ub_align (t[3] is 12 B into the buffer)
    });
}

// ---- queue protocol -----------------------------------------------------------------------------

int que_alloc() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> a = q.AllocTensor<float>();
        LocalTensor<float> b = q.AllocTensor<float>();  // BUG:que_alloc (only 1 buffer)
        q.FreeTensor(a);
        q.FreeTensor(b);
    });
}

int que_full() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 2, 1024);
        LocalTensor<float> a = q.AllocTensor<float>();
        LocalTensor<float> b = q.AllocTensor<float>();
        q.EnQue(a);
        q.EnQue(b);  // BUG:que_full (depth 1)
    });
}

int que_empty() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> a = q.DeQue<float>();  // BUG:que_empty
        q.FreeTensor(a);
    });
}

int que_free() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 2, 1024);
        LocalTensor<float> a = q.AllocTensor<float>();
        q.FreeTensor(a);
        q.FreeTensor(a);  // BUG:que_free (double free)
    });
}

int que_free_foreign() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q1;
        TQue<TPosition::VECOUT, 1> q2;
        pipe.InitBuffer(q1, 1, 1024);
        pipe.InitBuffer(q2, 1, 1024);
        LocalTensor<float> a = q1.AllocTensor<float>();
        q2.FreeTensor(a);  // BUG:que_free_foreign
    });
}

int que_leak() {
    return sim::Launch(2, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 2, 1024);
        LocalTensor<float> a = q.AllocTensor<float>();
        q.FreeTensor(a);
        LocalTensor<float> b = q.AllocTensor<float>();  // BUG:que_leak (never freed)
        Duplicate(b, 0.0f, 256);
    });
}

int que_state() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECOUT, 1> q;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(q, 1, 1024);
        pipe.InitBuffer(buf, 1024);
        LocalTensor<float> t = buf.Get<float>();
        q.EnQue(t);  // BUG:que_state (TBuf tensor)
    });
}

int use_after_free() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> a = q.AllocTensor<float>();
        Duplicate(a, 1.0f, 256);
        q.FreeTensor(a);
        Adds(a, a, 1.0f, 256);  // BUG:use_after_free
    });
}

int use_after_free_realloc() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> a = q.AllocTensor<float>();
        q.FreeTensor(a);
        LocalTensor<float> b = q.AllocTensor<float>();
        b.SetValue(0, 2.0f);
        float v = a.GetValue(0);  // BUG:use_after_free_realloc (same buffer, now owned by b)
        (void)v;
        q.FreeTensor(b);
    });
}

// ---- GM bounds ----------------------------------------------------------------------------------

// Shared body: one DataCopy GM->UB or UB->GM of 64 floats at element offset 32.
template <bool kWrite, bool kBound>
int gm_copy(uint64_t allocElems, uint64_t boundElems) {
    float* g = gm_floats(allocElems, 1.0f);
    return sim::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 64 * sizeof(float));
        GlobalTensor<float> gm;
        if (kBound) {
            gm.SetGlobalBuffer(g, boundElems);
        } else {
            gm.SetGlobalBuffer(g);
        }
        LocalTensor<float> a = q.AllocTensor<float>();
        Duplicate(a, 3.0f, 64);
        if (kWrite) {
            DataCopy(gm[32], a, 64);  // BUG:gm_oob_write
        } else {
            DataCopy(a, gm[32], 64);  // BUG:gm_oob_read
        }
        q.FreeTensor(a);
    });
}

int gm_oob_read_bound() { return gm_copy<false, true>(1024, 64); }
int gm_oob_write_bound() { return gm_copy<true, true>(1024, 64); }
int gm_oob_read_alloc() { return gm_copy<false, false>(64, 0); }
int gm_oob_write_alloc() { return gm_copy<true, true>(64, 1024); }  // bound larger than the allocation

int gm_oob_getvalue() {
    float* g = gm_floats(1024);
    return sim::Launch(1, [&] {
        GlobalTensor<float> gm;
        gm.SetGlobalBuffer(g, 64);
        float v = gm.GetValue(64);  // BUG:gm_oob_getvalue
        (void)v;
    });
}

int gm_oob_freed() {
    float* g = gm_floats(64);
    sim::GmFree(g);
    return sim::Launch(1, [&] {
        GlobalTensor<float> gm;
        gm.SetGlobalBuffer(g, 64);
        gm.SetValue(0, 1.0f);  // BUG:gm_oob_freed
    });
}

// A fatal fault stops only the block that raised it; the other blocks still run.
int fault_block2() {
    int32_t* out = reinterpret_cast<int32_t*>(sim::GmAlloc(4 * 8 * sizeof(int32_t)));
    for (int i = 0; i < 32; ++i) out[i] = -1;
    const int rc = sim::Launch(4, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(out + 8 * GetBlockIdx(), 8);
        const uint64_t idx = GetBlockIdx() == 2 ? 8 : 0;
        g.SetValue(idx, static_cast<int32_t>(GetBlockIdx()));  // BUG:fault_block2 (block 2 writes one past its bound)
        g.SetValue(1, 100 + static_cast<int32_t>(GetBlockIdx()));
    });
    std::printf("out=");
    for (int i = 0; i < 32; i += 8) std::printf("%s%d,%d", i ? " " : "", out[i], out[i + 1]);
    std::printf("\n");
    return rc;
}

// ---- UB bounds / vector constraints ---------------------------------------------------------------

int ub_oob() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256 * sizeof(float));
        LocalTensor<float> a = q.AllocTensor<float>();
        Duplicate(a, 0.0f, 512);  // BUG:ub_oob (tensor holds 256)
        q.FreeTensor(a);
    });
}

int ub_oob_getvalue() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 256 * sizeof(float));
        LocalTensor<float> t = buf.Get<float>();
        t.SetValue(256, 1.0f);  // BUG:ub_oob_getvalue
    });
}

int vec_count_align() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf, maskBuf;
        pipe.InitBuffer(buf, 128 * sizeof(float));
        pipe.InitBuffer(maskBuf, 64);
        LocalTensor<float> x = buf.Get<float>();
        LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
        Duplicate(x, 1.0f, 128);
        Compare(mask, x, x[64], CMPMODE::LT, 40);  // BUG:vec_count_align (160 B, not a multiple of 256 B)
    });
}

// Cast combinations outside the documented per-product tables (CAST-UNSUPPORTED).
int cast_same_type() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 256 * sizeof(half));
        LocalTensor<half> h = buf.Get<half>();
        Duplicate(h, half(1.0f), 256);
        Cast(h[128], h, RoundMode::CAST_NONE, 128);  // BUG:cast_same_type (half -> half is not in the table)
    });
}

int cast_mode() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> fb, ib;
        pipe.InitBuffer(fb, 64 * sizeof(float));
        pipe.InitBuffer(ib, 64 * sizeof(int32_t));
        LocalTensor<float> f = fb.Get<float>();
        LocalTensor<int32_t> i = ib.Get<int32_t>();
        Duplicate(f, 1.5f, 64);
        Cast(i, f, RoundMode::CAST_NONE, 64);  // BUG:cast_mode (float -> int32_t: RINT/FLOOR/CEIL/ROUND/TRUNC only)
    });
}

int cast_level0_pair() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> fb, ib;
        pipe.InitBuffer(fb, 64 * sizeof(float));
        pipe.InitBuffer(ib, 64 * sizeof(int8_t));
        LocalTensor<float> f = fb.Get<float>();
        LocalTensor<int8_t> i = ib.Get<int8_t>();
        Duplicate(f, 1.5f, 64);
        Cast(i, f, RoundMode::CAST_RINT, 64, 1, {1, 1, 2, 8});  // BUG:cast_level0_pair (float -> int8_t: not in the table)
    });
}

int cast_level0_mode() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> fb, hb;
        pipe.InitBuffer(fb, 64 * sizeof(float));
        pipe.InitBuffer(hb, 64 * sizeof(half));
        LocalTensor<float> f = fb.Get<float>();
        LocalTensor<half> h = hb.Get<half>();
        Duplicate(h, half(1.5f), 64);
        const uint64_t mask[2] = {~0ull, 0};
        Cast(f, h, RoundMode::CAST_RINT, mask, 1, {1, 1, 8, 4});  // BUG:cast_level0_mode (half -> float: CAST_NONE only)
    });
}

// float -> half with CAST_RINT: documented on A2, not on 310P (CAST_NONE / CAST_ODD only there).
int cast_f32_f16_rint() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> fb, hb;
        pipe.InitBuffer(fb, 64 * sizeof(float));
        pipe.InitBuffer(hb, 64 * sizeof(half));
        LocalTensor<float> f = fb.Get<float>();
        LocalTensor<half> h = hb.Get<half>();
        Duplicate(f, 2.5f, 64);
        Cast(h, f, RoundMode::CAST_RINT, 64);  // BUG:cast_f32_f16_rint
        std::printf("h0=%g\n", static_cast<float>(h.GetValue(0)));
    });
}

int param_range() {
    float* g = gm_floats(1024);
    return sim::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024 * sizeof(float));
        GlobalTensor<float> gm;
        gm.SetGlobalBuffer(g, 1024);
        LocalTensor<float> a = q.AllocTensor<float>();
        DataCopyParams p;
        p.blockCount = 5000;
        p.blockLen = 1;
        DataCopy(a, gm, p);  // BUG:param_range (blockCount > 4095)
        q.FreeTensor(a);
    });
}

int param_range_ext() {
    float* g = gm_floats(1024);
    return sim::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024 * sizeof(float));
        GlobalTensor<float> gm;
        gm.SetGlobalBuffer(g, 1024);
        LocalTensor<float> a = q.AllocTensor<float>();
        DataCopyPad(a, gm, DataCopyExtParams{1, 6, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0});  // BUG:param_range_ext (6 B)
        q.FreeTensor(a);
    });
}

int param_range_ext_len() {
    float* g = gm_floats(1024);
    return sim::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024 * sizeof(float));
        GlobalTensor<float> gm;
        gm.SetGlobalBuffer(g, 1024);
        LocalTensor<float> a = q.AllocTensor<float>();
        DataCopyPad(a, gm, DataCopyExtParams{1, 3000000, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0});  // BUG:param_range_ext_len
        q.FreeTensor(a);
    });
}

// ---- synchronisation ------------------------------------------------------------------------------

int sync_unpaired_wait() {
    return sim::Launch(1, [] {
        SetFlag<HardEvent::MTE2_V>(1);
        WaitFlag<HardEvent::MTE2_V>(1);
        WaitFlag<HardEvent::MTE2_V>(0);  // BUG:sync_unpaired_wait
    });
}

int sync_unpaired_set() {
    return sim::Launch(1, [] {
        SetFlag<HardEvent::V_MTE3>(1);  // BUG:sync_unpaired_set
        PipeBarrier<PIPE_ALL>();
    });
}

// ---- launch ---------------------------------------------------------------------------------------

int block_dim() {
    return sim::Launch(0, [] {});  // BUG:block_dim
}

int block_dim_max() {
    return sim::Launch(ASCEND_SIM_MAX_BLOCKS + 1, [] {});  // BUG:block_dim_max
}

int spin() {
    volatile uint64_t counter = 0;
    return sim::Launch(1, [&] {
        for (;;) counter = counter + 1;
    });
}

int crash() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64);
        LocalTensor<float> t = buf.Get<float>();
        t.SetValue(0, 1.0f);  // BUG:crash (last API call before the wild write)
        volatile int* volatile p = nullptr;
        *p = 1;
    });
}

struct Variant {
    const char* name;
    int (*fn)();
};

const Variant kVariants[] = {
    {"ub_overflow", ub_overflow},
    {"buffer_limit", buffer_limit},
    {"datacopy_align", datacopy_align},
    {"datacopypad", datacopypad},
    {"ub_align", ub_align},
    {"que_alloc", que_alloc},
    {"que_full", que_full},
    {"que_empty", que_empty},
    {"que_free", que_free},
    {"que_free_foreign", que_free_foreign},
    {"que_leak", que_leak},
    {"que_state", que_state},
    {"use_after_free", use_after_free},
    {"use_after_free_realloc", use_after_free_realloc},
    {"gm_oob_read_bound", gm_oob_read_bound},
    {"gm_oob_write_bound", gm_oob_write_bound},
    {"gm_oob_read_alloc", gm_oob_read_alloc},
    {"gm_oob_write_alloc", gm_oob_write_alloc},
    {"gm_oob_getvalue", gm_oob_getvalue},
    {"gm_oob_freed", gm_oob_freed},
    {"fault_block2", fault_block2},
    {"ub_oob", ub_oob},
    {"ub_oob_getvalue", ub_oob_getvalue},
    {"vec_count_align", vec_count_align},
    {"cast_same_type", cast_same_type},
    {"cast_mode", cast_mode},
    {"cast_level0_pair", cast_level0_pair},
    {"cast_level0_mode", cast_level0_mode},
    {"cast_f32_f16_rint", cast_f32_f16_rint},
    {"param_range", param_range},
    {"param_range_ext", param_range_ext},
    {"param_range_ext_len", param_range_ext_len},
    {"sync_unpaired_wait", sync_unpaired_wait},
    {"sync_unpaired_set", sync_unpaired_set},
    {"block_dim", block_dim},
    {"block_dim_max", block_dim_max},
    {"spin", spin},
    {"crash", crash},
};

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        for (const Variant& v : kVariants) {
            if (std::strcmp(v.name, argv[1]) == 0) return v.fn() != 0 ? 1 : 0;
        }
    }
    std::fprintf(stderr, "usage: bugs <variant>; variants:");
    for (const Variant& v : kVariants) std::fprintf(stderr, " %s", v.name);
    std::fprintf(stderr, "\n");
    return 2;
}
