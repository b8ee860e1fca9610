// acl/ascend_sim_queue.h - the emulated ACL runtime's kernel queue (emulator builds only): what a launch
// (acl/ascend_sim_launch.h) hands to the runtime (npu_harness/sim/acl/acl_runtime.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "acl_base.h"

namespace AscendC::sim::acl {

// A queued kernel launch; Run() executes it in the emulator and returns the number of faults reported.
struct KernelTask {
    virtual ~KernelTask() = default;
    virtual int Run() = 0;
};

// Queues `task` (ownership passes to the runtime) on `stream` (nullptr: the default stream). `gm` lists
// the launch's pointer arguments (nullptr entries are ignored); each must lie in live device memory.
aclError EnqueueKernel(aclrtStream stream, const char* name, uint32_t blockDim, const void* const* gm, size_t numGm,
                       KernelTask* task);

}  // namespace AscendC::sim::acl
