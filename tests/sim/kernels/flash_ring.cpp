// Causal flash attention driven by the AIC (CATLASS FAI's pipeline, ascendc_next.md §2.2 / §2.4), written by hand
// with the low-level cube API on the AIC and the cross-core flags between the AIC and its two AIV.
//   usage: flash_ring DIR B H S D CORES [ok|ring2|no_o_wait|no_diag_mask|no_o_rescale]
// DIR holds q.bin, k.bin, v.bin (f16, [B, H, S, D]); o.bin (f32, [B, H, S, D]) is written there:
// O = softmax(Q K^T / sqrt(D) + causal mask) V. D a multiple of 16, <= 128; any S.
//
// A task is (head, pair of query blocks): 2 x 128 rows; AIV 0 of the AI Core owns the first 128, AIV 1 the next.
// The AIC loads the pair's Q (scaled by the AIV, through their Q slots) into L1 once per task and walks the key
// blocks of 128: per step j it loads K_j into L1 ONCE and computes S = Q_h K_j^T for both halves h (K shared by
// the two AIV), Fixpipe into the AIV's S slot j % 3, sets flag S; two steps behind it waits for flag P (both AIV),
// loads V_{j-2} once and both P blocks, and adds P_h V_{j-2} into the AIV's O slot (Fixpipe, atomic after the
// first block), sets flag O. Each AIV per step: wait S, copy S in (VECIN queue, 2 buffers), the causal mask on a
// diagonal block, online softmax (f32 state m, l in UB; the running max moves only when a row sum of e^(X - m)
// exceeds ~e^8: then m, l and the O slot are rescaled), P (f16) to its P slot j % 3, set P. The slot j % 3 is
// written again only after the AIC finished with step j - 3 (FAI's ring of 3: a ring of 2 is a GM-RACE).
// The two AIV's causal bands end one key block apart: AIV 0 takes part in AIV 1's last step without work.
#include "kernel_operator.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace AscendC;

