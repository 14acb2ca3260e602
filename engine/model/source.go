package model

import (
	"fmt"

	"flowchat/engine/gguf"
	"flowchat/engine/spec"
)

// ggufSource serves a GGUF file's tensors under their canonical names.
type ggufSource struct {
	byName map[string]*Weight
}

// copyToHugePages moves every 2-D weight out of the file mapping into one
// anonymous block backed by huge pages; it returns the release function.
// Tensor data stays 64-byte aligned.
func (s *ggufSource) copyToHugePages() (func() error, error) {
	total := 0
	for _, w := range s.byName {
		if w.Rows > 1 {
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
	for _, w := range s.byName {
		if w.Rows > 1 {
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
