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

// FromGGUF builds the network of an open GGUF file. sp may be nil, in which
// case the builtin spec for the file's general.architecture is used.
func FromGGUF(f *gguf.File, sp *spec.Spec, opt Options) (*Model, error) {
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
	return Build(sp, cfg, src, opt)
}
