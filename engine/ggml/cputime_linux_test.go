package ggml

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time of the calling OS thread in nanoseconds.
func threadCPU() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// cpuTimed runs the benchmark loop on a locked thread and reports (and
// returns) its CPU time per op in ns: on a shared, loaded machine wall time
// counts the neighbours' slices too, CPU time mostly does not.
func cpuTimed(b *testing.B, body func()) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	t0 := threadCPU()
	for i := 0; i < b.N; i++ {
		body()
	}
	ns := float64(threadCPU()-t0) / float64(b.N)
	b.ReportMetric(ns, "cpu-ns/op")
	return ns
}
