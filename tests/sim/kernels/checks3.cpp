// Bug classes a sequential run hides: a cross-core exchange through GM without SyncAll (GM-RACE on the
// read, ORDER-DEPENDENT with the order check), an atomic-add output nobody zeroed (ATOMIC-UNINIT), fp16
// overflow (FP16-OVERFLOW, opt-in); with correct twins.
//   usage: checks3 <variant>   (exit 0 iff Launch reported no error and the variant's own checks hold)
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

int g_fail = 0;
#define EXPECT(c)                                                              \
    do {                                                                       \
        if (!(c)) {                                                            \
            std::printf("EXPECT failed: %s (checks3.cpp:%d)\n", #c, __LINE__); \
            ++g_fail;                                                          \
        }                                                                      \
    } while (0)

template <HardEvent E>
void PipeSync() {
    SetFlag<E>(EVENT_ID0);
    WaitFlag<E>(EVENT_ID0);
}

// Each block publishes its value in a GM workspace slot, then reads its neighbour's slot: without a
// SyncAll in between the neighbour may not have written yet.
int exchange(bool sync) {
    const uint32_t n = 4;
    float* ws = reinterpret_cast<float*>(sim::GmAlloc(n * 8 * sizeof(float)));
    float* out = reinterpret_cast<float*>(sim::GmAlloc(n * 8 * sizeof(float)));
    std::memset(ws, 0, n * 8 * sizeof(float));
    const int rc = sim::Launch(n, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 8 * sizeof(float));
        LocalTensor<float> t = b.Get<float>();
        GlobalTensor<float> w, o;
        w.SetGlobalBuffer(ws, n * 8);
        o.SetGlobalBuffer(out, n * 8);
        const uint32_t me = static_cast<uint32_t>(GetBlockIdx());
        Duplicate(t, float(me + 1), 8);
        PipeSync<HardEvent::V_MTE3>();
        DataCopy(w[me * 8], t, 8);
        if (sync) SyncAll();
        PipeSync<HardEvent::MTE3_MTE2>();
        DataCopy(t, w[((me + 1) % n) * 8], 8);  // BUG without SyncAll: the neighbour's slot
        PipeSync<HardEvent::MTE2_MTE3>();
        DataCopy(o[me * 8], t, 8);
    });
    if (sync) EXPECT(out[0] == 2.0f && out[24] == 1.0f);
    sim::GmFree(ws);
    sim::GmFree(out);
    return rc;
}

// Blocks add their partial sums into `out` with SetAtomicAdd. The output must be zeroed first: by the
// host, or by block 0 before a SyncAll.
int atomic(int mode /* 0: nobody zeroes, 1: block 0 zeroes then SyncAll */) {
    const uint32_t n = 4;
    float* out = reinterpret_cast<float*>(sim::GmAlloc(8 * sizeof(float)));  // 0xFF poison, as launches leave outputs
    const int rc = sim::Launch(n, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 8 * sizeof(float));
        LocalTensor<float> t = b.Get<float>();
        GlobalTensor<float> o;
        o.SetGlobalBuffer(out, 8);
        if (mode == 1) {
            if (GetBlockIdx() == 0) {
                Duplicate(t, 0.0f, 8);
                PipeSync<HardEvent::V_MTE3>();
                DataCopy(o, t, 8);
                PipeSync<HardEvent::MTE3_V>();
            }
            SyncAll();
        }
        Duplicate(t, 1.5f, 8);
        PipeSync<HardEvent::V_MTE3>();
        SetAtomicAdd<float>();
        DataCopy(o, t, 8);  // BUG unless zeroed: adds into the poison
        SetAtomicNone();
    });
    if (mode == 1) EXPECT(out[0] == 6.0f && out[7] == 6.0f);
    sim::GmFree(out);
    return rc;
}

// A half product that overflows the half range.
int f16_overflow() {
    return sim::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 256 * sizeof(half));
        LocalTensor<half> t = b.Get<half>();
        Duplicate(t, half(300.0f), 128);
        Mul(t[128], t, t, 128);  // 90000 > 65504: overflows to inf
        EXPECT(float(t.GetValue(128)) > 65504.0f);
    });
}

struct Variant {
    const char* name;
    int (*fn)();
};

const Variant kVariants[] = {
    {"exchange_race", [] { return exchange(false); }},
    {"exchange_ok", [] { return exchange(true); }},
    {"atomic_uninit", [] { return atomic(0); }},
    {"atomic_zeroed_ok", [] { return atomic(1); }},
    {"f16_overflow", f16_overflow},
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
    std::fprintf(stderr, "usage: checks3 <variant>\n");
    return 2;
}
