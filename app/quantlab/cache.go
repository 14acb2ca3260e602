package quantlab

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// cacheVersion changes when a cached value's meaning changes; entries of
// another version are misses.
const cacheVersion = 1

// FileStamp identifies a file's contents without reading them: a file
// replaced or rewritten in place gets another size or modification time.
type FileStamp struct {
	Path    string `json:"path"` // absolute
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
}

func stamp(path string) (FileStamp, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return FileStamp{}, fmt.Errorf("quantlab: %w", err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return FileStamp{}, fmt.Errorf("quantlab: %w", err)
	}
	return FileStamp{Path: abs, Size: st.Size(), ModTime: st.ModTime().UnixNano()}, nil
}

// Key is everything a cached result depends on. Its fields are stored
// beside the value, so a cache directory can be listed.
type Key struct {
	Kind       string      `json:"kind"` // "lab" or "side"
	Model      FileStamp   `json:"model"`
	Levels     []string    `json:"levels"`
	LevelFiles []FileStamp `json:"level_files,omitempty"` // levels that are GGUF files
	TextSHA256 string      `json:"text_sha256,omitempty"`
	Ctx        int         `json:"ctx,omitempty"`
	MaxChunks  int         `json:"max_chunks,omitempty"`
	OutputType string      `json:"output_type,omitempty"`
	MinElems   int         `json:"min_elements,omitempty"`
	Threads    int         `json:"threads,omitempty"`
	GenTokens  int         `json:"gen_tokens,omitempty"`
	Prompt     string      `json:"prompt,omitempty"`
	Tokens     int         `json:"tokens,omitempty"`
	Seed       uint64      `json:"seed,omitempty"`
	Temp       float32     `json:"temperature,omitempty"`
}

// ID is the key's file name stem: its kind and a hash of its fields.
func (k Key) ID() string {
	b, err := json.Marshal(k)
	if err != nil {
		panic(err) // a Key has only plain fields
	}
	h := sha256.Sum256(b)
	return k.Kind + "-" + hex.EncodeToString(h[:16])
}

// newKey stamps the model and every level that is a file.
func newKey(kind, model string, levels []string) (Key, error) {
	k := Key{Kind: kind, Levels: append([]string(nil), levels...)}
	var err error
	if k.Model, err = stamp(model); err != nil {
		return k, err
	}
	for _, l := range levels {
		if isFileLevel(l) {
			s, err := stamp(l)
			if err != nil {
				return k, err
			}
			k.LevelFiles = append(k.LevelFiles, s)
		}
	}
	return k, nil
}

func textHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// entry is one cache file.
type entry struct {
	Version int             `json:"version"`
	Key     Key             `json:"key"`
	Created time.Time       `json:"created"`
	Value   json.RawMessage `json:"value"`
}

// load reads key's entry into v; ok is false on a miss, including an
// unreadable or foreign file (it will be overwritten).
func load(dir string, key Key, v any) (created time.Time, ok bool) {
	if dir == "" {
		return time.Time{}, false
	}
	b, err := os.ReadFile(filepath.Join(dir, key.ID()+".json"))
	if err != nil {
		return time.Time{}, false
	}
	var e entry
	if json.Unmarshal(b, &e) != nil || e.Version != cacheVersion || !sameKey(e.Key, key) {
		return time.Time{}, false
	}
	if json.Unmarshal(e.Value, v) != nil {
		return time.Time{}, false
	}
	return e.Created, true
}

func sameKey(a, b Key) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// store writes v as key's entry atomically; a "" dir stores nothing.
func store(dir string, key Key, created time.Time, v any) error {
	if dir == "" {
		return nil
	}
	val, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("quantlab: cache: %w", err)
	}
	b, err := json.MarshalIndent(entry{Version: cacheVersion, Key: key, Created: created, Value: val}, "", " ")
	if err != nil {
		return fmt.Errorf("quantlab: cache: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("quantlab: cache: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, key.ID()+".json"), b); err != nil {
		return fmt.Errorf("quantlab: cache: %w", err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and
// renames it into place, so a crash or a concurrent reader never sees a
// partial entry.
func writeFileAtomic(path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Saved is a Lab result found in a cache directory.
type Saved struct {
	Key     Key
	Created time.Time
	Result  *Result
}

// List returns the Lab results cached in dir, newest first, so a screen
// can reopen the last run without knowing its request. A missing dir is
// an empty list; unreadable entries are skipped.
func List(dir string) ([]Saved, error) {
	names, err := filepath.Glob(filepath.Join(dir, "lab-*.json"))
	if err != nil {
		return nil, fmt.Errorf("quantlab: %w", err)
	}
	var out []Saved
	for _, n := range names {
		if s, ok := readSaved(n); ok {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, nil
}

func readSaved(name string) (Saved, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		return Saved{}, false
	}
	var e entry
	if json.Unmarshal(b, &e) != nil || e.Version != cacheVersion || e.Key.Kind != "lab" ||
		!strings.HasSuffix(name, e.Key.ID()+".json") {
		return Saved{}, false
	}
	r := &Result{Key: e.Key, Created: e.Created, Cached: true}
	if json.Unmarshal(e.Value, &r.Report) != nil || r.Report == nil {
		return Saved{}, false
	}
	return Saved{Key: e.Key, Created: e.Created, Result: r}, true
}
