package model

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
	"flowchat/engine/spec"
)

// randJobs lays out n tensors of random odd sizes (1 byte to a few chunks)
// back to back in a random file, each at a 32-byte aligned offset as in
// GGUF, and gives each a destination inside one block with guard bytes
// around every tensor.
func randJobs(r *rand.Rand, n, chunk int) (file []byte, jobs []copyJob, block []byte) {
	sizes := make([]int, n)
	fileLen, blockLen := 0, 0
	for i := range sizes {
		switch r.IntN(3) {
		case 0:
			sizes[i] = 1 + r.IntN(chunk) // smaller than a chunk
		case 1:
			sizes[i] = chunk * (1 + r.IntN(3)) // a whole number of chunks
		default:
			sizes[i] = 1 + r.IntN(4*chunk) // anything, odd tails
		}
		fileLen += (sizes[i] + 31) &^ 31
		blockLen += sizes[i] + 64
	}
	file = make([]byte, fileLen+17)
	for i := range file {
		file[i] = byte(r.Uint32())
	}
	block = make([]byte, blockLen)
	for i := range block {
		block[i] = 0xA5
	}
	fo, bo := 17, 32 // header-like prefix; guard before the first tensor
	for i, n := range sizes {
		jobs = append(jobs, copyJob{name: fmt.Sprintf("t%d", i), dst: block[bo : bo+n : bo+n], off: int64(fo)})
		fo += (n + 31) &^ 31
		bo += n + 64
	}
	r.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	return file, jobs, block
}

// TestChunkJobs: the spans cover every byte of every job exactly once, none
// longer than a chunk, in file order.
func TestChunkJobs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, chunk := range []int{1, 7, 64, 4096} {
		for _, n := range []int{1, 2, 5, 300} {
			_, jobs, _ := randJobs(r, n, chunk)
			covered := make([][]int, len(jobs))
			for i := range jobs {
				covered[i] = make([]int, len(jobs[i].dst))
			}
			last := int64(-1)
			for _, s := range chunkJobs(jobs, chunk) {
				if s.hi-s.lo > chunk || s.hi <= s.lo {
					t.Fatalf("chunk %d: span %+v", chunk, s)
				}
				if at := jobs[s.j].off + int64(s.lo); at < last {
					t.Fatalf("chunk %d: span at file offset %d after one at %d", chunk, at, last)
				} else {
					last = at
				}
				for k := s.lo; k < s.hi; k++ {
					covered[s.j][k]++
				}
			}
			for i, c := range covered {
				for k, v := range c {
					if v != 1 {
						t.Fatalf("chunk %d, %d jobs: byte %d of job %d read %d times", chunk, n, k, i, v)
					}
				}
			}
		}
	}
}

// TestReadJobs: every tensor arrives bit for bit, whatever the chunk size
// and number of workers, and no byte outside the tensors is written.
func TestReadJobs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, chunk := range []int{1, 63, 4096, 1 << 20} {
		for _, workers := range []int{1, 3, 16} {
			for _, n := range []int{1, 9, 200} {
				if n == 200 && (chunk == 1 || chunk == 1<<20) {
					continue // too few bytes to matter, or too many to be quick
				}
				file, jobs, block := randJobs(r, n, chunk)
				if err := readJobs(bytes.NewReader(file), "f.gguf", jobs, chunk, workers); err != nil {
					t.Fatal(err)
				}
				checkJobs(t, file, jobs, block)
			}
		}
	}
}

// TestReadJobsLayout: a job with a layout arrives as the file's rows laid
// out by ggml.InterleaveRowsTo, whatever the chunk, the workers and a
// reader's short reads; its reads start on groups of rows, and the bytes
// around it stay untouched.
func TestReadJobsLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, tp := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
		for _, sh := range [][2]int{{64, 3}, {256, 35}, {2048, 100}} {
			n, rows := sh[0], sh[1]
			size := rows * tp.RowSize(n)
			file := make([]byte, 96+size)
			for i := range file {
				file[i] = byte(r.Uint32())
			}
			want := make([]byte, size)
			ggml.InterleaveRowsTo(tp, n, want, file[96:], rows)
			for _, chunk := range []int{1, 5000, copyChunk} {
				for _, workers := range []int{1, 3} {
					block := bytes.Repeat([]byte{0xA5}, size+128)
					jobs := []copyJob{{name: "w", dst: block[64 : 64+size : 64+size], off: 96, layout: true, t: tp, n: n}}
					g := ggml.InterleaveGroup(tp) * tp.RowSize(n)
					for _, sp := range chunkJobs(jobs, chunk) {
						if sp.lo%g != 0 {
							t.Fatalf("%v %dx%d chunk %d: a read starts at byte %d, inside a group of %d", tp, rows, n, chunk, sp.lo, g)
						}
					}
					if err := readJobs(failingReader{data: file, max: 777}, "f.gguf", jobs, chunk, workers); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(jobs[0].dst, want) {
						t.Fatalf("%v %dx%d chunk %d, %d workers: not the rows laid out", tp, rows, n, chunk, workers)
					}
					if bytes.Count(block[:64], []byte{0xA5}) != 64 || bytes.Count(block[64+size:], []byte{0xA5}) != 64 {
						t.Fatalf("%v %dx%d: bytes around the tensor written", tp, rows, n)
					}
				}
			}
		}
	}
}

