// A hand-written kernel-direct host program over the ACL runtime, with one planted bug per scenario
// (argv[1]); tests/device/test_acl_layer.py builds it against the emulator's ACL layer and checks that
// each bug is reported. The kernel launches with the bisheng `<<<>>>` form (rewritten for g++ by
// npu_harness/device/chevron.py).
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t kPerBlock = 64;  // floats per block: 256 B, whole 32-byte blocks

extern "C" __global__ __aicore__ void copy_custom(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> que;  // GM -> UB -> GM: the queue orders MTE2 before MTE3
    pipe.InitBuffer(que, 1, n * sizeof(float));
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + GetBlockIdx() * n, n);
    yGm.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * n, n);
    LocalTensor<float> t = que.AllocTensor<float>();
    DataCopy(t, xGm, n);
    que.EnQue(t);
    t = que.DeQue<float>();
    DataCopy(yGm, t, n);
    que.FreeTensor(t);
}

int main(int argc, char** argv)
{
    const char* s = argc > 1 ? argv[1] : "ok";
    auto is = [&](const char* name) { return std::strcmp(s, name) == 0; };
    const uint32_t blocks = is("kernel-fault") ? 100 : 4;
    const size_t n = static_cast<size_t>(blocks) * kPerBlock, bytes = n * sizeof(float);
    std::vector<float> host(n), out(n, 0.0f);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i) * 0.5f;

    aclInit(nullptr);
    if (!is("no-device")) aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    void* x = nullptr;
    void* y = nullptr;
    if (is("malloc-zero")) {
        const aclError e = aclrtMalloc(&x, 0, ACL_MEM_MALLOC_HUGE_FIRST);
        std::printf("rc=%d\n", e);
        return 0;
    }
    aclrtMalloc(&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&y, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(x, is("over-destmax") ? bytes / 2 : bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    if (is("overrun")) aclrtMemcpy(x, 2 * bytes, host.data(), 2 * bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    if (is("wrong-kind")) aclrtMemcpy(x, bytes, host.data(), bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    copy_custom<<<blocks, nullptr, stream>>>(is("host-arg") ? reinterpret_cast<uint8_t*>(host.data()) : static_cast<uint8_t*>(x),
                                             static_cast<uint8_t*>(y), kPerBlock);
    if (is("destroy-pending")) {
        aclrtDestroyStream(stream);
        stream = nullptr;
    } else if (!is("unsynced-read")) {
        std::printf("sync=%d\n", aclrtSynchronizeStream(stream));
    }
    aclrtMemcpy(out.data(), bytes, y, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    std::printf("%s\n", std::memcmp(out.data(), host.data(), bytes) == 0 ? "match" : "mismatch");
    aclrtFree(x);
    if (is("double-free")) aclrtFree(x);
    aclrtFree(y);
    if (stream != nullptr) aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
