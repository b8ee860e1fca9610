// ascend_sim/matmul.h - the Matmul high-level API (ref §3): matmul::Matmul<MatmulType<...>, ...>,
// REGIST_MATMUL_OBJ, SetTensorA/B, SetBias, SetOrgShape/SetSingleShape/SetTail, Iterate + GetTensorC,
// IterateAll (and IterateAll<false> + WaitIterateAll), End. The emulated cube multiplies f16/bf16 operands exactly in fp32 and accumulates in
// fp32 (a 16x16x16 fractal step per MAC group, counted as cube MACs), base block by base block.
// Checks: the TCubeTiling must fit L1 / L0A / L0B / L0C (ref §5.1) and use 16-multiples for the base
// sizes (fractal, ref §5.1); misuse of the API (missing operands, GetTensorC without Iterate, use after
// End) is reported as MATMUL-STATE. Written from /work/shared/reference/ascendc.md; no CANN code.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_MATMUL_H
#define ASCEND_SIM_ASCEND_SIM_MATMUL_H

#include "copy.h"
#include "cube_tiling.h"
#include "gemm.h"
#include "launch.h"
#include "pipe.h"

namespace AscendC {

enum class CubeFormat : uint8_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class LayoutMode : uint8_t { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };

// The Matmul API's system workspace (the KFC message area between AIV and AIC on hardware): the kernel
// hands its workspace argument over with SetSysWorkspace; the emulator only keeps the pointer.
namespace sim::detail {
inline __gm__ uint8_t* g_sysWorkspace = nullptr;

// An enAtomic write of the Matmul API adds into an output element that still holds the launch's poison.
inline void report_matmul_atomic_uninit(const char* api, const void* gm, const std::source_location& loc) {
    uintptr_t begin = 0;
    uint64_t size = 0;
    const uintptr_t a = reinterpret_cast<uintptr_t>(gm);
    const bool known = gm_floor(a, begin, size) && a - begin < size;
    report("ATOMIC-UNINIT", loc,
           "%s with enAtomic adds into GM byte %llu of a %llu-byte allocation, which still holds the 0xFF poison the launch leaves "
           "in outputs: the kernel never zeroed (or wrote) the output before accumulating into it (on hardware the sum starts from "
           "whatever GM held)",
           api, known ? (unsigned long long)(a - begin) : 0ull, known ? (unsigned long long)size : 0ull);
}
}
// (every block sets the same pointer, possibly on parallel threads: relaxed atomic accesses)
inline void SetSysWorkspace(GM_ADDR workspace) { __atomic_store_n(&sim::detail::g_sysWorkspace, workspace, __ATOMIC_RELAXED); }
inline __gm__ uint8_t* GetSysWorkSpacePtr() { return __atomic_load_n(&sim::detail::g_sysWorkspace, __ATOMIC_RELAXED); }

}  // namespace AscendC

namespace matmul {

// CANN's matmul namespace sees the whole AscendC namespace (kernels write matmul::TPosition, ...).
using namespace AscendC;

// enUnitFlag: Mmad and Fixpipe hand L0C over 512 B at a time (CANN tiling.h: CFG_NORM = GetNormalConfig(), whose
// enUnitFlag defaults to true; CFG_MDL = GetMDLConfig(), false); only counted for the cost model (l0c2gm_unitflag)
struct MatmulConfig {
    bool doNorm = true;
    bool doMultiDataLoad = false;
    bool enUnitFlag = true;
};
inline constexpr MatmulConfig CFG_NORM{true, false, true};
inline constexpr MatmulConfig CFG_MDL{false, true, false};

template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false, LayoutMode LAYOUT = LayoutMode::NONE,
          bool IBSHARE = false>
struct MatmulType {
    static constexpr TPosition pos = POSITION;
    static constexpr CubeFormat format = FORMAT;
    using T = TYPE;
    static constexpr bool isTrans = ISTRANS;
    static constexpr LayoutMode layout = LAYOUT;
    static constexpr bool ibShare = IBSHARE;
};

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM>
class Matmul {
    using SrcAT = typename A_TYPE::T;
    using SrcBT = typename B_TYPE::T;
    using DstT = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;
    static_assert(A_TYPE::pos == TPosition::GM && B_TYPE::pos == TPosition::GM,
                  "ascend-sim: Matmul operands A and B are emulated in TPosition::GM only");
    static_assert(A_TYPE::format == CubeFormat::ND && B_TYPE::format == CubeFormat::ND && C_TYPE::format == CubeFormat::ND,
                  "ascend-sim: only CubeFormat::ND operands are emulated");
    static_assert(std::is_same_v<SrcAT, half> || std::is_same_v<SrcAT, bfloat16_t> || std::is_same_v<SrcAT, float>,
                  "ascend-sim: Matmul A/B must be half, bfloat16_t or float (A2; the cube accumulates in fp32, ref_next §7)");
    static_assert(std::is_same_v<SrcAT, SrcBT>, "ascend-sim: Matmul A and B must have the same type");
    static_assert(std::is_same_v<DstT, float> || std::is_same_v<DstT, half> || std::is_same_v<DstT, bfloat16_t>,
                  "ascend-sim: Matmul C must be float, half or bfloat16_t");
    static_assert(std::is_same_v<BiasT, float>, "ascend-sim: the Matmul bias is float (added to the fp32 accumulator)");
    static_assert(C_TYPE::pos == TPosition::GM || C_TYPE::pos == TPosition::VECIN || C_TYPE::pos == TPosition::VECCALC,
                  "ascend-sim: C goes to GM or to a UB (VECIN/VECCALC) tensor");

public:
    Matmul() = default;

