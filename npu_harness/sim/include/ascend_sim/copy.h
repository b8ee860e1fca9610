// ascend_sim/copy.h - DataCopy (count and DataCopyParams forms) and DataCopyPad (ref §4.1).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_COPY_H
#define ASCEND_SIM_ASCEND_SIM_COPY_H

#include "tensor.h"

namespace AscendC {

// blockLen and the gaps are in 32-B DataBlocks; blockCount in [0, 4095]; 0 in either count is a NOP
// (ref §4.1).
struct DataCopyParams {
    DataCopyParams() {}
    DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};

// DataCopyPad parameters: blockLen in bytes (<= 2097151, a multiple of sizeof(T)). GM->UB: srcStride
// in bytes, dstStride in 32-B blocks; UB->GM: srcStride in 32-B blocks, dstStride in bytes (ref §4.1).
struct DataCopyExtParams {
    DataCopyExtParams() {}
    DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn, const uint32_t dstStrideIn,
                      const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};

// Padding of each GM->UB block; left/right padding in elements, at most 32 B each (ref §4.1, §8 rule 5).
template <typename T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() {}
    DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, T padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = 0;
};

// Older form used with DataCopyParams (blockLen then in bytes).
struct DataCopyPadParams {
    DataCopyPadParams() {}
    DataCopyPadParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, const uint64_t padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

namespace sim::detail {

inline constexpr uint32_t kMaxBlockCount = 4095;      // DataCopyParams blockCount range (ref §4.1)
inline constexpr uint32_t kMaxBlockLen32 = 65535;     // DataCopyParams blockLen, 32-B units
inline constexpr uint32_t kMaxPadBlockLen = 2097151;  // DataCopyExtParams blockLen, bytes

// Count form: count * sizeof(T) must be a multiple of 32 B, otherwise the hardware silently rounds
// the length down (ref §1.5, §4.1). We report it (non-fatal) and copy what the hardware copies.
ASCEND_SIM_RT uint64_t count_copy_bytes(uint32_t count, uint32_t esize, const std::source_location& loc);
ASCEND_SIM_RT void check_copy_params(const DataCopyParams& p, const std::source_location& loc);

inline uint64_t extent(uint32_t count, uint64_t blockBytes, uint64_t pitch) { return count ? (count - 1) * pitch + blockBytes : 0; }

// Strided copies: `count` blocks of `blockBytes`, source blocks `srcPitch` apart, destination blocks
// `dstPitch` apart (bytes). They move the data, keep the UB shadow, count the DMA and record the
// accesses for the pipe-race and cross-block checks.
ASCEND_SIM_RT void strided_to_gm(const char* api, uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes, uint64_t srcPitch,
                                 uint64_t dstPitch, const std::source_location& loc);
ASCEND_SIM_RT void strided_from_gm(const char* api, uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes, uint64_t srcPitch,
                                   uint64_t dstPitch, const std::source_location& loc);
ASCEND_SIM_RT void strided_ub_to_ub(const char* api, uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes,
                                    uint64_t srcPitch, uint64_t dstPitch, const std::source_location& loc);

ASCEND_SIM_RT void check_pad_ext(const DataCopyExtParams& p, uint32_t esize, const std::source_location& loc);
// GM -> UB DataCopyPad after the checks: blocks of p.blockLen bytes, each landing 32-B aligned after
// `left` bytes of padding; with isPad the padding bytes get the element value at `padValue`.
ASCEND_SIM_RT void pad_from_gm(uint8_t* dst, const uint8_t* src, const DataCopyExtParams& p, uint64_t left, uint64_t ubBlk,
                               const void* padValue, uint32_t esize, bool isPad, const std::source_location& loc);

}  // namespace sim::detail

// ---- count forms -----------------------------------------------------------------------------

// GM -> UB (MTE2).
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    if (count == 0) return;
    check_dma_operand("DataCopy", "dst", dst.sim_view(), count, loc);
    const uint64_t bytes = count_copy_bytes(count, sizeof(T), loc);
    check_gm("DataCopy", src, 0, bytes, false, loc);
    if (bytes) strided_from_gm("DataCopy", reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), 1, bytes, 0, 0, loc);
}

// UB -> GM (MTE3).
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    if (count == 0) return;
    check_operand("DataCopy", "src", src.sim_view(), count, loc);
    const uint64_t bytes = count_copy_bytes(count, sizeof(T), loc);
    check_gm("DataCopy", dst, 0, bytes, true, loc);
    if (bytes) {
        strided_to_gm("DataCopy", reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), 1, bytes, 0, 0, loc);
    }
}

// UB -> UB.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    if (count == 0) return;
    check_operand("DataCopy", "dst", dst.sim_view(), count, loc);
    check_operand("DataCopy", "src", src.sim_view(), count, loc);
    const uint64_t bytes = count_copy_bytes(count, sizeof(T), loc);
    if (bytes) strided_ub_to_ub("DataCopy", reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), 1, bytes, 0, 0, loc);
}

