// Cross-core flags (ascend_sim/crossflag.h): an AIC/AIV ping-pong in the style of CATLASS FAI (ref_next §2.2) and
// planted bugs.   usage: crossflag <variant> [out_dir]
//
// fai_ring3 / fai_ring2: per AI Core, T steps; AIC: S[j] = A[j] x B1 (Mmad) -> Fixpipe to S slot j % R -> set(1);
// two steps behind, wait(2) -> O[j] = P[j] x B2 -> Fixpipe to O slot -> set(3). Each AIV (16 of the 32 rows): wait(1)
// -> P = half(S / 8) -> P slot -> set(2); two steps behind, wait(3) -> acc += O. R = 3 is FAI's ring (race-free);
// R = 2 reuses an S slot before the AIV has read it (GM-RACE). fai_lockstep: no lead (PV(j) right after QK(j)) and one
// slot per ring, race-free but serial: each side waits for the other on every step (the cost model's planted stall,
// tests/test_cost_crossflag.py). With out_dir the inputs and the output are written there
// (a.bin, b1.bin, b2.bin, out.bin) for the numpy reference in tests/sim/test_crossflag.py.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "kernel_tiling/kernel_tiling.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

constexpr uint32_t kCores = 2, kSteps = 5, kM = 32, kK = 32, kN = 32, kN2 = 32, kRows = kM / 2;

void save(const char* dir, const char* name, const void* p, size_t bytes) {
    if (!dir) return;
    char path[512];
    std::snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE* f = std::fopen(path, "wb");
    if (!f) return;
    std::fwrite(p, 1, bytes, f);
    std::fclose(f);
}

// One cube tile: C (L0C) = L1 tile a [kM x K] (NZ) x L1 tile b [K x N] (NZ), then Fixpipe to `dst` (float, row pitch N).
void cube_tile(const LocalTensor<half>& aL1, const LocalTensor<half>& bL1, const LocalTensor<half>& aL0, const LocalTensor<half>& bL0,
               const LocalTensor<float>& cL0, const GlobalTensor<float>& dst, uint32_t K, uint32_t N) {
    PipeBarrier<PIPE_ALL>();
    for (uint32_t m1 = 0; m1 < kM / 16; ++m1)  // A: NZ -> Zz
        LoadData(aL0[m1 * (K / 16) * 256], aL1, LoadData2DParams(m1, K / 16, kM / 16, 0, 0, false, 0));
    for (uint32_t k1 = 0; k1 < K / 16; ++k1)  // B: NZ -> Zn (fractals transposed)
        LoadData(bL0[k1 * (N / 16) * 256], bL1, LoadData2DParams(k1, N / 16, K / 16, 0, 0, true, 0));
    PipeBarrier<PIPE_ALL>();
    Mmad(cL0, aL0, bL0, MmadParams(kM, N, K, 0, false, true));
    PipeBarrier<PIPE_ALL>();
    Fixpipe(dst, cL0, FixpipeParamsV220(N, kM, kM, N, false));
    PipeBarrier<PIPE_ALL>();
}