    // REGIST_MATMUL_OBJ calls this; also public as on hardware.
    void Init(const AscendC::tiling::TCubeTiling* tiling, AscendC::TPipe* tpipe = nullptr,
              std::source_location loc = std::source_location::current()) {
        (void)tpipe;
        using namespace AscendC::sim::detail;
        touch(loc);
        // The AIC of a MIX launch that runs it (crossflag.h) enters the Matmul server here and leaves the kernel when
        // the AIV end theirs (the AIV's calls compute the product in this emulator): the AIC block ends.
        if (st().isAic && g_launch.aicRuns) throw AicServerDone{};
        st().matmulObjs += 1;
        if (tiling == nullptr) fatal("MATMUL-STATE", loc, "Matmul::Init / REGIST_MATMUL_OBJ with a null TCubeTiling");
        t_ = *tiling;
        check_tiling(loc);
        orgM_ = t_.M;
        orgN_ = t_.N;
        orgKa_ = t_.Ka;
        orgKb_ = t_.Kb;
        singleM_ = t_.singleCoreM;
        singleN_ = t_.singleCoreN;
        singleK_ = t_.singleCoreK;
        l0c_.assign(static_cast<size_t>(t_.baseM) * static_cast<size_t>(t_.baseN), 0.0f);
        inited_ = true;
    }

    void SetOrgShape(int orgM, int orgN, int orgK, std::source_location loc = std::source_location::current()) {
        SetOrgShape(orgM, orgN, orgK, orgK, 0, loc);
    }
    void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0,
                     std::source_location loc = std::source_location::current()) {
        (void)orgKc;
        alive("SetOrgShape", loc);
        orgM_ = orgM;
        orgN_ = orgN;
        orgKa_ = orgKa;
        orgKb_ = orgKb;
    }
    void SetSingleShape(int singleM, int singleN, int singleK, std::source_location loc = std::source_location::current()) {
        alive("SetSingleShape", loc);
        singleM_ = singleM;
        singleN_ = singleN;
        singleK_ = singleK;
        tailM_ = tailN_ = tailK_ = -1;
    }
    // The block of the next computation when it is smaller than singleCoreM/N/K (tail cores); -1 keeps a size.
    void SetTail(int tailM = -1, int tailN = -1, int tailK = -1, std::source_location loc = std::source_location::current()) {
        alive("SetTail", loc);
        tailM_ = tailM;
        tailN_ = tailN;
        tailK_ = tailK;
    }

    void SetTensorA(const AscendC::GlobalTensor<SrcAT>& gm, bool isTransposeA = false,
                    std::source_location loc = std::source_location::current()) {
        alive("SetTensorA", loc);
        a_ = gm;
        transA_ = isTransposeA;
        haveA_ = true;
        restart();
    }
    void SetTensorB(const AscendC::GlobalTensor<SrcBT>& gm, bool isTransposeB = false,
                    std::source_location loc = std::source_location::current()) {
        alive("SetTensorB", loc);
        b_ = gm;
        transB_ = isTransposeB;
        haveB_ = true;
        restart();
    }
    void SetBias(const AscendC::GlobalTensor<BiasT>& gm, std::source_location loc = std::source_location::current()) {
        alive("SetBias", loc);
        if (!t_.isBias) {
            AscendC::sim::detail::fatal("MATMUL-STATE", loc, "SetBias: the TCubeTiling has isBias = 0 (the host tiling must enable the bias)");
        }
        bias_ = gm;
        haveBias_ = true;
        biasCleared_ = false;
        restart();
    }
    // Clears the bias flag: later computations add no bias, whatever the tiling's isBias (CANN DisableBias /
    // ClearBias, atlasascendc_api_07_0636 / 0667: "clears the bias flag ... the bias is no longer enabled").
    void DisableBias() {
        haveBias_ = false;
        biasCleared_ = true;
    }
    // UB scratch the Matmul API may use (e.g. for a C in UB); the emulator needs none and keeps nothing.
    template <class T>
    void SetLocalWorkspace(const AscendC::LocalTensor<T>& tmp, std::source_location loc = std::source_location::current()) {
        alive("SetLocalWorkspace", loc);
        (void)tmp;
    }
    void ClearBias() { DisableBias(); }

