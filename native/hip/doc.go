// Package hip binds the AMD ROCm HIP runtime (libamdhip64.so) at run time
// with purego, so the program builds with CGO_ENABLED=0 and still runs on
// machines without AMD hardware: a missing library is a clean error that
// wraps ErrNoGPU, never a panic or a failed start.
//
// The raw bindings keep the C names (raw.go); the Go-shaped API is Probe and
// MemInfo. Only entry points whose signatures and enums are the same in
// ROCm 5 and 6 are bound: device attributes were renumbered in ROCm 6 and
// hipDeviceProp_t changed layout, so neither is used here.
package hip