int fai(uint32_t R, const char* dir, uint32_t lead = 2) {
    SetKernelMode(KernelMode::MIX_MODE);
    half* a = reinterpret_cast<half*>(sim::GmAlloc(kCores * kSteps * kM * kK * sizeof(half)));
    half* b1 = reinterpret_cast<half*>(sim::GmAlloc(kK * kN * sizeof(half)));
    half* b2 = reinterpret_cast<half*>(sim::GmAlloc(kN * kN2 * sizeof(half)));
    float* sWs = reinterpret_cast<float*>(sim::GmAlloc(kCores * R * kM * kN * sizeof(float)));
    half* pWs = reinterpret_cast<half*>(sim::GmAlloc(kCores * R * kM * kN * sizeof(half)));
    float* oWs = reinterpret_cast<float*>(sim::GmAlloc(kCores * R * kM * kN2 * sizeof(float)));
    float* out = reinterpret_cast<float*>(sim::GmAlloc(kCores * kM * kN2 * sizeof(float)));
    for (uint32_t i = 0; i < kCores * kSteps * kM * kK; ++i) a[i] = half(float(int((i * 7) % 5) - 2));
    for (uint32_t i = 0; i < kK * kN; ++i) b1[i] = half(float(int((i * 3) % 5) - 2));
    for (uint32_t i = 0; i < kN * kN2; ++i) b2[i] = half(float(int((i * 11) % 7) - 3));
    const int rc = sim::Launch(kCores, [&] {
        SetSyncBaseAddr(0);
        TPipe pipe;
        if ASCEND_IS_AIC {
            const uint32_t c = static_cast<uint32_t>(GetBlockIdx());
            TBuf<TPosition::A1> a1, p1;
            TBuf<TPosition::B1> w1, w2;
            TBuf<TPosition::A2> a2;
            TBuf<TPosition::B2> b2l0;
            TBuf<TPosition::CO1> co1;
            pipe.InitBuffer(a1, kM * kK * sizeof(half));
            pipe.InitBuffer(p1, kM * kN * sizeof(half));
            pipe.InitBuffer(w1, kK * kN * sizeof(half));
            pipe.InitBuffer(w2, kN * kN2 * sizeof(half));
            pipe.InitBuffer(a2, kM * kK * sizeof(half));
            pipe.InitBuffer(b2l0, kK * kN * sizeof(half));
            pipe.InitBuffer(co1, kM * kN * sizeof(float));
            GlobalTensor<half> ag, b1g, b2g, pg;
            GlobalTensor<float> sg, og;
            ag.SetGlobalBuffer(a + c * kSteps * kM * kK, kSteps * kM * kK);
            b1g.SetGlobalBuffer(b1, kK * kN);
            b2g.SetGlobalBuffer(b2, kN * kN2);
            sg.SetGlobalBuffer(sWs + c * R * kM * kN, R * kM * kN);
            pg.SetGlobalBuffer(pWs + c * R * kM * kN, R * kM * kN);
            og.SetGlobalBuffer(oWs + c * R * kM * kN2, R * kM * kN2);
            LocalTensor<half> aL1 = a1.Get<half>(), pL1 = p1.Get<half>(), b1L1 = w1.Get<half>(), b2L1 = w2.Get<half>();
            LocalTensor<half> aL0 = a2.Get<half>(), bL0 = b2l0.Get<half>();
            LocalTensor<float> cL0 = co1.Get<float>();
            DataCopy(b1L1, b1g, Nd2NzParams(1, kK, kN, 0, kN, kK, 1, 0));
            DataCopy(b2L1, b2g, Nd2NzParams(1, kN, kN2, 0, kN2, kN, 1, 0));
            for (uint32_t j = 0; j < kSteps + lead; ++j) {
                if (j < kSteps) {  // QK(j)
                    PipeBarrier<PIPE_ALL>();
                    DataCopy(aL1, ag[j * kM * kK], Nd2NzParams(1, kM, kK, 0, kK, kM, 1, 0));
                    cube_tile(aL1, b1L1, aL0, bL0, cL0, sg[(j % R) * kM * kN], kK, kN);
                    CrossCoreSetFlag<2, PIPE_FIX>(1);  // S ready
                }
                if (j >= lead) {  // PV(j - lead)
                    CrossCoreWaitFlag(2);  // P ready (both AIV)
                    PipeBarrier<PIPE_ALL>();
                    DataCopy(pL1, pg[((j - lead) % R) * kM * kN], Nd2NzParams(1, kM, kN, 0, kN, kM, 1, 0));
                    cube_tile(pL1, b2L1, aL0, bL0, cL0, og[((j - lead) % R) * kM * kN2], kN, kN2);
                    CrossCoreSetFlag<2, PIPE_FIX>(3);  // O_tmp ready
                }
            }
        } else {
            const uint32_t c = static_cast<uint32_t>(GetBlockIdx() / GetSubBlockNum());
            const uint32_t r0 = static_cast<uint32_t>(GetSubBlockIdx()) * kRows;
            TBuf<TPosition::VECCALC> sb, pb, ob, accb;
            pipe.InitBuffer(sb, kRows * kN * sizeof(float));
            pipe.InitBuffer(pb, kRows * kN * sizeof(half));
            pipe.InitBuffer(ob, kRows * kN2 * sizeof(float));
            pipe.InitBuffer(accb, kRows * kN2 * sizeof(float));
            LocalTensor<float> s = sb.Get<float>(), o = ob.Get<float>(), acc = accb.Get<float>();
            LocalTensor<half> p = pb.Get<half>();
            GlobalTensor<half> pg;
            GlobalTensor<float> sg, og, outg;
            sg.SetGlobalBuffer(sWs + c * R * kM * kN, R * kM * kN);
            pg.SetGlobalBuffer(pWs + c * R * kM * kN, R * kM * kN);
            og.SetGlobalBuffer(oWs + c * R * kM * kN2, R * kM * kN2);
            outg.SetGlobalBuffer(out + c * kM * kN2, kM * kN2);
            Duplicate(acc, 0.0f, kRows * kN2);
            for (uint32_t j = 0; j < kSteps + lead; ++j) {
                if (j < kSteps) {  // softmax stand-in: P = half(S / 8)
                    CrossCoreWaitFlag(1);
                    PipeBarrier<PIPE_ALL>();
                    DataCopy(s, sg[(j % R) * kM * kN + r0 * kN], kRows * kN);  // reads S slot j % R
                    PipeBarrier<PIPE_ALL>();
                    Muls(s, s, 0.125f, kRows * kN);
                    Cast(p, s, RoundMode::CAST_NONE, kRows * kN);
                    PipeBarrier<PIPE_ALL>();
                    DataCopy(pg[(j % R) * kM * kN + r0 * kN], p, kRows * kN);
                    CrossCoreSetFlag<2, PIPE_MTE3>(2);  // P ready
                }
                if (j >= lead) {  // rescale stand-in: acc += O_tmp
                    CrossCoreWaitFlag(3);
                    PipeBarrier<PIPE_ALL>();
                    DataCopy(o, og[((j - lead) % R) * kM * kN2 + r0 * kN2], kRows * kN2);
                    PipeBarrier<PIPE_ALL>();
                    Add(acc, acc, o, kRows * kN2);
                }
            }
            PipeBarrier<PIPE_ALL>();
            DataCopy(outg[r0 * kN2], acc, kRows * kN2);
        }
    });
    save(dir, "a.bin", a, kCores * kSteps * kM * kK * sizeof(half));
    save(dir, "b1.bin", b1, kK * kN * sizeof(half));
    save(dir, "b2.bin", b2, kN * kN2 * sizeof(half));
    save(dir, "out.bin", out, kCores * kM * kN2 * sizeof(float));
    for (void* q : {static_cast<void*>(a), static_cast<void*>(b1), static_cast<void*>(b2), static_cast<void*>(sWs), static_cast<void*>(pWs),
                    static_cast<void*>(oWs), static_cast<void*>(out)})
        sim::GmFree(q);
    return rc;
}

