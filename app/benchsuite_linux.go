package main

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"flowchat/engine/ggml"
)

// measureBandwidth is the memory read bandwidth in GB/s for each thread
// count: 1 GiB in huge pages read by the F32 dot kernel and by
// ggml.ReadSum (a software prefetch ahead), each split two ways: each
// goroutine its own part, and chunks of 256 KiB claimed in turn from one
// counter, so that no thread that ran late holds up the pass (decode's
// pool balances its threads so too). The best of 5 passes of each of the
// four is the best rate decode could stream weights at. The claimed split
// was added when, at 16 threads on the AMX host, TinyLlama Q8_0
// generation read 108–112 GB/s against 104.5 and 108.2 for the fixed
// parts alone (docs/PERFORMANCE.md, issue 18, sitting 16).
func measureBandwidth(threads []int) map[int]float64 {
	pr, err := newReadProbe()
	if err != nil {
		return nil
	}
	defer pr.Close()
	out := map[int]float64{}
	for _, th := range threads {
		if th < 1 {
			continue
		}
		best := 0.0
		for pass := 0; pass < 6; pass++ { // the first pass warms up
			if gbs := pr.Round(th); pass > 0 && gbs > best {
				best = gbs
			}
		}
		out[th] = best
	}
	return out
}

// readProbe is measureBandwidth's reader: 1 GiB of anonymous memory
// advised to use huge pages, touched once, and the three readers (the F32 dot, ReadSum, ReadStreams).
type readProbe struct {
	buf     []byte
	x       []byte
	readers []func(p []byte) float32
}

// probeSize is a variable so that tests can read less.
var probeSize, probeChunk = 1 << 30, 1 << 18

func newReadProbe() (*readProbe, error) {
	buf, err := unix.Mmap(-1, 0, probeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	_ = unix.Madvise(buf, unix.MADV_HUGEPAGE)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = byte(i >> 12)
	}
	pr := &readProbe{buf: buf, x: make([]byte, probeChunk)}
	pr.readers = []func(p []byte) float32{
		func(p []byte) float32 { return ggml.VecDot(ggml.F32, probeChunk/4, p, pr.x) },
		func(p []byte) float32 { return float32(ggml.ReadSum(p)) },
		func(p []byte) float32 { return float32(ggml.ReadStreams(p)) },
	}
	return pr, nil
}

// Round reads the buffer once with each reader in each split on th
// goroutines and returns the best of the six rates, in GB/s.
func (pr *readProbe) Round(th int) float64 {
	best := 0.0
	for _, read := range pr.readers {
		for _, claimed := range []bool{false, true} {
			t0 := time.Now()
			total, sum := readPass(pr.buf, th, probeChunk, claimed, read)
			bwSink = sum
			best = max(best, float64(total)/time.Since(t0).Seconds()/1e9)
		}
	}
	return best
}

func (pr *readProbe) Close() error { return unix.Munmap(pr.buf) }

var bwSink float32 // keeps the sums observable

// readPass reads the first th·part bytes of buf once, part being buf's
// share per goroutine rounded down to whole chunks, on th goroutines: each
// its own part, or (claimed) chunks taken in turn from one counter. It
// returns the bytes read and the sum of read over the chunks.
func readPass(buf []byte, th, chunk int, claimed bool, read func([]byte) float32) (int, float32) {
	var wg sync.WaitGroup
	var next atomic.Int64
	sums := make([]float32, th)
	part := len(buf) / th &^ (chunk - 1)
	total := part * th
	for t := 0; t < th; t++ {
		wg.Add(1)
		go func(p []byte, sum *float32) {
			defer wg.Done()
			if claimed {
				for {
					off := int(next.Add(1)-1) * chunk
					if off+chunk > total {
						return
					}
					*sum += read(buf[off : off+chunk])
				}
			}
			for off := 0; off+chunk <= len(p); off += chunk {
				*sum += read(p[off : off+chunk])
			}
		}(buf[t*part:(t+1)*part], &sums[t])
	}
	wg.Wait()
	var s float32
	for _, v := range sums {
		s += v
	}
	return total, s
}

// waitQuiet waits up to limit for every CPU to have been ≥ 90% idle over a
// 3-second window; it returns how long it waited and whether that happened.
func waitQuiet(limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	for {
		a := cpuTimes()
		time.Sleep(3 * time.Second)
		b := cpuTimes()
		quiet := len(a) > 0 && len(a) == len(b)
		for i := range a {
			busy, total := b[i][0]-a[i][0], b[i][1]-a[i][1]
			if total == 0 || float64(busy)/float64(total) > 0.10 {
				quiet = false
			}
		}
		if quiet {
			return time.Since(start), true
		}
		if time.Since(start) >= limit {
			return time.Since(start), false
		}
	}
}

// cpuTimes is (busy, total) jiffies per CPU from /proc/stat.
func cpuTimes() [][2]uint64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil
	}
	var out [][2]uint64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var total, idle uint64
		for i, v := range f[1:] {
			n, _ := strconv.ParseUint(v, 10, 64)
			total += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		out = append(out, [2]uint64{total - idle, total})
	}
	return out
}

// resetPeakRSS resets the process's VmHWM (Linux ≥ 4.0), so that the next
// peakRSSBytes covers only what follows.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSBytes is VmHWM in bytes, 0 when unknown.
func peakRSSBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" && f[2] == "kB" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// dropFileCache writes path's pages to disk and evicts them from the page
// cache, so that the next reader reads the file from disk, as a model that
// was downloaded earlier is read. A file the suite has just written sits
// in the page cache as the writes left it, in 4 KiB pages scattered in
// physical memory; llama.cpp decodes from its file mapping, and on the
// EPYC VM its TinyLlama Q8_0 generation read such a file at 15–17 t/s
// against 26–28 t/s once the same file had been evicted and read back
// (2 threads, 2026-11-25: docs/PERFORMANCE.md, issue 18). Errors are
// ignored: the measurement then runs on whatever the cache holds.
func dropFileCache(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = f.Sync()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