    // Computes the next baseM x baseN block of C into L0C; false once every block of the computation
    // was produced (the next call starts the computation again).
    template <bool sync = true>
    bool Iterate(bool enPartialSum = false, std::source_location loc = std::source_location::current()) {
        (void)enPartialSum;
        alive("Iterate", loc);
        if (!running_) begin("Iterate", loc);
        if (pending_) {
            AscendC::sim::detail::report("MATMUL-STATE", loc,
                                         "Iterate: the previous base block was never fetched with GetTensorC (its result is lost)");
        }
        if (idx_ >= mIter_ * nIter_) {
            running_ = false;
            pending_ = false;
            return false;
        }
        compute_block(idx_++);
        pending_ = true;
        return true;
    }

    // Copies the block of the last Iterate() from L0C to a UB tensor. enSequentialWrite: the block is
    // written at the start of `c`, row i at i x baseN; otherwise at its place in a singleCoreM x
    // singleCoreN matrix (row pitch singleCoreN). Only the block's rows x cols elements are written.
    template <bool sync = true>
    void GetTensorC(const AscendC::LocalTensor<DstT>& c, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    std::source_location loc = std::source_location::current()) {
        using namespace AscendC::sim::detail;
        alive("GetTensorC", loc);
        fetch_check(loc);
        const uint64_t pitch = enSequentialWrite ? uint64_t(t_.baseN) : uint64_t(curN_);
        const uint64_t first = enSequentialWrite ? 0 : uint64_t(r0_) * pitch + c0_;
        check_operand("GetTensorC", "c", c.sim_view(), first + uint64_t(rows_ - 1) * pitch + cols_, loc);
        for (uint32_t i = 0; i < rows_; ++i) {
            DstT* row = c.sim_ptr + first + i * pitch;
            for (uint32_t j = 0; j < cols_; ++j) store(row[j], l0c_[i * size_t(t_.baseN) + j], enAtomic);
            set_def(row, uint64_t(cols_) * sizeof(DstT));
            race_sync_write(row, uint64_t(cols_) * sizeof(DstT));  // GetTensorC<sync = true> returns with the data in UB
        }
        pending_ = false;
    }

    // Copies the block of the last Iterate() to GM: at its place in C (row pitch N of SetOrgShape), or with
    // enSequentialWrite at the start of `gm`, row i at i x baseN ("continuous write: [baseM, baseN]" rather than the
    // skip-write into [singleCoreM, singleCoreN], CANN GetTensorC, atlasascendc_api_07_0213).
    template <bool sync = true>
    void GetTensorC(const AscendC::GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    std::source_location loc = std::source_location::current()) {
        alive("GetTensorC", loc);
        fetch_check(loc);
        write_block_gm("GetTensorC", gm, enAtomic, loc, enSequentialWrite);
        pending_ = false;
    }