// ---- planted bugs and their correct twins ---------------------------------------------------------------------------

// Runs `body` as a MIX launch of `cores` AI Cores with a GM scratch of 4 KiB floats.
float* g_gm = nullptr;
template <class F>
int mix(uint32_t cores, F&& body, KernelMode mode = KernelMode::MIX_MODE) {
    SetKernelMode(mode);
    g_gm = reinterpret_cast<float*>(sim::GmAlloc(4096 * sizeof(float)));
    const int rc = sim::Launch(cores, body);
    sim::GmFree(g_gm);
    return rc;
}

int deadlock() {  // the AIC waits for flag 5, which nobody sets
    return mix(1, [] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(5);  // DEADLOCK: never set
        } else {
            CrossCoreSetFlag<2, PIPE_MTE3>(4);
        }
    });
}

int one_aiv_sets() {  // mode 2 from only AIV 0: the AIC counts once both AIV have set
    return mix(1, [] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(4);  // DEADLOCK: AIV 1 never sets
        } else if (GetSubBlockIdx() == 0) {
            CrossCoreSetFlag<2, PIPE_MTE3>(4);
        }
    });
}

int both_aiv_set() {  // the correct twin
    return mix(1, [] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(4);
        } else {
            CrossCoreSetFlag<2, PIPE_MTE3>(4);
        }
    });
}

