// ascend_sim/tensor.h - LocalTensor / GlobalTensor and the per-operand checks.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_TENSOR_H
#define ASCEND_SIM_ASCEND_SIM_TENSOR_H

#include "core.h"
#include "race.h"

namespace AscendC {

namespace sim::detail {

enum class BufStatus : uint8_t { Free, Allocated, Enqueued };

// State record of one queue buffer. A LocalTensor taken from a queue points at it and remembers the
// generation it was allocated in, so a tensor used after FreeTensor (even after the buffer has been
// handed out again) is detected (USE-AFTER-FREE).
struct BufState {
    uint32_t offset = 0;  // UB byte offset
    uint32_t len = 0;     // bytes requested by InitBuffer
    uint32_t cap = 0;     // bytes reserved: alignUp(len, 32)
    uint32_t gen = 0;
    BufStatus status = BufStatus::Free;
    const void* owner = nullptr;  // the queue
    bool everFreed = false;
    std::source_location allocLoc{};
    std::source_location freeLoc{};
    QueEvent fwd{}, back{};  // implicit queue events (race.h): EnQue -> DeQue, FreeTensor -> AllocTensor
};

// ---- UB shadow memory ("defined" state, ref: docs/emulator.md, UB-UNINIT) ----------------------------
// Every block's UB arena is followed by a shadow of the same size: shadow byte = 8 definedness bits.
// Data bytes are 0xFF (written) or 0x00 (never written); a Compare mask byte keeps one bit per mask
// bit. An element is defined iff all shadow bytes of its bytes are 0xFF.
inline constexpr uint64_t kUbAlloc = align_up(ASCEND_SIM_UB_BYTES, 4096);

inline uint8_t* shadow(const void* p) { return const_cast<uint8_t*>(static_cast<const uint8_t*>(p)) + kUbAlloc; }

// Only the UB has a shadow: bytes elsewhere (the L1 / L0 arena of the cube APIs) count as defined.
inline bool in_ub(const void* p) {
    const uint8_t* ub = st().ub;
    const uint8_t* q = static_cast<const uint8_t*>(p);
    return ub != nullptr && q >= ub && q < ub + kUbAlloc;
}

inline bool all_def(const void* p, uint64_t n) {
    if (!in_ub(p)) return true;
    const uint8_t* s = shadow(p);
    uint64_t acc = ~0ull;
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        std::memcpy(&w, s + i, 8);
        acc &= w;
    }
    uint8_t tail = 0xFF;
    for (; i < n; ++i) tail &= s[i];
    return acc == ~0ull && tail == 0xFF;
}

inline uint64_t first_undef(const void* p, uint64_t n) {
    if (!in_ub(p)) return n;
    const uint8_t* s = shadow(p);
    for (uint64_t i = 0; i < n; ++i)
        if (s[i] != 0xFF) return i;
    return n;
}

inline void set_def(const void* p, uint64_t n) {
    if (in_ub(p)) std::memset(shadow(p), 0xFF, n);
}
// The bytes hold nothing this block defined for their current use (a fresh queue buffer, DataCopyPad padding).
inline void clear_def(const void* p, uint64_t n) {
    if (in_ub(p)) std::memset(shadow(p), 0x00, n);
}

inline bool elem_def(const void* p, uint32_t esize) {
    if (!in_ub(p)) return true;  // L1 / L0 (the cube arena) have no shadow: its "shadow" would be other cube memory
    const uint8_t* s = shadow(p);
    uint8_t a = 0xFF;
    for (uint32_t k = 0; k < esize; ++k) a &= s[k];
    return a == 0xFF;
}

inline void set_elem_def(const void* p, uint32_t esize, bool def) { std::memset(shadow(p), def ? 0xFF : 0x00, esize); }

// Type-erased view of a LocalTensor for the checks.
struct LView {
    const void* ptr;
    uint32_t size;  // elements
    uint32_t cap;   // elements up to the end of the underlying buffer
    BufState* st;
    uint32_t gen;
    uint32_t esize;  // sizeof(T)
};

}  // namespace sim::detail

template <typename T>
class LocalTensor {
public:
    using PrimType = T;

    LocalTensor() = default;

    // Sub-view starting `offset` elements in (no check here; a later use checks it).
    LocalTensor operator[](const uint32_t offset) const {
        LocalTensor r = *this;
        r.sim_ptr = sim_ptr + offset;
        r.sim_size = offset <= sim_size ? sim_size - offset : 0;
        r.sim_cap = offset <= sim_cap ? sim_cap - offset : 0;
        return r;
    }

    uint32_t GetSize() const { return sim_size; }
    uint32_t GetLength() const { return sim_size * static_cast<uint32_t>(sizeof(T)); }