    // Computes the whole singleCoreM x singleCoreN block (or the tail set by SetTail) into C in GM.
    // IterateAll<false> is the asynchronous form (MIX kernels only; C in GM only: CANN "异步场景",
    // atlas_ascendc_10_10015): the call returns at once and, with waitIterateAll = true, C is defined after
    // WaitIterateAll(). The emulator computes C at once and keeps C's extent pending until the wait: an access to it
    // before then is MATMUL-ASYNC (core_rt.h). The cube work is counted apart (cube_macs_async, gm2l1_async): the
    // cost model lets the AIV's own pipes overlap it (docs/cost_model.md "MIX cores").
    template <bool sync = true>
    void IterateAll(const AscendC::GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    bool waitIterateAll = false, bool fakeMsg = false, std::source_location loc = std::source_location::current()) {
        using namespace AscendC::sim::detail;
        (void)fakeMsg;
        alive("IterateAll", loc);
        if constexpr (!sync) {
            if (!AscendC::sim::detail::g_launch.inLaunch || AscendC::sim::detail::g_launch.mixRatio < 2) {
                fatal("MATMUL-STATE", loc, "IterateAll<false>: the asynchronous form exists in MIX kernels only (the AIV issues it to the AIC)");
            }
        }
        begin("IterateAll", loc);
        const uint64_t macs0 = cnt().cubeMacs, bytes0 = cnt().gm2l1;
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        while (idx_ < mIter_ * nIter_) {
            compute_block(idx_++);
            const uint64_t pitch = enSequentialWrite ? uint64_t(t_.baseN) : uint64_t(orgN_);
            const uint64_t first = enSequentialWrite ? 0 : uint64_t(r0_) * orgN_ + c0_;
            const auto b = reinterpret_cast<uintptr_t>(gm.sim_ptr + first);
            lo = b < lo ? b : lo;
            const uintptr_t e = b + (uint64_t(rows_ - 1) * pitch + cols_) * sizeof(DstT);
            hi = e > hi ? e : hi;
            write_block_gm("IterateAll", gm, enAtomic, loc, enSequentialWrite);
        }
        running_ = false;
        pending_ = false;
        if constexpr (!sync) {
            cnt().cubeMacsAsync += cnt().cubeMacs - macs0;
            cnt().gm2l1Async += cnt().gm2l1 - bytes0;
            if (waitIterateAll && hi > lo) {
                st().asyncResults.push_back(GmSpan{lo, hi, "IterateAll<false>", loc});
                asyncWaits_.push_back(hi);
            }
        }
    }

    // Waits for the oldest IterateAll<false>(..., waitIterateAll = true) of this object; its C is defined afterwards.
    void WaitIterateAll(std::source_location loc = std::source_location::current()) {
        using namespace AscendC::sim::detail;
        alive("WaitIterateAll", loc);
        if (asyncWaits_.empty()) {
            fatal("MATMUL-STATE", loc, "WaitIterateAll without an IterateAll<false>(..., waitIterateAll = true) to wait for");
        }
        const uintptr_t end = asyncWaits_.front();
        asyncWaits_.erase(asyncWaits_.begin());
        auto& r = st().asyncResults;
        for (auto it = r.begin(); it != r.end(); ++it) {
            if (it->end == end) {
                r.erase(it);
                break;
            }
        }
    }