int flag_id_16() {
    return mix(1, [] {
        if ASCEND_IS_AIV CrossCoreSetFlag<2, PIPE_MTE3>(16);  // BAD ID
    });
}

int pipe_s() {
    return mix(1, [] {
        if ASCEND_IS_AIC CrossCoreSetFlag<2, PIPE_S>(1);  // BAD PIPE S
    });
}

int pipe_all() {
    return mix(1, [] {
        if ASCEND_IS_AIC CrossCoreSetFlag<2, PIPE_ALL>(1);  // BAD PIPE ALL
    });
}

int mode_3() {
    return mix(1, [] {
        if ASCEND_IS_AIC CrossCoreSetFlag<3, PIPE_FIX>(1);  // BAD MODE
    });
}

int mode_1_on_aic() {
    return mix(1, [] {
        if ASCEND_IS_AIC CrossCoreSetFlag<1, PIPE_FIX>(1);  // MODE 1 ON AIC
    });
}

int aiv_only() {
    return mix(2, [] {
        CrossCoreSetFlag<0, PIPE_MTE3>(1);  // AIV-ONLY LAUNCH
        CrossCoreWaitFlag(1);
    }, KernelMode::AIV_MODE);
}

int aic_only() {
    return mix(1, [] {
        CrossCoreWaitFlag(1);  // AIC-ONLY LAUNCH
    }, KernelMode::AIC_MODE);
}

using AType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using CType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

// One Matmul object on the AI Core reserves flag ids 0 and 1; the AIV then use id 1 (mode 1). The AIC reaches
// REGIST_MATMUL_OBJ and ends there (it serves the Matmul API). reserved_ok uses id 2.
int matmul_reserved(uint16_t id) {
    AscendC::tiling::TCubeTiling t{};
    t.usedCoreNum = 1;
    t.M = t.N = t.Ka = t.Kb = 16;
    t.singleCoreM = t.singleCoreN = t.singleCoreK = 16;
    t.baseM = t.baseN = t.baseK = 16;
    t.stepM = t.stepN = t.stepKa = t.stepKb = 1;
    t.depthA1 = t.depthB1 = 1;
    t.dbL0A = t.dbL0B = t.dbL0C = 1;
    return mix(1, [&] {
        TPipe pipe;
        matmul::Matmul<AType, AType, CType> mm;
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
        CrossCoreSetFlag<1, PIPE_MTE3>(id);  // RESERVED BY MATMUL
        CrossCoreWaitFlag(id);
        mm.End();
    });
}

int syncall_reserved(uint16_t id) {  // SyncAll uses 11-14
    return mix(1, [&] {
        if ASCEND_IS_AIV {
            SyncAll();
            CrossCoreSetFlag<1, PIPE_MTE3>(id);  // RESERVED BY SYNCALL
            CrossCoreWaitFlag(id);
        }
    });
}

