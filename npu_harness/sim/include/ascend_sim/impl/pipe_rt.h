// ascend_sim/impl/pipe_rt.h - runtime definitions of pipe.h: queue protocol, TPipe reservations, the
// per-block cube arena.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_PIPE_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_PIPE_RT_H

namespace AscendC::sim::detail {

ASCEND_SIM_RT uint8_t* cube_arena() {
    State& s = st();
    if (!s.cubeArena) {
        s.cubeArena = static_cast<uint8_t*>(::operator new(kCubeArenaBytes, std::align_val_t(4096)));
        std::memset(s.cubeArena, 0xFF, kCubeArenaBytes);
    }
    return s.cubeArena;
}

ASCEND_SIM_RT void check_cube_operand(const char* api, const char* name, const void* p, uint64_t bytes, Mem m, uint32_t align,
                                      const std::source_location& loc) {
    touch(loc);
    const uint8_t* base = mem_base(m);
    const uint8_t* q = static_cast<const uint8_t*>(p);
    const uint64_t size = kMemBytes[static_cast<uint32_t>(m)];
    if (q == nullptr || q < base || q >= base + size) {
        fatal("UB-OOB", loc, "%s: %s is not a tensor in this block's %s (a %s position is needed)", api, name, kMemNames[static_cast<uint32_t>(m)],
              m == Mem::L1 ? "A1 / B1" : m == Mem::L0A ? "A2" : m == Mem::L0B ? "B2" : "CO1");
    }
    const uint64_t off = static_cast<uint64_t>(q - base);
    if (off % align != 0) {
        fatal("UB-ALIGN", loc, "%s: %s starts at %s byte offset %llu, which is not %u-byte aligned", api, name, kMemNames[static_cast<uint32_t>(m)],
              static_cast<unsigned long long>(off), align);
    }
    if (off + bytes > size) {
        fatal("UB-OOB", loc, "%s: %s needs %llu bytes from %s offset %llu, past the end of %s (%llu B)", api, name,
              static_cast<unsigned long long>(bytes), kMemNames[static_cast<uint32_t>(m)], static_cast<unsigned long long>(off),
              kMemNames[static_cast<uint32_t>(m)], static_cast<unsigned long long>(size));
    }
}

ASCEND_SIM_RT QueBase::QueBase(int32_t depth, Mem mem, TPosition pos, TPosition src, TPosition dst)
    : depth_(depth < 1 ? 1 : static_cast<uint32_t>(depth)), mem_(mem), pos_(pos), src_(src), dst_(dst) {
    st().liveQueues.push_back(this);
}

ASCEND_SIM_RT QueBase::~QueBase() {
    State& s = st();
    auto& v = s.liveQueues;
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == this) {
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
            break;
        }
    }
    // The queue dies at the end of the kernel body (or earlier): everything must be freed by now.
    if (s.inBlock && !s.blockFaulted && std::uncaught_exceptions() == 0) leak_check();
}

ASCEND_SIM_RT void QueBase::leak_check() {
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

ASCEND_SIM_RT void QueBase::sim_init(uint32_t offset, uint32_t num, uint32_t len, const std::source_location& loc) {
    for (uint32_t i = 0; i < kMaxBuffers; ++i) {
        BufState& b = bufs_[i];
        b.gen += 1;  // tensors of a previous InitBuffer become stale
        b.status = BufStatus::Free;
        b.everFreed = false;
        b.owner = this;
        b.len = len;
        b.cap = static_cast<uint32_t>(align_up(len, kUbAlign));
        b.offset = offset + i * b.cap;
        b.fwd.valid = b.back.valid = false;
    }
    num_ = num;
    head_ = count_ = cursor_ = 0;
    initLoc_ = loc;
    inited_ = true;
}

ASCEND_SIM_RT BufState* QueBase::sim_alloc(const std::source_location& loc) {
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
        // WaitFlag of the backward event FreeTensor set (the producer may overwrite the buffer now)
        const Pipe prod = que_producer(src_), cons = que_consumer(dst_, src_);
        if (prod != cons) race_que_wait(b.back, prod);
        return &b;
    }
    uint32_t enq = count_;
    fatal("QUE-ALLOC", loc,
          "AllocTensor: all %u buffers of this queue (InitBuffer at %s:%u) are in use (%u allocated, %u enqueued); FreeTensor one "
          "first (hardware would stall here)",
          num_, base_name(initLoc_.file_name()), initLoc_.line(), num_ - enq, enq);
}

ASCEND_SIM_RT void QueBase::sim_enque(const LView& v, const std::source_location& loc) {
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
    const Pipe prod = que_producer(src_), cons = que_consumer(dst_, src_);
    if (prod != cons) race_que_set(b->fwd, prod);  // SetFlag<producer_consumer>
}

ASCEND_SIM_RT BufState* QueBase::sim_deque(const std::source_location& loc) {
    touch(loc);
    if (count_ == 0) {
        fatal("QUE-EMPTY", loc, "DeQue on an empty queue (no tensor was enqueued); hardware would wait here forever");
    }
    BufState* b = &bufs_[fifo_[head_]];
    head_ = (head_ + 1) % kMaxBuffers;
    --count_;
    b->status = BufStatus::Allocated;
    const Pipe prod = que_producer(src_), cons = que_consumer(dst_, src_);
    if (prod != cons) race_que_wait(b->fwd, cons);  // WaitFlag<producer_consumer>
    return b;
}

ASCEND_SIM_RT void QueBase::sim_free(const LView& v, const std::source_location& loc) {
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
    const Pipe prod = que_producer(src_), cons = que_consumer(dst_, src_);
    if (prod != cons) race_que_set(b->back, cons);  // SetFlag<consumer_producer>
}

}  // namespace AscendC::sim::detail

namespace AscendC {

ASCEND_SIM_RT uint32_t TPipe::sim_reserve(sim::detail::Mem mem, uint32_t num, uint32_t len, const std::source_location& loc) {
    using namespace sim::detail;
    const uint32_t m = static_cast<uint32_t>(mem);
    const uint64_t each = align_up(len, kUbAlign);
    const uint64_t need = each * num;
    if (nbufs_ + num > kMaxBuffers) {
        fatal("BUFFER-LIMIT", loc, "InitBuffer would bring the number of buffers to %u; at most %u buffers per kernel", nbufs_ + num,
              kMaxBuffers);
    }
    const uint64_t avail = kMemBytes[m] - used_[m];
    if (need > avail) {
        fatal(kMemCodes[m], loc,
              "InitBuffer requests %llu B (%u x alignUp(%u, 32) = %u x %llu B) but only %llu B of the %llu B %s are "
              "available (%u B already reserved; %s)",
              static_cast<unsigned long long>(need), num, len, num, static_cast<unsigned long long>(each),
              static_cast<unsigned long long>(avail), static_cast<unsigned long long>(kMemBytes[m]), kMemNames[m], used_[m], kMemMacros[m]);
    }
    const uint32_t off = used_[m];
    used_[m] += static_cast<uint32_t>(need);
    if (mem == Mem::UB && used_[m] > st().ubHigh) st().ubHigh = used_[m];  // the part of the arena the next block resets
    nbufs_ += num;
    return off;
}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_PIPE_RT_H
