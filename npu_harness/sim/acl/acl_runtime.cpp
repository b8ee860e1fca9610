// acl_runtime.cpp - the ACL runtime subset of acl/acl.h, implemented on the AscendC CPU emulator, so
// that an emitted host program (<kernel>_main.cpp) and the torch binding (<kernel>_torch.cpp) build
// and run unchanged without CANN (docs/npu.md). Compiled into every emulator build of a host program
// or torch binding, as libascendcl is linked into a CANN build.
//
// Model (API semantics from hicann/runtime docs/api_docs/<function>.md):
//   - one device (id 0) after aclInit + aclrtSetDevice; its core counts come from the target
//     (ASCEND_SIM_AIV_NUM / ASCEND_SIM_AIC_NUM);
//   - device memory is emulator GM (sim::GmAlloc: filled with 0xFF, as aclrtMalloc does not
//     initialise memory), so kernels get the emulator's GM-OOB checks on it;
//   - a kernel launch or aclrtMemcpyAsync is queued on its stream and executed in order when the
//     stream (or device) is synchronised: aclrtMemcpy "copies at once, with no implicit device or
//     stream synchronisation" (aclrtMemcpy.md), so a host program that reads results before
//     synchronising reads what an NPU may give it too: stale data; that is reported (ACL-UNSYNCED).
// Reports use the emulator's format (`error[ACL-...]: message`); functions return the documented codes.
#include <cstdarg>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "acl/acl.h"
#include "acl/ascend_sim_queue.h"
// sim::GmAlloc / GmFree: device memory is emulator GM. Header-only builds (a shared library, or a program
// linking one) need the runtime's inline definitions this file calls, which the entry header brings.
#include "kernel_operator.h"

#ifndef ASCEND_SIM_AIV_NUM
#define ASCEND_SIM_AIV_NUM 48  // vector cores of 910B1 (ref §5.2)
#endif
#ifndef ASCEND_SIM_AIC_NUM
#define ASCEND_SIM_AIC_NUM 24  // cube cores (= AI cores in separated mode) of 910B1 (ref §5.2, §3)
#endif

namespace {

using AscendC::sim::acl::KernelTask;

struct Task {
    std::string what;              // "relu_custom<<<48>>>" or "aclrtMemcpyAsync"
    std::vector<const void*> gm;   // device memory the task touches
    KernelTask* kernel = nullptr;  // a kernel launch, or
    void* dst = nullptr;           // an asynchronous copy
    const void* src = nullptr;
    size_t count = 0;
};

struct Stream {
    std::deque<Task> pending;
};

struct Runtime {
    bool initialized = false;
    bool finalized = false;
    bool deviceSet = false;
    std::map<uintptr_t, size_t> device;  // aclrtMalloc allocations: begin -> bytes
    std::map<uintptr_t, size_t> host;    // aclrtMallocHost allocations
    std::set<Stream*> streams;
    Stream defaultStream;
    std::string lastError;
};

Runtime& rt() {
    static Runtime r;
    return r;
}

[[gnu::format(printf, 3, 4)]] aclError fail(aclError code, const char* check, const char* fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rt().lastError = msg;
    std::fprintf(stderr, "error[%s]: %s\n", check, msg);
    std::fflush(stderr);
    return code;
}

// The device allocation holding address p, if any: returns its begin (0: none) and the bytes from p to its end.
uintptr_t device_block(const void* p, size_t* avail = nullptr) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto& m = rt().device;
    auto it = m.upper_bound(a);
    if (it == m.begin()) return 0;
    --it;
    if (a - it->first >= it->second) return 0;  // sizes are never 0 (aclrtMalloc rejects 0)
    if (avail) *avail = it->second - (a - it->first);
    return it->first;
}

bool is_device(const void* p) { return p != nullptr && device_block(p) != 0; }

aclError need_device(const char* api) {
    Runtime& r = rt();
    if (!r.initialized || r.finalized) {
        return fail(ACL_ERROR_UNINITIALIZE, "ACL-STATE", "%s called %s", api,
                    r.finalized ? "after aclFinalize" : "before aclInit");
    }
    if (!r.deviceSet) {
        return fail(ACL_ERROR_RT_CONTEXT_NULL, "ACL-STATE", "%s called before aclrtSetDevice (no current device)", api);
    }
    return ACL_SUCCESS;
}

Stream* stream_of(aclrtStream s) {
    if (s == nullptr) return &rt().defaultStream;
    Stream* st = static_cast<Stream*>(s);
    return rt().streams.count(st) ? st : nullptr;
}

