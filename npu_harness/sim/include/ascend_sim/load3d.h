// ascend_sim/load3d.h - LoadData 3-D (img2col) mode on A2: L1 (NC1HWC0 feature map) -> L0A / L0B (MTE1), with
// LoadData3DParamsV2 (ref_next §1.3: signature and fields from DK include/basic_api/kernel_operator_mm_intf.h and
// kernel_struct_mm.h, ranges from B/矩阵计算（ISASI）/…/LoadData_3D.md, semantics restated from DK's NumPy reference
// load3d.py):
// - the source is a [C1][l1H][l1W][C0] slice (C0 = 32 B / sizeof(T), channelSize = C1 x C0 channels), padded by
//   padList = {left, right, top, bottom} with padValue;
// - the virtual img2col matrix has a row per output pixel m = ho x Wo + wo (Ho = (l1H + top + bottom - KeH) / strideH
//   + 1, Ke = (filter - 1) x dilation + 1, Wo likewise) and a column per k = ((c1 x Kh + kh) x Kw + kw) x C0 + c0;
// - rows [mStartPt, + mExtension) x columns [kStartPt, + kExtension) are written to L0A in Zz order (16-row x C0
//   fractals, row of fractals major) or to L0B with each fractal transposed (same fractal order).
// Rows past Ho x Wo (mExtension rounded up to 16) hold padValue (ASSUMPTION: the NumPy reference pads the matrix;
// no kernel may depend on them: they only feed output rows that are never stored).
// Only the IsResetLoad3dConfig default (the call programs the feature-map registers from its own params) is
// emulated; channelSize in the 4 / 8-channel forms (legal, not a multiple of C0), enTranspose and b32 into L0B
// (two 16 x 8 fractals packed) are reported UNSUPPORTED rather than guessed.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_LOAD3D_H
#define ASCEND_SIM_ASCEND_SIM_LOAD3D_H

#include "cube.h"

