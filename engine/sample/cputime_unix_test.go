//go:build unix

package sample

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used (user + system): on a
// shared machine a benchmark's wall time mostly measures the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
