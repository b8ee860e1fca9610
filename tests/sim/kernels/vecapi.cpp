// Level-0 / reduction / gather / sort / index APIs: one correct variant per API (checked against values
// computed here) and planted bugs for their checks.
//   usage: vecapi <variant>    (exit 0 iff Launch reported no error and the variant's own checks hold)
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>

using namespace AscendC;

namespace {

int g_fail = 0;
#define EXPECT(c)                                                              \
    do {                                                                       \
        if (!(c)) {                                                            \
            std::printf("EXPECT failed: %s (vecapi.cpp:%d)\n", #c, __LINE__);  \
            ++g_fail;                                                          \
        }                                                                      \
    } while (0)

// One block with a 64 KB scratch TBuf; `body` gets float and half views of it.
template <class F>
int one_block(F body) {
    return sim::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64 * 1024);
        body(buf.Get<float>());
    });
}

int reduce_tree_half() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<half> h = f.ReinterpretCast<half>();
        // ReduceSum.md / WholeReduceSum.md: [60000, 60000, -30000, 100] -> 65504 (saturated, not inf) + (-29900) = 35604
        // before the half rounding of the partial sums (-29900 -> -29904, 35600 -> 35584 here)
        h.SetValue(0, half(60000.0f));
        h.SetValue(1, half(60000.0f));
        h.SetValue(2, half(-30000.0f));
        h.SetValue(3, half(100.0f));
        LocalTensor<half> out = h[1024];
        WholeReduceSum<half>(out, h, 4, 1, 1, 1, 8);
        EXPECT(float(out.GetValue(0)) == 35584.0f);
        LocalTensor<half> tmp = h[2048];
        ReduceSum(out[1], h, tmp, 4);  // dst only element-aligned (2 B): allowed
        EXPECT(float(out.GetValue(1)) == 35584.0f);
    });
}

int reduce_forms() {
    return one_block([](LocalTensor<float> f) {
        for (uint32_t i = 0; i < 1024; ++i) f.SetValue(i, float(i % 13) - 6.0f + (i == 700 ? 100.0f : 0.0f));
        LocalTensor<float> out = f[2048], tmp = f[4096];
        float sum = 0;
        for (uint32_t i = 0; i < 1024; ++i) sum += f.GetValue(i);
        ReduceSum(out, f, tmp, 1024);
        EXPECT(out.GetValue(0) == sum);
        ReduceMax(out[8], f, tmp, 1024, true);  // value, then the index as the bits of a float slot
        EXPECT(out.GetValue(8) == 100.0f + float(700 % 13) - 6.0f);
        uint32_t idx;
        float raw = out.GetValue(9);
        std::memcpy(&idx, &raw, 4);
        EXPECT(idx == 700);
        ReduceMin(out[16], f, tmp, 1024, true);
        raw = out.GetValue(17);
        std::memcpy(&idx, &raw, 4);
        EXPECT(out.GetValue(16) == -6.0f && idx == 0);  // the first occurrence
        // level-0 ReduceSum: 16 repeats of 64 lanes (repeat results summed as a tree)
        ReduceSum(out[24], f, tmp, 64, 16, 8);
        EXPECT(out.GetValue(24) == sum);
        // BlockReduceSum: one sum per 32-B block; PairReduceSum: adjacent pairs
        BlockReduceSum<float>(out[32], f, 2, 64, 1, 1, 8);
        EXPECT(out.GetValue(32) == f.GetValue(0) + f.GetValue(1) + f.GetValue(2) + f.GetValue(3) + f.GetValue(4) + f.GetValue(5) +
                                       f.GetValue(6) + f.GetValue(7));
        PairReduceSum<float>(tmp, f, 1, 64, 1, 1, 8);
        EXPECT(tmp.GetValue(5) == f.GetValue(10) + f.GetValue(11));
        // WholeReduceMax with (value, index) pairs per repeat
        WholeReduceMax<float>(tmp[64], f[640], 64, 1, 1, 1, 8, ReduceOrder::ORDER_VALUE_INDEX);
        raw = tmp.GetValue(65);
        std::memcpy(&idx, &raw, 4);
        EXPECT(tmp.GetValue(64) == f.GetValue(700) && idx == 60);
    });
}

int reduce_tmp_small() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<float> src = f, tmp = f[8192], dst = f[12288];
        Duplicate(src, 1.0f, 64 * 20);
        // the documented minimum for 20 repeats of float is RoundUp(20, 8) = 24 elements
        LocalTensor<float> small = tmp;
        small.SetSize(16);
        ReduceSum(dst, src, small, 64 * 20);  // BUG: REDUCE-TMP
    });
}

int reduce_max_index_tmp_small() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<float> src = f, tmp = f[8192], dst = f[12288];
        Duplicate(src, 1.0f, 64 * 20);
        // with the index: RoundUp(40, 8) + RoundUp(2, 8) + RoundUp(2, 8) = 56 elements; 40 are not enough
        LocalTensor<float> small = tmp;
        small.SetSize(40);
        ReduceMax(dst, src, small, 64 * 20, true);  // BUG: REDUCE-TMP with index
    });
}

