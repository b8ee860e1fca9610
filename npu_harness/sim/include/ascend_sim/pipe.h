// ascend_sim/pipe.h - TPipe (UB bump allocator), TQue / TQueBind (queue protocol checks), TBuf.
// Semantics: ref §1.3 (queues, depth, double buffering, 64-buffer limit), §1.4 (TBuf), §8 rules 1, 9.
#pragma once

#include "tensor.h"

namespace AscendC {

template <TPosition pos> class TBuf;

namespace sim::detail {

class QueBase {
public:
    explicit QueBase(int32_t depth) : depth_(depth < 1 ? 1 : static_cast<uint32_t>(depth)) { g_sim.liveQueues.push_back(this); }
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
        t.sim_ptr = reinterpret_cast<T*>(g_sim.ub + b->offset);
        t.sim_size = b->len / static_cast<uint32_t>(sizeof(T));
        t.sim_cap = b->cap / static_cast<uint32_t>(sizeof(T));
        t.sim_st = b;
        t.sim_gen = b->gen;
        return t;
    }

    uint32_t sim_num() const { return num_; }
    uint32_t sim_count() const { return count_; }
    uint32_t sim_depth() const { return depth_; }
    bool sim_has_idle() const {
        for (uint32_t i = 0; i < num_; ++i)
            if (bufs_[i].status == BufStatus::Free) return true;
        return false;
    }

private:
    uint32_t depth_;
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
    TQueBind() : QueBase(depth) {}

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
        t.sim_ptr = reinterpret_cast<T*>(sim::detail::g_sim.ub + sim_offset + byteOff);
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
        const uint32_t off = sim_reserve(num, len, loc);
        que.sim_init(off, num, len, loc);
        return true;
    }

    // Reserves alignUp(len, 32) bytes for the TBuf.
    template <TPosition bufPos>
    bool InitBuffer(TBuf<bufPos>& buf, uint32_t len, std::source_location loc = std::source_location::current()) {
        sim::detail::touch(loc);
        const uint32_t off = sim_reserve(1, len, loc);
        buf.sim_init(off, len);
        return true;
    }

    void Reset() {
        used_ = 0;
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

    uint32_t sim_used() const { return used_; }

private:
    uint32_t sim_reserve(uint32_t num, uint32_t len, const std::source_location& loc) {
        const uint64_t each = sim::detail::align_up(len, sim::detail::kUbAlign);
        const uint64_t need = each * num;
        if (nbufs_ + num > sim::detail::kMaxBuffers) {
            sim::detail::fatal("BUFFER-LIMIT", loc, "InitBuffer would bring the number of buffers to %u; at most %u buffers per kernel",
                               nbufs_ + num, sim::detail::kMaxBuffers);
        }
        const uint64_t avail = uint64_t(ASCEND_SIM_UB_BYTES) - used_;
        if (need > avail) {
            sim::detail::fatal("UB-OVERFLOW", loc,
                               "InitBuffer requests %llu B (%u x alignUp(%u, 32) = %u x %llu B) but only %llu B of the %u B UB are available "
                               "(%u B already reserved)",
                               static_cast<unsigned long long>(need), num, len, num, static_cast<unsigned long long>(each),
                               static_cast<unsigned long long>(avail), unsigned(ASCEND_SIM_UB_BYTES), used_);
        }
        const uint32_t off = used_;
        used_ += static_cast<uint32_t>(need);
        nbufs_ += num;
        return off;
    }

    uint32_t used_ = 0;
    uint32_t nbufs_ = 0;
};

inline TPipe* GetTPipePtr() { return sim::detail::g_curPipe; }

}  // namespace AscendC
