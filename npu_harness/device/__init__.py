"""Running emitted projects the way a host program does: through the ACL runtime, on a real NPU (CANN +
torch_npu) or on the emulator's ACL layer (npu_harness/sim/acl), plus the NPU harness (docs/npu.md)."""