namespace AscendC {

struct IsResetLoad3dConfig {
    bool isSetFMatrix = true;
    bool isSetPadding = true;
};
inline constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG{true, true};

template <typename T>
struct LoadData3DParamsV2 {
    LoadData3DParamsV2() {}
    LoadData3DParamsV2(const uint8_t padListIn[4], const uint16_t l1HIn, const uint16_t l1WIn, const uint16_t channelSizeIn,
                       const uint16_t kExtensionIn, const uint16_t mExtensionIn, const uint16_t kStartPtIn, const uint16_t mStartPtIn,
                       const uint8_t strideWIn, const uint8_t strideHIn, const uint8_t filterWIn, const uint8_t filterHIn,
                       const uint8_t dilationFilterWIn, const uint8_t dilationFilterHIn, const bool enTransposeIn, const bool enSmallKIn,
                       const T padValueIn)
        : l1H(l1HIn), l1W(l1WIn), channelSize(channelSizeIn), kExtension(kExtensionIn), mExtension(mExtensionIn), kStartPt(kStartPtIn),
          mStartPt(mStartPtIn), strideW(strideWIn), strideH(strideHIn), filterW(filterWIn), filterH(filterHIn),
          dilationFilterW(dilationFilterWIn), dilationFilterH(dilationFilterHIn), enTranspose(enTransposeIn), enSmallK(enSmallKIn),
          padValue(padValueIn) {
        for (int i = 0; i < 4; ++i) padList[i] = padListIn[i];
    }
    uint8_t padList[4] = {0, 0, 0, 0};  // left, right, top, bottom
    uint16_t l1H = 0, l1W = 0;          // feature map in L1; 0: no-op
    uint16_t channelSize = 0;           // channels in L1 (C1 x C0); 0: no-op
    uint16_t kExtension = 0, mExtension = 0;  // destination block width (K) and height (M); 0: no-op
    uint16_t kStartPt = 0, mStartPt = 0;      // origin of the block in the img2col matrix
    uint8_t strideW = 1, strideH = 1;         // [1, 63]
    uint8_t filterW = 1, filterH = 1;         // [1, 255] (+ 256 with filterSizeW / H)
    uint8_t dilationFilterW = 1, dilationFilterH = 1;  // [1, 255]
    bool enTranspose = false;
    bool enSmallK = false;  // no longer supported
    T padValue = T(0);
    bool filterSizeW = false, filterSizeH = false;
    bool fMatrixCtrl = false;  // must stay false
};

namespace sim::detail {

// channelSize legal on A2 (LoadData_3D.md; SAN CheckChannelSize): b32 {4, 8N, 8N+4}; b16 {4, 8, 16N, 16N+4, 16N+8};
// b8 {4, 8, 16, 32N, 32N+4, 32N+8, 32N+16}.
inline bool load3d_channel_size_legal(uint32_t c, uint32_t es) {
    if (es == 4) return c % 8 == 0 || c % 8 == 4;
    if (es == 2) return c == 4 || c == 8 || (c >= 16 && (c % 16 == 0 || c % 16 == 4 || c % 16 == 8));
    return c == 4 || c == 8 || c == 16 || (c >= 32 && (c % 32 == 0 || c % 32 == 4 || c % 32 == 8 || c % 32 == 16));
}

}  // namespace sim::detail

// L1 (NC1HWC0) -> L0A (Zz) / L0B (transposed fractals), img2col on the way (MTE1).
template <typename T, const IsResetLoad3dConfig& defaultConfig = IS_RESER_LOAD3D_DEFAULT_CONFIG>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<T>& p,
                     std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "ascend-sim: LoadData 3-D is emulated for half, bfloat16_t, float, (u)int32");
    static_assert(defaultConfig.isSetFMatrix && defaultConfig.isSetPadding,
                  "ascend-sim: LoadData 3-D with IsResetLoad3dConfig{false, ...} (SetFmatrix registers) is not emulated");
    touch(loc);
    const uint32_t C0 = c0_of(sizeof(T));
    const uint32_t fw = p.filterW + (p.filterSizeW ? 256u : 0u), fh = p.filterH + (p.filterSizeH ? 256u : 0u);
    if (p.strideW < 1 || p.strideW > 63 || p.strideH < 1 || p.strideH > 63 || fw < 1 || fh < 1 || p.dilationFilterW < 1 ||
        p.dilationFilterH < 1 || p.l1H > 32767 || p.l1W > 32767) {
        fatal("PARAM-RANGE", loc, "LoadData (3-D): strideW / H = %u / %u must be in [1, 63], filterW / H = %u / %u and dilation %u / %u "
              ">= 1, l1H / l1W = %u / %u <= 32767", p.strideW, p.strideH, fw, fh, p.dilationFilterW, p.dilationFilterH, p.l1H, p.l1W);
    }
    if (p.fMatrixCtrl || p.enSmallK) {
        fatal("PARAM-RANGE", loc, "LoadData (3-D): fMatrixCtrl must stay false and enSmallK is no longer supported");
    }
    if (p.l1H == 0 || p.l1W == 0 || p.channelSize == 0 || p.kExtension == 0 || p.mExtension == 0) return;
    if (!load3d_channel_size_legal(p.channelSize, sizeof(T))) {
        fatal("PARAM-RANGE", loc, "LoadData (3-D): channelSize = %u is not legal for %u-byte elements on A2 (b16: 4, 8, 16N, 16N+4, "
              "16N+8; b32: 4, 8N, 8N+4)", p.channelSize, uint32_t(sizeof(T)));
    }
    if (p.channelSize % C0 != 0) {
        fatal("UNSUPPORTED", loc, "LoadData (3-D): channelSize = %u is not a multiple of C0 = %u (the small-channel forms are not emulated)",
              p.channelSize, C0);
    }
    const State& s = st();
    const uint8_t* dp = reinterpret_cast<const uint8_t*>(dst.sim_ptr);
    const uint8_t* l0a = s.cubeArena ? s.cubeArena + ASCEND_SIM_L1_BYTES : nullptr;
    const bool toA = l0a && dp >= l0a && dp < l0a + ASCEND_SIM_L0A_BYTES;
    if (p.enTranspose) fatal("UNSUPPORTED", loc, "LoadData (3-D): enTranspose is not emulated");
    if (!toA && sizeof(T) != 2) {
        fatal("UNSUPPORTED", loc, "LoadData (3-D) into L0B with 4-byte elements (two 16 x 8 fractals packed) is not emulated");
    }
    const int64_t keW = int64_t(fw - 1) * p.dilationFilterW + 1, keH = int64_t(fh - 1) * p.dilationFilterH + 1;
    const int64_t padW = int64_t(p.l1W) + p.padList[0] + p.padList[1], padH = int64_t(p.l1H) + p.padList[2] + p.padList[3];
    if (padW < keW || padH < keH) {
        fatal("PARAM-RANGE", loc, "LoadData (3-D): the dilated kernel (%lld x %lld) is larger than the padded feature map (%lld x %lld)",
              (long long)keH, (long long)keW, (long long)padH, (long long)padW);
    }
    const uint64_t wo = uint64_t(padW - keW) / p.strideW + 1, ho = uint64_t(padH - keH) / p.strideH + 1;
    const uint64_t rowsAll = ho * wo, colsAll = uint64_t(p.channelSize) * fh * fw;
    const uint64_t mEnd = uint64_t(p.mStartPt) + p.mExtension, kEnd = uint64_t(p.kStartPt) + p.kExtension;
    // alignment of the block (LoadData_3D.md): kStartPt a multiple of C0; kExtension a multiple of C0 and mExtension of 16
    // unless the block reaches the right / bottom edge of the img2col matrix (b32: no M rule)
    if (p.kStartPt % C0 != 0 || (p.kExtension % C0 != 0 && kEnd != colsAll) ||
        (sizeof(T) != 4 && p.mExtension % 16 != 0 && mEnd < rowsAll)) {
        fatal("PARAM-RANGE", loc, "LoadData (3-D): kStartPt = %u and kExtension = %u must be multiples of C0 = %u and mExtension = %u of 16, "
              "unless the block ends at the matrix edge (%llu x %llu)", p.kStartPt, p.kExtension, C0, p.mExtension,
              (unsigned long long)rowsAll, (unsigned long long)colsAll);
    }
    if (kEnd > colsAll) {
        fatal("PARAM-RANGE", loc, "LoadData (3-D): columns [%u, %llu) pass the img2col matrix's %llu (channelSize %u x %u x %u taps)",
              p.kStartPt, (unsigned long long)kEnd, (unsigned long long)colsAll, p.channelSize, fh, fw);
    }
    const uint64_t M1 = (p.mExtension + 15) / 16, K1 = (p.kExtension + C0 - 1) / C0;
    const uint64_t srcBytes = uint64_t(p.channelSize) * p.l1H * p.l1W * sizeof(T);
    const uint64_t dstBytes = M1 * K1 * 512;
    check_cube_operand("LoadData", "src", src.sim_ptr, srcBytes, Mem::L1, 32, loc);
    check_cube_operand("LoadData", "dst", dst.sim_ptr, dstBytes, toA ? Mem::L0A : Mem::L0B, 512, loc);
    {
        RaceOp op(Pipe::MTE1, "LoadData", loc);
        op.read(src.sim_ptr, srcBytes).write(dst.sim_ptr, dstBytes);
    }
    const T* fm = src.sim_ptr;
    std::vector<T> out(M1 * K1 * 16 * C0, p.padValue);
    for (uint64_t i = 0; i < uint64_t(p.mExtension); ++i) {
        const uint64_t m = p.mStartPt + i;
        for (uint64_t q = 0; q < uint64_t(p.kExtension); ++q) {
            const uint64_t k = p.kStartPt + q;
            T v = p.padValue;
            if (m < rowsAll) {
                const uint64_t c0 = k % C0, tap = k / C0 % (uint64_t(fh) * fw), c1 = k / C0 / (uint64_t(fh) * fw);
                const int64_t ih = int64_t(m / wo) * p.strideH + int64_t(tap / fw) * p.dilationFilterH - p.padList[2];
                const int64_t iw = int64_t(m % wo) * p.strideW + int64_t(tap % fw) * p.dilationFilterW - p.padList[0];
                if (ih >= 0 && ih < p.l1H && iw >= 0 && iw < p.l1W) v = fm[((c1 * p.l1H + uint64_t(ih)) * p.l1W + uint64_t(iw)) * C0 + c0];
            }
            const uint64_t frac = (i / 16) * K1 + q / C0;  // row of fractals major (both destinations)
            out[frac * 16 * C0 + (toA ? (i % 16) * C0 + q % C0 : (q % C0) * 16 + i % 16)] = v;
        }
    }
    std::memcpy(dst.sim_ptr, out.data(), out.size() * sizeof(T));
    // Load3D bandwidth on 2201 (ref_next §1.3, APPX Cube指令理论性能汇总 table 4), to L0A: 256 B / cycle for stride 1
    // and one kernel row; floor(512 / (n + 2)) for strideW 1 and n = filterH > 1; floor(512 / (2 strideW + n)) for
    // strideW 2, 4, 8 (n = 0 when filterH = 1); 32 for any other strideW. To L0B: 128 B / cycle for stride 1 and one
    // kernel row (same source); the table's other L0B figures are lower and not restated: ASSUMPTION 32 B / cycle,
    // the table's floor.
    uint64_t rate = 32;
    if (toA && p.strideW == 1) rate = fh == 1 ? 256 : 512 / (fh + 2);
    if (!toA && p.strideW == 1 && p.strideH == 1 && fh == 1) rate = 128;
    if (toA && (p.strideW == 2 || p.strideW == 4 || p.strideW == 8)) rate = 512 / (2 * p.strideW + (fh == 1 ? 0 : fh));
    rate = rate < 32 ? 32 : rate;
    cnt().mte1Cycles += (dstBytes + rate - 1) / rate;
}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_LOAD3D_H
