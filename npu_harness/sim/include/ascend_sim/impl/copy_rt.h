// ascend_sim/impl/copy_rt.h - runtime definitions of copy.h (DMA moves and their bookkeeping).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_COPY_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_COPY_RT_H

namespace AscendC::sim::detail {

ASCEND_SIM_RT uint64_t count_copy_bytes(uint32_t count, uint32_t esize, const std::source_location& loc) {
    const uint64_t bytes = uint64_t(count) * esize;
    if (bytes % 32 != 0) {
        report("DATACOPY-ALIGN", loc, "DataCopy of %u x %u B = %llu B is not a multiple of 32 B; hardware copies %llu B", count, esize,
               static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(bytes / 32 * 32));
    }
    return bytes / 32 * 32;
}

ASCEND_SIM_RT void check_copy_params(const DataCopyParams& p, const std::source_location& loc) {
    if (p.blockCount > kMaxBlockCount) {
        fatal("PARAM-RANGE", loc, "DataCopyParams.blockCount = %u is out of range [0, %u]", unsigned(p.blockCount), kMaxBlockCount);
    }
    if (uint32_t(p.blockLen) > kMaxBlockLen32) {
        fatal("PARAM-RANGE", loc, "DataCopyParams.blockLen = %u is out of range [0, %u] (32-B blocks)", unsigned(p.blockLen), kMaxBlockLen32);
    }
}

inline void strided_copy(uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes, uint64_t srcPitch, uint64_t dstPitch) {
    for (uint32_t i = 0; i < count; ++i) std::memmove(dst + i * dstPitch, src + i * srcPitch, blockBytes);
}

// UB-UNINIT: UB bytes about to reach GM must all have been written in this block.
inline void check_ub_def(const char* api, const void* ub, uint64_t n, const std::source_location& loc) {
    if (all_def(ub, n)) return;
    const uint64_t k = first_undef(ub, n);
    const unsigned off = static_cast<unsigned>(static_cast<const uint8_t*>(ub) - st().ub);
    report("UB-UNINIT", loc,
           "%s copies UB bytes [%u, %llu) to GM, but byte %llu of them (UB offset %llu) was never written in this block: garbage "
           "reaches GM",
           api, off, static_cast<unsigned long long>(off + n), static_cast<unsigned long long>(k), static_cast<unsigned long long>(off + k));
}

// One UB -> GM burst: plain write (GM-RACE bookkeeping) or atomic add (SetAtomicAdd).
inline void ub_to_gm(const char* api, void* gm, const void* ub, uint64_t n, const std::source_location& loc) {
    if (n == 0) return;
    State& s = st();
    if (s.atomicAdd) {
        s.atomicAdd(gm, ub, n, loc);
        s.cnt.atomicBytes += n;
        gm_mark_atomic(api, gm, n, loc);
    } else {
        gm_mark_write(api, gm, n, loc);
        std::memcpy(gm, ub, n);
    }
}

ASCEND_SIM_RT void strided_to_gm(const char* api, uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes, uint64_t srcPitch,
                                 uint64_t dstPitch, const std::source_location& loc) {
    race_strided(Pipe::MTE3, api, loc, src, count, blockBytes, srcPitch, false);
    race_strided(Pipe::MTE3, api, loc, dst, count, blockBytes, dstPitch, true);
    for (uint32_t i = 0; i < count; ++i) check_ub_def(api, src + i * srcPitch, blockBytes, loc);
    for (uint32_t i = 0; i < count; ++i) ub_to_gm(api, dst + i * dstPitch, src + i * srcPitch, blockBytes, loc);
    count_dma(cnt().ub2gm, count, blockBytes);
    if (gm_in_workspace(dst)) cnt().wsUb2gm += uint64_t(count) * blockBytes;
}

ASCEND_SIM_RT void strided_from_gm(const char* api, uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes, uint64_t srcPitch,
                                   uint64_t dstPitch, const std::source_location& loc) {
    race_strided(Pipe::MTE2, api, loc, src, count, blockBytes, srcPitch, false);
    race_strided(Pipe::MTE2, api, loc, dst, count, blockBytes, dstPitch, true);
    strided_copy(dst, src, count, blockBytes, srcPitch, dstPitch);
    for (uint32_t i = 0; i < count; ++i) {
        set_def(dst + i * dstPitch, blockBytes);
        gm_mark_read(api, src + i * srcPitch, blockBytes, loc);
    }
    count_reuse(src, count, blockBytes, srcPitch);
    count_dma(cnt().gm2ub, count, blockBytes);
    if (gm_in_workspace(src)) cnt().wsGm2ub += uint64_t(count) * blockBytes;
}

ASCEND_SIM_RT void strided_ub_to_ub(const char* api, uint8_t* dst, const uint8_t* src, uint32_t count, uint64_t blockBytes,
                                    uint64_t srcPitch, uint64_t dstPitch, const std::source_location& loc) {
    race_strided(Pipe::V, api, loc, src, count, blockBytes, srcPitch, false);  // UB -> UB copies run on PIPE_V (ref_next §5.1)
    race_strided(Pipe::V, api, loc, dst, count, blockBytes, dstPitch, true);
    strided_copy(dst, src, count, blockBytes, srcPitch, dstPitch);
    strided_copy(shadow(dst), shadow(src), count, blockBytes, srcPitch, dstPitch);
    count_dma(cnt().ub2ub, count, blockBytes);
}

ASCEND_SIM_RT void check_pad_ext(const DataCopyExtParams& p, uint32_t esize, const std::source_location& loc) {
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

ASCEND_SIM_RT void pad_from_gm(uint8_t* d, const uint8_t* s, const DataCopyExtParams& p, uint64_t left, uint64_t ubBlk,
                               const void* padValue, uint32_t esize, bool isPad, const std::source_location& loc) {
    const uint64_t dp = ubBlk + uint64_t(p.dstStride) * 32, sp = uint64_t(p.blockLen) + p.srcStride;
    race_strided(Pipe::MTE2, "DataCopyPad", loc, s, p.blockCount, p.blockLen, sp, false);
    race_strided(Pipe::MTE2, "DataCopyPad", loc, d, p.blockCount, ubBlk, dp, true);
    const uint64_t leftN = left / esize, tailN = (ubBlk - left - p.blockLen) / esize;
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint8_t* blk = d + i * dp;
        std::memmove(blk + left, s + i * sp, p.blockLen);
        gm_mark_read("DataCopyPad", s + i * sp, p.blockLen, loc);
        set_def(blk + left, p.blockLen);
        // Without isPad the padding keeps stale bytes: whatever reads them (a reduction over a rounded-up
        // count) computes garbage, so they count as never written.
        clear_def(blk, left);
        clear_def(blk + left + p.blockLen, ubBlk - left - p.blockLen);
        if (isPad) {
            for (uint64_t k = 0; k < leftN; ++k) std::memcpy(blk + k * esize, padValue, esize);
            uint8_t* r = blk + left + p.blockLen;
            for (uint64_t k = 0; k < tailN; ++k) std::memcpy(r + k * esize, padValue, esize);
            set_def(blk, ubBlk);
        }
    }
    count_reuse(s, p.blockCount, p.blockLen, sp);
    count_dma(cnt().gm2ub, p.blockCount, p.blockLen);
    if (gm_in_workspace(s)) cnt().wsGm2ub += uint64_t(p.blockCount) * p.blockLen;
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_COPY_RT_H
