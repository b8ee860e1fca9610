// ascend_sim/impl/tensor_rt.h - runtime definitions of tensor.h (operand and GM bound checks).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_TENSOR_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_TENSOR_RT_H

namespace AscendC::sim::detail {

ASCEND_SIM_RT void fatal_dead(const char* api, const char* name, const LView& v, const std::source_location& loc) {
    const char* ffile = base_name(v.st->freeLoc.file_name());
    const unsigned fline = v.st->freeLoc.line();
    if (v.st->status == BufStatus::Free) {
        fatal("USE-AFTER-FREE", loc, "%s: %s uses a queue buffer (UB offset %u) that was released by FreeTensor at %s:%u", api, name,
              v.st->offset, ffile, fline);
    }
    fatal("USE-AFTER-FREE", loc,
          "%s: %s uses a queue buffer (UB offset %u) that was released by FreeTensor at %s:%u and has since been handed out again "
          "by AllocTensor at %s:%u",
          api, name, v.st->offset, ffile, fline, base_name(v.st->allocLoc.file_name()), v.st->allocLoc.line());
}

ASCEND_SIM_RT void check_operand_aligned(const char* api, const char* name, const LView& v, uint64_t elems, uint32_t align,
                                         const std::source_location& loc) {
    check_live(api, name, v, loc);
    const uint8_t* p = static_cast<const uint8_t*>(v.ptr);
    const uint8_t* ub = st().ub;
    if (ub == nullptr || p < ub || p >= ub + ASCEND_SIM_UB_BYTES) {
        fatal("UB-OOB", loc, "%s: %s does not point into this block's UB (a LocalTensor from another block or launch?)", api, name);
    }
    const uint32_t off = static_cast<uint32_t>(p - ub);
    if (off % align != 0) {
        if (align == kUbAlign) {
            fatal("UB-ALIGN", loc, "%s: %s starts at UB byte offset %u, which is not 32-byte aligned (UB operands need 32 B alignment)",
                  api, name, off);
        }
        fatal("UB-ALIGN", loc, "%s: %s starts at UB byte offset %u, which is not %u-byte aligned (this operand needs %u B alignment)", api,
              name, off, align, align);
    }
    if (elems > v.size) {
        fatal("UB-OOB", loc, "%s: %llu elements of %s requested but the LocalTensor holds only %u elements (%llu B)", api,
              static_cast<unsigned long long>(elems), name, v.size, static_cast<unsigned long long>(v.size) * v.esize);
    }
}

ASCEND_SIM_RT void check_dma_operand(const char* api, const char* name, const LView& v, uint64_t elems, const std::source_location& loc) {
    const State& s = st();
    const uint8_t* p = static_cast<const uint8_t*>(v.ptr);
    if (s.cubeArena && p >= s.cubeArena && p < s.cubeArena + ASCEND_SIM_L1_BYTES) {  // an L1 tensor
        check_live(api, name, v, loc);
        const uint32_t off = static_cast<uint32_t>(p - s.cubeArena);
        if (off % kUbAlign != 0) {
            fatal("UB-ALIGN", loc, "%s: %s starts at L1 byte offset %u, which is not 32-byte aligned (L1 operands need 32 B alignment)",
                  api, name, off);
        }
        if (elems > v.size) {
            fatal("UB-OOB", loc, "%s: %llu elements of %s requested but the LocalTensor holds only %u elements", api,
                  static_cast<unsigned long long>(elems), name, v.size);
        }
        return;
    }
    check_operand_aligned(api, name, v, elems, kUbAlign, loc);
}

ASCEND_SIM_RT void check_gm_raw(const char* api, const void* base, const void* ptr, uint64_t boundElems, bool bounded, uint32_t esize,
                                uint64_t byteOff, uint64_t bytes, bool write, const std::source_location& loc) {
    const char* verb = write ? "writes" : "reads";
    const uint8_t* p = static_cast<const uint8_t*>(ptr) + byteOff;
    const int64_t es = esize;
    if (bounded) {
        const int64_t rel = static_cast<int64_t>(p - static_cast<const uint8_t*>(base));
        const uint64_t boundBytes = boundElems * esize;
        if (rel < 0 || static_cast<uint64_t>(rel) + bytes > boundBytes) {
            fatal("GM-OOB", loc,
                  "%s %s GM elements [%lld, %lld) = bytes [%lld, %lld) of a GlobalTensor bound to %llu elements (%llu B) by "
                  "SetGlobalBuffer",
                  api, verb, static_cast<long long>(rel / es), static_cast<long long>((rel + int64_t(bytes) + es - 1) / es),
                  static_cast<long long>(rel), static_cast<long long>(rel + int64_t(bytes)), static_cast<unsigned long long>(boundElems),
                  static_cast<unsigned long long>(boundBytes));
        }
    }
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    uintptr_t begin = 0;
    uint64_t size = 0;
    if (!gm_floor(a, begin, size) || a - begin > size + (uint64_t(1) << 20)) {
        fatal("GM-OOB", loc, "%s %s %llu B at GM address %p, which is not inside any live sim::GmAlloc allocation (freed, or not from GmAlloc)",
              api, verb, static_cast<unsigned long long>(bytes), static_cast<const void*>(p));
    }
    const uint64_t off = a - begin;
    if (off + bytes > size) {
        fatal("GM-OOB", loc,
              "%s %s GM bytes [%llu, %llu) = elements [%llu, %llu) of a sim::GmAlloc allocation of %llu B (%llu elements); %llu B past "
              "its end",
              api, verb, static_cast<unsigned long long>(off), static_cast<unsigned long long>(off + bytes),
              static_cast<unsigned long long>(off / esize), static_cast<unsigned long long>((off + bytes + esize - 1) / esize),
              static_cast<unsigned long long>(size), static_cast<unsigned long long>(size / esize),
              static_cast<unsigned long long>(off + bytes - size));
    }
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_TENSOR_RT_H
