// acl/ascend_sim_launch.h - the kernel-launch entry of the emulated ACL runtime (emulator builds only).
//
// On CANN a host program launches a kernel with `ACLRT_LAUNCH_KERNEL(k)(blockDim, stream, args...)`
// (the `aclrtlaunch_<k>.h` stub the build generates) or with `k<<<blockDim, l2ctrl, stream>>>(args...)`
// (ascendc.md §1.6, §7 Path B). An emulator build replaces both with this header:
//   - the emitted `emulator/aclrtlaunch_<k>.h/.cpp` (codegen_templates/aclrtlaunch_stub.*.jinja) call
//     `Kernel(k, "k", mode, blockDim, stream)(args...)`;
//   - npu_harness/device/chevron.py rewrites `k<<<b, l2, s>>>(args)` to `Chevron(k, "k", mode, b, l2, s)(args)`.
// Either way the launch is queued on the stream (EnqueueKernel, acl_runtime.cpp) and runs in the
// emulator (AscendC::sim::Launch) when the stream is synchronised, as an NPU runs it asynchronously.
// Pointer arguments must be device memory (aclrtMalloc); the runtime checks that at launch.
//
// Only <tuple> / <utility> are included besides the emulator: no <functional> (kernels may be named
// like C library functions, see docs/emulator.md "Name hygiene").
#pragma once

#include <tuple>
#include <utility>

#include "acl.h"
#include "ascend_sim_queue.h"
#include "kernel_operator.h"

namespace AscendC::sim::acl {

namespace detail {

template <class P, class A>
inline P convert_arg(A&& a) {
    using D = std::decay_t<A>;
    if constexpr (std::is_pointer_v<P> && std::is_pointer_v<D>) {
        return reinterpret_cast<P>(const_cast<void*>(static_cast<const void*>(a)));
    } else if constexpr (std::is_pointer_v<P> && std::is_same_v<D, std::nullptr_t>) {
        return nullptr;
    } else {
        return static_cast<P>(std::forward<A>(a));
    }
}

template <class A>
inline const void* gm_arg(const A& a) {
    if constexpr (std::is_pointer_v<std::decay_t<A>>) {
        return static_cast<const void*>(a);
    } else {
        return nullptr;
    }
}

template <class... P>
struct Task final : KernelTask {
    void (*fn)(P...);
    KernelMode mode;
    uint32_t blockDim;
    std::tuple<P...> args;
    Task(void (*f)(P...), KernelMode m, uint32_t b, std::tuple<P...>&& a) : fn(f), mode(m), blockDim(b), args(std::move(a)) {}
    int Run() override {
        SetKernelMode(mode);
        const int errors = Launch(blockDim, [this] { std::apply(fn, args); });
        SetKernelMode(KernelMode::AIV_MODE);
        return errors;
    }
};

}  // namespace detail

// A launch of kernel `fn` bound to its configuration; calling it with the kernel's arguments queues it.
template <class... P>
class KernelCall {
public:
    KernelCall(void (*fn)(P...), const char* name, KernelMode mode, uint32_t blockDim, aclrtStream stream)
        : fn_(fn), name_(name), mode_(mode), blockDim_(blockDim), stream_(stream) {}

    template <class... A>
    aclError operator()(A&&... a) const {
        static_assert(sizeof...(A) == sizeof...(P), "kernel launch: the argument count differs from the kernel's parameters");
        const void* gm[sizeof...(A) + 1] = {detail::gm_arg(a)..., nullptr};
        auto* task = new detail::Task<P...>(fn_, mode_, blockDim_, std::tuple<P...>(detail::convert_arg<P>(std::forward<A>(a))...));
        return EnqueueKernel(stream_, name_, blockDim_, gm, sizeof...(A), task);
    }

private:
    void (*fn_)(P...);
    const char* name_;
    KernelMode mode_;
    uint32_t blockDim_;
    aclrtStream stream_;
};

// `ACLRT_LAUNCH_KERNEL(k)(blockDim, stream, args...)` of an emulator build (emulator/aclrtlaunch_<k>.cpp).
template <class... P>
inline KernelCall<P...> Kernel(void (*fn)(P...), const char* name, KernelMode mode, uint32_t blockDim, aclrtStream stream) {
    return KernelCall<P...>(fn, name, mode, blockDim, stream);
}

// `k<<<blockDim, l2ctrl, stream>>>(args...)` of an emulator build (chevron.py). The second launch
// parameter (l2ctrl on CANN 8, dynamic UB size on CANN 9) has no effect here.
template <class L2, class... P>
inline KernelCall<P...> Chevron(void (*fn)(P...), const char* name, KernelMode mode, uint32_t blockDim, L2&&, aclrtStream stream) {
    return KernelCall<P...>(fn, name, mode, blockDim, stream);
}

}  // namespace AscendC::sim::acl
