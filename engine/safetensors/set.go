package safetensors

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// IndexName is the file that maps tensors to shards in a split model.
const IndexName = "model.safetensors.index.json"

// maxIndexSize bounds an index file (real ones are well under 1 MB).
const maxIndexSize = 64 << 20

// Set is one model's tensors, read from a single file or from shards.
type Set struct {
	Files  []*File
	byName map[string]*Tensor
}

// OpenModel opens path: a .safetensors file, an index .json file, or a
// folder holding model.safetensors or model.safetensors.index.json.
func OpenModel(path string) (*Set, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if st.IsDir() {
		if p := filepath.Join(path, IndexName); exists(p) {
			return OpenIndex(p)
		}
		path = filepath.Join(path, "model.safetensors")
	} else if strings.HasSuffix(path, ".json") {
		return OpenIndex(path)
	}
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	s := &Set{Files: []*File{f}, byName: map[string]*Tensor{}}
	return s, s.add(f, nil)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// index is model.safetensors.index.json.
type index struct {
	WeightMap map[string]string `json:"weight_map"`
}

// OpenIndex opens every shard named by an index file. Shard names must be
// plain file names in the index's folder.
func OpenIndex(path string) (*Set, error) {
	var ix index
	if err := readJSON(path, maxIndexSize, &ix); err != nil {
		return nil, fmt.Errorf("safetensors index: %w", err)
	}
	if len(ix.WeightMap) == 0 {
		return nil, fmt.Errorf("%w: %s has an empty weight_map", ErrFormat, path)
	}
	shards, err := shardNames(ix.WeightMap)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Set{byName: map[string]*Tensor{}}
	dir := filepath.Dir(path)
	for _, name := range shards {
		f, err := Open(filepath.Join(dir, name))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Files = append(s.Files, f)
		if err := s.add(f, ix.WeightMap); err != nil {
			s.Close()
			return nil, err
		}
	}
	for name, shard := range ix.WeightMap {
		if _, ok := s.byName[name]; !ok {
			s.Close()
			return nil, fmt.Errorf("%w: index puts %q in %s, which lacks it", ErrFormat, name, shard)
		}
	}
	return s, nil
}

// shardNames returns the distinct shard files, sorted, refusing paths.
func shardNames(wm map[string]string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, f := range wm {
		if f == "" || f != filepath.Base(f) || f == "." || f == ".." || strings.ContainsAny(f, `/\`) {
			return nil, fmt.Errorf("%w: shard name %q is not a plain file name", ErrFormat, f)
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

// add indexes f's tensors; with an index map, only the tensors it assigns
// to f (a tensor in two shards is an error).
func (s *Set) add(f *File, wm map[string]string) error {
	base := filepath.Base(f.Path)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if wm != nil && wm[t.Name] != "" && wm[t.Name] != base {
			continue
		}
		if _, dup := s.byName[t.Name]; dup {
			return fmt.Errorf("%w: tensor %q appears in two shards", ErrFormat, t.Name)
		}
		s.byName[t.Name] = t
	}
	s.addAliases(f)
	return nil
}

// addAliases serves tensors that safetensors.torch.save_model dropped as
// duplicates of shared storage (tied embeddings): it records them in the
// metadata as removed name → kept name.
func (s *Set) addAliases(f *File) {
	for k, v := range f.Metadata {
		kept, ok := f.Tensor(v)
		if _, taken := s.byName[k]; ok && !taken {
			s.byName[k] = kept
		}
	}
}

// Tensor returns the tensor named name.
func (s *Set) Tensor(name string) (*Tensor, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Names lists every tensor name, sorted.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Size is the total size of the files in bytes.
func (s *Set) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// Close releases every shard.
func (s *Set) Close() error {
	var errs []error
	for _, f := range s.Files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
