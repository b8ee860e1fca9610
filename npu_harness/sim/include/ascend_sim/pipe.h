// ascend_sim/pipe.h - TPipe (UB bump allocator), TQue / TQueBind (queue protocol checks), TBuf.
// Semantics: ref §1.3 (queues, depth, double buffering, 64-buffer limit), §1.4 (TBuf), §8 rules 1, 9.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_PIPE_H
#define ASCEND_SIM_ASCEND_SIM_PIPE_H

#include "tensor.h"

namespace AscendC {

template <TPosition pos> class TBuf;

namespace sim::detail {

// Which on-chip memory a buffer of a position lives in (ref §1.2, §5.1).
enum class Mem : uint8_t { UB, L1, L0A, L0B, L0C, kCount };
inline const char* const kMemNames[] = {"UB", "L1", "L0A", "L0B", "L0C"};
inline const char* const kMemCodes[] = {"UB-OVERFLOW", "L1-OVERFLOW", "L0A-OVERFLOW", "L0B-OVERFLOW", "L0C-OVERFLOW"};
inline constexpr uint64_t kMemBytes[] = {ASCEND_SIM_UB_BYTES, ASCEND_SIM_L1_BYTES, ASCEND_SIM_L0A_BYTES, ASCEND_SIM_L0B_BYTES,
                                         ASCEND_SIM_L0C_BYTES};
inline constexpr const char* kMemMacros[] = {"ASCEND_SIM_UB_BYTES", "ASCEND_SIM_L1_BYTES", "ASCEND_SIM_L0A_BYTES",
                                             "ASCEND_SIM_L0B_BYTES", "ASCEND_SIM_L0C_BYTES"};

constexpr Mem mem_of(TPosition p) {
    switch (p) {
        case TPosition::A1:
        case TPosition::B1:
        case TPosition::C1:
        case TPosition::C2: return Mem::L1;
        case TPosition::A2: return Mem::L0A;
        case TPosition::B2: return Mem::L0B;
        case TPosition::CO1: return Mem::L0C;
        default: return Mem::UB;
    }
}

// Start of memory `m` of the running block: the UB arena, or the block's L1 / L0A / L0B / L0C arena
// (allocated on first use; vector instructions and DMA reject those tensors: they are not in the UB).
ASCEND_SIM_RT uint8_t* cube_arena();
inline uint8_t* mem_base(Mem m) {
    if (m == Mem::UB) return st().ub;
    uint64_t off = 0;
    for (uint32_t k = 1; k < static_cast<uint32_t>(m); ++k) off += kMemBytes[k];
    return cube_arena() + off;
}
inline constexpr uint64_t kCubeArenaBytes = uint64_t(ASCEND_SIM_L1_BYTES) + ASCEND_SIM_L0A_BYTES + ASCEND_SIM_L0B_BYTES + ASCEND_SIM_L0C_BYTES;

class QueBase {
public:
    ASCEND_SIM_RT explicit QueBase(int32_t depth, Mem mem = Mem::UB, TPosition pos = TPosition::VECCALC, TPosition src = TPosition::VECCALC,
                                   TPosition dst = TPosition::VECCALC);
    QueBase(const QueBase&) = delete;
    QueBase& operator=(const QueBase&) = delete;
    ASCEND_SIM_RT ~QueBase();

    // QUE-LEAK: one report per queue, at the AllocTensor of the first buffer still held.
    ASCEND_SIM_RT void leak_check();
    ASCEND_SIM_RT void sim_init(uint32_t offset, uint32_t num, uint32_t len, const std::source_location& loc);
    ASCEND_SIM_RT BufState* sim_alloc(const std::source_location& loc);
    BufState* owned(const LView& v) const {
        if (v.st == nullptr || v.st->owner != this) return nullptr;
        return v.st;
    }
    ASCEND_SIM_RT void sim_enque(const LView& v, const std::source_location& loc);
    ASCEND_SIM_RT BufState* sim_deque(const std::source_location& loc);
    ASCEND_SIM_RT void sim_free(const LView& v, const std::source_location& loc);

    template <class T>
    LocalTensor<T> sim_tensor(BufState* b) const {
        LocalTensor<T> t;
        t.sim_ptr = reinterpret_cast<T*>(mem_base(mem_) + b->offset);
        t.sim_size = b->len / static_cast<uint32_t>(sizeof(T));
        t.sim_cap = b->cap / static_cast<uint32_t>(sizeof(T));
        t.sim_st = b;
        t.sim_gen = b->gen;
        return t;
    }

