// Host driver for the exported MultiKernelBench direct-launch kernel of leaky_relu: calls the exported
// launch function (kernel/leaky_relu_launch.h) on emulated device memory, as benchmark_ops would on an NPU.
// usage: driver IO_DIR N SLOPE
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "acl/acl.h"
#include "leaky_relu_launch.h"

int main(int argc, char** argv)
{
    const std::string dir = argv[1];
    const uint64_t n = std::strtoull(argv[2], nullptr, 10);
    const float slope = std::strtof(argv[3], nullptr);
    const size_t bytes = n * sizeof(float);
    std::vector<float> host(n);
    FILE* f = std::fopen((dir + "/x.bin").c_str(), "rb");
    if (f == nullptr || std::fread(host.data(), 1, bytes, f) != bytes) return 2;
    std::fclose(f);
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    int64_t cores = 0;
    aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &cores);
    LeakyReluTilingData tiling{};
    const uint32_t blocks = LeakyReluComputeTiling(n, slope, static_cast<uint32_t>(cores), &tiling);
    void* x = nullptr;
    void* y = nullptr;
    aclrtMalloc(&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    launch_leaky_relu(x, y, &tiling, blocks, stream);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(host.data(), bytes, y, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    f = std::fopen((dir + "/y.bin").c_str(), "wb");
    std::fwrite(host.data(), 1, bytes, f);
    std::fclose(f);
    aclrtFree(x);
    aclrtFree(y);
    aclrtDestroyStream(stream);
    aclFinalize();
    return 0;
}
