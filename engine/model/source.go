package model

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"flowchat/engine/gguf"
	"flowchat/engine/spec"
)

// ggufSource serves a GGUF file's tensors under their canonical names.
type ggufSource struct {
	byName map[string]*Weight
	// path and fileOff locate each tensor's bytes in the file (by
	// canonical name), for the huge-page copy's reads.
	path    string
	fileOff map[string]int64
	// interleave: the huge-page copy lays out the matrices that
	// Model.InterleaveRows4 would (rows4Candidate, not a lookup table) as it
	// reads them, and marks them Rows4.
	interleave bool
}

// copyToHugePages moves every weight (but an untied token embedding) into
// one anonymous block backed by huge pages; it returns the release
// function. The vectors (norms, biases) go too, though they are small: a
// read of one through the file mapping maps the whole large folio around
// it (ext4 caches files in folios of up to 2 MiB), which held 80 MiB of
// the neighbouring matrices resident for a 1.1 GiB file. Tensor data stays 64-byte aligned. A mapped file is read with
// pread (in parallel chunks, see readJobs) straight into the block, so no
// page of the mapping becomes resident for a copied tensor; data held in
// memory is copied. errNoHugePages means the block could not be had (the
// weights stay where they are); any other error is a read that failed, and
// no weight has changed.
func (s *ggufSource) copyToHugePages() (func() error, error) {
	// The token embedding is a table of rows looked up one per token, never
	// streamed: in the file mapping only the rows in use become resident
	// (as in llama.cpp, whose embedding stays in its mapping), where the
	// copy would hold all of it (issue 18: 33–125 MiB of the TinyLlama
	// files' peak RSS). Not when it is also the LM head (tied embeddings),
	// which every token streams.
	_, untied := s.byName["output.weight"]
	var names []string
	for name, w := range s.byName {
		if len(w.Data) > 0 && !(untied && name == "token_embd.weight") {
			names = append(names, name)
		}
	}
	// In file order: the block's layout is the same on every load.
	sort.Slice(names, func(i, j int) bool { return s.fileOff[names[i]] < s.fileOff[names[j]] })
	total := 0
	for _, name := range names {
		total += (len(s.byName[name].Data) + 63) &^ 63
	}
	buf, release, err := hugeAlloc(total)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoHugePages, err)
	}
	jobs := make([]copyJob, len(names))
	src := make([][]byte, len(names))
	off := 0
	for i, name := range names {
		w := s.byName[name]
		n := len(w.Data)
		lay := s.interleave && rows4Candidate(w) && !lookupTables[name]
		jobs[i] = copyJob{name: w.Name, dst: buf[off : off+n : off+n], off: s.fileOff[name], layout: lay, t: w.Type, n: w.Cols}
		src[i] = w.Data
		off += (n + 63) &^ 63
	}
	if err := s.fill(jobs, src); err != nil {
		release()
		return nil, err
	}
	for i, name := range names {
		s.byName[name].Data = jobs[i].dst
		s.byName[name].Rows4 = jobs[i].layout
	}
	return release, nil
}

// errNoHugePages: the huge-page block could not be allocated.
var errNoHugePages = errors.New("no memory for the huge-page copy")

// fill fills the jobs' blocks with their tensors' bytes (src[i] is job i's
// tensor where it is now): read from the file where the weights are mapped
// from it, else copied from memory (also when the file at the path is no
// longer the one mapped: deleted, or replaced by a rename).
func (s *ggufSource) fill(jobs []copyJob, src [][]byte) error {
	var ino uint64
	for _, d := range src {
		if len(d) > 0 {
			ino = mappedInode(d)
			break
		}
	}
	if ino != 0 && s.path != "" {
		if fh, err := os.Open(s.path); err == nil {
			defer fh.Close()
			if sameInode(fh, ino) {
				adviseSequential(fh)
				var r io.ReaderAt = fh
				if d, align, err := openDirect(s.path); err == nil {
					defer d.Close()
					if sameInode(d, ino) {
						r = newDirectReader(fh, d, align, cachedIn(jobs, src), copyWorkers())
					}
				}
				return readJobs(r, s.path, jobs, copyChunk, copyWorkers())
			}
		}
	}
	return readJobs(memReader{jobs, src}, s.path, jobs, copyChunk, copyWorkers())
}

