// Driver for the exported op-project kernel_src of leaky_relu: the tiling struct is computed by the
// kernel's host tiling and handed to the msopgen entry as GM bytes, as the op framework does.
// usage: driver IO_DIR N SLOPE
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include "kernel_operator.h"
#include "leaky_relu_custom.cpp"

int main(int argc, char** argv)
{
    const std::string dir = argv[1];
    const uint64_t n = std::strtoull(argv[2], nullptr, 10);
    const float slope = std::strtof(argv[3], nullptr);
    const size_t bytes = n * sizeof(float);
    uint8_t* x = AscendC::sim::GmAlloc(bytes);
    uint8_t* y = AscendC::sim::GmAlloc(bytes);
    FILE* f = std::fopen((dir + "/x.bin").c_str(), "rb");
    if (f == nullptr || std::fread(x, 1, bytes, f) != bytes) return 2;
    std::fclose(f);
    LeakyReluTilingData tiling{};
    const uint32_t blocks = LeakyReluComputeTiling(n, slope, 48, &tiling);
    uint8_t* tilingGm = AscendC::sim::GmAlloc(sizeof(tiling));
    std::memcpy(tilingGm, &tiling, sizeof(tiling));
    uint8_t* workspace = AscendC::sim::GmAlloc(1024);
    const int errors = AscendC::sim::Launch(blocks, [&] { leaky_relu_custom(x, y, workspace, tilingGm); });
    f = std::fopen((dir + "/y.bin").c_str(), "wb");
    std::fwrite(y, 1, bytes, f);
    std::fclose(f);
    return errors == 0 ? 0 : 1;
}
