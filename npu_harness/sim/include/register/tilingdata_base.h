// register/tilingdata_base.h - emulator stand-in for the op project's host-side tiling-data macros
// (ref §2; ref_next §6.1). BEGIN_TILING_DATA_DEF(Name) ... END_TILING_DATA_DEF defines a plain struct
// with the fields in declaration order at their natural alignment (the padded layout the framework
// produces), set_<f>() / get_<f>() accessors, GetDataSize() and SaveToBuffer(); the kernel reads the same
// struct with GET_TILING_DATA. Written from the cited reference; no CANN code is used.
#pragma once
#ifndef ASCEND_SIM_REGISTER_TILINGDATA_BASE_H
#define ASCEND_SIM_REGISTER_TILINGDATA_BASE_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernel_tiling/kernel_tiling.h"

#define BEGIN_TILING_DATA_DEF(Name)                                                              \
    struct Name {                                                                                \
        using AscendSimTilingSelf = Name;                                                        \
        size_t GetDataSize() const { return sizeof(Name); }                                      \
        void SaveToBuffer(void* buf, size_t cap) const {                                         \
            std::memcpy(buf, this, sizeof(Name) < cap ? sizeof(Name) : cap);                     \
        }

#define TILING_DATA_FIELD_DEF(type, name)                    \
    type name{};                                             \
    void set_##name(type v) { name = v; }                    \
    type get_##name() const { return name; }

#define TILING_DATA_FIELD_DEF_ARR(type, n, name)                                         \
    type name[n]{};                                                                      \
    void set_##name(const type* p) { std::memcpy(name, p, sizeof(type) * (n)); }         \
    const type* get_##name() const { return name; }

#define TILING_DATA_FIELD_DEF_STRUCT(Struct, name) \
    Struct name{};

#define END_TILING_DATA_DEF }

// Binds the default struct of an operator (and, with OpType_<key>, a struct per tiling key). The emulator
// takes the struct's name from the launch file (ASCEND_SIM_TILING_TYPE), so this only declares a name.
#define REGISTER_TILING_DATA_CLASS(OpType, Name) using AscendSimTilingClass_##OpType = Name;

// The host-side TCubeTiling (a BEGIN_TILING_DATA_DEF class in CANN) is the kernel-side struct here.
namespace optiling {
using TCubeTiling = ::AscendC::tiling::TCubeTiling;
}

#endif  // ASCEND_SIM_REGISTER_TILINGDATA_BASE_H
