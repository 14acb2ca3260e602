// Package cuda binds the NVIDIA CUDA driver API (libcuda.so.1) at run time
// with purego, so the program builds with CGO_ENABLED=0 and still runs on
// machines without NVIDIA hardware: a missing library is a clean error that
// wraps ErrNoGPU, never a panic or a failed start.
//
// The raw bindings keep the C names (raw.go); the Go-shaped API is Probe and
// MemInfo. CUDA contexts are per OS thread, so anything that makes a context
// current locks its goroutine to its thread for the duration.
package cuda
