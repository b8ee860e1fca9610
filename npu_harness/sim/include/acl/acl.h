// acl/acl.h - entry header of the emulated ACL runtime subset (see acl_rt.h, docs/npu.md).
#pragma once

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

// aclInit.md / aclFinalize.md / aclGetRecentErrMsg.md
aclError aclInit(const char* configPath);
aclError aclFinalize(void);
const char* aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif
