// lib/matmul_intf.h - emulator stand-in for the real header of the Matmul high-level API (ref §3).
#pragma once

#include "kernel_operator.h"
#include "ascend_sim/matmul.h"