// checkJobs checks each job's bytes against the file, and that everything
// else in block kept its guard value.
func checkJobs(t *testing.T, file []byte, jobs []copyJob, block []byte) {
	t.Helper()
	inside := make([]bool, len(block))
	base := &block[0]
	for _, j := range jobs {
		if !bytes.Equal(j.dst, file[j.off:j.off+int64(len(j.dst))]) {
			t.Fatalf("tensor %s (%d bytes at %d) differs from the file", j.name, len(j.dst), j.off)
		}
		start := int(uintptr(unsafe.Pointer(&j.dst[0])) - uintptr(unsafe.Pointer(base)))
		for k := range j.dst {
			inside[start+k] = true
		}
	}
	for i, in := range inside {
		if !in && block[i] != 0xA5 {
			t.Fatalf("byte %d of the block, outside every tensor, was written", i)
		}
	}
}

// failingReader fails every read that reaches byte failAt, and may return
// short reads (at most max bytes a call, without an error) like a pipe.
type failingReader struct {
	data   []byte
	failAt int64
	err    error
	max    int
}

func (f failingReader) ReadAt(b []byte, off int64) (int, error) {
	if f.err != nil && off+int64(len(b)) > f.failAt {
		return 0, f.err
	}
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	if f.max > 0 && len(b) > f.max {
		b = b[:f.max]
	}
	n := copy(b, f.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// TestReadJobsErrors: an I/O error or a file shorter than its tensors gives
// an error that names the file and the tensor, for any number of workers;
// a reader that returns short reads without an error is asked again.
func TestReadJobsErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const chunk = 100
	for _, workers := range []int{1, 4} {
		file, jobs, block := randJobs(r, 40, chunk)
		if err := readJobs(failingReader{data: file, max: 7}, "f.gguf", jobs, chunk, workers); err != nil {
			t.Fatalf("short reads: %v", err)
		}
		checkJobs(t, file, jobs, block)

		last := jobs[0]
		for _, j := range jobs {
			if j.off > last.off {
				last = j
			}
		}
		cut := last.off + int64(len(last.dst))/2
		err := readJobs(failingReader{data: file[:cut]}, "/models/f.gguf", jobs, chunk, workers)
		if !errors.Is(err, errShortRead) || !strings.Contains(err.Error(), "/models/f.gguf") || !strings.Contains(err.Error(), "tensor "+last.name+" ") {
			t.Errorf("%d workers, file cut inside tensor %s: got %v", workers, last.name, err)
		}

		err = readJobs(failingReader{data: file, failAt: last.off + 1, err: syscall.EIO}, "/models/f.gguf", jobs, chunk, workers)
		if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "/models/f.gguf: tensor "+last.name+" ") {
			t.Errorf("%d workers, I/O error in tensor %s: got %v", workers, last.name, err)
		}
	}
}

// loadFixtures are small real and random models: quantized and float, tied
// and untied embeddings.
var loadFixtures = []string{"arch/rand-llama-gqa-Q4_0.gguf", "arch/rand-llama-gqa-Q4_K.gguf", "arch/rand-llama-gqa-Q6_K.gguf", "arch/rand-llama-gqa-Q8_0.gguf", "arch/rand-gpt2-F32.gguf", "arch/rand-gemma-F32.gguf", "models/stories260K/stories260K-F16.gguf", "models/stories260K/stories260K-Q8_0mix.gguf", "models/tinystories-656K/TinyStories-656K-Q4_0.gguf"}

