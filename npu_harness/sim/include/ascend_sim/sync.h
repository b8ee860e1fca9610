// ascend_sim/sync.h - PipeBarrier, SetFlag / WaitFlag pairing (ref §4.4, §6 CheckSyncState), cache
// maintenance no-ops.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_SYNC_H
#define ASCEND_SIM_ASCEND_SIM_SYNC_H

#include "tensor.h"

namespace AscendC {

// Later instructions of `pipe` wait until the earlier ones finished (PIPE_ALL: all pipes) (ref §4.4).
// Instructions execute immediately here; the barrier orders accesses for the pipe-race check (race.h).
template <pipe_t pipe>
inline void PipeBarrier(std::source_location loc = std::source_location::current()) {
    sim::detail::touch(loc);
    sim::detail::race_barrier(pipe);
}

namespace sim::detail {
inline FlagSlot& flag_slot(HardEvent e, int32_t id, const char* api, const std::source_location& loc) {
    touch(loc);
    if (id < 0 || id >= static_cast<int32_t>(kMaxEventIds)) {
        fatal("PARAM-RANGE", loc, "%s<HardEvent::%s>(%d): event id out of range [0, %u]", api, kHardEventNames[static_cast<uint32_t>(e)], id,
              kMaxEventIds - 1);
    }
    return st().flags[static_cast<uint32_t>(e)][id];
}
}  // namespace sim::detail

// Each (event, id) counts SetFlag minus WaitFlag; Set and Wait must pair exactly or the kernel hangs
// (ref §4.4).
template <HardEvent event>
inline void SetFlag(int32_t eventID, std::source_location loc = std::source_location::current()) {
    sim::detail::FlagSlot& f = sim::detail::flag_slot(event, eventID, "SetFlag", loc);
    if (f.count == 0) f.loc = loc;
    ++f.count;
    sim::detail::Counters& c = sim::detail::cnt();
    ++c.flagSets[static_cast<uint32_t>(event)];
    c.flagIds[static_cast<uint32_t>(event)] |= static_cast<uint8_t>(1u << eventID);
    sim::detail::race_set_flag(event, eventID);
}

template <HardEvent event>
inline void WaitFlag(int32_t eventID, std::source_location loc = std::source_location::current()) {
    sim::detail::FlagSlot& f = sim::detail::flag_slot(event, eventID, "WaitFlag", loc);
    if (f.count == 0) {
        sim::detail::fatal("SYNC-UNPAIRED", loc, "WaitFlag<HardEvent::%s>(%d) without a pending SetFlag; hardware would wait here forever",
                           sim::detail::kHardEventNames[static_cast<uint32_t>(event)], eventID);
    }
    --f.count;
    sim::detail::race_wait_flag(event, eventID);
}

template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}
template <typename T, CacheLine entireType>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}
template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const LocalTensor<T>&) {}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_SYNC_H
