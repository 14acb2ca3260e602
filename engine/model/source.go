package model

import (
	"fmt"
	"os"

	"flowchat/engine/gguf"
	"flowchat/engine/spec"
)

// ggufSource serves a GGUF file's tensors under their canonical names.
type ggufSource struct {
	byName map[string]*Weight
}

// copyToHugePages moves every 2-D weight (but an untied token embedding)
// out of the file mapping into one
// anonymous block backed by huge pages; it returns the release function.
// Tensor data stays 64-byte aligned.
func (s *ggufSource) copyToHugePages() (func() error, error) {
	// The token embedding is a table of rows looked up one per token, never
	// streamed: in the file mapping only the rows in use become resident
	// (as in llama.cpp, whose embedding stays in its mapping), where the
	// copy would hold all of it (issue 18: 33–125 MiB of the TinyLlama
	// files' peak RSS). Not when it is also the LM head (tied embeddings),
	// which every token streams.
	_, untied := s.byName["output.weight"]
	copied := func(name string, w *Weight) bool {
		return w.Rows > 1 && !(untied && name == "token_embd.weight")
	}
	total := 0
	for name, w := range s.byName {
		if copied(name, w) {
			total += (len(w.Data) + 63) &^ 63
		}
	}
	buf, release, err := hugeAlloc(total)
	if err != nil {
		return nil, err
	}
	off, mapped := 0, false
	for _, w := range s.byName {
		if w.Rows > 1 && len(w.Data) > 0 {
			mapped = isFileMapping(w.Data)
			break
		}
	}
	for name, w := range s.byName {
		if copied(name, w) {
			n := copy(buf[off:], w.Data)
			if mapped {
				dropPages(w.Data)
			}
			w.Data = buf[off : off+n : off+n]
			off += (n + 63) &^ 63
		}
	}
	return release, nil
}

func newGGUFSource(f *gguf.File, n *spec.Network) (*ggufSource, error) {
	src := &ggufSource{byName: map[string]*Weight{}}
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
	hook := func(src *ggufSource) {
		if r, err := src.copyToHugePages(); err == nil {
			release = r
		}
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

func fromGGUF(f *gguf.File, sp *spec.Spec, opt Options, hook func(*ggufSource)) (*Model, error) {
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
		hook(src)
	}
	return Build(sp, cfg, src, opt)
}