    void End(std::source_location loc = std::source_location::current()) {
        alive("End", loc);
        if (pending_) {
            AscendC::sim::detail::report("MATMUL-STATE", loc, "End: the last base block was never fetched with GetTensorC");
        }
        if (!asyncWaits_.empty()) {
            AscendC::sim::detail::report("MATMUL-STATE", loc, "End: %zu IterateAll<false> never waited for (WaitIterateAll)",
                                         asyncWaits_.size());
        }
        ended_ = true;
        endLoc_ = loc;
    }

private:
    void check_tiling(const std::source_location& loc) const {
        using namespace AscendC::sim::detail;
        const auto& t = t_;
        if (t.baseM <= 0 || t.baseN <= 0 || t.baseK <= 0 || t.baseM % 16 || t.baseN % 16 || t.baseK % 16) {
            fatal("CUBE-TILING", loc,
                  "TCubeTiling baseM = %d, baseN = %d, baseK = %d: base sizes must be positive multiples of 16 (the cube works on "
                  "16 x 16 fractals of f16/bf16)",
                  t.baseM, t.baseN, t.baseK);
        }
        if (t.M <= 0 || t.N <= 0 || t.Ka <= 0 || t.Ka != t.Kb) {
            fatal("CUBE-TILING", loc, "TCubeTiling M = %d, N = %d, Ka = %d, Kb = %d: shapes must be positive and Ka == Kb", t.M, t.N,
                  t.Ka, t.Kb);
        }
        if (t.singleCoreM <= 0 || t.singleCoreN <= 0 || t.singleCoreK <= 0 || t.singleCoreM > t.M || t.singleCoreN > t.N ||
            t.singleCoreK > t.Ka) {
            fatal("CUBE-TILING", loc, "TCubeTiling singleCoreM/N/K = %d/%d/%d must be in [1, M/N/K] = [1, %d/%d/%d]", t.singleCoreM,
                  t.singleCoreN, t.singleCoreK, t.M, t.N, t.Ka);
        }
        if (t.stepM < 1 || t.stepN < 1 || t.stepKa < 1 || t.stepKb < 1 || t.depthA1 < t.stepM * t.stepKa ||
            t.depthB1 < t.stepN * t.stepKb) {
            fatal("CUBE-TILING", loc,
                  "TCubeTiling steps stepM/stepN/stepKa/stepKb = %d/%d/%d/%d must be >= 1 with depthA1 (%d) >= stepM x stepKa and "
                  "depthB1 (%d) >= stepN x stepKb",
                  t.stepM, t.stepN, t.stepKa, t.stepKb, t.depthA1, t.depthB1);
        }
        const uint64_t sa = sizeof(SrcAT), sb = sizeof(SrcBT);
        const uint64_t dbA = t.dbL0A > 1 ? 2 : 1, dbB = t.dbL0B > 1 ? 2 : 1, dbC = t.dbL0C > 1 ? 2 : 1;
        const uint64_t l0a = uint64_t(t.baseM) * t.baseK * sa * dbA, l0b = uint64_t(t.baseK) * t.baseN * sb * dbB;
        const uint64_t l0c = uint64_t(t.baseM) * t.baseN * sizeof(float) * dbC;
        if (l0a > ASCEND_SIM_L0A_BYTES) {
            fatal("L0A-OVERFLOW", loc, "TCubeTiling: baseM x baseK x %llu B x dbL0A %llu = %llu B of A exceed L0A (%u B)",
                  (unsigned long long)sa, (unsigned long long)dbA, (unsigned long long)l0a, unsigned(ASCEND_SIM_L0A_BYTES));
        }
        if (l0b > ASCEND_SIM_L0B_BYTES) {
            fatal("L0B-OVERFLOW", loc, "TCubeTiling: baseK x baseN x %llu B x dbL0B %llu = %llu B of B exceed L0B (%u B)",
                  (unsigned long long)sb, (unsigned long long)dbB, (unsigned long long)l0b, unsigned(ASCEND_SIM_L0B_BYTES));
        }
        if (l0c > ASCEND_SIM_L0C_BYTES) {
            fatal("L0C-OVERFLOW", loc, "TCubeTiling: baseM x baseN x 4 B x dbL0C %llu = %llu B of fp32 accumulator exceed L0C (%u B)",
                  (unsigned long long)dbC, (unsigned long long)l0c, unsigned(ASCEND_SIM_L0C_BYTES));
        }
        const uint64_t l1 = uint64_t(t.depthA1) * t.baseM * t.baseK * sa + uint64_t(t.depthB1) * t.baseK * t.baseN * sb +
                            (t.isBias ? uint64_t(t.baseN) * t.stepN * sizeof(float) : 0);
        if (l1 > ASCEND_SIM_L1_BYTES) {
            fatal("L1-OVERFLOW", loc,
                  "TCubeTiling: depthA1 %d x baseM x baseK + depthB1 %d x baseK x baseN tiles (+ bias) = %llu B exceed L1 (%u B)",
                  t.depthA1, t.depthB1, (unsigned long long)l1, unsigned(ASCEND_SIM_L1_BYTES));
        }
    }

    void alive(const char* api, const std::source_location& loc) const {
        using namespace AscendC::sim::detail;
        touch(loc);
        if (!inited_) fatal("MATMUL-STATE", loc, "%s on a Matmul object that was not registered (REGIST_MATMUL_OBJ / Init first)", api);
        if (ended_) {
            fatal("MATMUL-STATE", loc, "%s after End() (at %s:%u): the Matmul object is released", api, base_name(endLoc_.file_name()),
                  endLoc_.line());
        }
    }

    void restart() {
        running_ = false;
        pending_ = false;
    }

    void fetch_check(const std::source_location& loc) const {
        if (!pending_) {
            AscendC::sim::detail::fatal("MATMUL-STATE", loc,
                                        "GetTensorC without a block to fetch: call Iterate() first (and only once per GetTensorC)");
        }
    }

    static int pick(int tail, int single) { return tail > 0 ? tail : single; }

    // The GM extent of one operand of a computation (cube_operand_bytes: their union over the launch).
    static void note_operand(uintptr_t at, uint64_t bytes) {
        auto& ops = AscendC::sim::detail::cnt().cubeOperands;
        if (ops.empty() || ops.back() != std::pair<uintptr_t, uint64_t>(at, bytes)) ops.emplace_back(at, bytes);
    }