namespace {

constexpr uint32_t kBq = 128;  // query rows per AIV
constexpr uint32_t kBk = 128;  // keys per block
constexpr uint16_t kFlagQ = 1, kFlagS = 2, kFlagP = 3, kFlagO = 4;
constexpr float kRescaleSum = 2980.0f;  // ~e^8: every P <= e^8 while each row sum is below it

struct Shape {
    uint32_t B, H, S, D, cores, slots;
    bool oWait, diagMask, oRescale;
};

struct Task {
    uint64_t bh;
    uint32_t q0;       // first query row of the pair
    uint32_t rows[2];  // rows of each half (0..128)
    uint32_t steps[2]; // key blocks each half walks (causal: up to its last row)
    uint32_t n;        // steps of the task (max of both)
};

__aicore__ inline uint32_t pairs_of(const Shape& sh) { return (sh.S + 2 * kBq - 1) / (2 * kBq); }

__aicore__ inline Task task_of(const Shape& sh, uint64_t bh, uint32_t pair) {
    Task k{};
    k.bh = bh;
    k.q0 = pair * 2 * kBq;
    for (uint32_t h = 0; h < 2; ++h) {
        const uint32_t r0 = k.q0 + h * kBq;
        k.rows[h] = r0 >= sh.S ? 0 : (sh.S - r0 < kBq ? sh.S - r0 : kBq);
        k.steps[h] = k.rows[h] ? (r0 + k.rows[h] + kBk - 1) / kBk : 0;
    }
    k.n = k.steps[0] > k.steps[1] ? k.steps[0] : k.steps[1];
    return k;
}

// Tasks of AI Core c. A unit is pair P-1-i of a head and then pair i of the same head: the causal key walks of the two
// add up to the same length for every i (balance without any reordering), and consecutive units are the same head's,
// so the cores that run them at once read the same K and V (L2). Units go to the cores in rounds of one per core,
// rotated by one core per round: the unit with the longest walk (the first to read most K and V blocks, from HBM)
// falls to every core in turn.
template <class F>
__aicore__ inline void for_each_task(const Shape& sh, uint32_t c, F&& f) {
    const uint32_t pairs = pairs_of(sh), perHead = (pairs + 1) / 2;
    const uint64_t units = uint64_t(sh.B) * sh.H * perHead;
    for (uint64_t round = 0; round * sh.cores < units; ++round) {
        const uint64_t u = round * sh.cores + (c + round) % sh.cores;
        if (u >= units) continue;
        const uint64_t bh = u / perHead;
        const uint32_t i = static_cast<uint32_t>(u % perHead);
        f(task_of(sh, bh, pairs - 1 - i));
        if (i != pairs - 1 - i) f(task_of(sh, bh, i));
    }
}

struct Slots {  // one AIV's workspace; an AI Core's two AIV keep their P (and Q) slots side by side: one copy for both
    GlobalTensor<float> s;  // slots x kBq x kBk
    GlobalTensor<half> p;   // slot i at i x 2 kBq kBk (the other AIV's after each)
    GlobalTensor<float> o;  // kBq x D
    GlobalTensor<half> q;   // kBq x D (the other AIV's after AIV 0's)
};

__aicore__ inline uint64_t core_ws_bytes(const Shape& sh) {
    return 2 * (uint64_t(sh.slots) * kBq * kBk * 6 + uint64_t(kBq) * sh.D * 6);
}

__aicore__ inline Slots slots_of(uint8_t* ws, const Shape& sh, uint32_t aiv) {
    const uint64_t sB = uint64_t(sh.slots) * kBq * kBk * 4, pB = uint64_t(sh.slots) * kBq * kBk * 2;
    const uint64_t oB = uint64_t(kBq) * sh.D * 4, qB = uint64_t(kBq) * sh.D * 2;
    const uint32_t h = aiv % 2;
    uint8_t* base = ws + (aiv / 2) * core_ws_bytes(sh);
    Slots w;
    w.s.SetGlobalBuffer((__gm__ float*)(base + h * sB), sh.slots * kBq * kBk);
    w.p.SetGlobalBuffer((__gm__ half*)(base + 2 * sB + h * kBq * kBk * 2), (2 * sh.slots - h) * kBq * kBk);
    w.o.SetGlobalBuffer((__gm__ float*)(base + 2 * sB + 2 * pB + h * oB), kBq * sh.D);
    w.q.SetGlobalBuffer((__gm__ half*)(base + 2 * sB + 2 * pB + 2 * oB + h * qB), (2 - h) * kBq * sh.D);
    return w;
}

__aicore__ inline uint64_t ws_bytes(const Shape& sh) { return sh.cores * core_ws_bytes(sh); }

// ---- AIC ------------------------------------------------------------------------------------------------------------

class Cube {
public:
    __aicore__ inline Cube(const Shape& sh, GM_ADDR k, GM_ADDR v, uint8_t* ws) : sh_(sh) {
        const uint64_t n = uint64_t(sh.B) * sh.H * sh.S * sh.D;
        kGm.SetGlobalBuffer((__gm__ half*)k, n);
        vGm.SetGlobalBuffer((__gm__ half*)v, n);
        const uint32_t c = static_cast<uint32_t>(GetBlockIdx());
        w_[0] = slots_of(ws, sh, 2 * c);
        w_[1] = slots_of(ws, sh, 2 * c + 1);
        pipe.InitBuffer(qL1_, 2 * kBq * sh.D * sizeof(half));
        pipe.InitBuffer(kL1_, 2 * 2 * kBk * sh.D * sizeof(half));  // two buffers of two key blocks (one copy per two steps)
        pipe.InitBuffer(vL1_, 2 * 2 * kBk * sh.D * sizeof(half));
        pipe.InitBuffer(pL1_, 2 * 2 * kBq * kBk * sizeof(half));  // two buffers of both AIV's P
        pipe.InitBuffer(aL0_, 2 * kA0);
        pipe.InitBuffer(bL0_, 2 * kB0);
        pipe.InitBuffer(cL0_, 2 * kBq * kBk * sizeof(float));
        // rows past a tail's valid rows are read by the full-size fractal loads: defined (0, then stale data that the
        // mask or a zero P weighs away), never uninitialised
        InitConstValue(qL1_.Get<half>(), InitConstValueParams<half>(1, uint16_t(2 * kBq * sh.D * 2 / 32), 0, half(0)));
        InitConstValue(kL1_.Get<half>(), InitConstValueParams<half>(1, uint16_t(4 * kBk * sh.D * 2 / 32), 0, half(0)));
        InitConstValue(vL1_.Get<half>(), InitConstValueParams<half>(1, uint16_t(4 * kBk * sh.D * 2 / 32), 0, half(0)));
        InitConstValue(pL1_.Get<half>(), InitConstValueParams<half>(1, uint16_t(4 * kBq * kBk * 2 / 32), 0, half(0)));
        PipeBarrier<PIPE_ALL>();
    }

