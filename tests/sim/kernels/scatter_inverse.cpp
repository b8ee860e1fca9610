// Prototype (session 36, issue 21 item 3): index_copy / index_add along dim 1 with ONE index shared by every
// row, on the vector unit instead of the scalar walk of lowering/emit/scatter.py. Not yet a lowering: this
// program is the algorithm and its cost, run in the emulator (benchmarks/scatter_inverse_estimate.py prints
// the cost model's figure for its counted instructions; tests/sim/test_scatter_inverse.py checks it).
//
// Per core, once (the inverse of the index):
//   keys t = idx[j] * (D + 1) + 1 + j for the D sources and t = c * (D + 1) for D "dense" markers (one per
//   output column c); every t is distinct, so no tie order is relied on. score = 2^24 - t (exact in f32 while
//   D * D + D - 1 <= 2^25, i.e. D <= 5792: beyond that the lowering must keep the scalar walk). payload = j
//   (sources) or D + c (markers). Sort32 + MrgSort rounds (descending score = ascending t) put marker c
//   first, then the sources of column c in ascending j, then marker c + 1. Payloads by GatherMask (odd
//   words); the marker positions q[c] by Compares (payload >= D) + Brcb (one 32-bit mask word per 32-B
//   block) + GatherMask in counter mode (32 lanes a repeat); q[D] = 2D. cnt[c] = q[c + 1] - q[c] - 1.
//   copy: the last source of c sits at q[c + 1] - 1: its payload (a Gather) * sizeof(T) is the row offset;
//         present = cnt > 0.
//   add:  the k-th source of c (ascending j) sits at q[c] + 1 + k; per level k < max(cnt) a mask cnt > k.
// Per row:
//   copy: y = Select(present, Gather(src, offs), x)                                        (2 instructions)
//   add:  s = Gather(src, payload offsets of the sorted list); y = x; per level k:
//         g = Gather(s, (q + 1 + k) * size clamped), y = Select(cnt > k, y + g, y)         (1 + 5 per level)
//   so repeats add in column order, as the interpreter and the scalar walk do.
// Range: an index outside [0, D) stops the kernel (Trap), as the scalar walk's UB-OOB does in the emulator:
// Cast i64 -> i32 (saturating), Maxs / Mins to [-1, D], as f32, ReduceMax / ReduceMin read by the scalar unit.
//
//   usage: scatter_inverse <copy|add> <f32|f16> <D> <rows> <perm|randint|repeat|oob> [bug]
//   D: a multiple of 64 up to 4096 with D / 16 = 4^k x {1, 2, 3} (the merge plan; the lowering would pad)
//   bug: last_first (copy takes the FIRST source of a column), drop_level (add skips the last level)
#include "kernel_operator.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace AscendC;

namespace {

struct Args {
    bool add = false;
    bool f16 = false;
    uint32_t D = 0, rows = 0;
    std::string pattern, bug;
};

uint32_t lcg(uint64_t& s) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(s >> 33);
}

std::vector<int64_t> make_index(const Args& a) {
    std::vector<int64_t> idx(a.D);
    uint64_t s = 12345;
    for (uint32_t j = 0; j < a.D; ++j) idx[j] = j;
    if (a.pattern == "perm") {
        for (uint32_t j = a.D - 1; j > 0; --j) std::swap(idx[j], idx[lcg(s) % (j + 1)]);
    } else if (a.pattern == "randint" || a.pattern == "oob") {
        for (uint32_t j = 0; j < a.D; ++j) idx[j] = lcg(s) % a.D;
        if (a.pattern == "oob") idx[a.D / 3] = a.D;
    } else {  // repeat: columns [0, D / 8) get 8 sources each, interleaved
        for (uint32_t j = 0; j < a.D; ++j) idx[j] = (j * 5) % (a.D / 8);
    }
    return idx;
}