    // Starts a computation: validates the operands and the GM extents A, B and the bias will be read from.
    void begin(const char* api, const std::source_location& loc) {
        using namespace AscendC::sim::detail;
        if (!haveA_ || !haveB_) fatal("MATMUL-STATE", loc, "%s before SetTensor%s: the Matmul has no %s operand", api, haveA_ ? "B" : "A",
                                      haveA_ ? "B" : "A");
        useBias_ = t_.isBias && haveBias_;
        if (t_.isBias && !haveBias_ && !biasCleared_) {
            fatal("MATMUL-STATE", loc, "%s: the TCubeTiling has isBias = 1 but SetBias was not called (the bias would be garbage)", api);
        }
        curM_ = pick(tailM_, singleM_);
        curN_ = pick(tailN_, singleN_);
        curK_ = pick(tailK_, singleK_);
        if (curM_ <= 0 || curN_ <= 0 || curK_ <= 0 || curK_ > orgKa_) {
            fatal("MATMUL-STATE", loc, "%s: block %d x %d x %d is empty or K exceeds Ka = %d", api, curM_, curN_, curK_, orgKa_);
        }
        // Element (i, k) of A is at i * Ka + k (k * M + i transposed); (k, j) of B at k * N + j (j * Kb + k).
        const uint64_t lastA = transA_ ? uint64_t(curK_ - 1) * orgM_ + (curM_ - 1) : uint64_t(curM_ - 1) * orgKa_ + (curK_ - 1);
        const uint64_t lastB = transB_ ? uint64_t(curN_ - 1) * orgKb_ + (curK_ - 1) : uint64_t(curK_ - 1) * orgN_ + (curN_ - 1);
        check_gm(api, a_, 0, (lastA + 1) * sizeof(SrcAT), false, loc);
        check_gm(api, b_, 0, (lastB + 1) * sizeof(SrcBT), false, loc);
        gm_mark_read(api, a_.sim_ptr, (lastA + 1) * sizeof(SrcAT), loc);
        gm_mark_read(api, b_.sim_ptr, (lastB + 1) * sizeof(SrcBT), loc);
        note_operand(reinterpret_cast<uintptr_t>(a_.sim_ptr), (lastA + 1) * sizeof(SrcAT));
        note_operand(reinterpret_cast<uintptr_t>(b_.sim_ptr), (lastB + 1) * sizeof(SrcBT));
        if (useBias_) check_gm(api, bias_, 0, uint64_t(curN_) * sizeof(BiasT), false, loc);
        convert_operands();
        mIter_ = uint32_t((curM_ + t_.baseM - 1) / t_.baseM);
        nIter_ = uint32_t((curN_ + t_.baseN - 1) / t_.baseN);
        idx_ = 0;
        running_ = true;
        pending_ = false;
    }

    // The computation's A (curM x curK) and B (curK x curN) in fp32, row-major, read from GM once (the
    // cube reads them in its own order; values are what matters here). Reads follow GM order.
    void convert_operands() {
        const size_t M = size_t(curM_), N = size_t(curN_), K = size_t(curK_);
        a_f32_.resize(M * K);
        b_f32_.resize(K * N);
        float* a = a_f32_.data();
        float* b = b_f32_.data();
        if (transA_) {  // A^T in GM: element (i, q) at q * orgM + i
            for (size_t q = 0; q < K; ++q)
                for (size_t i = 0; i < M; ++i) a[i * K + q] = static_cast<float>(a_.sim_ptr[q * size_t(orgM_) + i]);
        } else {
            for (size_t i = 0; i < M; ++i)
                for (size_t q = 0; q < K; ++q) a[i * K + q] = static_cast<float>(a_.sim_ptr[i * size_t(orgKa_) + q]);
        }
        if (transB_) {  // B^T in GM: element (q, j) at j * orgKb + q
            for (size_t j = 0; j < N; ++j)
                for (size_t q = 0; q < K; ++q) b[q * N + j] = static_cast<float>(b_.sim_ptr[j * size_t(orgKb_) + q]);
        } else {
            for (size_t q = 0; q < K; ++q)
                for (size_t j = 0; j < N; ++j) b[q * N + j] = static_cast<float>(b_.sim_ptr[q * size_t(orgN_) + j]);
        }
    }