    __aicore__ inline void Run() {
        // every buffer starts free (CATLASS's pre-armed flags, ascendc_next.md §1.8): L1 K 0-1, P 2-3, Q 4, V 5-6; L0A
        // 0-1, L0B 2-3; L0C 0-1
        for (int32_t id = 0; id < 7; ++id) SetFlag<HardEvent::MTE1_MTE2>(id);
        for (int32_t id = 0; id < 4; ++id) SetFlag<HardEvent::M_MTE1>(id);
        for (int32_t id = 0; id < 2; ++id) SetFlag<HardEvent::FIX_M>(id);
        for_each_task(sh_, static_cast<uint32_t>(GetBlockIdx()), [&](const Task& t) { Do(t); });
        for (int32_t id = 0; id < 7; ++id) WaitFlag<HardEvent::MTE1_MTE2>(id);
        for (int32_t id = 0; id < 4; ++id) WaitFlag<HardEvent::M_MTE1>(id);
        for (int32_t id = 0; id < 2; ++id) WaitFlag<HardEvent::FIX_M>(id);
    }

private:
    static constexpr uint32_t kA0 = 32 * 1024, kB0 = 32 * 1024;  // bytes of an L0A / L0B half (128 x 128 f16)

    // Key blocks j and j + 1 of K or V (GM, ND, `rows` <= 256 x D) -> the next of two L1 buffers (NZ, 256 rows): one
    // copy per two steps. Returns the buffer; its event id is base + buffer
    __aicore__ inline int32_t LoadPair(const LocalTensor<half>& l1, uint32_t& used, int32_t base, const GlobalTensor<half>& src,
                                       uint32_t rows) {
        const int32_t b = static_cast<int32_t>(used++ % 2);
        WaitFlag<HardEvent::MTE1_MTE2>(base + b);
        DataCopy(l1[b * 2 * kBk * sh_.D], src, Nd2NzParams(1, rows, sh_.D, 0, sh_.D, 2 * kBk, 1, 0));
        SetFlag<HardEvent::MTE2_MTE1>(base + b);
        return b;
    }

    // L0A half a <- the rows of an L1 NZ matrix (128 rows, k16 fractal columns)
    __aicore__ inline int32_t LoadA(const LocalTensor<half>& l1, uint32_t k16) {
        const int32_t a = static_cast<int32_t>(a0_++ % 2);
        LocalTensor<half> aL0 = aL0_.Get<half>()[a * kA0 / 2];
        WaitFlag<HardEvent::M_MTE1>(a);
        for (uint32_t m1 = 0; m1 < kBq / 16; ++m1)
            LoadData(aL0[m1 * k16 * 256], l1, LoadData2DParams(m1, uint8_t(k16), kBq / 16, 0, 0, false, 0));
        SetFlag<HardEvent::MTE1_M>(a);
        return a;
    }

    // C = A (L0A half a) x B (L0B half b), then Fixpipe to dst (`rows` x n, row pitch n); waitB: the first Mmad on b
    __aicore__ inline void MmadOut(int32_t a, int32_t b, bool waitB, uint32_t n, uint32_t k, const GlobalTensor<float>& dst,
                                   uint32_t rows, bool atomic) {
        const int32_t c = static_cast<int32_t>(c0_++ % 2);
        LocalTensor<float> cL0 = cL0_.Get<float>()[c * kBq * kBk];
        WaitFlag<HardEvent::FIX_M>(c);
        WaitFlag<HardEvent::MTE1_M>(a);
        if (waitB) WaitFlag<HardEvent::MTE1_M>(2 + b);
        Mmad(cL0, aL0_.Get<half>()[a * kA0 / 2], bL0_.Get<half>()[b * kB0 / 2], MmadParams(kBq, n, k, 0, false, true));
        SetFlag<HardEvent::M_MTE1>(a);
        SetFlag<HardEvent::M_FIX>(c);
        WaitFlag<HardEvent::M_FIX>(c);
        if (atomic) {  // after this AIV's last write of O (Fixpipes finish out of order), then add into it
            PipeBarrier<PIPE_FIX>();
            SetAtomicAdd<float>();
        }
        Fixpipe(dst, cL0, FixpipeParamsV220(n, rows, kBq, n, false));
        if (atomic) SetAtomicNone();
        SetFlag<HardEvent::FIX_M>(c);
    }

