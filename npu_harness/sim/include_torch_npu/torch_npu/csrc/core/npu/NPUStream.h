// Emulator stand-in for torch_npu's torch_npu/csrc/core/npu/NPUStream.h, for syntax-checking exported
// torch bindings without torch_npu (tests/device/test_exports.py): c10_npu::getCurrentNPUStream() and
// NPUStream::stream(bool), which returns an ACL stream of the emulated runtime (nullptr: its default
// stream). Signatures as documented for torch_npu's class c10_npu::NPUStream; nothing else is provided.
#pragma once

#include <cstdint>
#include "acl/acl.h"

namespace c10_npu {

class NPUStream {
public:
    aclrtStream stream(bool needEmpty = true) const
    {
        (void)needEmpty;
        return stream_;
    }

private:
    aclrtStream stream_ = nullptr;
};

inline NPUStream getCurrentNPUStream(int64_t deviceIndex = -1)
{
    (void)deviceIndex;
    return NPUStream{};
}

}  // namespace c10_npu