// TestCopyToHugePagesBitIdentical: after the copy (pread from a mapped file,
// or a copy from a file read into memory) every weight holds the file's
// bytes exactly, 64-byte aligned; the untied token embedding stays in place.
func TestCopyToHugePagesBitIdentical(t *testing.T) {
	for _, file := range loadFixtures {
		path := fixtures.Find(file)
		if path == "" {
			t.Logf("%s: not in testdata/ or ../shared/testdata; skipped", file)
			continue
		}
		for _, open := range []func(string) (*gguf.File, error){gguf.Open, gguf.ReadFile} {
			f, err := open(path)
			if err != nil {
				t.Fatal(err)
			}
			src, sp := specSource(t, f)
			release, err := src.copyToHugePages()
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				w := src.byName[sp.Network.Canonical(ti.Name)]
				want := f.TensorData(ti)
				if !bytes.Equal(w.Data, want) {
					t.Fatalf("%s: tensor %s differs from the file after the copy", file, ti.Name)
				}
				// Every tensor moves, vectors too (a read of one through
				// the mapping would map the folio around it), but an
				// untied token embedding.
				_, untied := f.Tensor("output.weight")
				stays := untied && ti.Name == "token_embd.weight"
				if moved := &w.Data[0] != &want[0]; moved == stays {
					t.Errorf("%s: tensor %s (%d-D) moved %v", file, ti.Name, len(ti.Shape), moved)
				}
				if addr := uintptr(unsafe.Pointer(&w.Data[0])); !stays && addr%64 != 0 {
					t.Errorf("%s: tensor %s at %#x, not 64-byte aligned", file, ti.Name, addr)
				}
			}
			if err := release(); err != nil {
				t.Error(err)
			}
			f.Close()
		}
	}
}

// TestHugePagesLogitsAllFixtures: the huge-page model gives the logits of
// the model read in place, bit for bit, on every fixture.
func TestHugePagesLogitsAllFixtures(t *testing.T) {
	for _, file := range loadFixtures {
		path := fixtures.Find(file)
		if path == "" {
			t.Logf("%s: not in testdata/ or ../shared/testdata; skipped", file)
			continue
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		base, err := FromGGUF(f, nil, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		huge, release, err := FromGGUFHugePages(f, nil, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		prompt := randPrompt(base, 12, 9)
		want := promptLogits(t, base.NewState(32, 16), prompt)
		got := promptLogits(t, huge.NewState(32, 16), prompt)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: logit %d: huge pages %v, in place %v", file, i, got[i], want[i])
			}
		}
		huge.Close()
		base.Close()
		if err := release(); err != nil {
			t.Error(err)
		}
		f.Close()
	}
}

// TestHugePagesTruncatedFile: a file cut short after it was opened (its
// header read) fails the load with an error that names the file and the
// tensor cut, rather than loading garbage or faulting on the mapping.
func TestHugePagesTruncatedFile(t *testing.T) {
	path, _, f := openCopy(t, "arch/rand-llama-gqa-Q8_0.gguf")
	// The last tensor in the file that the copy reads: a matrix, not the
	// untied token embedding.
	_, untied := f.Tensor("output.weight")
	var last *gguf.TensorInfo
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if ti.Rows() > 1 && !(untied && ti.Name == "token_embd.weight") && (last == nil || ti.Offset > last.Offset) {
			last = ti
		}
	}
	for i := range f.Tensors {
		if ti := &f.Tensors[i]; ti.Offset > last.Offset {
			t.Skipf("tensor %s (not copied) lies after %s: cutting the file would cut what the model reads in place", ti.Name, last.Name)
		}
	}
	if err := os.Truncate(path, int64(f.DataOffset+last.Offset+last.Size/2)); err != nil {
		t.Fatal(err)
	}
	m, release, err := FromGGUFHugePages(f, nil, Options{Threads: 2})
	if err == nil {
		m.Close()
		release()
		t.Fatal("a truncated file loaded")
	}
	if !errors.Is(err, errShortRead) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "tensor "+last.Name+" ") {
		t.Errorf("got %v; want a short read naming %s and tensor %s", err, path, last.Name)
	}
}

// TestHugePagesReplacedFile: when the path names another file than the one
// mapped (replaced by a rename after the open), the copy takes the mapped
// bytes, not the new file's.
func TestHugePagesReplacedFile(t *testing.T) {
	path, data, f := openCopy(t, "arch/rand-llama-gqa-Q8_0.gguf")
	other := bytes.Repeat([]byte{0x5A}, len(data))
	copy(other, data[:f.DataOffset])
	if err := os.WriteFile(path+".new", other, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	src, sp := specSource(t, f)
	release, err := src.copyToHugePages()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		start := f.DataOffset + ti.Offset
		if !bytes.Equal(src.byName[sp.Network.Canonical(ti.Name)].Data, data[start:start+ti.Size]) {
			t.Fatalf("tensor %s: not the bytes of the file that was opened", ti.Name)
		}
	}
}