    __aicore__ inline void Do(const Task& t) {
        const uint32_t D = sh_.D, d16 = D / 16;
        const uint64_t head = t.bh * sh_.S * D;
        LocalTensor<half> qL1 = qL1_.Get<half>();
        CrossCoreWaitFlag(kFlagQ);  // both AIV wrote their scaled Q block
        WaitFlag<HardEvent::MTE1_MTE2>(4);
        if (t.rows[0] == kBq && t.rows[1] == kBq) {  // both Q blocks in one copy
            DataCopy(qL1, w_[0].q, Nd2NzParams(2, kBq, D, uint16_t(kBq * D), D, kBq, 1, uint16_t(kBq * D)));
        } else {
            for (uint32_t h = 0; h < 2; ++h) {
                if (t.rows[h]) DataCopy(qL1[h * kBq * D], w_[h].q, Nd2NzParams(1, t.rows[h], D, 0, D, kBq, 1, 0));
            }
        }
        SetFlag<HardEvent::MTE2_MTE1>(4);
        WaitFlag<HardEvent::MTE2_MTE1>(4);
        for (uint32_t j = 0; j < t.n + 2; ++j) {
            if (j < t.n) {  // S_h = Q_h K_j^T for both halves, K_j loaded once
                const uint32_t n0 = j * kBk, hb = j % 2;
                if (hb == 0) kb_ = LoadPair(kL1_.Get<half>(), kUsed_, 0, kGm[head + uint64_t(n0) * D], sh_.S - n0 < 2 * kBk ? sh_.S - n0 : 2 * kBk);
                const int32_t b = static_cast<int32_t>(b0_++ % 2);
                LocalTensor<half> bL0 = bL0_.Get<half>()[b * kB0 / 2], kL1 = kL1_.Get<half>()[kb_ * 2 * kBk * D];
                WaitFlag<HardEvent::M_MTE1>(2 + b);
                if (hb == 0) WaitFlag<HardEvent::MTE2_MTE1>(kb_);
                // K [keys x D] in NZ is K^T in Zn already: fractal (d1, n1) at d1 * 16 + n1 in L1 (256 rows), at d1 * 8 + n1
                // in L0B; this step's block is n1 in [8 hb, 8 hb + 8)
                for (uint32_t d1 = 0; d1 < d16; ++d1)
                    LoadData(bL0[d1 * (kBk / 16) * 256], kL1, LoadData2DParams(uint16_t(d1 * 2 * kBk / 16 + hb * kBk / 16), kBk / 16, 1, 0, 0, false, 0));
                if (hb == 1 || j + 1 == t.n) SetFlag<HardEvent::MTE1_MTE2>(kb_);
                SetFlag<HardEvent::MTE1_M>(2 + b);
                bool waitB = true;
                for (uint32_t h = 0; h < 2; ++h) {
                    if (j >= t.steps[h]) continue;
                    const int32_t a = LoadA(qL1[h * kBq * D], d16);
                    MmadOut(a, b, waitB, kBk, D, w_[h].s[(j % sh_.slots) * kBq * kBk], t.rows[h], false);
                    waitB = false;
                }
                SetFlag<HardEvent::M_MTE1>(2 + b);
                CrossCoreSetFlag<2, PIPE_FIX>(kFlagS);
            }
            if (j >= 2) {  // O_h += P_h V_{j-2}
                const uint32_t jj = j - 2, n0 = jj * kBk, hb = jj % 2;
                CrossCoreWaitFlag(kFlagP);
                if (hb == 0) vb_ = LoadPair(vL1_.Get<half>(), vUsed_, 5, vGm[head + uint64_t(n0) * D], sh_.S - n0 < 2 * kBk ? sh_.S - n0 : 2 * kBk);
                const int32_t pb = static_cast<int32_t>(p_++ % 2);
                LocalTensor<half> pL1 = pL1_.Get<half>()[pb * 2 * kBq * kBk];
                WaitFlag<HardEvent::MTE1_MTE2>(2 + pb);
                const uint64_t ps = (jj % sh_.slots) * 2 * kBq * kBk;
                if (jj < t.steps[0] && jj < t.steps[1]) {  // both P blocks (NZ already) in one burst
                    DataCopy(pL1, w_[0].p[ps], 2 * kBq * kBk);
                } else {
                    for (uint32_t h = 0; h < 2; ++h) {
                        if (jj < t.steps[h]) DataCopy(pL1[h * kBq * kBk], w_[h].p[ps], kBq * kBk);
                    }
                }
                SetFlag<HardEvent::MTE2_MTE1>(2 + pb);
                const int32_t b = static_cast<int32_t>(b0_++ % 2);
                LocalTensor<half> bL0 = bL0_.Get<half>()[b * kB0 / 2];
                WaitFlag<HardEvent::M_MTE1>(2 + b);
                if (hb == 0) WaitFlag<HardEvent::MTE2_MTE1>(5 + vb_);
                LocalTensor<half> vL1 = vL1_.Get<half>()[vb_ * 2 * kBk * D];
                for (uint32_t k1 = 0; k1 < kBk / 16; ++k1)  // V [keys x D]: NZ (256 rows) -> Zn, fractals transposed
                    LoadData(bL0[k1 * d16 * 256], vL1, LoadData2DParams(uint16_t(hb * kBk / 16 + k1), uint8_t(d16), 2 * kBk / 16, 0, 0, true, 0));
                if (hb == 1 || jj + 1 == t.n) SetFlag<HardEvent::MTE1_MTE2>(5 + vb_);
                SetFlag<HardEvent::MTE1_M>(2 + b);
                WaitFlag<HardEvent::MTE2_MTE1>(2 + pb);
                bool waitB = true;
                for (uint32_t h = 0; h < 2; ++h) {
                    if (jj >= t.steps[h]) continue;
                    const int32_t a = LoadA(pL1[h * kBq * kBk], kBk / 16);
                    MmadOut(a, b, waitB, D, kBk, w_[h].o, t.rows[h], jj > 0);
                    waitB = false;
                }
                SetFlag<HardEvent::MTE1_MTE2>(2 + pb);
                SetFlag<HardEvent::M_MTE1>(2 + b);
                CrossCoreSetFlag<2, PIPE_FIX>(kFlagO);
            }
        }
        SetFlag<HardEvent::MTE1_MTE2>(4);  // Q's L1 buffer may be refilled
    }

