package model

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// copyJob is one tensor to fill: dst (in the huge-page block) receives the
// len(dst) bytes at file offset off.
type copyJob struct {
	name string
	dst  []byte
	off  int64
}

// copyChunk is the most bytes one read moves: large enough that each read
// is one long sequential request to the disk, small enough that every
// worker has several and the last tensor does not leave one worker alone.
const copyChunk = 4 << 20

// copyWorkers is how many reads run at once. Reads of a cold file wait on
// the disk rather than the CPU, so more run than there are CPUs: the disk
// queue stays full while the CPUs copy from the page cache.
func copyWorkers() int {
	return max(4, 2*runtime.NumCPU())
}

// readSpan is the part [lo, hi) of job j that one read fills.
type readSpan struct {
	j      int
	lo, hi int
}

// chunkJobs splits jobs into spans of at most chunk bytes, in file order
// (so that concurrent reads move through the file together, as the kernel's
// read-ahead expects).
func chunkJobs(jobs []copyJob, chunk int) []readSpan {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return jobs[order[a]].off < jobs[order[b]].off })
	var spans []readSpan
	for _, j := range order {
		n := len(jobs[j].dst)
		for lo := 0; lo < n; lo += chunk {
			spans = append(spans, readSpan{j, lo, min(lo+chunk, n)})
		}
	}
	return spans
}

// readJobs fills every job from r with workers concurrent reads of at most
// chunk bytes each. path names the file in errors. The first failure stops
// the others and is returned, naming the file and the tensor; a job is then
// only partly filled, and the caller must not use any of them.
func readJobs(r io.ReaderAt, path string, jobs []copyJob, chunk, workers int) error {
	spans := chunkJobs(jobs, chunk)
	var next atomic.Int64
	var failed atomic.Bool
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range min(workers, len(spans)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(spans) {
					return
				}
				s := spans[i]
				j := &jobs[s.j]
				if err := readFull(r, j.dst[s.lo:s.hi], j.off+int64(s.lo)); err != nil {
					once.Do(func() {
						first = fmt.Errorf("%s: tensor %s (%d bytes at file offset %d): %w", path, j.name, len(j.dst), j.off, err)
					})
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// errShortRead is a read that ended before the tensor did: the file is
// shorter than its header says (truncated or being rewritten).
var errShortRead = errors.New("file ends before the tensor does (truncated?)")

// readFull reads len(b) bytes at off, as io.ReadFull does for a stream: a
// reader may return fewer bytes than asked without an error, and is asked
// again for the rest.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := r.ReadAt(b, off)
		b, off = b[n:], off+int64(n)
		switch {
		case len(b) == 0:
			return nil
		case err == io.EOF || (err == nil && n == 0):
			return fmt.Errorf("%w: %d bytes missing at offset %d", errShortRead, len(b), off)
		case err != nil:
			return err
		}
	}
	return nil
}