    uint32_t sim_num() const { return num_; }
    Mem sim_mem() const { return mem_; }
    TPosition sim_pos() const { return pos_; }
    uint32_t sim_count() const { return count_; }
    uint32_t sim_depth() const { return depth_; }
    bool sim_has_idle() const {
        for (uint32_t i = 0; i < num_; ++i)
            if (bufs_[i].status == BufStatus::Free) return true;
        return false;
    }

    TPosition sim_src() const { return src_; }
    TPosition sim_dst() const { return dst_; }

private:
    uint32_t depth_;
    Mem mem_;
    TPosition pos_;
    TPosition src_, dst_;  // TQueBind<src, dst>: which pipes the queue's implicit events connect
    uint32_t num_ = 0;
    uint32_t head_ = 0, count_ = 0, cursor_ = 0;
    bool inited_ = false;
    std::source_location initLoc_{};
    uint8_t fifo_[kMaxBuffers]{};
    BufState bufs_[kMaxBuffers];
};

}  // namespace sim::detail

// TQueBind<src, dst, depth>: depth = how many EnQue may be outstanding (ref §1.3).
template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind : public sim::detail::QueBase {
public:
    TQueBind()
        : QueBase(depth, sim::detail::mem_of(src) != sim::detail::Mem::UB ? sim::detail::mem_of(src) : sim::detail::mem_of(dst),
                  src == TPosition::GM ? dst : src, src, dst) {}

    template <typename T>
    LocalTensor<T> AllocTensor(std::source_location loc = std::source_location::current()) {
        return this->template sim_tensor<T>(this->sim_alloc(loc));
    }
    template <typename T>
    void AllocTensor(LocalTensor<T>& tensor, std::source_location loc = std::source_location::current()) {
        tensor = this->template sim_tensor<T>(this->sim_alloc(loc));
    }

    template <typename T>
    bool EnQue(const LocalTensor<T>& tensor, std::source_location loc = std::source_location::current()) {
        this->sim_enque(tensor.sim_view(), loc);
        return true;
    }

    template <typename T>
    LocalTensor<T> DeQue(std::source_location loc = std::source_location::current()) {
        return this->template sim_tensor<T>(this->sim_deque(loc));
    }
    template <typename T>
    void DeQue(LocalTensor<T>& tensor, std::source_location loc = std::source_location::current()) {
        tensor = this->template sim_tensor<T>(this->sim_deque(loc));
    }

    template <typename T>
    void FreeTensor(LocalTensor<T>& tensor, std::source_location loc = std::source_location::current()) {
        this->sim_free(tensor.sim_view(), loc);
    }

    bool VacantInQue() const { return this->sim_count() < this->sim_depth(); }
    bool HasTensorInQue() const { return this->sim_count() > 0; }
    int32_t GetTensorCountInQue() const { return static_cast<int32_t>(this->sim_count()); }
    bool HasIdleBuffer() const { return this->sim_has_idle(); }
    void FreeAllEvent() {}
};

// TQue<pos> is TQueBind<GM, VECIN> for VECIN and TQueBind<VECOUT, GM> for VECOUT (ref_next §5.3): the
// queue's implicit events connect the copy-in (MTE2) or copy-out (MTE3) pipe with the vector pipe.
namespace sim::detail {
constexpr TPosition que_src(TPosition p) { return p == TPosition::VECIN || p == TPosition::A1 || p == TPosition::B1 ? TPosition::GM : p; }
constexpr TPosition que_dst(TPosition p) { return p == TPosition::VECOUT || p == TPosition::CO1 ? TPosition::GM : p; }
}  // namespace sim::detail

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<sim::detail::que_src(pos), sim::detail::que_dst(pos), depth, mask> {};

// TBuf: scratch buffer without queue protocol (ref §1.4); its tensors are always live.
template <TPosition pos = TPosition::VECCALC>
class TBuf {
public:
    TBuf() = default;

    template <typename T>
    LocalTensor<T> Get(std::source_location loc = std::source_location::current()) const {
        sim_check("TBuf::Get", loc);
        return sim_make<T>(0, sim_len / static_cast<uint32_t>(sizeof(T)));
    }
    template <typename T>
    LocalTensor<T> Get(uint32_t len, std::source_location loc = std::source_location::current()) const {
        sim_check("TBuf::Get", loc);
        if (uint64_t(len) * sizeof(T) > sim_cap) {
            sim::detail::fatal("UB-OOB", loc, "TBuf::Get(%u): %llu B requested but the TBuf has %u B", len,
                               static_cast<unsigned long long>(uint64_t(len) * sizeof(T)), sim_len);
        }
        return sim_make<T>(0, len);
    }
    template <typename T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset, std::source_location loc = std::source_location::current()) const {
        sim_check("TBuf::GetWithOffset", loc);
        if (uint64_t(bufOffset) + uint64_t(size) * sizeof(T) > sim_cap) {
            sim::detail::fatal("UB-OOB", loc, "TBuf::GetWithOffset(%u, %u): %llu B past offset %u requested but the TBuf has %u B", size,
                               bufOffset, static_cast<unsigned long long>(uint64_t(size) * sizeof(T)), bufOffset, sim_len);
        }
        return sim_make<T>(bufOffset, size);
    }