    Shape sh_;
    TPipe pipe;
    TBuf<TPosition::A1> qL1_, pL1_;
    TBuf<TPosition::B1> kL1_, vL1_;
    TBuf<TPosition::A2> aL0_;
    TBuf<TPosition::B2> bL0_;
    TBuf<TPosition::CO1> cL0_;
    GlobalTensor<half> kGm, vGm;
    Slots w_[2];
    uint32_t kUsed_ = 0, vUsed_ = 0, a0_ = 0, b0_ = 0, c0_ = 0, p_ = 0;  // buffers used so far (each alternates two)
    int32_t kb_ = 0, vb_ = 0;                                              // the K / V buffer of the current two steps
};

// ---- AIV ------------------------------------------------------------------------------------------------------------

class Vec {
public:
    __aicore__ inline Vec(const Shape& sh, GM_ADDR q, GM_ADDR o, uint8_t* ws) : sh_(sh) {
        const uint64_t n = uint64_t(sh.B) * sh.H * sh.S * sh.D;
        qGm.SetGlobalBuffer((__gm__ half*)q, n);
        oGm.SetGlobalBuffer((__gm__ float*)o, n);
        me_ = static_cast<uint32_t>(GetSubBlockIdx());
        w_ = slots_of(ws, sh, static_cast<uint32_t>(GetBlockIdx()));
        pipe.InitBuffer(sQue_, 2, kBq * kBk * sizeof(float));  // S blocks in: the next lands while this one is worked on
        pipe.InitBuffer(pBuf_, kBq * kBk * sizeof(half));       // P out; the row folds' scratch before that
        pipe.InitBuffer(mBuf_, kBq * sizeof(float));
        pipe.InitBuffer(lBuf_, kBq * sizeof(float));
        pipe.InitBuffer(cBuf_, kBq * sizeof(float));
        pipe.InitBuffer(redBuf_, kBq * sizeof(float));
        pipe.InitBuffer(bcBuf_, kBq * 32);  // a per-row value broadcast to a 32-byte block (Brcb); ReduceMax's scratch
        pipe.InitBuffer(gapBuf_, 32);
        pipe.InitBuffer(colBuf_, kBk * sizeof(half));
        pipe.InitBuffer(rowBuf_, kBq * sizeof(half));
        pipe.InitBuffer(cmpBuf_, kBq * kBk / 8);
        CreateVecIndex(colBuf_.Get<half>(), half(0), kBk);
        CreateVecIndex(rowBuf_.Get<half>(), half(0), kBq);
        Duplicate(pBuf_.Get<half>(), half(0), kBq * kBk);  // P's rows past a tail block's are copied out: defined
        Duplicate(redBuf_.Get<float>(), 0.0f, kBq);
        Duplicate(cBuf_.Get<float>(), 0.0f, kBq);
        PipeBarrier<PIPE_ALL>();
    }

