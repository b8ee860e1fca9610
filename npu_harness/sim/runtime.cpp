// The emulator's non-template runtime as one translation unit. npu_harness/sim/compiler.py compiles it
// once per flag set (defines) and links it into every kernel built with ASCEND_SIM_PREBUILT_RUNTIME.
#define ASCEND_SIM_PREBUILT_RUNTIME 1
#define ASCEND_SIM_RUNTIME_TU 1
#include "kernel_operator.h"
