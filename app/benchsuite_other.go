//go:build !linux

package main

import (
	"errors"
	"time"
)

// Elsewhere the suite runs without a bandwidth figure, quiet wait, RSS or
// page-cache eviction.
func measureBandwidth(threads []int) map[int]float64      { return nil }
func waitQuiet(limit time.Duration) (time.Duration, bool) { return 0, false }
func resetPeakRSS()                                       {}
func peakRSSBytes() int64                                 { return 0 }
func dropFileCache(path string)                           {}

// readProbe needs Linux's huge-page mapping here.
type readProbe struct{}

func newReadProbe() (*readProbe, error) {
	return nil, errors.New("the read probe runs on Linux only")
}
func (pr *readProbe) Round(th int) float64 { return 0 }
func (pr *readProbe) Close() error         { return nil }
