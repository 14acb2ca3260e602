package model

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time of the calling OS thread in nanoseconds.
func threadCPU() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