    __aicore__ inline void Run() {
        for_each_task(sh_, static_cast<uint32_t>(GetBlockIdx()) / 2, [&](const Task& t) { Do(t); });
    }

private:
    // Per-row max / sum of x (rows x kBk): the two 64-key halves folded (one repeat per row) into P's buffer, then one
    // WholeReduce per row.
    template <bool kMax>
    __aicore__ inline void RowReduce(const LocalTensor<float>& dst, const LocalTensor<float>& x, uint32_t rows) {
        LocalTensor<float> fold = pBuf_.Get<float>();
        const BinaryRepeatParams rp(1, 1, 1, 8, kBk / 8, kBk / 8);
        if constexpr (kMax) {
            Max(fold, x, x[64], 64, static_cast<int32_t>(rows), rp);
            WholeReduceMax(dst, fold, 64, static_cast<int32_t>(rows), 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
        } else {
            Add(fold, x, x[64], 64, static_cast<int32_t>(rows), rp);
            WholeReduceSum(dst, fold, 64, static_cast<int32_t>(rows), 1, 1, 8);
        }
    }

    // y[i][:width] = x[i][:width] op v[i] (op 0 sub, 1 mul, 2 div), rows `pitch` apart
    template <int kOp>
    __aicore__ inline void RowBroadcast(const LocalTensor<float>& y, const LocalTensor<float>& x, const LocalTensor<float>& v,
                                        uint32_t rows, uint32_t width, uint32_t pitch) {
        LocalTensor<float> bc = bcBuf_.Get<float>();
        Brcb(bc, v, static_cast<uint8_t>((rows + 7) / 8), BrcbRepeatParams(1, 8));
        const uint8_t pb = static_cast<uint8_t>(pitch / 8);
        for (uint32_t c = 0; c < width; c += 64) {
            const uint64_t lanes = width - c < 64 ? width - c : 64;
            const BinaryRepeatParams rp(1, 1, 0, pb, pb, 1);
            if constexpr (kOp == 0) {
                Sub(y[c], x[c], bc, lanes, static_cast<int32_t>(rows), rp);
            } else if constexpr (kOp == 1) {
                Mul(y[c], x[c], bc, lanes, static_cast<int32_t>(rows), rp);
            } else {
                Div(y[c], x[c], bc, lanes, static_cast<int32_t>(rows), rp);
            }
        }
    }

    // S slot -> UB; keys after a query -> -3e38 (the causal mask) when the block crosses the diagonal
    __aicore__ inline void LoadS(const LocalTensor<float>& s, uint32_t slot, uint32_t rows, uint32_t r0, uint32_t n0) {
        DataCopy(s, w_.s[slot * kBq * kBk], rows * kBk);  // READS THE S SLOT
        if (!(sh_.diagMask && n0 + kBk - 1 > r0)) return;
        SetFlag<HardEvent::MTE2_V>(EVENT_ID2);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID2);
        SetFlag<HardEvent::MTE3_V>(EVENT_ID2);  // P's buffer (diag's home) was copied out
        WaitFlag<HardEvent::MTE3_V>(EVENT_ID2);
        LocalTensor<half> diag = pBuf_.Get<half>(), rowB = bcBuf_.Get<half>();
        Brcb(rowB, rowBuf_.Get<half>(), static_cast<uint8_t>((rows + 7) / 8), BrcbRepeatParams(1, 8));
        Sub(diag, colBuf_.Get<half>(), rowB, 128, static_cast<int32_t>(rows), BinaryRepeatParams(1, 1, 0, kBk / 16, 0, 1));
        // keep key n0 + c for query r0 + i when c - i <= r0 - n0 (|c - i| < 128: exact in f16)
        LocalTensor<uint8_t> cmp = cmpBuf_.Get<uint8_t>();
        Compares(cmp, diag, half(float(int32_t(r0) - int32_t(n0))), CMPMODE::LE, rows * kBk);
        Select(s, cmp, s, -3e38f, SELMODE::VSEL_TENSOR_SCALAR_MODE, rows * kBk);
    }

    __aicore__ inline void WaitO(uint32_t upTo) {  // the AIC finished P V of the steps before `upTo`
        for (; oDone_ < upTo; ++oDone_) CrossCoreWaitFlag(kFlagO);
    }