// Host access to the device allocation holding p while a queued, unsynchronised task uses it.
void check_unsynced(const char* api, const void* p) {
    const uintptr_t block = device_block(p);
    if (block == 0) return;
    auto check = [&](Stream& st) {
        for (const Task& t : st.pending) {
            for (const void* g : t.gm) {
                if (g != nullptr && device_block(g) == block) {
                    fail(ACL_SUCCESS, "ACL-UNSYNCED",
                         "%s accesses device memory %p that %s, queued on a stream and not yet synchronised, also uses: "
                         "aclrtMemcpy / aclrtFree do not wait for queued work, so on an NPU this races with it; call "
                         "aclrtSynchronizeStream first",
                         api, p, t.what.c_str());
                    return true;
                }
            }
        }
        return false;
    };
    if (check(rt().defaultStream)) return;
    for (Stream* st : rt().streams)
        if (check(*st)) return;
}

// Checks one side of a copy: device memory must hold the whole range, host memory must not be device memory.
aclError check_side(const char* api, const char* side, const void* p, size_t count, bool device) {
    if (p == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "%s: %s pointer is null", api, side);
    size_t avail = 0;
    const bool inDevice = device_block(p, &avail) != 0;
    if (device && !inDevice) {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "ACL-MEMCPY",
                    "%s: %s %p is not device memory (aclrtMalloc), but the copy kind needs device memory there", api, side, p);
    }
    if (!device && inDevice) {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "ACL-MEMCPY",
                    "%s: %s %p is device memory, but the copy kind needs host memory there", api, side, p);
    }
    if (device && count > avail) {
        return fail(ACL_ERROR_RT_PARAM_INVALID, "ACL-MEMCPY",
                    "%s: %zu bytes at %s %p overrun its device allocation (%zu bytes left)", api, count, side, p, avail);
    }
    return ACL_SUCCESS;
}

aclError check_copy(const char* api, void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    if (count > destMax) {
        return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "%s: count %zu exceeds destMax %zu", api, count, destMax);
    }
    bool dstDev, srcDev;
    switch (kind) {
        case ACL_MEMCPY_HOST_TO_HOST: dstDev = false; srcDev = false; break;
        case ACL_MEMCPY_HOST_TO_DEVICE:
        case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: dstDev = true; srcDev = false; break;
        case ACL_MEMCPY_DEVICE_TO_HOST: dstDev = false; srcDev = true; break;
        case ACL_MEMCPY_DEVICE_TO_DEVICE:
        case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
        case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: dstDev = true; srcDev = true; break;
        case ACL_MEMCPY_DEFAULT: dstDev = is_device(dst); srcDev = is_device(src); break;
        default: return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "%s: unknown aclrtMemcpyKind %d", api, int(kind));
    }
    if (count == 0) return ACL_SUCCESS;
    if (aclError e = check_side(api, "destination", dst, count, dstDev)) return e;
    return check_side(api, "source", src, count, srcDev);
}

aclError run_task(Task& t) {
    if (t.kernel != nullptr) {
        const int errors = t.kernel->Run();
        delete t.kernel;
        t.kernel = nullptr;
        if (errors != 0) {
            rt().lastError = t.what + ": the emulator reported " + std::to_string(errors) + " fault(s) (error[...] lines above)";
            return ACL_ERROR_RT_AICORE_EXCEPTION;
        }
        return ACL_SUCCESS;
    }
    if (t.count != 0) std::memcpy(t.dst, t.src, t.count);
    return ACL_SUCCESS;
}

aclError drain(Stream& st) {
    aclError first = ACL_SUCCESS;
    while (!st.pending.empty()) {
        Task t = std::move(st.pending.front());
        st.pending.pop_front();
        const aclError e = run_task(t);
        if (first == ACL_SUCCESS) first = e;
    }
    return first;
}

aclError drain_all() {
    aclError first = drain(rt().defaultStream);
    for (Stream* st : rt().streams) {
        const aclError e = drain(*st);
        if (first == ACL_SUCCESS) first = e;
    }
    return first;
}

}  // namespace