// cachedIn returns a function reporting whether the n bytes at file offset
// off, inside one of the jobs, are mostly in the page cache (mostlyCached
// over the mapping, src[i] being jobs[i]'s tensor in it).
func cachedIn(jobs []copyJob, src [][]byte) func(off int64, n int) bool {
	return func(off int64, n int) bool {
		for i, j := range jobs {
			if off >= j.off && off+int64(n) <= j.off+int64(len(src[i])) {
				return mostlyCached(src[i][off-j.off : off-j.off+int64(n)])
			}
		}
		return true
	}
}

// memReader reads the jobs' tensors from memory (a file read whole, not
// mapped) at their file offsets: src[i] holds the bytes of jobs[i].
type memReader struct {
	jobs []copyJob
	src  [][]byte
}

func (m memReader) ReadAt(b []byte, off int64) (int, error) {
	for i, j := range m.jobs {
		if d := m.src[i]; off >= j.off && off < j.off+int64(len(d)) {
			n := copy(b, d[off-j.off:])
			if n < len(b) {
				return n, io.EOF
			}
			return n, nil
		}
	}
	return 0, io.EOF
}

func newGGUFSource(f *gguf.File, n *spec.Network) (*ggufSource, error) {
	src := &ggufSource{byName: map[string]*Weight{}, path: f.Path, fileOff: map[string]int64{}}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if len(t.Shape) > 2 {
			for _, d := range t.Shape[2:] {
				if d != 1 {
					return nil, fmt.Errorf("tensor %s has shape %v; only 1-D and 2-D tensors are supported", t.Name, t.Shape)
				}
			}
		}
		w := &Weight{Name: t.Name, Type: t.Type, Cols: 1, Rows: 1, Data: f.TensorData(t)}
		if len(t.Shape) > 0 {
			w.Cols = int(t.Shape[0])
		}
		if len(t.Shape) > 1 {
			w.Rows = int(t.Shape[1])
		}
		src.byName[n.Canonical(t.Name)] = w
		src.fileOff[n.Canonical(t.Name)] = int64(f.DataOffset + t.Offset)
	}
	return src, nil
}

func (s *ggufSource) Weight(name string) (*Weight, bool) {
	w, ok := s.byName[name]
	return w, ok
}

// FromGGUFHugePages is FromGGUF with the weights copied out of the file
// mapping into memory backed by transparent huge pages (Linux), trading load
// time for decode speed. The caller calls release after closing the model.
// If the memory cannot be had, the weights stay in the file mapping.
func FromGGUFHugePages(f *gguf.File, sp *spec.Spec, opt Options) (m *Model, release func() error, err error) {
	release = func() error { return nil }
	hook := func(src *ggufSource) error {
		src.interleave = opt.Interleave
		r, err := src.copyToHugePages()
		switch {
		case errors.Is(err, errNoHugePages):
			return nil // the weights stay in the file mapping
		case err != nil:
			return err
		}
		release = r
		return nil
	}
	m, err = fromGGUF(f, sp, opt, hook)
	if err != nil {
		release()
		return nil, nil, err
	}
	if w := m.TokEmbd; w != nil && m.Output.W != w && len(w.Data) > 0 && isFileMapping(w.Data) {
		// Left in the mapping (copyToHugePages): read its rows with pread.
		for i := range f.Tensors {
			t := &f.Tensors[i]
			if d := f.TensorData(t); len(d) == len(w.Data) && &d[0] == &w.Data[0] {
				if fh, err := os.Open(f.Path); err == nil {
					m.embFile, m.embOff = fh, int64(f.DataOffset+t.Offset)
					m.embData, m.embType = &w.Data[0], w.Type
					mem := release
					release = func() error { fh.Close(); return mem() }
				}
				break
			}
		}
	}
	return m, release, nil
}

// FromGGUF builds the network of an open GGUF file. sp may be nil, in which
// case the builtin spec for the file's general.architecture is used.
func FromGGUF(f *gguf.File, sp *spec.Spec, opt Options) (*Model, error) {
	return fromGGUF(f, sp, opt, nil)
}

func fromGGUF(f *gguf.File, sp *spec.Spec, opt Options, hook func(*ggufSource) error) (*Model, error) {
	arch, ok := f.String("general.architecture")
	if !ok {
		return nil, fmt.Errorf("%s: no general.architecture in the metadata", f.Path)
	}
	if sp == nil {
		var err error
		if sp, err = spec.ForArchitecture(arch, "gguf"); err != nil {
			return nil, err
		}
	}
	cfg, err := configFromGGUF(f, sp, arch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	src, err := newGGUFSource(f, &sp.Network)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	if hook != nil {
		if err := hook(src); err != nil {
			return nil, err
		}
	}
	return Build(sp, cfg, src, opt)
}