    __aicore__ inline void Do(const Task& t) {
        const uint32_t D = sh_.D, rows = t.rows[me_], r0 = t.q0 + me_ * kBq, steps = t.steps[me_];
        const uint64_t at = t.bh * sh_.S * D + uint64_t(r0) * D;
        LocalTensor<float> mRow = mBuf_.Get<float>(), lRow = lBuf_.Get<float>(), cRow = cBuf_.Get<float>(), red = redBuf_.Get<float>();
        LocalTensor<half> p = pBuf_.Get<half>();
        oDone_ = 0;
        if (rows) {  // Q_h / sqrt(D) (one rounding to half) -> the Q slot, for the AIC
            LocalTensor<float> f = sQue_.AllocTensor<float>();
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID1);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID1);
            DataCopy(p, qGm[at], rows * D);
            SetFlag<HardEvent::MTE2_V>(EVENT_ID1);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID1);
            Cast(f, p, RoundMode::CAST_NONE, rows * D);
            Muls(f, f, 1.0f / std::sqrt(float(D)), rows * D);
            Cast(p, f, RoundMode::CAST_RINT, rows * D);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
            DataCopy(w_.q, p, rows * D);
            sQue_.FreeTensor(f);
            Duplicate(mRow, -3.4028234e38f, kBq);
            Duplicate(lRow, 0.0f, kBq);
        }
        CrossCoreSetFlag<2, PIPE_MTE3>(kFlagQ);
        for (uint32_t j = 0; j < t.n; ++j) {
            CrossCoreWaitFlag(kFlagS);
            if (j >= steps) {  // the other AIV's last block: nothing of ours
                WaitO(j >= 2 ? j - 2 : 0);
                CrossCoreSetFlag<2, PIPE_MTE3>(kFlagP);
                continue;
            }
            const uint32_t slot = j % sh_.slots, n0 = j * kBk;
            LocalTensor<float> s = sQue_.AllocTensor<float>();
            LoadS(s, slot, rows, r0, n0);
            sQue_.EnQue(s);
            s = sQue_.DeQue<float>();
            SetFlag<HardEvent::MTE3_V>(EVENT_ID0);  // the last P copy has read P's buffer (the folds' scratch)
            WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
            bool rescale = j == 0;
            if (!rescale) {  // try the running max as it is: E = e^(X - m) in place
                RowBroadcast<0>(s, s, mRow, rows, kBk, kBk);
                Exp(s, s, rows * kBk);
                RowReduce<false>(red, s, rows);
                ReduceMax(gapBuf_.Get<float>(), red, bcBuf_.Get<float>(), static_cast<int32_t>(rows), false);
                SetFlag<HardEvent::V_S>(EVENT_ID0);
                WaitFlag<HardEvent::V_S>(EVENT_ID0);
                rescale = !(gapBuf_.Get<float>().GetValue(0) <= kRescaleSum);
                if (rescale) {  // X again from the slot (still ours until P is set)
                    SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
                    WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);
                    LoadS(s, slot, rows, r0, n0);
                    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
                    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
                }
            }
            if (rescale) {  // m' = max(m, rowmax X), c = e^(m - m'), P = e^(X - m'), l *= c, O *= c
                RowReduce<true>(red, s, rows);
                Max(red, red, mRow, rows);
                Sub(cRow, mRow, red, rows);
                Exp(cRow, cRow, rows);
                Adds(mRow, red, 0.0f, rows);
                RowBroadcast<0>(s, s, mRow, rows, kBk, kBk);
                Exp(s, s, rows * kBk);
                RowReduce<false>(red, s, rows);
                Mul(lRow, lRow, cRow, rows);
                if (j > 0 && sh_.oRescale) {  // O holds P V of every step before j: scale it in its slot
                    WaitO(j);
                    LocalTensor<float> o = sQue_.AllocTensor<float>();
                    SetFlag<HardEvent::V_MTE2>(EVENT_ID1);
                    WaitFlag<HardEvent::V_MTE2>(EVENT_ID1);
                    DataCopy(o, w_.o, rows * D);
                    SetFlag<HardEvent::MTE2_V>(EVENT_ID1);
                    WaitFlag<HardEvent::MTE2_V>(EVENT_ID1);
                    RowBroadcast<1>(o, o, cRow, rows, D, D);
                    SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
                    WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
                    DataCopy(w_.o, o, rows * D);
                    SetFlag<HardEvent::MTE3_V>(EVENT_ID1);
                    WaitFlag<HardEvent::MTE3_V>(EVENT_ID1);
                    sQue_.FreeTensor(o);
                }
            }
            Add(lRow, lRow, red, rows);
            for (uint32_t h = 0; h < 2; ++h)  // P in NZ (16-column chunks of 128 rows): the AIC loads it as it is
                Cast(p[h * 4 * kBq * 16], s[h * 64], RoundMode::CAST_RINT, 64, static_cast<int32_t>(rows),
                     UnaryRepeatParams(kBq * 16 * 2 / 32, 1, 1, kBk * 4 / 32));
            sQue_.FreeTensor(s);
            WaitO(j >= 2 ? j - 2 : 0);  // P slot j % 3 was read by the AIC at step j - 3
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(w_.p[slot * 2 * kBq * kBk], p, kBq * kBk);  // rows past `rows`: stale, only ever in C rows nobody writes
            CrossCoreSetFlag<2, PIPE_MTE3>(kFlagP);
        }
        WaitO(sh_.oWait ? t.n : t.n - 1);  // no_o_wait (planted bug): O read before the AIC's last add
        if (!rows) {
            WaitO(t.n);
            return;
        }
        LocalTensor<float> o = sQue_.AllocTensor<float>();  // O / l -> out
        SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID1);
        WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID1);
        DataCopy(o, w_.o, rows * D);  // READS THE O SLOT
        WaitO(t.n);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID1);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID1);
        RowBroadcast<2>(o, o, lRow, rows, D, D);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
        DataCopy(oGm[at], o, rows * D);
        SetFlag<HardEvent::MTE3_V>(EVENT_ID1);
        WaitFlag<HardEvent::MTE3_V>(EVENT_ID1);
        sQue_.FreeTensor(o);
    }

    Shape sh_;
    TPipe pipe;
    TQue<TPosition::VECIN, 2> sQue_;
    TBuf<TPosition::VECCALC> pBuf_, mBuf_, lBuf_, cBuf_, redBuf_, bcBuf_, gapBuf_, colBuf_, rowBuf_, cmpBuf_;
    GlobalTensor<half> qGm;
    GlobalTensor<float> oGm;
    Slots w_;
    uint32_t me_ = 0, oDone_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 7) {
        std::fprintf(stderr, "usage: flash_ring DIR B H S D CORES [ok|ring2|no_o_wait|no_diag_mask|no_o_rescale]\n");
        return 2;
    }
    const std::string dir = argv[1];
    Shape sh{};
    sh.B = uint32_t(std::atoi(argv[2]));
    sh.H = uint32_t(std::atoi(argv[3]));
    sh.S = uint32_t(std::atoi(argv[4]));
    sh.D = uint32_t(std::atoi(argv[5]));
    sh.cores = uint32_t(std::atoi(argv[6]));
    const std::string variant = argc > 7 ? argv[7] : "ok";
    sh.slots = variant == "ring2" ? 2 : 3;
    sh.oWait = variant != "no_o_wait";
    sh.diagMask = variant != "no_diag_mask";
    sh.oRescale = variant != "no_o_rescale";
    if (sh.D % 16 != 0 || sh.D == 0 || sh.D > 128 || sh.S == 0 || sh.cores == 0) {
        std::fprintf(stderr, "flash_ring: D must be a multiple of 16 in [16, 128], S and CORES positive\n");
        return 2;
    }
    const size_t n = size_t(sh.B) * sh.H * sh.S * sh.D;
    uint8_t* q = sim::GmMapInput((dir + "/q.bin").c_str(), n * 2);
    uint8_t* k = sim::GmMapInput((dir + "/k.bin").c_str(), n * 2);
    uint8_t* v = sim::GmMapInput((dir + "/v.bin").c_str(), n * 2);
    uint8_t* o = sim::GmMapOutput((dir + "/o.bin").c_str(), n * 4);
    uint8_t* ws = sim::GmAlloc(ws_bytes(sh));
    if (!q || !k || !v || !o || !ws) return 2;
    sim::GmTrackUninit(ws, ws_bytes(sh));
    SetKernelMode(KernelMode::MIX_MODE);
    const int errors = sim::Launch(sh.cores, [&] {
        SetSyncBaseAddr(0);
        if ASCEND_IS_AIC {
            Cube c(sh, k, v, ws);
            c.Run();
        } else {
            Vec a(sh, q, o, ws);
            a.Run();
        }
    });
    for (uint8_t* p : {q, k, v, o, ws}) sim::GmFree(p);
    return errors == 0 ? 0 : 1;
}
