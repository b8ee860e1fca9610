// Tiling struct of scaled_add.cpp (hand-written test kernel for `ascend-sim run`).
#pragma once
#include <cstdint>

struct ScaledAddTiling {
    uint32_t totalLength;  // elements
    uint32_t tileLength;   // elements per tile (multiple of 8)
    float alpha;
};
