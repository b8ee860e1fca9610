// ascend_sim/reduce.h - ReduceSum / ReduceMax / ReduceMin, count forms (ref §4.3).
//
// `ReduceSum(dst, src, sharedTmpBuffer, count)` leaves the sum of src[0, count) in dst[0]. The
// model: each 256-byte repeat is reduced in float and rounded to T (one vcadd per repeat); the
// per-repeat results, kept in sharedTmpBuffer, are reduced again the same way until one value is
// left. The scratch tensor must hold the first level's per-repeat results (REDUCE-TMP otherwise):
// an approximation of the size rule on the ReduceSum API page (归约计算/ReduceSum.md).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_REDUCE_H
#define ASCEND_SIM_ASCEND_SIM_REDUCE_H

#include "vec.h"

namespace AscendC {

namespace sim::detail {

template <class T, class F>
inline void reduce_count(const char* api, VecOp op, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                         const LocalTensor<T>& tmp, int32_t count, F combine, const std::source_location& loc) {
    check_vec_begin(api, count, loc);
    // dst only needs element alignment (the result is one element; ReduceSum.md), src and the scratch 32 B
    check_operand_aligned(api, "dst", dst.sim_view(), 1, sizeof(T), loc);
    check_operand(api, "src", src.sim_view(), uint64_t(count), loc);
    const uint64_t perRepeat = kRepeatBytesV / sizeof(T);
    const uint64_t repeats = (uint64_t(count) + perRepeat - 1) / perRepeat;
    const uint64_t need = (repeats * sizeof(T) + 31) / 32 * 32 / sizeof(T);
    check_operand(api, "sharedTmpBuffer", tmp.sim_view(), 0, loc);
    if (tmp.sim_view().size < need) {
        fatal("REDUCE-TMP", loc, "%s: sharedTmpBuffer holds %u elements; %d elements need %llu (one per 256-byte repeat, "
              "whole 32-byte blocks)", api, tmp.sim_view().size, count, static_cast<unsigned long long>(need));
    }
    count_vec(op, sizeof(T), uint64_t(count));
    if (count == 0) {
        return;
    }
    {
        RaceOp r(Pipe::V, api, loc);
        r.read(src.sim_ptr, uint64_t(count) * sizeof(T)).write(tmp.sim_ptr, need * sizeof(T)).write(dst.sim_ptr, sizeof(T));
    }
    const bool defined = all_def(src.sim_ptr, uint64_t(count) * sizeof(T));
    // Level by level: reduce each repeat of the current level into one value.
    std::vector<T> level(src.sim_ptr, src.sim_ptr + count);
    while (level.size() > 1) {
        std::vector<T> next;
        next.reserve((level.size() + perRepeat - 1) / perRepeat);
        for (uint64_t i = 0; i < level.size(); i += perRepeat) {
            auto acc = up(level[i]);
            const uint64_t end = std::min<uint64_t>(level.size(), i + perRepeat);
            for (uint64_t j = i + 1; j < end; ++j) {
                acc = combine(acc, up(level[j]));
            }
            next.push_back(down<T>(acc));
        }
        level.swap(next);
    }
    dst.sim_ptr[0] = level[0];
    set_elem_def(dst.sim_ptr, sizeof(T), defined);
    set_def(tmp.sim_ptr, need * sizeof(T));  // the hardware leaves partial results there
}

}  // namespace sim::detail

#define ASCEND_SIM_REDUCE_TYPES(T) ::AscendC::sim::detail::is_any_of_v<T, half, float, int32_t>

template <typename T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, std::source_location loc = std::source_location::current()) {
    static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::ReduceSum: unsupported dtype (see docs/emulator.md)");
    sim::detail::reduce_count("ReduceSum", sim::detail::VecOp::ReduceSum, dst, src, sharedTmpBuffer, count,
                              [](auto a, auto b) { return a + b; }, loc);
}

template <typename T>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false,
                      std::source_location loc = std::source_location::current()) {
    static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::ReduceMax: unsupported dtype (see docs/emulator.md)");
    if (calIndex) {
        sim::detail::fatal("UNSUPPORTED", loc, "ReduceMax: calIndex = true is not emulated");
    }
    sim::detail::reduce_count("ReduceMax", sim::detail::VecOp::ReduceMax, dst, src, sharedTmpBuffer, count,
                              [](auto a, auto b) { return b > a || sim::detail::isnan_c(b) ? b : a; }, loc);
}

template <typename T>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false,
                      std::source_location loc = std::source_location::current()) {
    static_assert(ASCEND_SIM_REDUCE_TYPES(T), "AscendC::ReduceMin: unsupported dtype (see docs/emulator.md)");
    if (calIndex) {
        sim::detail::fatal("UNSUPPORTED", loc, "ReduceMin: calIndex = true is not emulated");
    }
    sim::detail::reduce_count("ReduceMin", sim::detail::VecOp::ReduceMin, dst, src, sharedTmpBuffer, count,
                              [](auto a, auto b) { return b < a || sim::detail::isnan_c(b) ? b : a; }, loc);
}

#undef ASCEND_SIM_REDUCE_TYPES

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_REDUCE_H
