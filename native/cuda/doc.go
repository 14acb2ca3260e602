// Package cuda binds the NVIDIA CUDA driver API (libcuda.so.1) and NVRTC
// (libnvrtc) at run time with purego, so the program builds with
// CGO_ENABLED=0 and still runs on machines without NVIDIA hardware: a
// missing library is a clean error that wraps ErrNoGPU or ErrNoNVRTC,
// never a panic or a failed start.
//
// The raw bindings keep the C names (raw.go); the Go-shaped API is Probe,
// MemInfo, Open/Context (memory, streams, events, modules, launches),
// NVRTC (compilation) and Cache (compiled kernels on disk). The kernels
// are CUDA C in kernels/ (embedded), each with a plain-Go twin (twin.go)
// that fixes its arithmetic; Kernels launches them. CUDA contexts are per
// OS thread, so Context.Do locks its goroutine to its thread while the
// context is current.
package cuda
