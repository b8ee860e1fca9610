// ascend_sim/race.h - pipe-race detection (racecheck) inside one block.
//
// On hardware the scalar unit issues every instruction in program order into per-pipe queues (S, V,
// MTE2, MTE3 on a vector core; MTE1, M, FIX on a cube core); the pipes run asynchronously, so two
// instructions of different pipes touching the same bytes are ordered only by SetFlag / WaitFlag,
// PipeBarrier, the implicit events of TQue EnQue / DeQue / AllocTensor / FreeTensor, or the
// synchronisation the compiler inserts (--cce-auto-sync: S <-> V / MTE2 / MTE3 and V -> V) (ref_next
// §5.1-§5.5). The emulator executes instructions immediately in program order, so it records, per
// block, which pipe accessed which bytes and when, with one vector clock per pipe (the model of
// msSanitizer's racecheck, ref_next §5.6/§5.7), and reports a read-after-write, write-after-read or
// write-after-write on the same bytes by two accesses that nothing orders as error[PIPE-RACE],
// naming both call sites and the event that is missing.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_RACE_H
#define ASCEND_SIM_ASCEND_SIM_RACE_H

#include "core.h"

namespace AscendC::sim::detail {

enum class Pipe : uint8_t { S, V, M, MTE1, MTE2, MTE3, FIX, kCount };
inline constexpr uint32_t kPipes = static_cast<uint32_t>(Pipe::kCount);
inline const char* const kPipeNames[kPipes] = {"PIPE_S", "PIPE_V", "PIPE_M", "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3", "PIPE_FIX"};
inline const char* const kPipeShort[kPipes] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"};

// Run-time switches (environment, read at Launch): ASCEND_SIM_RACECHECK=0 turns the check off;
// ASCEND_SIM_AUTO_SYNC=0 models a build without --cce-auto-sync (then S <-> V / MTE and V -> V need
// explicit synchronisation too).
inline bool g_raceCheck = true;
inline bool g_autoSync = true;

// One memory access of an instruction: host bytes [begin, end) (UB, L1 / L0 arenas or GM).
struct RaceAccess {
    uintptr_t begin, end;
    bool write;
};

// Records the accesses of one instruction issued to `pipe` and reports unordered conflicts with
// earlier accesses of this block. Cheap no-op when the check is off or outside a block.
ASCEND_SIM_RT void race_instr_n(Pipe pipe, const char* api, const std::source_location& loc, const RaceAccess* acc, uint32_t n);

inline bool race_on() {
    const State& s = st();
    return s.race != nullptr;
}

// Convenience: an instruction with up to a few contiguous operands.
struct RaceOp {
    Pipe pipe;
    const char* api;
    const std::source_location& loc;
    RaceAccess acc[8];
    uint32_t n = 0;
    bool on;
    RaceOp(Pipe p, const char* a, const std::source_location& l) : pipe(p), api(a), loc(l), on(race_on()) {}
    RaceOp& read(const void* p, uint64_t bytes) { return add(p, bytes, false); }
    RaceOp& write(const void* p, uint64_t bytes) { return add(p, bytes, true); }
    RaceOp& add(const void* p, uint64_t bytes, bool w) {
        if (on && bytes && n < 8) {
            const uintptr_t b = reinterpret_cast<uintptr_t>(p);
            acc[n++] = RaceAccess{b, b + bytes, w};
        }
        return *this;
    }
    ~RaceOp() {
        if (on && n) race_instr_n(pipe, api, loc, acc, n);
    }
};

// A vector instruction (PIPE_V) reading a (and b) and writing d, each contiguous.
inline void race_v(const char* api, const std::source_location& loc, const void* d, uint64_t db, const void* a, uint64_t ab,
                   const void* b = nullptr, uint64_t bb = 0) {
    if (!race_on()) return;
    RaceAccess acc[3];
    uint32_t n = 0;
    auto add = [&](const void* p, uint64_t bytes, bool w) {
        if (p && bytes) {
            const uintptr_t x = reinterpret_cast<uintptr_t>(p);
            acc[n++] = RaceAccess{x, x + bytes, w};
        }
    };
    add(a, ab, false);
    add(b, bb, false);
    add(d, db, true);
    race_instr_n(Pipe::V, api, loc, acc, n);
}

// A strided access (DMA blocks): `count` runs of `len` bytes, `pitch` bytes apart. Up to 64 runs are
// recorded exactly, longer patterns as their bounding interval.
ASCEND_SIM_RT void race_strided(Pipe pipe, const char* api, const std::source_location& loc, const void* p, uint32_t count, uint64_t len,
                                uint64_t pitch, bool write);

// An API that writes bytes synchronously (it returns after the data is in place, e.g. Matmul::GetTensorC):
// later accesses of any pipe are ordered after it, so earlier records of these bytes are dropped.
ASCEND_SIM_RT void race_sync_write(const void* p, uint64_t bytes);

// SetFlag / WaitFlag / PipeBarrier (explicit synchronisation).
ASCEND_SIM_RT void race_set_flag(HardEvent e, int32_t id);
ASCEND_SIM_RT void race_wait_flag(HardEvent e, int32_t id);
ASCEND_SIM_RT void race_barrier(pipe_t p);

// The implicit events of a queue buffer (ref_next §5.3): EnQue sets the forward event (producer ->
// consumer), DeQue waits for it; FreeTensor sets the backward event, AllocTensor of that buffer waits
// for it. A QueEvent keeps the event's vector-clock snapshot inside the buffer's state.
struct QueEvent {
    uint32_t t[kPipes];
    bool valid;
};
ASCEND_SIM_RT void race_que_set(QueEvent& ev, Pipe src);
ASCEND_SIM_RT void race_que_wait(QueEvent& ev, Pipe dst);

// Which pipe produces / consumes a queue buffer of TQueBind<src, dst> (ref_next §5.3).
constexpr Pipe que_producer(TPosition src) {
    switch (src) {
        case TPosition::GM:
        case TPosition::VECIN:
        case TPosition::A1:
        case TPosition::B1:
        case TPosition::C1: return Pipe::MTE2;
        case TPosition::A2:
        case TPosition::B2:
        case TPosition::C2: return Pipe::MTE1;
        case TPosition::CO1: return Pipe::M;
        default: return Pipe::V;  // VECOUT, VECCALC, CO2
    }
}
constexpr Pipe que_consumer(TPosition dst, TPosition src) {
    switch (dst) {
        case TPosition::GM: return src == TPosition::CO1 ? (__NPU_ARCH__ == 2002 ? Pipe::V : Pipe::FIX) : Pipe::MTE3;
        case TPosition::VECOUT: return Pipe::MTE3;
        case TPosition::A1:
        case TPosition::B1:
        case TPosition::C1: return Pipe::MTE1;
        case TPosition::A2:
        case TPosition::B2: return Pipe::M;
        case TPosition::CO1: return __NPU_ARCH__ == 2002 ? Pipe::V : Pipe::FIX;
        default: return Pipe::V;  // VECIN, VECCALC
    }
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_RACE_H