template <class T>
int run(const Args& a) {
    const uint32_t D = a.D, N = 2 * D, rows = a.rows, size = sizeof(T);
    const std::vector<int64_t> idx = make_index(a);
    std::vector<float> x(size_t(rows) * D), src(size_t(rows) * D), want(size_t(rows) * D);
    uint64_t s = 777;
    for (auto& v : x) v = float(int(lcg(s) % 2001) - 1000) / 64.0f;
    for (auto& v : src) v = float(int(lcg(s) % 2001) - 1000) / 64.0f;
    for (uint32_t r = 0; r < rows; ++r) {  // the reference: the interpreter's order, rounded to T per step
        for (uint32_t c = 0; c < D; ++c) want[size_t(r) * D + c] = x[size_t(r) * D + c];
        for (uint32_t j = 0; j < D; ++j) {
            if (idx[j] < 0 || idx[j] >= int64_t(D)) continue;
            float& w = want[size_t(r) * D + uint32_t(idx[j])];
            const float v = src[size_t(r) * D + j];
            w = a.add ? float(T(w + v)) : v;
        }
    }
    int bad = 0;
    const int rc = sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 192 * 1024 - 8 * 1024);  // 8 KB left for Select's hidden scratch (ascendc_next.md §3.3)
        LocalTensor<uint8_t> base = ub.Get<uint8_t>();
        auto at = [&](uint32_t byteOff) { return base[byteOff]; };
        // regions (bytes): [0, 16D) scores + payloads, then merge buffer B; [16D, 32D) merge buffer A;
        // [32D, 40D) the i64 index, then the marker positions, then (add) y and a temporary row; [40D, ...) the
        // reductions' scratch and the masks. D = 4096: 160 KB + 1 KB + 17 x 512 B (ub_peak below).
        const uint32_t regA = 16 * D, regC = 32 * D, regX = 40 * D;
        LocalTensor<float> score = at(0).template ReinterpretCast<float>();
        LocalTensor<int32_t> payIn = at(4 * N).template ReinterpretCast<int32_t>();
        LocalTensor<int64_t> idx64 = at(regC).template ReinterpretCast<int64_t>();
        for (uint32_t j = 0; j < D; ++j) idx64.SetValue(j, idx[j]);  // stands for the index's copy-in
        // --- range check and keys ---------------------------------------------------------------------
        LocalTensor<int32_t> i32 = payIn;  // borrowed until the payloads are written
        LocalTensor<float> f = score[D];   // the markers' half, borrowed
        Cast(i32, idx64, RoundMode::CAST_NONE, D);  // i64 -> i32 saturates
        Maxs(i32, i32, int32_t(-1), D);
        Mins(i32, i32, int32_t(D), D);
        Cast(f, i32, RoundMode::CAST_NONE, D);
        LocalTensor<float> mm = at(regX).template ReinterpretCast<float>();
        LocalTensor<float> tmp = mm[64];
        ReduceMax(mm, f, tmp, D);
        ReduceMin(mm[8], f, tmp, D);
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        if (mm.GetValue(0) >= float(D) || mm.GetValue(8) < 0.0f) {
            Trap();  // an index outside [0, D): stop, as the scalar walk
            return;
        }
        // score_j = (2^24 - 1 - idx * (D + 1)) - j: every step exact in f32 (|value| <= 2^24)
        Muls(score, f, -float(D + 1), D);
        Adds(score, score, 16777215.0f, D);
        LocalTensor<float> jv = at(regA).template ReinterpretCast<float>();
        CreateVecIndex(jv, 0.0f, D);
        Sub(score, score, jv, D);
        // markers: 2^24 - c * (D + 1)
        CreateVecIndex(f, 0.0f, D);
        Muls(f, f, -float(D + 1), D);
        Adds(f, f, 16777216.0f, D);
        CreateVecIndex(payIn, int32_t(0), N);  // sources j, markers D + c
        // --- sort: Sort32, then 4-way merges, then one of the last 2 or 3 lists -----------------------------
        LocalTensor<float> bufA = at(regA).template ReinterpretCast<float>(), bufB = at(0).template ReinterpretCast<float>();
        const uint32_t groups = N / 32;
        for (uint32_t g0 = 0; g0 < groups; g0 += 128) {
            const uint32_t g = groups - g0 < 128 ? groups - g0 : 128;
            Sort32(bufA[g0 * 64], score[g0 * 32], payIn[g0 * 32].template ReinterpretCast<uint32_t>(), int32_t(g));
        }
        LocalTensor<float> cur = bufA, nxt = bufB;
        for (uint32_t len = 32, n = groups; n > 1;) {
            if (n % 4 == 0) {
                const uint16_t lens[4] = {uint16_t(len), uint16_t(len), uint16_t(len), uint16_t(len)};
                MrgSort(nxt, MrgSortSrcList<float>(cur, cur[2 * len], cur[4 * len], cur[6 * len]), MrgSort4Info(lens, false, 15, uint16_t(n / 4)));
                len *= 4;
                n /= 4;
            } else {  // n = 2 or 3 (main() admits only D with groups = 4^k x {1, 2, 3}): one last merge
                const uint16_t lens[4] = {uint16_t(len), uint16_t(len), uint16_t(n == 3 ? len : 0), 0};
                MrgSort(nxt, MrgSortSrcList<float>(cur, cur[2 * len], cur[4 * len], cur), MrgSort4Info(lens, false, n == 3 ? 7 : 3, 1));
                n = 1;
            }
            std::swap(cur, nxt);
        }
        // --- the sorted payloads and the marker positions ---------------------------------------------
        LocalTensor<uint32_t> pay = nxt.template ReinterpretCast<uint32_t>();  // the other buffer's first half
        LocalTensor<float> pos = nxt[N];                              // its second half
        uint64_t kept = 0;
        GatherMask(pay, cur.template ReinterpretCast<uint32_t>(), uint8_t(2), false, 0u, GatherMaskParams(1, uint16_t(N * 8 / 256), 8, 0), kept);
        if (std::getenv("SI_DEBUG")) {
            std::printf("kept %llu\n", (unsigned long long)kept);
            for (uint32_t i = 0; i < 12; ++i) std::printf("(%.0f,%u|%u) ", cur.GetValue(2 * i), cur.template ReinterpretCast<uint32_t>().GetValue(2 * i + 1), pay.GetValue(i));
            std::printf("\nidx:");
            for (uint32_t i = 0; i < 8; ++i) std::printf(" %lld", (long long)idx[i]);
            std::printf("\n");
        }
        LocalTensor<uint32_t> tabs = at(regC).template ReinterpretCast<uint32_t>();  // the i64 index is no longer needed
        const uint32_t nb = (N / 8 + 31) / 32 * 32;                          // the N-bit mask's bytes, whole blocks
        LocalTensor<uint32_t> maskN = tabs;                                 // N bits
        LocalTensor<uint32_t> maskBlk = tabs[nb / 4];                       // N / 32 blocks of 32 B
        const uint32_t brcb = (N / 32 + 7) / 8;                             // Brcb repeats: 8 mask words each
        LocalTensor<float> q = tabs[nb / 4 + brcb * 64].template ReinterpretCast<float>();  // D + 8
        Compares(maskN.template ReinterpretCast<uint8_t>(), pay.template ReinterpretCast<int32_t>(), int32_t(D), CMPMODE::GE, N);
        Brcb(maskBlk, maskN, uint8_t(brcb), BrcbRepeatParams(1, 8));
        CreateVecIndex(pos, 0.0f, N);
        GatherMask(q, pos, maskBlk, true, 32u, GatherMaskParams(1, uint16_t(N / 32), 4, 1), kept);
        Duplicate(q[D], float(N), 8);
        // cnt and the next marker's position, in `cur` (free now)
        LocalTensor<int32_t> shift = cur.template ReinterpretCast<int32_t>();
        LocalTensor<float> qn = cur[D], cnt = cur[2 * D];
        LocalTensor<int32_t> work = cur[3 * D].template ReinterpretCast<int32_t>();
        CreateVecIndex(shift, int32_t(1), D);
        Muls(shift, shift, int32_t(4), D);
        Gather(qn, q, shift.template ReinterpretCast<uint32_t>(), 0u, D);
        Sub(cnt, qn, q, D);
        Adds(cnt, cnt, -1.0f, D);
        const uint32_t mstride = (D / 8 + 31) / 32 * 32;  // one D-bit mask, whole blocks
        LocalTensor<uint8_t> present = at(regX + 1024);
        LocalTensor<uint8_t> lmask = present[mstride];  // add: one D-bit mask per level (<= 16)
        LocalTensor<uint32_t> offs = cur.template ReinterpretCast<uint32_t>();  // copy: D (shift's place); add: N (shift + qn)
        uint32_t levels = 0;
        LocalTensor<int32_t> lbase = work;  // add: (q + 1) * size
        // the rows, once the tables are built. copy: x and src where the payloads were, y and g where qn and cnt
        // were. add: y (x copied in) and a temporary where q was, src and the level offsets where the payloads were
        LocalTensor<T> xr = pay.template ReinterpretCast<T>(), sr = pay[D].template ReinterpretCast<T>();
        LocalTensor<T> yr = qn.template ReinterpretCast<T>(), gr = cnt.template ReinterpretCast<T>(), tr = yr;
        LocalTensor<int32_t> loff = pay[D].template ReinterpretCast<int32_t>();
        if (a.add) {
            sr = pay.template ReinterpretCast<T>();
            yr = at(regC).template ReinterpretCast<T>();
            tr = at(regC + 4 * D).template ReinterpretCast<T>();
        }
        if (!a.add) {
            Compares(present, cnt, 0.5f, CMPMODE::GT, D);
            LocalTensor<float> last = qn;
            Adds(last, qn, a.bug == "last_first" ? -float(0) : -1.0f, D);  // BUG last_first: q[c + 1] is the next marker
            if (a.bug == "last_first") Adds(last, q, 1.0f, D);
            Muls(last, last, 4.0f, D);
            Cast(work, last, RoundMode::CAST_RINT, D);
            Gather(offs, pay, work.template ReinterpretCast<uint32_t>(), 0u, D);
            Mins(offs.template ReinterpretCast<int32_t>(), offs.template ReinterpretCast<int32_t>(), int32_t(D - 1), D);
            Muls(offs.template ReinterpretCast<int32_t>(), offs.template ReinterpretCast<int32_t>(), int32_t(size), D);
        } else {
            LocalTensor<float> lb = qn;  // (q + 1) * size, as i32
            Adds(lb, q, 1.0f, D);
            Muls(lb, lb, float(size), D);
            Cast(lbase, lb, RoundMode::CAST_RINT, D);
            // source offsets of the sorted list (markers: column D - 1, never selected), over shift and qn
            Mins(offs.template ReinterpretCast<int32_t>(), pay.template ReinterpretCast<int32_t>(), int32_t(D - 1), N);
            Muls(offs.template ReinterpretCast<int32_t>(), offs.template ReinterpretCast<int32_t>(), int32_t(size), N);
            ReduceMax(mm, cnt, tmp, D);
            SetFlag<HardEvent::V_S>(EVENT_ID0);
            WaitFlag<HardEvent::V_S>(EVENT_ID0);
            levels = uint32_t(mm.GetValue(0));
            if (levels > 16) {
                std::printf("more than 16 repeats of a column: the lowering keeps the scalar walk\n");
                return;
            }
            if (a.bug == "drop_level" && levels > 0) --levels;  // BUG: the last repeat of a column is dropped
            for (uint32_t k = 0; k < levels; ++k) Compares(lmask[k * mstride], cnt, float(k) + 0.5f, CMPMODE::GT, D);
        }
        LocalTensor<T> sorted = pos.template ReinterpretCast<T>();  // add: the row's sources in sorted order (N)
        // --- rows ---------------------------------------------------------------------------------------
        for (uint32_t r = 0; r < rows; ++r) {
            SetFlag<HardEvent::V_S>(EVENT_ID1);
            WaitFlag<HardEvent::V_S>(EVENT_ID1);
            for (uint32_t c = 0; c < D; ++c) {  // stands for the rows' copy-in
                (a.add ? yr : xr).SetValue(c, T(x[size_t(r) * D + c]));
                sr.SetValue(c, T(src[size_t(r) * D + c]));
            }
            SetFlag<HardEvent::S_V>(EVENT_ID1);
            WaitFlag<HardEvent::S_V>(EVENT_ID1);
            if (!a.add) {
                Gather(gr, sr, offs, 0u, D);
                Select(yr, present, gr, xr, SELMODE::VSEL_TENSOR_TENSOR_MODE, D);
            } else {
                Gather(sorted, sr, offs, 0u, N);
                for (uint32_t k = 0; k < levels; ++k) {
                    Adds(loff, lbase, int32_t(k * size), D);
                    Mins(loff, loff, int32_t((N - 1) * size), D);
                    Gather(gr, sorted, loff.template ReinterpretCast<uint32_t>(), 0u, D);
                    Add(tr, yr, gr, D);
                    Select(yr, lmask[k * mstride], tr, yr, SELMODE::VSEL_TENSOR_TENSOR_MODE, D);
                }
            }
            SetFlag<HardEvent::V_S>(EVENT_ID1);
            WaitFlag<HardEvent::V_S>(EVENT_ID1);
            for (uint32_t c = 0; c < D; ++c) {  // stands for the copy-out
                const float got = float(yr.GetValue(c)), w = float(T(want[size_t(r) * D + c]));
                if (!(got == w) && bad++ < 5) std::printf("row %u col %u: got %g want %g\n", r, c, got, w);
            }
        }
        std::printf("levels %u ub_peak %u\n", levels, regX + 1024 + 17 * mstride);
    });
    if (bad) std::printf("%d wrong elements\n", bad);
    return rc != 0 ? rc : (bad ? 3 : 0);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "usage: scatter_inverse <copy|add> <f32|f16> <D> <rows> <perm|randint|repeat|oob> [bug]\n");
        return 2;
    }
    Args a;
    a.add = std::string(argv[1]) == "add";
    a.f16 = std::string(argv[2]) == "f16";
    a.D = uint32_t(std::atoi(argv[3]));
    a.rows = uint32_t(std::atoi(argv[4]));
    a.pattern = argv[5];
    a.bug = argc > 6 ? argv[6] : "";
    uint32_t groups = a.D % 64 == 0 ? a.D / 16 : 0;  // 2D / 32
    while (groups % 4 == 0 && groups > 3) groups /= 4;
    if (a.D % 64 != 0 || a.D < 64 || a.D > 4096 || groups > 3) {  // the prototype's merge plan: 4-way rounds, then 2 or 3 lists
        std::fprintf(stderr, "D must be a multiple of 64 in [64, 4096] with D / 16 = 4^k x 1, 2 or 3 (prototype)\n");
        return 2;
    }
    return a.f16 ? run<half>(a) : run<float>(a);
}
