//go:build !linux

package main

import "time"

// Elsewhere the suite runs without a bandwidth figure, quiet wait, RSS or
// page-cache eviction.
func measureBandwidth(threads []int) map[int]float64      { return nil }
func waitQuiet(limit time.Duration) (time.Duration, bool) { return 0, false }
func resetPeakRSS()                                       {}
func peakRSSBytes() int64                                 { return 0 }
func dropFileCache(path string)                           {}