int mode0_left() {  // mode 0 among the AIV: every AIV sets, nobody waits
    return mix(2, [] {
        if ASCEND_IS_AIV CrossCoreSetFlag<0, PIPE_MTE3>(6);  // MODE 0 NOT WAITED
    });
}

int mode2_left() {  // the AIC sets mode 2 and the AIV never wait: a note, no error (no documented rule)
    return mix(1, [] {
        if ASCEND_IS_AIC CrossCoreSetFlag<2, PIPE_FIX>(6);  // MODE 2 NOT WAITED
    });
}

// Mode 0 as a barrier of the AIV: each writes its 8 floats, then reads its neighbour's. With the flags the exchange
// is ordered; without them it is a GM-RACE.
int exchange(bool sync) {
    return mix(2, [sync] {
        if ASCEND_IS_AIC return;
        const uint32_t v = static_cast<uint32_t>(GetBlockIdx()), n = static_cast<uint32_t>(GetBlockNum() * GetSubBlockNum());
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64);
        LocalTensor<float> t = buf.Get<float>();
        GlobalTensor<float> g;
        g.SetGlobalBuffer(g_gm, 4096);
        Duplicate(t, float(v), 8);
        PipeBarrier<PIPE_ALL>();
        DataCopy(g[v * 8], t, 8);
        if (sync) {
            CrossCoreSetFlag<0, PIPE_MTE3>(7);
            CrossCoreWaitFlag(7);
        }
        PipeBarrier<PIPE_ALL>();
        DataCopy(t, g[((v + 1) % n) * 8], 8);  // EXCHANGE READ
    });
}

// The AIV write GM on MTE3 and set the flag on PIPE_V: the set may fire before the copy lands. The twin orders MTE3
// before V with a barrier first.
int set_pipe(bool barrier) {
    return mix(1, [barrier] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(2);
            return;
        }
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64);
        LocalTensor<float> t = buf.Get<float>();
        GlobalTensor<float> g;
        g.SetGlobalBuffer(g_gm, 4096);
        Duplicate(t, 1.0f, 8);
        PipeBarrier<PIPE_ALL>();
        DataCopy(g[GetBlockIdx() * 8], t, 8);
        if (barrier) PipeBarrier<PIPE_ALL>();
        CrossCoreSetFlag<2, PIPE_V>(2);  // SET ON THE WRONG PIPE
    });
}

// The vector work of the AIV also runs on the AIC (no `if ASCEND_IS_AIV`): CORE-TYPE on the AIC; and an AIV that
// copies into L1: CORE-TYPE on the AIV.
int core_type(bool aivGuard) {
    return mix(1, [aivGuard] {
        TPipe pipe;
        if (!aivGuard || ASCEND_IS_AIV) {
            TBuf<TPosition::VECCALC> buf;
            pipe.InitBuffer(buf, 64);
            LocalTensor<float> t = buf.Get<float>();
            Duplicate(t, 1.0f, 8);  // VECTOR ON THE AIC
        }
        if (!aivGuard && ASCEND_IS_AIV) {
            TBuf<TPosition::A1> l1;
            pipe.InitBuffer(l1, 512);
            GlobalTensor<half> g;
            g.SetGlobalBuffer(reinterpret_cast<half*>(g_gm), 256);
            DataCopy(l1.Get<half>(), g, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));  // L1 ON AN AIV
        }
    });
}

