// Package hip binds AMD's ROCm HIP runtime (libamdhip64.so) and its runtime
// compiler hipRTC at run time with purego, so the program builds with
// CGO_ENABLED=0 and still runs on machines without AMD hardware: a missing
// library is a clean error that wraps ErrNoGPU (or ErrNoHIPRTC), never a
// panic or a failed start.
//
// It mirrors native/cuda: raw bindings with the C names (raw.go), Go-shaped
// wrappers apart (Probe, MemInfo, Open and Context for memory, copies,
// streams, events, modules and launches; LoadHIPRTC and Compile for code
// objects; Cache). The kernels are native/cuda's sources compiled through
// their portability header's HIP branch (KernelSources).
//
// Only entry points whose signatures are the same in ROCm 5 and 6 are
// bound. hipDeviceProp_t changed layout in ROCm 6, so only gcnArchName is
// read from it, by content rather than by offset; attribute enums are
// ROCm 5's positions and every value read is range-checked.
package hip
