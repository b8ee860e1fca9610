// ascend_sim/copy.h - DataCopy (count and DataCopyParams forms) and DataCopyPad (ref §4.1).
#pragma once

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
inline uint64_t count_copy_bytes(uint32_t count, uint32_t esize, const std::source_location& loc) {
    const uint64_t bytes = uint64_t(count) * esize;
    if (bytes % 32 != 0) {
        report("DATACOPY-ALIGN", loc, "DataCopy of %u x %u B = %llu B is not a multiple of 32 B; hardware copies %llu B", count, esize,
               static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(bytes / 32 * 32));
    }
    return bytes / 32 * 32;
}

inline void check_copy_params(const DataCopyParams& p, const std::source_location& loc) {
    if (p.blockCount > kMaxBlockCount) {
        fatal("PARAM-RANGE", loc, "DataCopyParams.blockCount = %u is out of range [0, %u]", unsigned(p.blockCount), kMaxBlockCount);
    }
    if (uint32_t(p.blockLen) > kMaxBlockLen32) {
        fatal("PARAM-RANGE", loc, "DataCopyParams.blockLen = %u is out of range [0, %u] (32-B blocks)", unsigned(p.blockLen), kMaxBlockLen32);
    }
}

// Strided copy: `count` blocks of `blockBytes`, source blocks `srcPitch` apart, destination blocks
// `dstPitch` apart (bytes).
inline void strided_copy(uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes, uint64_t srcPitch, uint64_t dstPitch) {
    for (uint32_t i = 0; i < count; ++i) std::memmove(dst + i * dstPitch, src + i * srcPitch, blockBytes);
}

inline uint64_t extent(uint32_t count, uint64_t blockBytes, uint64_t pitch) { return count ? (count - 1) * pitch + blockBytes : 0; }

// UB-UNINIT: UB bytes about to reach GM must all have been written in this block.
inline void check_ub_def(const char* api, const void* ub, uint64_t n, const std::source_location& loc) {
    if (all_def(ub, n)) return;
    const uint64_t k = first_undef(ub, n);
    const unsigned off = static_cast<unsigned>(static_cast<const uint8_t*>(ub) - g_sim.ub);
    report("UB-UNINIT", loc,
           "%s copies UB bytes [%u, %llu) to GM, but byte %llu of them (UB offset %llu) was never written in this block: garbage "
           "reaches GM",
           api, off, static_cast<unsigned long long>(off + n), static_cast<unsigned long long>(k), static_cast<unsigned long long>(off + k));
}

// One UB -> GM burst: plain write (GM-RACE bookkeeping) or atomic add (SetAtomicAdd).
inline void ub_to_gm(const char* api, void* gm, const void* ub, uint64_t n, const std::source_location& loc) {
    if (n == 0) return;
    if (g_sim.atomicAdd) {
        g_sim.atomicAdd(gm, ub, n);
        cnt().atomicBytes += n;
    } else {
        gm_mark_write(api, gm, n, loc);
        std::memcpy(gm, ub, n);
    }
}

inline void strided_to_gm(const char* api, uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes, uint64_t srcPitch,
                          uint64_t dstPitch, const std::source_location& loc) {
    for (uint32_t i = 0; i < count; ++i) check_ub_def(api, src + i * srcPitch, blockBytes, loc);
    for (uint32_t i = 0; i < count; ++i) ub_to_gm(api, dst + i * dstPitch, src + i * srcPitch, blockBytes, loc);
    count_dma(cnt().ub2gm, count, blockBytes);
}

inline void strided_from_gm(uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes, uint64_t srcPitch, uint64_t dstPitch) {
    strided_copy(dst, src, count, blockBytes, srcPitch, dstPitch);
    for (uint32_t i = 0; i < count; ++i) set_def(dst + i * dstPitch, blockBytes);
    count_dma(cnt().gm2ub, count, blockBytes);
}

inline void strided_ub_to_ub(uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes, uint64_t srcPitch, uint64_t dstPitch) {
    strided_copy(dst, src, count, blockBytes, srcPitch, dstPitch);
    strided_copy(shadow(dst), shadow(src), count, blockBytes, srcPitch, dstPitch);
    count_dma(cnt().ub2ub, count, blockBytes);
}

inline void check_pad_ext(const DataCopyExtParams& p, uint32_t esize, const std::source_location& loc) {
    if (!ASCEND_SIM_HAS_DATACOPYPAD) {
        fatal("DATACOPYPAD-UNSUPPORTED", loc, "DataCopyPad is not available on this target (e.g. ascend310p)");
    }
    if (p.blockCount > kMaxBlockCount) {
        fatal("PARAM-RANGE", loc, "DataCopyExtParams.blockCount = %u is out of range [0, %u]", unsigned(p.blockCount), kMaxBlockCount);
    }
    if (p.blockLen > kMaxPadBlockLen) {
        fatal("PARAM-RANGE", loc, "DataCopyExtParams.blockLen = %u B is out of range [0, %u]", p.blockLen, kMaxPadBlockLen);
    }
    if (p.blockLen % esize != 0) {
        fatal("PARAM-RANGE", loc, "DataCopyExtParams.blockLen = %u B is not a multiple of sizeof(T) = %u", p.blockLen, esize);
    }
}

}  // namespace sim::detail

// ---- count forms -----------------------------------------------------------------------------

// GM -> UB (MTE2).
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    if (count == 0) return;
    check_operand("DataCopy", "dst", dst.sim_view(), count, loc);
    const uint64_t bytes = count_copy_bytes(count, sizeof(T), loc);
    check_gm("DataCopy", src, 0, bytes, false, loc);
    if (bytes) strided_from_gm(reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), 1, bytes, 0, 0);
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
    if (bytes) strided_ub_to_ub(reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), 1, bytes, 0, 0);
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
    check_operand("DataCopy", "dst", dst.sim_view(), (ubExt + sizeof(T) - 1) / sizeof(T), loc);
    check_gm("DataCopy", src, 0, extent(p.blockCount, blk, sp), false, loc);
    strided_from_gm(reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), p.blockCount, blk, sp, dp);
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
    strided_ub_to_ub(reinterpret_cast<uint8_t*>(dst.sim_ptr), reinterpret_cast<const uint8_t*>(src.sim_ptr), p.blockCount, blk, sp, dp);
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
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.sim_ptr);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(src.sim_ptr);
    const uint64_t leftN = pad.leftPadding, tailN = (ubBlk - left - p.blockLen) / sizeof(T);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint8_t* blk = d + i * dp;
        std::memmove(blk + left, s + i * sp, p.blockLen);
        set_def(blk + left, p.blockLen);
        // Without isPad the padding keeps stale bytes: whatever reads them (a reduction over a rounded-up
        // count) computes garbage, so they count as never written.
        clear_def(blk, left);
        clear_def(blk + left + p.blockLen, ubBlk - left - p.blockLen);
        if (pad.isPad) {
            T* l = reinterpret_cast<T*>(blk);
            for (uint64_t k = 0; k < leftN; ++k) l[k] = pad.paddingValue;
            T* r = reinterpret_cast<T*>(blk + left + p.blockLen);
            for (uint64_t k = 0; k < tailN; ++k) r[k] = pad.paddingValue;
            set_def(blk, ubBlk);
        }
    }
    count_dma(cnt().gm2ub, p.blockCount, p.blockLen);
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
