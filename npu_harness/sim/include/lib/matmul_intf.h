// lib/matmul_intf.h - emulator stand-in for the real header of the Matmul high-level API (ref §3).
#pragma once
#ifndef ASCEND_SIM_LIB_MATMUL_INTF_H
#define ASCEND_SIM_LIB_MATMUL_INTF_H

#include "kernel_operator.h"
#include "ascend_sim/matmul.h"

#endif  // ASCEND_SIM_LIB_MATMUL_INTF_H
