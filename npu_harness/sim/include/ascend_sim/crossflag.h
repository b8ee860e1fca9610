// ascend_sim/crossflag.h - cross-core flags of the separated (AIC + AIV) architecture: CrossCoreSetFlag /
// CrossCoreWaitFlag and SetSyncBaseAddr (ref_next §2.4, CANN CrossCoreSetFlag(ISASI) page, atlasascendc_api_07_0273).
//
// A program that calls either flag API runs every MIX launch (SetKernelMode(KernelMode::MIX_MODE)) as one AIC and two
// AIV blocks per AI Core: the kernel body runs on all three, `ASCEND_IS_AIC` / `ASCEND_IS_AIV` tell them apart, and the
// AIC uses the low-level cube APIs (cube.h). Each core has 16 flag counters; a set increments counters by mode (0: all
// AIC or all AIV of the launch, once every one of them has set; 1: the two AIV of one AI Core, once both have set;
// 2: from the AIC both AIV's counters, from the AIV the AIC's counter once both AIV have set); a wait blocks until its
// core's counter is non-zero, then decrements it. Such launches run their blocks one at a time on one thread, switching
// block when one waits (deterministic). Checks: CROSS-FLAG (fatal: flag id, mode, pipe, kernel type), CROSS-DEADLOCK
// (a wait no set can release), CROSS-FLAG-RESERVED (ids the Matmul API or SyncAll use), CROSS-FLAG-UNPAIRED (mode-0
// counts left at the end), GM-RACE by happens-before (impl/crossflag_rt.h).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_CROSSFLAG_H
#define ASCEND_SIM_ASCEND_SIM_CROSSFLAG_H

#include "core.h"

namespace AscendC::sim::detail {

// The program uses the cross-core flags: its MIX launches run the AIC as blocks (set at program start by
// instantiating the flag templates, as SerialBlocks).
inline bool g_crossCore = false;
template <class Tag>
struct CrossCoreUsed {
    static inline const bool on = (g_crossCore = true);
};

ASCEND_SIM_RT void cross_set(uint32_t mode, pipe_t pipe, uint32_t flagId, const std::source_location& loc);
ASCEND_SIM_RT void cross_wait(uint32_t flagId, const std::source_location& loc);

}  // namespace AscendC::sim::detail

namespace AscendC {

// template <uint8_t modeId, pipe_t pipe> void CrossCoreSetFlag(uint16_t flagId) (DK kernel_operator_block_sync_intf.h,
// ref_next §2.4): issued once the earlier work of `pipe` on this core completed.
template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId, std::source_location loc = std::source_location::current()) {
    (void)sim::detail::CrossCoreUsed<std::integral_constant<uint8_t, modeId>>::on;  // dependent: instantiated only when called
    sim::detail::cross_set(modeId, pipe, flagId, loc);
}

// template <uint8_t modeId = 0, pipe_t pipe = PIPE_S> void CrossCoreWaitFlag(uint16_t flagId): on A2 the template
// arguments are ignored and the wait stalls all pipes of the core (ref_next §2.4).
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId, std::source_location loc = std::source_location::current()) {
    (void)sim::detail::CrossCoreUsed<std::integral_constant<uint8_t, modeId>>::on;  // dependent: instantiated only when called
    sim::detail::cross_wait(flagId, loc);
}

// SetSyncBaseAddr(fftsAddr): the FFTS base address CATLASS kernels set before any cross-core flag (ref_next §2.2);
// accepted, nothing to do here.
inline void SetSyncBaseAddr(uint64_t config) { (void)config; }

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_CROSSFLAG_H
