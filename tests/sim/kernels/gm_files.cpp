// GM from files (sim::GmMapInput / GmMapOutput): a one-block kernel copies the first half of x.bin
// into y.bin and leaves the second half unwritten; then, by mode, the program ends normally, the kernel
// crashes, the kernel spins past the time limit, or main returns without GmFree. In every case y.bin
// must hold the copied half and the 0xFF poison, at exactly N floats.
//   usage: gm_files DIR N ok|crash|spin|nofree
#include "kernel_operator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace AscendC;

namespace {

void copy_half(GM_ADDR x, GM_ADDR y, uint32_t n, const char* mode) {
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, n);
    yGm.SetGlobalBuffer((__gm__ float*)y, n);
    const uint32_t tile = n / 2 < 8192 ? n / 2 : 8192;  // n / 2 is a multiple of it
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tile * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    for (uint32_t i = 0; i < n / 2; i += tile) {
        if (i) {
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
        DataCopy(t, xGm[i], tile);
        SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        DataCopy(yGm[i], t, tile);
    }
    if (std::strcmp(mode, "crash") == 0) {
        volatile int* volatile p = nullptr;
        *p = 1;
    }
    if (std::strcmp(mode, "spin") == 0) {
        volatile uint64_t counter = 0;
        for (;;) counter = counter + 1;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: gm_files DIR N ok|crash|spin|nofree\n");
        return 2;
    }
    const std::string dir = argv[1];
    const uint32_t n = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
    const char* mode = argv[3];
    uint8_t* x = sim::GmMapInput((dir + "/x.bin").c_str(), n * sizeof(float));
    uint8_t* y = sim::GmMapOutput((dir + "/y.bin").c_str(), n * sizeof(float));
    if (!x || !y) return 2;
    const int errors = sim::Launch(1, [&] { copy_half(x, y, n, mode); });
    if (std::strcmp(mode, "nofree") == 0) return errors == 0 ? 0 : 1;
    sim::GmFree(x);
    sim::GmFree(y);
    return errors == 0 ? 0 : 1;
}