    void SetSize(const uint32_t size, std::source_location loc = std::source_location::current()) {
        if (size > sim_cap) {
            sim::detail::fatal("UB-OOB", loc, "SetSize(%u) exceeds the %u elements left in the tensor's buffer", size, sim_cap);
        }
        sim_size = size;
    }

    T GetValue(const uint32_t index, std::source_location loc = std::source_location::current()) const {
        sim_check_index("GetValue", index, loc);
        sim::detail::cnt().ubGet += 1;
        sim_check_defined(index, loc);
        sim::detail::RaceOp(sim::detail::Pipe::S, "LocalTensor::GetValue", loc).read(sim_ptr + index, sizeof(T));
        return sim_ptr[index];
    }

    void SetValue(const uint32_t index, const T& value, std::source_location loc = std::source_location::current()) const {
        sim_check_index("SetValue", index, loc);
        sim::detail::cnt().ubSet += 1;
        sim::detail::set_elem_def(sim_ptr + index, sizeof(T), true);
        sim::detail::RaceOp(sim::detail::Pipe::S, "LocalTensor::SetValue", loc).write(sim_ptr + index, sizeof(T));
        sim_ptr[index] = value;
    }

    // Returns a reference that may be read or written: counted as a write (the element becomes defined).
    T& operator()(const uint32_t index, std::source_location loc = std::source_location::current()) const {
        sim_check_index("operator()", index, loc);
        sim::detail::cnt().ubSet += 1;
        sim::detail::set_elem_def(sim_ptr + index, sizeof(T), true);
        sim::detail::RaceOp(sim::detail::Pipe::S, "LocalTensor::operator()", loc).write(sim_ptr + index, sizeof(T));
        return sim_ptr[index];
    }

    template <typename U>
    LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> r;
        r.sim_ptr = reinterpret_cast<U*>(sim_ptr);
        r.sim_size = static_cast<uint32_t>(uint64_t(sim_size) * sizeof(T) / sizeof(U));
        r.sim_cap = static_cast<uint32_t>(uint64_t(sim_cap) * sizeof(T) / sizeof(U));
        r.sim_st = sim_st;
        r.sim_gen = sim_gen;
        return r;
    }

    T* GetPhyAddr() const { return sim_ptr; }
    T* GetPhyAddr(const uint32_t offset) const { return sim_ptr + offset; }

    sim::detail::LView sim_view() const { return {sim_ptr, sim_size, sim_cap, sim_st, sim_gen, sizeof(T)}; }

    // Emulator internals (public so that the free functions can reach them).
    T* sim_ptr = nullptr;
    uint32_t sim_size = 0;
    uint32_t sim_cap = 0;
    sim::detail::BufState* sim_st = nullptr;  // nullptr: TBuf tensor (always live)
    uint32_t sim_gen = 0;

private:
    void sim_check_index(const char* api, uint32_t index, const std::source_location& loc) const;
    void sim_check_defined(uint32_t index, const std::source_location& loc) const;
};

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;

    GlobalTensor() = default;

    // Binds the tensor to GM and records the bound in elements (ref §1.2).
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        sim_ptr = sim_base = buffer;
        sim_bound = bufferSize;
        sim_bounded = true;
    }
    void SetGlobalBuffer(__gm__ T* buffer) {
        sim_ptr = sim_base = buffer;
        sim_bound = 0;
        sim_bounded = false;
    }

    // View starting `offset` elements in: (base + offset, size - offset).
    GlobalTensor operator[](const uint64_t offset) const {
        GlobalTensor r = *this;
        r.sim_ptr = sim_ptr + offset;
        return r;
    }

    uint64_t GetSize() const {
        if (!sim_bounded) return 0;
        const uint64_t off = static_cast<uint64_t>(sim_ptr - sim_base);
        return off <= sim_bound ? sim_bound - off : 0;
    }

    __gm__ T* GetPhyAddr() const { return sim_ptr; }
    __gm__ T* GetPhyAddr(const uint64_t offset) const { return sim_ptr + offset; }

    T GetValue(const uint64_t offset, std::source_location loc = std::source_location::current()) const;
    void SetValue(const uint64_t offset, const T& value, std::source_location loc = std::source_location::current()) const;

    template <typename U> void SetL2CacheHint(U) {}

    // Emulator internals.
    T* sim_ptr = nullptr;
    T* sim_base = nullptr;
    uint64_t sim_bound = 0;
    bool sim_bounded = false;
};