    // Block `k` of the computation (iterateOrder 0: M moves fastest), accumulated in fp32 in L0C.
    void compute_block(uint32_t k) {
        using namespace AscendC::sim::detail;
        const uint32_t mb = t_.iterateOrder == 0 ? k % mIter_ : k / nIter_;
        const uint32_t nb = t_.iterateOrder == 0 ? k / mIter_ : k % nIter_;
        r0_ = mb * uint32_t(t_.baseM);
        c0_ = nb * uint32_t(t_.baseN);
        rows_ = uint32_t(curM_) - r0_ < uint32_t(t_.baseM) ? uint32_t(curM_) - r0_ : uint32_t(t_.baseM);
        cols_ = uint32_t(curN_) - c0_ < uint32_t(t_.baseN) ? uint32_t(curN_) - c0_ : uint32_t(t_.baseN);
        const uint32_t K = uint32_t(curK_), ldc = uint32_t(t_.baseN);
        const float* a = a_f32_.data() + size_t(r0_) * K;  // the computation's A and B, converted once by begin()
        const float* b = b_f32_.data() + c0_;
        for (uint32_t i = 0; i < rows_; ++i) {
            float* acc = &l0c_[size_t(i) * ldc];
            for (uint32_t j = 0; j < cols_; ++j) acc[j] = useBias_ ? static_cast<float>(bias_.sim_ptr[c0_ + j]) : 0.0f;
        }
        // every element: bias, then the K products in k order, summed in fp32 (f16 / bf16 products are exact in fp32)
        gemm_f32(l0c_.data(), ldc, a, K, b, uint64_t(curN_), rows_, cols_, K);
        Counters& c = cnt();
        auto up16 = [](uint64_t v) { return (v + 15) / 16 * 16; };
        constexpr uint64_t k0 = std::is_same_v<SrcAT, float> ? 8 : 16;  // fractal K: 16 x 8 for fp32, 16 x 16 otherwise
        const uint64_t macs = up16(rows_) * up16(cols_) * ((K + k0 - 1) / k0 * k0);  // the cube computes whole fractals
        c.cubeMacs += macs;
        c.cubeMacsUseful += uint64_t(rows_) * cols_ * K;
        if constexpr (std::is_same_v<SrcAT, float>) {
            c.cubeMacsF32 += macs;
            c.cubeMacsUsefulF32 += uint64_t(rows_) * cols_ * K;
        }
        // the panels this block loads, by GM layout (impl/panel_reuse_rt.h): A's rows r0.. and B's columns c0.. over K
        if (transA_) {  // A stored [K, M]
            count_panel(a_.sim_ptr + r0_, K, uint64_t(rows_) * sizeof(SrcAT), uint64_t(orgM_) * sizeof(SrcAT));
        } else {
            count_panel(a_.sim_ptr + size_t(r0_) * orgKa_, rows_, uint64_t(K) * sizeof(SrcAT), uint64_t(orgKa_) * sizeof(SrcAT));
        }
        if (transB_) {  // B stored [N, K]
            count_panel(b_.sim_ptr + size_t(c0_) * orgKb_, cols_, uint64_t(K) * sizeof(SrcBT), uint64_t(orgKb_) * sizeof(SrcBT));
        } else {
            count_panel(b_.sim_ptr + c0_, K, uint64_t(cols_) * sizeof(SrcBT), uint64_t(orgN_) * sizeof(SrcBT));
        }
        if (useBias_) count_panel(bias_.sim_ptr + c0_, 1, uint64_t(cols_) * sizeof(BiasT), 0);
        c.gm2l1 += uint64_t(rows_) * K * sizeof(SrcAT) + uint64_t(K) * cols_ * sizeof(SrcBT) + (useBias_ ? cols_ * sizeof(BiasT) : 0);
        if (gm_in_workspace(a_.sim_ptr)) c.wsGm2l1 += uint64_t(rows_) * K * sizeof(SrcAT);
        if (gm_in_workspace(b_.sim_ptr)) c.wsGm2l1 += uint64_t(K) * cols_ * sizeof(SrcBT);
    }

    static void store(DstT& dst, float v, uint8_t atomic) {
        dst = atomic ? static_cast<DstT>(static_cast<float>(dst) + v) : static_cast<DstT>(v);
    }