namespace AscendC::sim::acl {

aclError EnqueueKernel(aclrtStream stream, const char* name, uint32_t blockDim, const void* const* gm, size_t numGm,
                       KernelTask* task) {
    if (aclError e = need_device(name)) {
        delete task;
        return e;
    }
    Stream* st = stream_of(stream);
    if (st == nullptr) {
        delete task;
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "ACL-LAUNCH", "%s: launched on stream %p, which is not a live stream "
                    "(aclrtCreateStream)", name, stream);
    }
    Task t;
    t.what = std::string(name) + "<<<" + std::to_string(blockDim) + ">>>";
    for (size_t i = 0; i < numGm; ++i) {
        if (gm[i] == nullptr) continue;
        if (!is_device(gm[i])) {
            delete task;
            return fail(ACL_ERROR_RT_PARAM_INVALID, "ACL-LAUNCH",
                        "%s: argument %zu (%p) is not device memory (aclrtMalloc); a kernel can only address device memory",
                        name, i + 1, gm[i]);
        }
        t.gm.push_back(gm[i]);
    }
    t.kernel = task;
    st->pending.push_back(std::move(t));
    return ACL_SUCCESS;
}

}  // namespace AscendC::sim::acl

extern "C" {

aclError aclInit(const char*) {
    Runtime& r = rt();
    if (r.initialized && !r.finalized) return fail(ACL_ERROR_REPEAT_INITIALIZE, "ACL-STATE", "aclInit called twice");
    r.initialized = true;
    r.finalized = false;
    return ACL_SUCCESS;
}

aclError aclFinalize(void) {
    Runtime& r = rt();
    if (!r.initialized) return fail(ACL_ERROR_UNINITIALIZE, "ACL-STATE", "aclFinalize called before aclInit");
    if (r.finalized) return fail(ACL_ERROR_REPEAT_FINALIZE, "ACL-STATE", "aclFinalize called twice");
    drain_all();
    r.finalized = true;
    r.deviceSet = false;
    return ACL_SUCCESS;
}

const char* aclGetRecentErrMsg(void) { return rt().lastError.empty() ? nullptr : rt().lastError.c_str(); }

aclError aclrtSetDevice(int32_t deviceId) {
    Runtime& r = rt();
    if (!r.initialized || r.finalized) return fail(ACL_ERROR_UNINITIALIZE, "ACL-STATE", "aclrtSetDevice called before aclInit");
    if (deviceId != 0) {
        return fail(ACL_ERROR_RT_INVALID_DEVICEID, "ACL-PARAM", "aclrtSetDevice(%d): the emulator has one device, id 0", deviceId);
    }
    r.deviceSet = true;
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
    if (deviceId != 0) {
        return fail(ACL_ERROR_RT_INVALID_DEVICEID, "ACL-PARAM", "aclrtResetDevice(%d): the emulator has one device, id 0", deviceId);
    }
    if (aclError e = need_device("aclrtResetDevice")) return e;
    drain_all();
    rt().deviceSet = false;
    return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t* deviceId) {
    if (deviceId == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclrtGetDevice: deviceId is null");
    if (aclError e = need_device("aclrtGetDevice")) return e;
    *deviceId = 0;
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
    if (count == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclrtGetDeviceCount: count is null");
    *count = 1;
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t* value) {
    if (value == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclrtGetDeviceInfo: value is null");
    if (deviceId != 0) {
        return fail(ACL_ERROR_RT_INVALID_DEVICEID, "ACL-PARAM", "aclrtGetDeviceInfo(%u): the emulator has one device, id 0", deviceId);
    }
    switch (attr) {
        case ACL_DEV_ATTR_VECTOR_CORE_NUM: *value = ASCEND_SIM_AIV_NUM; return ACL_SUCCESS;
        case ACL_DEV_ATTR_AICORE_CORE_NUM:
        case ACL_DEV_ATTR_CUBE_CORE_NUM: *value = ASCEND_SIM_AIC_NUM; return ACL_SUCCESS;
        default:
            return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclrtGetDeviceInfo: attribute %d is not emulated", int(attr));
    }
}

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t* value) {
    switch (deviceInfo) {
        case ACL_DEVICE_INFO_AI_CORE_NUM: return aclrtGetDeviceInfo(deviceId, ACL_DEV_ATTR_AICORE_CORE_NUM, value);
        case ACL_DEVICE_INFO_VECTOR_CORE_NUM: return aclrtGetDeviceInfo(deviceId, ACL_DEV_ATTR_VECTOR_CORE_NUM, value);
        default:
            return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclGetDeviceCapability: item %d is not emulated", int(deviceInfo));
    }
}

aclError aclrtSynchronizeDevice(void) {
    if (aclError e = need_device("aclrtSynchronizeDevice")) return e;
    return drain_all();
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy) {
    if (aclError e = need_device("aclrtMalloc")) return e;
    if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclrtMalloc: devPtr is null");
    if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclrtMalloc: size must not be 0 (aclrtMalloc.md)");
    uint8_t* p = AscendC::sim::GmAlloc(size);
    if (p == nullptr) return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "ACL-PARAM", "aclrtMalloc(%zu): out of host memory", size);
    rt().device[reinterpret_cast<uintptr_t>(p)] = size;
    *devPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr) {
    if (aclError e = need_device("aclrtFree")) return e;
    auto& m = rt().device;
    auto it = m.find(reinterpret_cast<uintptr_t>(devPtr));
    if (devPtr == nullptr || it == m.end()) {
        return fail(ACL_ERROR_RT_MEMORY_FREE, "ACL-FREE", "aclrtFree(%p): not the start of a live aclrtMalloc allocation "
                    "(double free, host pointer or offset pointer)", devPtr);
    }
    check_unsynced("aclrtFree", devPtr);
    m.erase(it);
    AscendC::sim::GmFree(devPtr);
    return ACL_SUCCESS;
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
    if (aclError e = need_device("aclrtMallocHost")) return e;
    if (hostPtr == nullptr || size == 0) {
        return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclrtMallocHost: null hostPtr or size 0");
    }
    void* p = std::malloc(size);
    if (p == nullptr) return fail(ACL_ERROR_BAD_ALLOC, "ACL-PARAM", "aclrtMallocHost(%zu): out of host memory", size);
    rt().host[reinterpret_cast<uintptr_t>(p)] = size;
    *hostPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFreeHost(void* hostPtr) {
    auto& m = rt().host;
    auto it = m.find(reinterpret_cast<uintptr_t>(hostPtr));
    if (hostPtr == nullptr || it == m.end()) {
        return fail(ACL_ERROR_INVALID_PARAM, "ACL-FREE", "aclrtFreeHost(%p): not a live aclrtMallocHost allocation", hostPtr);
    }
    m.erase(it);
    std::free(hostPtr);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    if (aclError e = need_device("aclrtMemcpy")) return e;
    if (aclError e = check_copy("aclrtMemcpy", dst, destMax, src, count, kind)) return e;
    if (count == 0) return ACL_SUCCESS;
    check_unsynced("aclrtMemcpy", dst);
    check_unsynced("aclrtMemcpy", src);
    std::memmove(dst, src, count);
    return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind, aclrtStream stream) {
    if (aclError e = need_device("aclrtMemcpyAsync")) return e;
    if (aclError e = check_copy("aclrtMemcpyAsync", dst, destMax, src, count, kind)) return e;
    Stream* st = stream_of(stream);
    if (st == nullptr) {
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "ACL-PARAM", "aclrtMemcpyAsync: stream %p is not a live stream", stream);
    }
    Task t;
    t.what = "aclrtMemcpyAsync";
    t.dst = dst;
    t.src = src;
    t.count = count;
    if (is_device(dst)) t.gm.push_back(dst);
    if (is_device(src)) t.gm.push_back(src);
    st->pending.push_back(std::move(t));
    return ACL_SUCCESS;
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
    if (aclError e = need_device("aclrtMemset")) return e;
    if (count > maxCount) {
        return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclrtMemset: count %zu exceeds maxCount %zu", count, maxCount);
    }
    if (count == 0) return ACL_SUCCESS;
    if (aclError e = check_side("aclrtMemset", "destination", devPtr, count, true)) return e;
    check_unsynced("aclrtMemset", devPtr);
    std::memset(devPtr, value, count);
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
    if (aclError e = need_device("aclrtCreateStream")) return e;
    if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "ACL-PARAM", "aclrtCreateStream: stream is null");
    Stream* st = new Stream;
    rt().streams.insert(st);
    *stream = st;
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream) {
    Stream* st = stream == nullptr ? nullptr : stream_of(stream);
    if (st == nullptr) return fail(ACL_ERROR_RT_INVALID_HANDLE, "ACL-PARAM", "aclrtDestroyStream(%p): not a live stream", stream);
    if (!st->pending.empty()) {
        fail(ACL_SUCCESS, "ACL-UNSYNCED", "aclrtDestroyStream: %zu task(s) still queued (first: %s); synchronise the stream "
             "(aclrtSynchronizeStream) before destroying it", st->pending.size(), st->pending.front().what.c_str());
        drain(*st);
    }
    rt().streams.erase(st);
    delete st;
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
    if (aclError e = need_device("aclrtSynchronizeStream")) return e;
    Stream* st = stream_of(stream);
    if (st == nullptr) {
        return fail(ACL_ERROR_RT_INVALID_HANDLE, "ACL-PARAM", "aclrtSynchronizeStream(%p): not a live stream", stream);
    }
    return drain(*st);
}

}  // extern "C"