// Fixpipe under SetAtomicAdd (ascendc.md "SetAtomicAdd": A2 adds on the L0C -> GM path too): C = ones(16x16) x
// ones(16x16) = 16 everywhere, written once, then added once: 32. With SetAtomicAdd<half> before a float Fixpipe the
// atomic type differs from the destination's: PARAM-RANGE.
int fixpipe_atomic(bool wrongType) {
    SetKernelMode(KernelMode::MIX_MODE);
    float* c = reinterpret_cast<float*>(sim::GmAlloc(256 * sizeof(float)));
    int rc = sim::Launch(1, [&] {
        if ASCEND_IS_AIV return;  // the AIC runs the body: the program uses the flags elsewhere
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(a1, 512);
        pipe.InitBuffer(a2, 512);
        pipe.InitBuffer(b2, 512);
        pipe.InitBuffer(co1, 1024);
        GlobalTensor<float> cg;
        cg.SetGlobalBuffer(c, 256);
        InitConstValue(a1.Get<half>(), InitConstValueParams<half>(1, 16, 0, half(1.0f)));
        PipeBarrier<PIPE_ALL>();
        LoadData(a2.Get<half>(), a1.Get<half>(), LoadData2DParams(0, 1, 1, 0, 0, false, 0));
        LoadData(b2.Get<half>(), a1.Get<half>(), LoadData2DParams(0, 1, 1, 0, 0, true, 0));
        PipeBarrier<PIPE_ALL>();
        Mmad(co1.Get<float>(), a2.Get<half>(), b2.Get<half>(), MmadParams(16, 16, 16, 0, false, true));
        PipeBarrier<PIPE_ALL>();
        Fixpipe(cg, co1.Get<float>(), FixpipeParamsV220(16, 16, 16, 16, false));
        PipeBarrier<PIPE_ALL>();
        if (wrongType) {
            SetAtomicAdd<half>();
        } else {
            SetAtomicAdd<float>();
        }
        Fixpipe(cg, co1.Get<float>(), FixpipeParamsV220(16, 16, 16, 16, false));  // ATOMIC FIXPIPE
        SetAtomicNone();
    });
    for (int i = 0; i < 256 && rc == 0; ++i)
        if (c[i] != 32.0f) {
            std::fprintf(stderr, "fixpipe_atomic: C[%d] = %g, expected 32\n", i, c[i]);
            rc = 1;
        }
    sim::GmFree(c);
    return rc;
}

struct Variant {
    const char* name;
    int (*fn)();
};

const Variant kVariants[] = {
    {"deadlock", deadlock},
    {"one_aiv_sets", one_aiv_sets},
    {"both_aiv_set", both_aiv_set},
    {"flag_id_16", flag_id_16},
    {"pipe_s", pipe_s},
    {"pipe_all", pipe_all},
    {"mode_3", mode_3},
    {"mode_1_on_aic", mode_1_on_aic},
    {"aiv_only", aiv_only},
    {"aic_only", aic_only},
    {"matmul_reserved", [] { return matmul_reserved(1); }},
    {"matmul_reserved_ok", [] { return matmul_reserved(2); }},
    {"syncall_reserved", [] { return syncall_reserved(12); }},
    {"syncall_reserved_ok", [] { return syncall_reserved(10); }},
    {"mode0_left", mode0_left},
    {"mode2_left", mode2_left},
    {"exchange_ok", [] { return exchange(true); }},
    {"exchange_race", [] { return exchange(false); }},
    {"set_pipe", [] { return set_pipe(false); }},
    {"set_pipe_ok", [] { return set_pipe(true); }},
    {"core_type", [] { return core_type(false); }},
    {"core_type_ok", [] { return core_type(true); }},
    {"fixpipe_atomic", [] { return fixpipe_atomic(false); }},
    {"fixpipe_atomic_type", [] { return fixpipe_atomic(true); }},
};

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        const char* dir = argc > 2 ? argv[2] : nullptr;
        if (std::strcmp(argv[1], "fai_ring3") == 0) return fai(3, dir) != 0;
        if (std::strcmp(argv[1], "fai_ring2") == 0) return fai(2, dir) != 0;
        if (std::strcmp(argv[1], "fai_lockstep") == 0) return fai(1, dir, 0) != 0;
        for (const Variant& v : kVariants)
            if (std::strcmp(v.name, argv[1]) == 0) return v.fn() != 0;
    }
    std::fprintf(stderr, "usage: crossflag <variant> [out_dir]\n");
    return 2;
}
