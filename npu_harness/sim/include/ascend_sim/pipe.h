// ascend_sim/pipe.h - TPipe (UB bump allocator), TQue / TQueBind (queue protocol checks), TBuf.
// Semantics: ref §1.3 (queues, depth, double buffering, 64-buffer limit), §1.4 (TBuf), §8 rules 1, 9.
#pragma once

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

// Cube-side memories are not modelled beyond their budgets: their buffers live in one static host
// arena (vector instructions and DMA reject them: they do not point into the UB).
inline uint8_t* mem_base(Mem m) {
    if (m == Mem::UB) return g_sim.ub;
    alignas(512) static uint8_t arena[ASCEND_SIM_L1_BYTES + ASCEND_SIM_L0A_BYTES + ASCEND_SIM_L0B_BYTES + ASCEND_SIM_L0C_BYTES];
    uint64_t off = 0;
    for (uint32_t k = 1; k < static_cast<uint32_t>(m); ++k) off += kMemBytes[k];
    return arena + off;
}

class QueBase {
public:
    explicit QueBase(int32_t depth, Mem mem = Mem::UB, TPosition pos = TPosition::VECCALC)
        : depth_(depth < 1 ? 1 : static_cast<uint32_t>(depth)), mem_(mem), pos_(pos) {
        g_sim.liveQueues.push_back(this);
    }
    QueBase(const QueBase&) = delete;
    QueBase& operator=(const QueBase&) = delete;
    ~QueBase() {
        auto& v = g_sim.liveQueues;
        for (size_t i = 0; i < v.size(); ++i) {
            if (v[i] == this) {
                v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
                break;
            }
        }
        // The queue dies at the end of the kernel body (or earlier): everything must be freed by now.
        if (g_sim.inBlock && !g_sim.blockFaulted && std::uncaught_exceptions() == 0) leak_check();
    }

    // QUE-LEAK: one report per queue, at the AllocTensor of the first buffer still held.
    void leak_check() {
        uint32_t allocated = 0, enqueued = 0;
        const BufState* first = nullptr;
        for (uint32_t i = 0; i < num_; ++i) {
            if (bufs_[i].status == BufStatus::Free) continue;
            (bufs_[i].status == BufStatus::Allocated ? allocated : enqueued) += 1;
            if (!first) first = &bufs_[i];
        }
        if (!first) return;
        report("QUE-LEAK", first->allocLoc,
               "queue (InitBuffer at %s:%u) still holds %u allocated and %u enqueued of its %u buffers at the end of the block; every "
               "AllocTensor needs a matching FreeTensor (this is the AllocTensor of the first one)",
               base_name(initLoc_.file_name()), initLoc_.line(), allocated, enqueued, num_);
        for (uint32_t i = 0; i < num_; ++i) bufs_[i].status = BufStatus::Free;
        count_ = 0;
    }

    void sim_init(uint32_t offset, uint32_t num, uint32_t len, const std::source_location& loc) {
        for (uint32_t i = 0; i < kMaxBuffers; ++i) {
            BufState& b = bufs_[i];
            b.gen += 1;  // tensors of a previous InitBuffer become stale
            b.status = BufStatus::Free;
            b.everFreed = false;
            b.owner = this;
            b.len = len;
            b.cap = static_cast<uint32_t>(align_up(len, kUbAlign));
            b.offset = offset + i * b.cap;
        }
        num_ = num;
        head_ = count_ = cursor_ = 0;
        initLoc_ = loc;
        inited_ = true;
    }

    BufState* sim_alloc(const std::source_location& loc) {
        touch(loc);
        if (!inited_ || num_ == 0) fatal("QUE-ALLOC", loc, "AllocTensor on a queue that has no buffers (call pipe.InitBuffer first)");
        for (uint32_t k = 0; k < num_; ++k) {
            const uint32_t i = (cursor_ + k) % num_;
            BufState& b = bufs_[i];
            if (b.status != BufStatus::Free) continue;
            cursor_ = (i + 1) % num_;
            b.status = BufStatus::Allocated;
            b.gen += 1;
            b.allocLoc = loc;
            // A freshly allocated buffer holds the previous tile's data: nothing of this tile yet.
            if (mem_ == Mem::UB) clear_def(mem_base(mem_) + b.offset, b.cap);
            return &b;
        }
        uint32_t enq = count_;
        fatal("QUE-ALLOC", loc,
              "AllocTensor: all %u buffers of this queue (InitBuffer at %s:%u) are in use (%u allocated, %u enqueued); FreeTensor one "
              "first (hardware would stall here)",
              num_, base_name(initLoc_.file_name()), initLoc_.line(), num_ - enq, enq);
    }

