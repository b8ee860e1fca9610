// acl/acl_base.h - base types and return codes of the ACL runtime subset emulated by ascend-dsl
// (npu_harness/sim/acl/acl_runtime.cpp; docs/npu.md). Names, values and signatures follow the CANN
// runtime API documentation (hicann/runtime docs/api_docs: aclError.md, aclrtMemcpyKind.md,
// aclrtMemMallocPolicy.md, aclrtDevAttr.md, aclDeviceInfo.md); no CANN header is copied. A real NPU
// build uses CANN's own headers instead of these (CMakeLists.txt, RUN_MODE=npu).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
typedef void* aclrtStream;
typedef void* aclrtContext;

// aclError.md (table 1 and the runtime pass-through codes of table 2).
static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_NONE = 0;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int ACL_ERROR_RT_INVALID_HANDLE = 107017;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int ACL_ERROR_RT_MEMORY_FREE = 207002;
static const int ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004;
static const int ACL_ERROR_RT_AICORE_EXCEPTION = 507015;

#ifdef __cplusplus
}
#endif