// ReduceMin without index: RoundUp(2 x firstMaxRepeat, elementsPerBlock) = RoundUp(40, 8) = 40 elements
int reduce_min_tmp_small() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<float> src = f, tmp = f[8192], dst = f[12288];
        Duplicate(src, 1.0f, 64 * 20);
        LocalTensor<float> small = tmp;
        small.SetSize(32);
        ReduceMin(dst, src, small, 64 * 20);  // BUG: REDUCE-TMP of ReduceMin
    });
}

// level-0 ReduceSum: firstMaxRepeat = repeatTime, RoundUp(20, 8) = 24 elements
int reduce_level0_tmp_small() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<float> src = f, tmp = f[8192], dst = f[12288];
        Duplicate(src, 1.0f, 64 * 20);
        LocalTensor<float> tiny = tmp;
        tiny.SetSize(16);
        ReduceSum(dst, src, tiny, uint64_t(64), 20, 8);  // BUG: REDUCE-TMP of the level-0 form
    });
}

// a reduction's dst needs element alignment (4 B for float): 2 B off is UB-ALIGN (1 element off is allowed,
// reduce_tree_half); its src needs 32 B
int reduce_dst_misaligned() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<float> src = f, tmp = f[8192];
        Duplicate(src, 1.0f, 64);
        LocalTensor<float> dst = f[12288].ReinterpretCast<uint8_t>()[2].ReinterpretCast<float>();
        ReduceSum(dst, src, tmp, 64);  // BUG: dst not element-aligned
    });
}

int reduce_src_misaligned() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<float> tmp = f[8192], dst = f[12288];
        Duplicate(f, 1.0f, 128);
        ReduceSum(dst, f[1], tmp, 64);  // BUG: src not 32-B aligned
    });
}

int level0_counter_and_masks() {
    return one_block([](LocalTensor<float> f) {
        Duplicate(f, 0.0f, 512);
        LocalTensor<float> one = f[1024];
        Duplicate(one, 1.0f, 512);
        SetMaskCount();
        SetVectorMask<float, MaskMode::COUNTER>(0, 100);  // 100 elements: repeats follow (64 + 36)
        Add<float, false>(f, f, one, MASK_PLACEHOLDER, 1, BinaryRepeatParams());
        SetMaskNorm();
        SetVectorMask<float>(0, 0xFF00ull);  // Normal mode, lanes 8..15
        Muls<float, false>(f, f, 3.0f, MASK_PLACEHOLDER, 2, UnaryRepeatParams());
        ResetMask();
        EXPECT(f.GetValue(0) == 1.0f && f.GetValue(8) == 3.0f && f.GetValue(72) == 3.0f && f.GetValue(99) == 1.0f &&
               f.GetValue(100) == 0.0f && f.GetValue(16) == 1.0f);
    });
}

// Cast counter classes: float -> half is counted as CastF32ToF16, half -> float (and every other pair) as Cast, each by
// the wider type's repeats (level 2 and level 0 alike)
int cast_counter_classes() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<half> h = f[4096].ReinterpretCast<half>();
        Duplicate(f, 1.5f, 512);
        Cast(h, f, RoundMode::CAST_RINT, 512);                                        // 8 repeats of 64 floats
        Cast(h, f, RoundMode::CAST_RINT, 64, 2, UnaryRepeatParams(1, 1, 4, 8));       // level 0: 2 repeats
        Cast(f[1024], h, RoundMode::CAST_NONE, 256);                                  // 4 repeats
        EXPECT(float(h.GetValue(100)) == 1.5f && f.GetValue(1024 + 100) == 1.5f);
    });
}

int mask_high_b32() {
    return one_block([](LocalTensor<float> f) {
        SetVectorMask<float>(1, 0xFFull);  // BUG: maskHigh must be 0 for 32-bit elements
        (void)f;
    });
}

int gather_ok() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<uint32_t> off = f[1024].ReinterpretCast<uint32_t>();
        for (uint32_t i = 0; i < 64; ++i) {
            f.SetValue(i, float(i) * 10.0f);
            off.SetValue(i, (63 - i) * 4);  // byte offsets: reversed
        }
        LocalTensor<float> dst = f[2048];
        Gather(dst, f, off, 0, 64);
        EXPECT(dst.GetValue(0) == 630.0f && dst.GetValue(63) == 0.0f);
        LocalTensor<int32_t> idx = f[3072].ReinterpretCast<int32_t>();
        CreateVecIndex(idx, int32_t(5), 32);
        EXPECT(idx.GetValue(0) == 5 && idx.GetValue(31) == 36);
        Arange(dst, 1.0f, 0.5f, 16);
        EXPECT(dst.GetValue(15) == 8.5f);
        uint64_t kept = 0;
        GatherMask(dst, f, uint8_t(2), false, 0, GatherMaskParams(1, 1, 8, 0), kept);  // odd lanes of one repeat
        EXPECT(kept == 32 && dst.GetValue(0) == 10.0f && dst.GetValue(31) == 630.0f);
        LocalTensor<uint32_t> pat = f[4096].ReinterpretCast<uint32_t>();
        pat.SetValue(0, 0x80000001u);  // lanes 0 and 31
        pat.SetValue(1, 0);
        GatherMask(dst, f, pat, false, 0, GatherMaskParams(1, 1, 8, 0), kept);
        EXPECT(kept == 2 && dst.GetValue(0) == 0.0f && dst.GetValue(1) == 310.0f);
        Brcb(dst, f, 1, BrcbRepeatParams(1, 8));
        EXPECT(dst.GetValue(0) == 0.0f && dst.GetValue(7) == 0.0f && dst.GetValue(8) == 10.0f && dst.GetValue(63) == 70.0f);
    });
}

