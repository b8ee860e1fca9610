// ascend_sim/tiling.h - kernel-side tiling macros of op projects (ref §2, ref_next §6.2): GET_TILING_DATA
// and friends copy the tiling struct out of the GM pointer the kernel receives; TILING_KEY_IS compares
// with the launch's tiling key (sim::SetTilingKey / ICPU_SET_TILING_KEY); ASSERT stops the block.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_TILING_H
#define ASCEND_SIM_ASCEND_SIM_TILING_H

#include "core.h"

namespace AscendC::sim {

// The tiling key of the next launches (TILING_KEY_VAR), as the host's context->SetTilingKey(k) sets it.
inline uint64_t g_tilingKey = 0;
inline void SetTilingKey(uint64_t key) { g_tilingKey = key; }

namespace detail {
ASCEND_SIM_RT bool tiling_key_is(uint64_t key, const std::source_location& loc);
[[noreturn]] ASCEND_SIM_RT void assert_failed(const char* expr, const std::source_location& loc);
}  // namespace detail

}  // namespace AscendC::sim

// Tiling passed as a GM pointer (ref §2): copy the struct out of GM.
#define GET_TILING_DATA_WITH_STRUCT(Struct, var, tiling) \
    Struct var;                                          \
    std::memcpy(&var, reinterpret_cast<const void*>(tiling), sizeof(Struct))
#define GET_TILING_DATA_MEMBER(Struct, member, var, tiling)                       \
    decltype(Struct::member) var;                                                 \
    std::memcpy(&var, reinterpret_cast<const uint8_t*>(tiling) + offsetof(Struct, member), sizeof(var))
#define GET_TILING_DATA_PTR_WITH_STRUCT(Struct, ptr, tiling) const Struct* ptr = reinterpret_cast<const Struct*>(tiling)
#define REGISTER_TILING_DEFAULT(Struct) using AscendSimDefaultTiling = Struct
#define REGISTER_TILING_FOR_TILINGKEY(expr, Struct) static_assert(true, "")
#define REGISTER_NONE_TILING static_assert(true, "")
// The default tiling struct: ASCEND_SIM_TILING_TYPE, expanded where GET_TILING_DATA is used. `ascend-sim
// run` redefines it to the launch file's tiling "type" (op projects register their struct with
// REGISTER_TILING_DATA_CLASS on the host); otherwise it names the REGISTER_TILING_DEFAULT struct.
#ifndef ASCEND_SIM_TILING_TYPE
#define ASCEND_SIM_TILING_TYPE AscendSimDefaultTiling
#endif
#define GET_TILING_DATA(var, tiling) GET_TILING_DATA_WITH_STRUCT(ASCEND_SIM_TILING_TYPE, var, tiling)

#define TILING_KEY_VAR (::AscendC::sim::g_tilingKey)
// True when the launch's tiling key is k. A block that tests keys but matches none did nothing: that is
// reported at the end of the block (TILING-KEY).
#define TILING_KEY_IS(k) (::AscendC::sim::detail::tiling_key_is(static_cast<uint64_t>(k), std::source_location::current()))
#define ICPU_SET_TILING_KEY(k) ::AscendC::sim::SetTilingKey(static_cast<uint64_t>(k))

// Kernel-side assertion (CPU debug builds check it): a false condition stops the block. ASSERT(cond) or
// ASSERT(cond, fmt, args...) (the message arguments are not evaluated here).
#ifndef ASSERT
#define ASSERT(...) ASCEND_SIM_ASSERT_(__VA_ARGS__, "")
#define ASCEND_SIM_ASSERT_(cond, ...)                                                                        \
    do {                                                                                                     \
        if (!static_cast<bool>(cond)) ::AscendC::sim::detail::assert_failed(#cond, std::source_location::current()); \
    } while (0)
#endif

#endif  // ASCEND_SIM_ASCEND_SIM_TILING_H