    void write_block_gm(const char* api, const AscendC::GlobalTensor<DstT>& gm, uint8_t enAtomic, const std::source_location& loc,
                        bool sequential = false) {
        using namespace AscendC::sim::detail;
        const uint64_t pitch = sequential ? uint64_t(t_.baseN) : uint64_t(orgN_);
        const uint64_t first = sequential ? 0 : uint64_t(r0_) * orgN_ + c0_;
        check_gm(api, gm, first * sizeof(DstT), (uint64_t(rows_ - 1) * pitch + cols_) * sizeof(DstT), true, loc);
        // Atomic adds of blocks running in parallel threads happen in block order (as with one thread), so float
        // sums do not depend on the threads' timing; an add into the launch's poison is ATOMIC-UNINIT, as with
        // SetAtomicAdd; the added bytes are recorded as atomic (GM-RACE against plain writes, the order check).
        if (enAtomic) atomic_turn();
        bool poisonSeen = false;
        for (uint32_t i = 0; i < rows_; ++i) {
            DstT* row = gm.sim_ptr + first + uint64_t(i) * pitch;
            if (enAtomic && !poisonSeen) {
                for (uint32_t j = 0; j < cols_ && !poisonSeen; ++j) {
                    if (is_poison(row[j])) {
                        poisonSeen = true;
                        report_matmul_atomic_uninit(api, row + j, loc);
                    }
                }
            }
            for (uint32_t j = 0; j < cols_; ++j) store(row[j], l0c_[size_t(i) * t_.baseN + j], enAtomic);
            if (enAtomic) {
                gm_mark_atomic(api, row, uint64_t(cols_) * sizeof(DstT), loc);
            } else {
                gm_mark_write(api, row, uint64_t(cols_) * sizeof(DstT), loc);
            }
        }
        cnt().l0c2gm += uint64_t(rows_) * cols_ * sizeof(DstT);
        cnt().l0c2gmN += 1;
        if constexpr (MM_CFG.enUnitFlag) cnt().l0c2gmUnitFlag += uint64_t(rows_) * cols_ * sizeof(DstT);
        if (gm_in_workspace(gm.sim_ptr)) cnt().wsL0c2gm += uint64_t(rows_) * cols_ * sizeof(DstT);
    }

    AscendC::tiling::TCubeTiling t_{};
    bool inited_ = false, ended_ = false;
    std::source_location endLoc_{};
    int orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0;
    int singleM_ = 0, singleN_ = 0, singleK_ = 0;
    int tailM_ = -1, tailN_ = -1, tailK_ = -1;
    int curM_ = 0, curN_ = 0, curK_ = 0;
    AscendC::GlobalTensor<SrcAT> a_{};
    AscendC::GlobalTensor<SrcBT> b_{};
    AscendC::GlobalTensor<BiasT> bias_{};
    bool transA_ = false, transB_ = false, haveA_ = false, haveB_ = false, haveBias_ = false;
    bool biasCleared_ = false;  // DisableBias / ClearBias called after the last SetBias
    bool useBias_ = false;      // this computation adds the bias (begin())
    bool running_ = false, pending_ = false;
    uint32_t mIter_ = 0, nIter_ = 0, idx_ = 0;
    uint32_t r0_ = 0, c0_ = 0, rows_ = 0, cols_ = 0;
    std::vector<float> l0c_;
    std::vector<float> a_f32_, b_f32_;  // the computation's operands converted to fp32
    std::vector<uintptr_t> asyncWaits_;  // end of C of each IterateAll<false> not yet waited for, oldest first
};

}  // namespace matmul

namespace AscendC {
using matmul::Matmul;
using matmul::MatmulType;
}  // namespace AscendC

namespace AscendC::sim::detail {
template <class MM>
inline void regist_matmul(AscendC::TPipe* pipe, __gm__ uint8_t* workspace, MM& mm, const AscendC::tiling::TCubeTiling* tiling,
                          std::source_location loc = std::source_location::current()) {
    (void)workspace;
    mm.Init(tiling, pipe, loc);
}

// Several objects: (mm1, &tiling1, mm2, &tiling2, ...), at most 4 (CANN asc-devkit docs, REGIST_MATMUL_OBJ:
// "最多支持定义 4 个 Matmul 对象"; objects and tilings passed pairwise, in order).
template <class MM1, class MM2, class... Rest>
inline void regist_matmul(AscendC::TPipe* pipe, __gm__ uint8_t* workspace, MM1& mm1, const AscendC::tiling::TCubeTiling* t1,
                          MM2& mm2, const AscendC::tiling::TCubeTiling* t2, Rest&&... rest) {
    static_assert(sizeof...(Rest) % 2 == 0 && sizeof...(Rest) <= 4,
                  "ascend-sim: REGIST_MATMUL_OBJ takes (Matmul object, tiling) pairs, at most 4 objects");
    const std::source_location loc = std::source_location::current();
    mm1.Init(t1, pipe, loc);
    regist_matmul(pipe, workspace, mm2, t2, std::forward<Rest>(rest)...);
}
}  // namespace AscendC::sim::detail

// REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling) (ref §3), or up to 4 (object, tiling) pairs.
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...) ::AscendC::sim::detail::regist_matmul(tpipe, workspace, __VA_ARGS__)

#endif  // ASCEND_SIM_ASCEND_SIM_MATMUL_H
