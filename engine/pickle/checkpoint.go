package pickle

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"flowchat/engine/fileio"
)

// Tensor is one tensor of a checkpoint, contiguous and row-major (PyTorch
// order: a linear layer's weight is [out, in]). Data usually aliases the
// mapped file: it is valid until the Checkpoint is closed. Tied weights
// (one storage under two names) alias the same bytes.
type Tensor struct {
	Name  string
	DType string // safetensors dtype names: F32, F16, BF16, …
	Shape []int64
	Data  []byte
}

// Checkpoint is the state dict of one PyTorch checkpoint (possibly sharded).
type Checkpoint struct {
	Path    string
	Tensors []Tensor // in state-dict order, shard after shard
	Size    int64    // bytes of the files

	byName  map[string]int
	closers []func() error
}

// Tensor returns the tensor named name.
func (c *Checkpoint) Tensor(name string) (*Tensor, bool) {
	i, ok := c.byName[name]
	if !ok {
		return nil, false
	}
	return &c.Tensors[i], true
}

// Close releases the file mappings.
func (c *Checkpoint) Close() error {
	var errs []error
	for _, f := range c.closers {
		errs = append(errs, f())
	}
	c.closers = nil
	return errors.Join(errs...)
}

// IndexName is the file that maps tensors to shards in a split checkpoint.
const IndexName = "pytorch_model.bin.index.json"

// OpenModel opens path: a checkpoint file, an index .json, or a folder
// holding pytorch_model.bin or pytorch_model.bin.index.json.
func OpenModel(path string) (*Checkpoint, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("pytorch checkpoint: %w", err)
	}
	if st.IsDir() {
		if p := filepath.Join(path, IndexName); fileExists(p) {
			return OpenIndex(p)
		}
		path = filepath.Join(path, "pytorch_model.bin")
	} else if strings.HasSuffix(path, ".json") {
		return OpenIndex(path)
	}
	return Open(path)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Open reads one checkpoint file: the zip format of torch.save (PyTorch
// 1.6 and later) or the legacy format before it.
func Open(path string) (*Checkpoint, error) {
	data, closer, err := fileio.Map(path)
	if err != nil {
		return nil, fmt.Errorf("pytorch checkpoint: %w", err)
	}
	c := &Checkpoint{Path: path, Size: int64(len(data)), byName: map[string]int{}, closers: []func() error{closer}}
	if err := c.read(data); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads a checkpoint held in memory; tensors alias data.
func Parse(data []byte) (*Checkpoint, error) {
	c := &Checkpoint{Size: int64(len(data)), byName: map[string]int{}}
	return c, c.read(data)
}

func (c *Checkpoint) read(data []byte) error {
	var obj any
	var err error
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		obj, err = readZip(data)
	} else {
		obj, err = readLegacy(data)
	}
	if err != nil {
		return err
	}
	return c.collect(obj)
}

// collect materializes the tensors of a state dict (also one nested under
// "state_dict" or "model", as training scripts save them).
func (c *Checkpoint) collect(obj any) error {
	d, ok := obj.(*Dict)
	if !ok {
		return fmt.Errorf("%w: the checkpoint holds a %T, not a state dict", ErrFormat, obj)
	}
	for _, k := range []string{"state_dict", "model"} {
		if inner, ok := d.Get(k); ok {
			if id, ok := inner.(*Dict); ok {
				d = id
				break
			}
		}
	}
	for i, k := range d.Keys {
		name, ok := k.(string)
		ref, isT := d.Values[i].(*tensorRef)
		if !ok || !isT {
			continue // epoch counters and the like
		}
		t, err := ref.materialize(name)
		if err != nil {
			return err
		}
		if _, dup := c.byName[name]; dup {
			return fmt.Errorf("%w: tensor %q appears twice", ErrFormat, name)
		}
		c.byName[name] = len(c.Tensors)
		c.Tensors = append(c.Tensors, t)
	}
	if len(c.Tensors) == 0 {
		return fmt.Errorf("%w: the state dict holds no tensors", ErrFormat)
	}
	return nil
}

// materialize returns the tensor's bytes, contiguous: a slice of the
// storage when it already is (state dicts), else a gathered copy.
func (r *tensorRef) materialize(name string) (Tensor, error) {
	st := r.st
	if st.data == nil && st.numel > 0 {
		return Tensor{}, fmt.Errorf("%w: tensor %q: storage %q has no data", ErrFormat, name, st.key)
	}
	n := int64(1)
	last := r.offset // highest element index touched
	for i, d := range r.shape {
		if d == 0 {
			n = 0
		}
		n *= d
		if n > 1<<50 {
			return Tensor{}, fmt.Errorf("%w: tensor %q shape %v", ErrFormat, name, r.shape)
		}
		last += (d - 1) * r.stride[i]
	}
	t := Tensor{Name: name, DType: st.dtype, Shape: r.shape}
	if n == 0 {
		return t, nil
	}
	if last >= st.numel {
		return Tensor{}, fmt.Errorf("%w: tensor %q (offset %d, shape %v, stride %v) overruns its storage of %d elements", ErrFormat, name, r.offset, r.shape, r.stride, st.numel)
	}
	sz := int64(st.size)
	if r.contiguous() {
		t.Data = st.data[r.offset*sz : (r.offset+n)*sz]
		return t, nil
	}
	t.Data = make([]byte, n*sz)
	r.gather(t.Data, sz)
	return t, nil
}

func (r *tensorRef) contiguous() bool {
	want := int64(1)
	for i := len(r.shape) - 1; i >= 0; i-- {
		if r.shape[i] != 1 && r.stride[i] != want {
			return false
		}
		want *= r.shape[i]
	}
	return true
}

// gather copies a strided view element by element in row-major order.
func (r *tensorRef) gather(dst []byte, sz int64) {
	idx := make([]int64, len(r.shape))
	for o := int64(0); o < int64(len(dst)); o += sz {
		src := r.offset
		for i, x := range idx {
			src += x * r.stride[i]
		}
		copy(dst[o:o+sz], r.st.data[src*sz:(src+1)*sz])
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < r.shape[i] {
				break
			}
			idx[i] = 0
		}
	}
}