    BufState* owned(const LView& v) const {
        if (v.st == nullptr || v.st->owner != this) return nullptr;
        return v.st;
    }

    void sim_enque(const LView& v, const std::source_location& loc) {
        touch(loc);
        check_live("EnQue", "tensor", v, loc);
        BufState* b = owned(v);
        if (!b) fatal("QUE-STATE", loc, "EnQue: the tensor was not allocated from this queue (TBuf tensor or another queue's buffer)");
        if (b->status == BufStatus::Enqueued) fatal("QUE-STATE", loc, "EnQue: this tensor is already enqueued");
        if (count_ >= depth_) {
            fatal("QUE-FULL", loc, "EnQue: the queue depth is %u and %u tensor(s) are already enqueued; DeQue one first", depth_, count_);
        }
        b->status = BufStatus::Enqueued;
        fifo_[(head_ + count_) % kMaxBuffers] = static_cast<uint8_t>(b - bufs_);
        ++count_;
    }

    BufState* sim_deque(const std::source_location& loc) {
        touch(loc);
        if (count_ == 0) {
            fatal("QUE-EMPTY", loc, "DeQue on an empty queue (no tensor was enqueued); hardware would wait here forever");
        }
        BufState* b = &bufs_[fifo_[head_]];
        head_ = (head_ + 1) % kMaxBuffers;
        --count_;
        b->status = BufStatus::Allocated;
        return b;
    }

    void sim_free(const LView& v, const std::source_location& loc) {
        touch(loc);
        if (v.ptr == nullptr) fatal("QUE-FREE", loc, "FreeTensor of an empty LocalTensor");
        BufState* b = owned(v);
        if (!b) {
            fatal("QUE-FREE", loc, "FreeTensor: the tensor was not allocated from this queue (%s)",
                  v.st ? "it belongs to another queue" : "TBuf tensor or not a queue buffer");
        }
        if (b->gen != v.gen || b->status == BufStatus::Free) {
            fatal("QUE-FREE", loc, "FreeTensor: double free (this buffer was already released by FreeTensor at %s:%u)",
                  base_name(b->freeLoc.file_name()), b->freeLoc.line());
        }
        if (b->status == BufStatus::Enqueued) fatal("QUE-FREE", loc, "FreeTensor of a tensor that is still enqueued (DeQue it first)");
        b->status = BufStatus::Free;
        b->everFreed = true;
        b->freeLoc = loc;
    }

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

private:
    uint32_t depth_;
    Mem mem_;
    TPosition pos_;
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
    TQueBind() : QueBase(depth, sim::detail::mem_of(src) != sim::detail::Mem::UB ? sim::detail::mem_of(src) : sim::detail::mem_of(dst), src) {}

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

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {};

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
class TPipe;
namespace sim::detail {
inline TPipe* g_curPipe = nullptr;
}

class TPipe {
public:
    TPipe() { sim::detail::g_curPipe = this; }
    ~TPipe() {
        if (sim::detail::g_curPipe == this) sim::detail::g_curPipe = nullptr;
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
        TEventID& n = sim::detail::g_sim.nextEventId[static_cast<uint32_t>(evt)];
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
    uint32_t sim_reserve(sim::detail::Mem mem, uint32_t num, uint32_t len, const std::source_location& loc) {
        using namespace sim::detail;
        const uint32_t m = static_cast<uint32_t>(mem);
        const uint64_t each = sim::detail::align_up(len, sim::detail::kUbAlign);
        const uint64_t need = each * num;
        if (nbufs_ + num > sim::detail::kMaxBuffers) {
            sim::detail::fatal("BUFFER-LIMIT", loc, "InitBuffer would bring the number of buffers to %u; at most %u buffers per kernel",
                               nbufs_ + num, sim::detail::kMaxBuffers);
        }
        const uint64_t avail = kMemBytes[m] - used_[m];
        if (need > avail) {
            sim::detail::fatal(kMemCodes[m], loc,
                               "InitBuffer requests %llu B (%u x alignUp(%u, 32) = %u x %llu B) but only %llu B of the %llu B %s are "
                               "available (%u B already reserved; %s)",
                               static_cast<unsigned long long>(need), num, len, num, static_cast<unsigned long long>(each),
                               static_cast<unsigned long long>(avail), static_cast<unsigned long long>(kMemBytes[m]), kMemNames[m],
                               used_[m], kMemMacros[m]);
        }
        const uint32_t off = used_[m];
        used_[m] += static_cast<uint32_t>(need);
        nbufs_ += num;
        return off;
    }

    uint32_t used_[static_cast<uint32_t>(sim::detail::Mem::kCount)]{};
    uint32_t nbufs_ = 0;
};

inline TPipe* GetTPipePtr() { return sim::detail::g_curPipe; }

}  // namespace AscendC