int gather_oob() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<float> src = f;
        src.SetSize(64);
        LocalTensor<uint32_t> off = f[1024].ReinterpretCast<uint32_t>();
        Duplicate(off.ReinterpretCast<int32_t>(), int32_t(4), 8);
        off.SetValue(3, 1 << 20);
        Gather(f[2048], src, off, 0, 8);  // BUG: offset past src's buffer
    });
}

int gather_unaligned() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<uint32_t> off = f[1024].ReinterpretCast<uint32_t>();
        Duplicate(off.ReinterpretCast<int32_t>(), int32_t(6), 8);  // BUG: 6 bytes is not a multiple of sizeof(float)
        Gather(f[2048], f, off, 0, 8);
    });
}

int sort_ok() {
    return one_block([](LocalTensor<float> f) {
        LocalTensor<uint32_t> idx = f[1024].ReinterpretCast<uint32_t>();
        for (uint32_t i = 0; i < 64; ++i) {
            f.SetValue(i, float((i * 37) % 64) + (i == 3 ? 0.0f : 0.0f));
            idx.SetValue(i, i);
        }
        f.SetValue(5, f.GetValue(2));  // a tie: the lower original position comes first
        LocalTensor<float> sorted = f[2048];
        Sort32(sorted, f, idx, 2);  // two independent groups of 32
        uint32_t i0;
        float raw = sorted.GetValue(1);
        std::memcpy(&i0, &raw, 4);
        EXPECT(sorted.GetValue(0) >= sorted.GetValue(2) && sorted.GetValue(2) >= sorted.GetValue(4));
        // merge the two sorted groups of 32 pairs
        LocalTensor<float> merged = f[4096];
        const uint16_t lens[4] = {32, 32, 0, 0};
        MrgSort(merged, MrgSortSrcList<float>(sorted, sorted[64], sorted, sorted), MrgSort4Info(lens, false, 3, 1));
        uint16_t a = 0, b = 0, c = 0, d = 0;
        GetMrgSortResult(a, b, c, d);
        EXPECT(a == 32 && b == 32 && merged.GetValue(0) == 63.0f && merged.GetValue(126) == 0.0f);
        // the high-level Sort gives the same full order; Extract splits values and indices
        LocalTensor<float> full = f[6144], tmp = f[8192], vals = f[10240];
        Sort<float, true>(full, f, idx, tmp, 2);
        Extract(vals, f[11264].ReinterpretCast<uint32_t>(), full, 2);
        EXPECT(vals.GetValue(0) == 63.0f && vals.GetValue(63) == 0.0f);
        bool same = true;
        for (uint32_t i = 0; i < 128; ++i) same &= full.GetValue(i) == merged.GetValue(i);
        EXPECT(same);
        (void)i0;
    });
}

struct Variant {
    const char* name;
    int (*fn)();
};

const Variant kVariants[] = {
    {"reduce_tree_half", reduce_tree_half},
    {"reduce_forms", reduce_forms},
    {"reduce_tmp_small", reduce_tmp_small},
    {"reduce_max_index_tmp_small", reduce_max_index_tmp_small},
    {"reduce_min_tmp_small", reduce_min_tmp_small},
    {"reduce_level0_tmp_small", reduce_level0_tmp_small},
    {"reduce_dst_misaligned", reduce_dst_misaligned},
    {"reduce_src_misaligned", reduce_src_misaligned},
    {"level0_counter_and_masks", level0_counter_and_masks},
    {"cast_counter_classes", cast_counter_classes},
    {"mask_high_b32", mask_high_b32},
    {"gather_ok", gather_ok},
    {"gather_oob", gather_oob},
    {"gather_unaligned", gather_unaligned},
    {"sort_ok", sort_ok},
};

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        for (const Variant& v : kVariants) {
            if (std::strcmp(v.name, argv[1]) == 0) {
                const int rc = v.fn();
                return (rc != 0 || g_fail) ? 1 : 0;
            }
        }
    }
    std::fprintf(stderr, "usage: vecapi <variant>\n");
    return 2;
}