// storageFromPID checks a persistent id ('storage', class, key, location,
// numel[, view]) and returns its parts.
func storageFromPID(pid any) (sc storageClass, key string, numel int64, view any, err error) {
	t, ok := pid.(Tuple)
	if !ok || len(t) < 5 {
		return sc, "", 0, nil, fmt.Errorf("%w: persistent id %T", ErrFormat, pid)
	}
	if s, _ := t[0].(string); s != "storage" {
		return sc, "", 0, nil, fmt.Errorf("%w: persistent id of kind %v", ErrFormat, t[0])
	}
	cls, ok := t[1].(*Callable)
	if ok {
		sc, ok = cls.Value.(storageClass)
	}
	if !ok {
		return sc, "", 0, nil, fmt.Errorf("%w: storage type %v", ErrFormat, t[1])
	}
	key, ok = t[2].(string)
	numel, ok2 := Int(t[4])
	if !ok || !ok2 || numel < 0 || numel > 1<<50 {
		return sc, "", 0, nil, fmt.Errorf("%w: storage key %v, size %v", ErrFormat, t[2], t[4])
	}
	if len(t) > 5 {
		view = t[5]
	}
	return sc, key, numel, view, nil
}

// readZip reads torch.save's zip format: <dir>/data.pkl refers to
// storages stored as members <dir>/data/<key>.
func readZip(data []byte) (any, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: zip: %v", ErrFormat, err)
	}
	members := map[string]*zip.File{}
	prefix := ""
	for _, f := range zr.File {
		members[f.Name] = f
		if strings.HasSuffix(f.Name, "data.pkl") && strings.Count(f.Name, "/") <= 1 {
			prefix = strings.TrimSuffix(f.Name, "data.pkl")
		}
	}
	pkl, ok := members[prefix+"data.pkl"]
	if !ok {
		return nil, fmt.Errorf("%w: zip archive without data.pkl", ErrFormat)
	}
	code, err := memberBytes(data, pkl, 64<<20)
	if err != nil {
		return nil, err
	}
	storages := map[string]*storage{}
	persist := func(pid any) (any, error) {
		sc, key, numel, _, err := storageFromPID(pid)
		if err != nil {
			return nil, err
		}
		if st, ok := storages[key]; ok {
			return st, nil // shared storage: tied weights
		}
		m, ok := members[prefix+"data/"+key]
		if !ok {
			return nil, fmt.Errorf("%w: storage %q has no archive member", ErrFormat, key)
		}
		b, err := memberBytes(data, m, numel*int64(sc.size))
		if err != nil {
			return nil, err
		}
		if int64(len(b)) < numel*int64(sc.size) {
			return nil, fmt.Errorf("%w: storage %q has %d bytes for %d elements", ErrFormat, key, len(b), numel)
		}
		st := &storage{key: key, dtype: sc.dtype, size: sc.size, numel: numel, data: b}
		storages[key] = st
		return st, nil
	}
	obj, _, err := Load(code, resolveTorch, persist)
	return obj, err
}