// alignedReader stands for an O_DIRECT file: it refuses (EINVAL) a read
// whose offset, length or memory is not aligned, returns short reads at
// the end of the file, and can fail (err) from its fails-th read on.
type alignedReader struct {
	data  []byte
	align int64
	fails int
	err   error
	calls *atomic.Int64
}

func (a alignedReader) ReadAt(b []byte, off int64) (int, error) {
	if c := a.calls.Add(1); a.err != nil && c >= int64(a.fails) {
		return 0, a.err
	}
	if off%a.align != 0 || int64(len(b))%a.align != 0 || int64(uintptr(unsafe.Pointer(&b[0])))%a.align != 0 {
		return 0, syscall.EINVAL
	}
	return bytes.NewReader(a.data).ReadAt(b, off)
}

// TestDirectReader: reads through the direct path (aligned reads into a
// buffer, copied out) give the file's bytes whatever the tensors'
// alignment, chunk size and mix of cached and uncached parts; a direct
// read that fails falls back to the buffered one; a file cut short is a
// short read either way.
func TestDirectReader(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, chunk := range []int{1000, 4096, 3*bounceSize + 4000} {
		for _, align := range []int64{512, 4096} {
			for _, cachedEvery := range []int{0, 2, 3} {
				file, jobs, block := randJobs(r, 12, chunk)
				var calls atomic.Int64
				k := 0
				cached := func(off int64, n int) bool { k++; return cachedEvery > 0 && k%cachedEvery == 0 }
				d := newDirectReader(bytes.NewReader(file), alignedReader{data: file, align: align, calls: &calls}, align, cached, 1)
				if err := readJobs(d, "f.gguf", jobs, chunk, 1); err != nil {
					t.Fatal(err)
				}
				checkJobs(t, file, jobs, block)
				if calls.Load() == 0 {
					t.Fatalf("chunk %d, align %d: no direct read", chunk, align)
				}
			}
		}
	}
	const chunk = 3*bounceSize + 4000
	for _, fails := range []int{1, 3} {
		file, jobs, block := randJobs(r, 6, chunk)
		var calls atomic.Int64
		direct := alignedReader{data: file, align: 512, fails: fails, err: syscall.EIO, calls: &calls}
		d := newDirectReader(bytes.NewReader(file), direct, 512, func(int64, int) bool { return false }, 4)
		if err := readJobs(d, "f.gguf", jobs, chunk, 4); err != nil {
			t.Fatalf("direct reads failing from the %dth: %v", fails, err)
		}
		checkJobs(t, file, jobs, block)
	}
	file, jobs, _ := randJobs(r, 6, chunk)
	last := jobs[0]
	for _, j := range jobs {
		if j.off > last.off {
			last = j
		}
	}
	cut := file[:last.off+int64(len(last.dst))-1]
	var calls atomic.Int64
	d := newDirectReader(bytes.NewReader(cut), alignedReader{data: cut, align: 512, calls: &calls}, 512, func(int64, int) bool { return false }, 4)
	if err := readJobs(d, "f.gguf", jobs, chunk, 4); !errors.Is(err, errShortRead) || !strings.Contains(err.Error(), "tensor "+last.name+" ") {
		t.Errorf("file cut inside tensor %s: got %v", last.name, err)
	}
}

// specSource is the weight source of f under its architecture's builtin
// spec, and the spec.
func specSource(t *testing.T, f *gguf.File) (*ggufSource, *spec.Spec) {
	t.Helper()
	arch, _ := f.String("general.architecture")
	sp, err := spec.ForArchitecture(arch, "gguf")
	if err != nil {
		t.Fatal(err)
	}
	src, err := newGGUFSource(f, &sp.Network)
	if err != nil {
		t.Fatal(err)
	}
	return src, sp
}

// openCopy copies fixture rel into a temporary file and opens the copy
// (closed when the test ends): its path, its bytes and the open file.
func openCopy(t *testing.T, rel string) (string, []byte, *gguf.File) {
	t.Helper()
	data, err := os.ReadFile(fixtures.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(rel))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, data, f
}
