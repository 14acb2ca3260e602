//go:build !linux

package model

// threadCPU is not measured here (0: the benchmarks report wall time only).
func threadCPU() int64 { return 0 }