// memberBytes returns a zip member's bytes: a slice of data when stored
// (torch.save never compresses), else decompressed up to limit bytes.
func memberBytes(data []byte, f *zip.File, limit int64) ([]byte, error) {
	off, err := f.DataOffset()
	if err != nil {
		return nil, fmt.Errorf("%w: zip member %s: %v", ErrFormat, f.Name, err)
	}
	if f.Method == zip.Store {
		end := off + int64(f.CompressedSize64)
		if off < 0 || f.CompressedSize64 > uint64(len(data)) || end > int64(len(data)) {
			return nil, fmt.Errorf("%w: zip member %s lies outside the file", ErrFormat, f.Name)
		}
		return data[off:end:end], nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: zip member %s: %v", ErrFormat, f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil || int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: zip member %s: %d bytes (limit %d), %v", ErrFormat, f.Name, len(b), limit, err)
	}
	return b, nil
}

// legacyMagic is the first pickle of a pre-1.6 torch.save file.
var legacyMagic, _ = new(big.Int).SetString("1950a86a20f9469cfc6c", 16)

// readLegacy reads the pre-zip format: pickles of the magic number, the
// protocol version and system info, then the object, then the list of
// storage keys, then each storage as an int64 element count and its bytes.
func readLegacy(data []byte) (any, error) {
	pos := 0
	next := func(r Resolver, p PersistentLoader) (any, error) {
		v, n, err := Load(data[pos:], r, p)
		pos += n
		return v, err
	}
	magic, err := next(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: neither a zip archive nor a legacy torch file: %v", ErrFormat, err)
	}
	if m, ok := magic.(*big.Int); !ok || m.Cmp(legacyMagic) != 0 {
		return nil, fmt.Errorf("%w: not a PyTorch checkpoint (magic %v)", ErrFormat, magic)
	}
	if v, err := next(nil, nil); err != nil || v != int64(1001) {
		return nil, fmt.Errorf("%w: legacy protocol version %v (%v)", ErrFormat, v, err)
	}
	if _, err := next(nil, nil); err != nil {
		return nil, fmt.Errorf("sys info: %w", err)
	}
	lg := &legacyStorages{roots: map[string]*storage{}}
	obj, err := next(resolveTorch, lg.persist)
	if err != nil {
		return nil, err
	}
	keys, err := next(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("storage keys: %w", err)
	}
	if err := lg.readData(keys, data[pos:]); err != nil {
		return nil, err
	}
	return obj, lg.resolveViews()
}

type legacyStorages struct {
	roots map[string]*storage
	views []*storage
}