// ---- DataCopyParams (strided, 32-B units) forms ------------------------------------------------

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    check_copy_params(p, loc);
    if (p.blockCount == 0 || p.blockLen == 0) return;
    const uint64_t blk = uint64_t(p.blockLen) * 32, sp = blk + uint64_t(p.srcStride) * 32, dp = blk + uint64_t(p.dstStride) * 32;
    const uint64_t ubExt = extent(p.blockCount, blk, dp);
    check_dma_operand("DataCopy", "dst", dst.sim_view(), (ubExt + sizeof(T) - 1) / sizeof(T), loc);
    check_gm("DataCopy", src, 0, extent(p.blockCount, blk, sp), false, loc);
    strided_from_gm("DataCopy", reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), p.blockCount, blk, sp, dp, loc);
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    check_copy_params(p, loc);
    if (p.blockCount == 0 || p.blockLen == 0) return;
    const uint64_t blk = uint64_t(p.blockLen) * 32, sp = blk + uint64_t(p.srcStride) * 32, dp = blk + uint64_t(p.dstStride) * 32;
    check_operand("DataCopy", "src", src.sim_view(), (extent(p.blockCount, blk, sp) + sizeof(T) - 1) / sizeof(T), loc);
    check_gm("DataCopy", dst, 0, extent(p.blockCount, blk, dp), true, loc);
    strided_to_gm("DataCopy", reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), p.blockCount, blk, sp, dp,
                  loc);
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    check_copy_params(p, loc);
    if (p.blockCount == 0 || p.blockLen == 0) return;
    const uint64_t blk = uint64_t(p.blockLen) * 32, sp = blk + uint64_t(p.srcStride) * 32, dp = blk + uint64_t(p.dstStride) * 32;
    check_operand("DataCopy", "dst", dst.sim_view(), (extent(p.blockCount, blk, dp) + sizeof(T) - 1) / sizeof(T), loc);
    check_operand("DataCopy", "src", src.sim_view(), (extent(p.blockCount, blk, sp) + sizeof(T) - 1) / sizeof(T), loc);
    strided_ub_to_ub("DataCopy", reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), p.blockCount, blk, sp, dp, loc);
}

// ---- DataCopyPad (A2 only) -------------------------------------------------------------------

// GM -> UB: each block lands 32-B aligned in UB as [leftPadding][blockLen bytes][rightPadding]
// rounded up to 32 B; with isPad the left padding and everything after the data up to the end of
// the 32-B-aligned block get paddingValue (without isPad the padding bytes are left untouched).
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad,
                        std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    check_pad_ext(p, sizeof(T), loc);
    if (uint32_t(pad.leftPadding) * sizeof(T) > 32 || uint32_t(pad.rightPadding) * sizeof(T) > 32) {
        fatal("PARAM-RANGE", loc, "DataCopyPadExtParams: leftPadding = %u / rightPadding = %u elements exceed 32 B", unsigned(pad.leftPadding),
              unsigned(pad.rightPadding));
    }
    if (p.blockCount == 0 || p.blockLen == 0) return;
    const uint64_t left = uint64_t(pad.leftPadding) * sizeof(T), right = uint64_t(pad.rightPadding) * sizeof(T);
    const uint64_t ubBlk = align_up(left + p.blockLen + right, 32);
    const uint64_t dp = ubBlk + uint64_t(p.dstStride) * 32, sp = uint64_t(p.blockLen) + p.srcStride;
    const LView v = dst.sim_view();
    const uint64_t dataEnd = (p.blockCount - 1) * dp + left + p.blockLen;
    check_operand("DataCopyPad", "dst", v, (dataEnd + sizeof(T) - 1) / sizeof(T), loc);
    const uint64_t padEnd = extent(p.blockCount, ubBlk, dp);
    if (padEnd > uint64_t(v.cap) * sizeof(T)) {
        fatal("UB-OOB", loc, "DataCopyPad: the padded destination needs %llu B but the tensor's buffer ends after %llu B",
              static_cast<unsigned long long>(padEnd), static_cast<unsigned long long>(uint64_t(v.cap) * sizeof(T)));
    }
    check_gm("DataCopyPad", src, 0, extent(p.blockCount, p.blockLen, sp), false, loc);
    pad_from_gm(reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), p, left, ubBlk, &pad.paddingValue,
                sizeof(T), pad.isPad, loc);
}

// UB -> GM: blockLen bytes per block; UB blocks start 32-B aligned.
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p,
                        std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    check_pad_ext(p, sizeof(T), loc);
    if (p.blockCount == 0 || p.blockLen == 0) return;
    const uint64_t ubBlk = align_up(p.blockLen, 32);
    const uint64_t sp = ubBlk + uint64_t(p.srcStride) * 32, dp = uint64_t(p.blockLen) + p.dstStride;
    check_operand("DataCopyPad", "src", src.sim_view(), (extent(p.blockCount, p.blockLen, sp) + sizeof(T) - 1) / sizeof(T), loc);
    check_gm("DataCopyPad", dst, 0, extent(p.blockCount, p.blockLen, dp), true, loc);
    strided_to_gm("DataCopyPad", reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), p.blockCount,
                  p.blockLen, sp, dp, loc);
}

// Older overloads (DataCopyParams with blockLen in bytes + DataCopyPadParams).
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p, const DataCopyPadParams& pad,
                        std::source_location loc = std::source_location::current()) {
    T value;
    if constexpr (std::is_integral_v<T>) {
        value = static_cast<T>(pad.paddingValue);
    } else {
        static_assert(sizeof(T) <= sizeof(uint64_t));
        std::memcpy(&value, &pad.paddingValue, sizeof(T));  // raw bit pattern in the low bytes
    }
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0),
                DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, value), loc);
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                        std::source_location loc = std::source_location::current()) {
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0), loc);
}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_COPY_H
