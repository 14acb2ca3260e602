package model

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"flowchat/engine/ggml"
)

// copyJob is one tensor to fill: dst (in the huge-page block) receives the
// len(dst) bytes at file offset off; with layout set, in the interleaved
// layout of a matrix of type t and rows of n values (ggml.InterleaveRowsTo)
// instead of as they lie in the file.
type copyJob struct {
	name   string
	dst    []byte
	off    int64
	layout bool
	t      ggml.Type
	n      int
}

// layoutChunk is the most bytes one read moves for a job with a layout,
// rounded down to whole groups of rows (at least one): each such read goes
// into its worker's buffer and from there into place, so the buffers stay
// small (copyWorkers of them, freed after the load).
const layoutChunk = 256 << 10

// step is the bytes of one read of j: copyChunk, or for a job with a layout
// whole groups of its rows, so that every read starts on a group.
func (j *copyJob) step(chunk int) int {
	if !j.layout {
		return chunk
	}
	g := ggml.InterleaveGroup(j.t) * j.t.RowSize(j.n)
	return max(1, min(chunk, layoutChunk)/g) * g
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
		n, step := len(jobs[j].dst), jobs[j].step(chunk)
		for lo := 0; lo < n; lo += step {
			spans = append(spans, readSpan{j, lo, min(lo+step, n)})
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
	bufSize := 0 // the largest read of a job with a layout
	for _, s := range spans {
		if jobs[s.j].layout {
			bufSize = max(bufSize, s.hi-s.lo)
		}
	}
	var next atomic.Int64
	var failed atomic.Bool
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range min(workers, len(spans)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // a job with a layout reads here first
			if bufSize > 0 {
				buf = make([]byte, bufSize)
			}
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(spans) {
					return
				}
				s := spans[i]
				j := &jobs[s.j]
				to := j.dst[s.lo:s.hi]
				if j.layout {
					to = buf[:len(to)]
				}
				err := readFull(r, to, j.off+int64(s.lo))
				if err == nil && j.layout {
					ggml.InterleaveRowsTo(j.t, j.n, j.dst[s.lo:s.hi], to, len(to)/j.t.RowSize(j.n))
				}
				if err != nil {
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

// directReader reads a file for the huge-page copy, bypassing the page
// cache (O_DIRECT) for the parts of it that are not cached. A cold load
// through the page cache fills it with a second copy of the weights: as
// many fresh pages again as the block itself, each zeroed and, on a VM,
// often faulted in by the host (docs/PERFORMANCE.md, issue 18: seconds
// for a 1 GiB file). A direct read moves the disk's bytes into a small
// reused buffer, then copies them out: the same one copy as a read through
// the cache, without the cache's pages. Parts already cached are read
// through the cache, which is faster than the disk.
//
// A direct read needs its file offset, length and memory aligned to align
// (the file system's direct-I/O alignment, a power of two at most a page),
// which tensors in a GGUF file (32-byte aligned) and in the block (64) are
// not: hence the buffer, read at aligned offsets around what is wanted.
type directReader struct {
	buffered, direct io.ReaderAt
	align            int64
	// cached reports whether most of the n bytes at file offset off are
	// in the page cache.
	cached func(off int64, n int) bool
	// bufs holds the idle buffers, each bounceSize bytes aligned to a page:
	// one per concurrent read at most, made when first needed.
	bufs chan []byte
}

// bounceSize is the size of one direct read: a whole number of pages, large
// enough for the disk to stream.
const bounceSize = 1 << 20

func newDirectReader(buffered, direct io.ReaderAt, align int64, cached func(int64, int) bool, workers int) *directReader {
	return &directReader{buffered: buffered, direct: direct, align: align, cached: cached, bufs: make(chan []byte, workers)}
}

func (d *directReader) ReadAt(b []byte, off int64) (int, error) {
	if len(b) == 0 || d.cached(off, len(b)) {
		return d.buffered.ReadAt(b, off)
	}
	buf := d.buffer()
	defer d.recycle(buf)
	done := 0
	for done < len(b) {
		p := off + int64(done)
		a0 := p &^ (d.align - 1) // buf[0] holds the byte at file offset a0
		want := min(int64(len(b)-done), int64(len(buf))-(p-a0))
		a1 := (p + want + d.align - 1) &^ (d.align - 1)
		n, err := d.direct.ReadAt(buf[:a1-a0], a0)
		if got := min(int64(n)-(p-a0), want); got > 0 {
			done += copy(b[done:done+int(got)], buf[p-a0:])
		}
		if err != nil || int64(n) < a1-a0 {
			break // refused, failed or at the end: the buffered read says which
		}
	}
	n, err := d.buffered.ReadAt(b[done:], off+int64(done))
	return done + n, err
}

// buffer returns an idle buffer, or a new one.
func (d *directReader) buffer() []byte {
	select {
	case b := <-d.bufs:
		return b
	default:
	}
	const page = 4096
	b := make([]byte, bounceSize+page)
	skip := (page - int(uintptr(unsafe.Pointer(&b[0]))%page)) % page
	return b[skip : skip+bounceSize : skip+bounceSize]
}

func (d *directReader) recycle(b []byte) {
	select {
	case d.bufs <- b:
	default:
	}
}