func (lg *legacyStorages) persist(pid any) (any, error) {
	sc, key, numel, view, err := storageFromPID(pid)
	if err != nil {
		return nil, err
	}
	root, ok := lg.roots[key]
	if !ok {
		root = &storage{key: key, dtype: sc.dtype, size: sc.size, numel: numel}
		lg.roots[key] = root
	}
	if view == nil {
		return root, nil
	}
	vt, ok := view.(Tuple)
	if !ok || len(vt) != 3 {
		return nil, fmt.Errorf("%w: storage view %v", ErrFormat, view)
	}
	off, ok1 := Int(vt[1])
	n, ok2 := Int(vt[2])
	if !ok1 || !ok2 || off < 0 || n < 0 || off+n > root.numel {
		return nil, fmt.Errorf("%w: storage view %v of %d elements", ErrFormat, view, root.numel)
	}
	v := &storage{key: fmt.Sprint(vt[0]), dtype: root.dtype, size: root.size, numel: n, root: root, offset: off}
	lg.views = append(lg.views, v)
	return v, nil
}

// readData assigns each storage its bytes from the data section.
func (lg *legacyStorages) readData(keysObj any, rest []byte) error {
	l, ok := keysObj.(*List)
	if !ok {
		return fmt.Errorf("%w: storage key list is a %T", ErrFormat, keysObj)
	}
	for _, k := range l.Items {
		key, _ := k.(string)
		st, ok := lg.roots[key]
		if !ok {
			return fmt.Errorf("%w: data for unknown storage %v", ErrFormat, k)
		}
		if len(rest) < 8 {
			return fmt.Errorf("%w: data section ends before storage %q", ErrFormat, key)
		}
		n := int64(binary.LittleEndian.Uint64(rest))
		if n != st.numel || n < 0 || n > int64(len(rest)-8)/int64(st.size) {
			return fmt.Errorf("%w: storage %q: %d elements recorded, %d expected", ErrFormat, key, n, st.numel)
		}
		end := 8 + n*int64(st.size)
		st.data, rest = rest[8:end:end], rest[end:]
	}
	return nil
}

func (lg *legacyStorages) resolveViews() error {
	for _, v := range lg.views {
		r := v.root
		if r.data == nil && r.numel > 0 {
			return fmt.Errorf("%w: storage %q has no data", ErrFormat, r.key)
		}
		sz := int64(v.size)
		v.data = r.data[v.offset*sz : (v.offset+v.numel)*sz]
	}
	return nil
}

// maxIndexSize bounds an index file.
const maxIndexSize = 64 << 20

// OpenIndex opens every shard that pytorch_model.bin.index.json names.
func OpenIndex(path string) (*Checkpoint, error) {
	shards, err := readIndex(path)
	if err != nil {
		return nil, err
	}
	all := &Checkpoint{Path: path, byName: map[string]int{}}
	for _, name := range shards {
		c, err := Open(filepath.Join(filepath.Dir(path), name))
		if err != nil {
			all.Close()
			return nil, err
		}
		all.closers = append(all.closers, c.closers...)
		all.Size += c.Size
		for _, t := range c.Tensors {
			if _, dup := all.byName[t.Name]; dup {
				all.Close()
				return nil, fmt.Errorf("%w: tensor %q appears in two shards", ErrFormat, t.Name)
			}
			all.byName[t.Name] = len(all.Tensors)
			all.Tensors = append(all.Tensors, t)
		}
	}
	return all, nil
}

// readIndex returns the index's shard file names, sorted; names must be
// plain file names in the index's folder.
func readIndex(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("pytorch index: %w", err)
	}
	if st.Size() > maxIndexSize {
		return nil, fmt.Errorf("%w: %s is %d bytes", ErrFormat, path, st.Size())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pytorch index: %w", err)
	}
	var ix struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &ix); err != nil || len(ix.WeightMap) == 0 {
		return nil, fmt.Errorf("%w: %s: no weight_map (%v)", ErrFormat, path, err)
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range ix.WeightMap {
		if f == "" || f == "." || f == ".." || strings.ContainsAny(f, `/\`) {
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
