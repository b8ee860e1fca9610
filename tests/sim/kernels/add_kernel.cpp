// Hand-written AscendC vector-add kernel in the TPipe/TQue style (CopyIn / Compute / CopyOut,
// double buffered), plus a driver that runs it on the emulator.
//   usage: add_kernel [n] [blockDim] [tileLength] [--time]
// Prints "mismatches=<k>" and, with --time, "elapsed_s=<t> elems_per_s=<r>".
#include "kernel_operator.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

struct AddTiling {
    uint32_t totalLength;
    uint32_t tileLength;  // elements per tile
};

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTiling& tiling) {
        blockLength = tiling.totalLength / GetBlockNum();
        tileLength = tiling.tileLength;
        tileNum = blockLength / tileLength / BUFFER_NUM;
        xGm.SetGlobalBuffer((__gm__ float*)x + blockLength * GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ float*)y + blockLength * GetBlockIdx(), blockLength);
        zGm.SetGlobalBuffer((__gm__ float*)z + blockLength * GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(float));
    }
    __aicore__ inline void Process() {
        int32_t loopCount = tileNum * BUFFER_NUM;
        for (int32_t i = 0; i < loopCount; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t progress) {
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        LocalTensor<float> yLocal = inQueueY.AllocTensor<float>();
        DataCopy(xLocal, xGm[progress * tileLength], tileLength);
        DataCopy(yLocal, yGm[progress * tileLength], tileLength);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(int32_t progress) {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> yLocal = inQueueY.DeQue<float>();
        LocalTensor<float> zLocal = outQueueZ.AllocTensor<float>();
        Add(zLocal, xLocal, yLocal, tileLength);
        outQueueZ.EnQue<float>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(int32_t progress) {
        LocalTensor<float> zLocal = outQueueZ.DeQue<float>();
        DataCopy(zGm[progress * tileLength], zLocal, tileLength);
        outQueueZ.FreeTensor(zLocal);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<float> xGm, yGm, zGm;
    uint32_t blockLength = 0, tileNum = 0, tileLength = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, AddTiling tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    KernelAdd op;
    op.Init(x, y, z, tiling);
    op.Process();
}

int main(int argc, char** argv) {
    const uint32_t n = argc > 1 ? static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10)) : 8 * 2048;
    const uint32_t blockDim = argc > 2 ? static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10)) : 4;
    const uint32_t tile = argc > 3 ? static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)) : 128;
    const bool timeIt = argc > 4 && std::strcmp(argv[4], "--time") == 0;

    const size_t bytes = size_t(n) * sizeof(float);
    uint8_t* x = sim::GmAlloc(bytes);
    uint8_t* y = sim::GmAlloc(bytes);
    uint8_t* z = sim::GmAlloc(bytes);
    float* xf = reinterpret_cast<float*>(x);
    float* yf = reinterpret_cast<float*>(y);
    for (uint32_t i = 0; i < n; ++i) {
        xf[i] = static_cast<float>(i % 1000) * 0.25f;
        yf[i] = 1.0f - static_cast<float>(i % 77);
    }
    AddTiling tiling{n, tile};
    const auto t0 = std::chrono::steady_clock::now();
    const int errors = sim::Launch(blockDim, [&] { add_custom(x, y, z, tiling); });
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const float* zf = reinterpret_cast<const float*>(z);
    uint64_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (zf[i] != xf[i] + yf[i]) ++bad;
    }
    std::printf("mismatches=%llu\n", static_cast<unsigned long long>(bad));
    if (timeIt) std::printf("elapsed_s=%.6f elems_per_s=%.0f\n", dt, n / dt);
    sim::GmFree(x);
    sim::GmFree(y);
    sim::GmFree(z);
    return (errors != 0 || bad != 0) ? 1 : 0;
}
