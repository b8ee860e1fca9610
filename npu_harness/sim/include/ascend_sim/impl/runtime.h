// ascend_sim/impl/runtime.h - the emulator's non-template runtime (definitions of every ASCEND_SIM_RT
// function). Included by kernel_operator.h in header-only builds, and compiled once per flag set into
// a prebuilt object by npu_harness/sim/runtime.cpp otherwise.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_RUNTIME_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_RUNTIME_H

#include "core_rt.h"
#include "tensor_rt.h"
#include "race_rt.h"
#include "pipe_rt.h"
#include "reuse_rt.h"
#include "panel_reuse_rt.h"
#include "copy_rt.h"
#include "vec_rt.h"
#include "gemm_rt.h"
#include "launch_rt.h"
#include "crosstime_rt.h"
#include "crossflag_rt.h"

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_RUNTIME_H