    static constexpr sim::detail::Mem sim_mem = sim::detail::mem_of(pos);

    void sim_init(uint32_t offset, uint32_t len) {
        sim_offset = offset;
        sim_len = len;
        sim_cap = static_cast<uint32_t>(sim::detail::align_up(len, sim::detail::kUbAlign));
        sim_inited = true;
    }

    uint32_t sim_offset = 0, sim_len = 0, sim_cap = 0;
    bool sim_inited = false;

private:
    void sim_check(const char* api, const std::source_location& loc) const {
        sim::detail::touch(loc);
        if (!sim_inited) sim::detail::fatal("UB-OOB", loc, "%s on a TBuf without pipe.InitBuffer", api);
    }
    template <typename T>
    LocalTensor<T> sim_make(uint32_t byteOff, uint32_t elems) const {
        LocalTensor<T> t;
        t.sim_ptr = reinterpret_cast<T*>(sim::detail::mem_base(sim_mem) + sim_offset + byteOff);
        t.sim_size = elems;
        t.sim_cap = (sim_cap - byteOff) / static_cast<uint32_t>(sizeof(T));
        return t;
    }
};

// TPipe: bump allocator over the block's UB (ref §1.3, §8 rule 1).
class TPipe {
public:
    TPipe() { sim::detail::st().curPipe = this; }
    ~TPipe() {
        if (sim::detail::st().curPipe == this) sim::detail::st().curPipe = nullptr;
    }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    // Reserves num x alignUp(len, 32) bytes for the queue.
    template <class Q, std::enable_if_t<std::is_base_of_v<sim::detail::QueBase, Q>, int> = 0>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len, std::source_location loc = std::source_location::current()) {
        sim::detail::touch(loc);
        if (num == 0) sim::detail::fatal("PARAM-RANGE", loc, "InitBuffer: num = 0 buffers");
        const uint32_t off = sim_reserve(que.sim_mem(), num, len, loc);
        que.sim_init(off, num, len, loc);
        sim::detail::Counters& c = sim::detail::cnt();
        if (que.sim_pos() == TPosition::VECIN) {
            c.inQueues += 1;
            if (num < c.inBufsMin) c.inBufsMin = num;
        }
        if (que.sim_pos() == TPosition::VECOUT) {
            c.outQueues += 1;
            if (num < c.outBufsMin) c.outBufsMin = num;
        }
        return true;
    }

    // Reserves alignUp(len, 32) bytes for the TBuf.
    template <TPosition bufPos>
    bool InitBuffer(TBuf<bufPos>& buf, uint32_t len, std::source_location loc = std::source_location::current()) {
        sim::detail::touch(loc);
        const uint32_t off = sim_reserve(TBuf<bufPos>::sim_mem, 1, len, loc);
        buf.sim_init(off, len);
        return true;
    }

    void Reset() {
        for (uint32_t& u : used_) u = 0;
        nbufs_ = 0;
    }
    void Destroy() { Reset(); }
    void Init() { Reset(); }

    template <HardEvent evt>
    TEventID FetchEventID() {
        return FetchEventID(evt);
    }
    TEventID FetchEventID(HardEvent evt) {
        TEventID& n = sim::detail::st().nextEventId[static_cast<uint32_t>(evt)];
        const TEventID id = n;
        n = static_cast<TEventID>((n + 1) % sim::detail::kMaxEventIds);
        return id;
    }
    template <HardEvent evt>
    TEventID AllocEventID() {
        return FetchEventID(evt);
    }
    template <HardEvent evt>
    void ReleaseEventID(TEventID) {}

    uint32_t sim_used() const { return used_[0]; }

private:
    ASCEND_SIM_RT uint32_t sim_reserve(sim::detail::Mem mem, uint32_t num, uint32_t len, const std::source_location& loc);

    uint32_t used_[static_cast<uint32_t>(sim::detail::Mem::kCount)]{};
    uint32_t nbufs_ = 0;
};

inline TPipe* GetTPipePtr() { return sim::detail::st().curPipe; }

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_PIPE_H