namespace sim::detail {

template <class T> inline LView view(const LocalTensor<T>& t) { return t.sim_view(); }

[[noreturn]] ASCEND_SIM_RT void fatal_dead(const char* api, const char* name, const LView& v, const std::source_location& loc);

// The tensor refers to a buffer that is currently allocated (TBuf tensors always are).
inline void check_live(const char* api, const char* name, const LView& v, const std::source_location& loc) {
    if (v.ptr == nullptr) fatal("UB-OOB", loc, "%s: %s is an empty LocalTensor (no buffer was allocated for it)", api, name);
    if (v.st && (v.st->gen != v.gen || v.st->status == BufStatus::Free)) fatal_dead(api, name, v, loc);
}

// Full operand check for vector instructions and DMA: live, inside the UB, aligned to `align` bytes
// (32 B for most UB operands, ref §4.5; some APIs only need element alignment), and `elems` elements
// fit in the tensor.
ASCEND_SIM_RT void check_operand_aligned(const char* api, const char* name, const LView& v, uint64_t elems, uint32_t align,
                                         const std::source_location& loc);
inline void check_operand(const char* api, const char* name, const LView& v, uint64_t elems, const std::source_location& loc) {
    check_operand_aligned(api, name, v, elems, kUbAlign, loc);
}

// Operand of a DMA (DataCopy): in this block's UB, or in its L1 (A1 / B1 / C1 tensors of the cube) with
// the same 32-B alignment (ref §4.5).
ASCEND_SIM_RT void check_dma_operand(const char* api, const char* name, const LView& v, uint64_t elems, const std::source_location& loc);

inline void check_count(const char* api, int64_t count, const std::source_location& loc) {
    if (count < 0) fatal("PARAM-RANGE", loc, "%s: count = %lld is negative", api, static_cast<long long>(count));
}

// A GM access of `bytes` bytes starting `byteOff` bytes after the tensor's address must lie inside
// the SetGlobalBuffer bound (when set) and inside a live sim::GmAlloc allocation.
ASCEND_SIM_RT void check_gm_raw(const char* api, const void* base, const void* ptr, uint64_t boundElems, bool bounded, uint32_t esize,
                                uint64_t byteOff, uint64_t bytes, bool write, const std::source_location& loc);
template <class T>
inline void check_gm(const char* api, const GlobalTensor<T>& g, uint64_t byteOff, uint64_t bytes, bool write,
                     const std::source_location& loc) {
    if (bytes == 0) return;
    check_gm_raw(api, g.sim_base, g.sim_ptr, g.sim_bound, g.sim_bounded, sizeof(T), byteOff, bytes, write, loc);
}

}  // namespace sim::detail

template <typename T>
void LocalTensor<T>::sim_check_index(const char* api, uint32_t index, const std::source_location& loc) const {
    sim::detail::touch(loc);
    sim::detail::check_live(api, "tensor", sim_view(), loc);
    if (index >= sim_size) {
        sim::detail::fatal("UB-OOB", loc, "LocalTensor::%s(%u): index out of range for a LocalTensor of %u elements", api, index, sim_size);
    }
}

template <typename T>
void LocalTensor<T>::sim_check_defined(uint32_t index, const std::source_location& loc) const {
    if (!sim::detail::elem_def(sim_ptr + index, sizeof(T))) {
        const uint8_t* p = reinterpret_cast<const uint8_t*>(sim_ptr + index);
        sim::detail::report("UB-UNINIT", loc,
                            "LocalTensor::GetValue(%u) reads UB (byte offset %u) that was never written in this block (the value is "
                            "garbage on hardware)",
                            index, static_cast<unsigned>(p - sim::detail::st().ub));
    }
}

template <typename T>
T GlobalTensor<T>::GetValue(const uint64_t offset, std::source_location loc) const {
    sim::detail::touch(loc);
    sim::detail::check_gm("GlobalTensor::GetValue", *this, offset * sizeof(T), sizeof(T), false, loc);
    sim::detail::cnt().gmGet += 1;
    sim::detail::gm_mark_read("GlobalTensor::GetValue", sim_ptr + offset, sizeof(T), loc);
    sim::detail::RaceOp(sim::detail::Pipe::S, "GlobalTensor::GetValue", loc).read(sim_ptr + offset, sizeof(T));
    return sim_ptr[offset];
}

template <typename T>
void GlobalTensor<T>::SetValue(const uint64_t offset, const T& value, std::source_location loc) const {
    sim::detail::touch(loc);
    sim::detail::check_gm("GlobalTensor::SetValue", *this, offset * sizeof(T), sizeof(T), true, loc);
    sim::detail::cnt().gmSet += 1;
    sim::detail::gm_mark_write("GlobalTensor::SetValue", sim_ptr + offset, sizeof(T), loc);
    sim::detail::RaceOp(sim::detail::Pipe::S, "GlobalTensor::SetValue", loc).write(sim_ptr + offset, sizeof(T));
    sim_ptr[offset] = value;
}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_TENSOR_H
