package library

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"flowchat/app/hub"
)

// indexName is the metadata cache in the data directory (hidden, so scans
// skip it).
const indexName = ".index.json"

// index caches header metadata by model path, valid while the model's
// size and modification time are unchanged.
type index struct {
	path    string
	mu      sync.Mutex
	Entries map[string]indexEntry `json:"entries"`
	dirty   bool
}

type indexEntry struct {
	Size    int64          `json:"size"`
	ModNano int64          `json:"mod_ns"`
	Info    *hub.ModelInfo `json:"info,omitempty"`
	Problem string         `json:"problem,omitempty"`
}

func loadIndex(dataDir string) *index {
	idx := &index{Entries: map[string]indexEntry{}}
	if dataDir == "" {
		return idx
	}
	idx.path = filepath.Join(dataDir, indexName)
	if b, err := os.ReadFile(idx.path); err == nil {
		json.Unmarshal(b, idx) // a damaged index is rebuilt
		if idx.Entries == nil {
			idx.Entries = map[string]indexEntry{}
		}
	}
	return idx
}

// fill sets m.Info (and the quant if the name had none) from the cache or
// by reading the headers.
func (idx *index) fill(m *Model) {
	idx.mu.Lock()
	e, ok := idx.Entries[m.Path]
	idx.mu.Unlock()
	if !ok || e.Size != m.Size || e.ModNano != m.ModTime.UnixNano() {
		e = indexEntry{Size: m.Size, ModNano: m.ModTime.UnixNano()}
		e.Info, e.Problem = readInfo(m)
		idx.mu.Lock()
		idx.Entries[m.Path], idx.dirty = e, true
		idx.mu.Unlock()
	}
	m.Info = e.Info
	if m.Problem == "" {
		m.Problem = e.Problem
	}
	if m.Quant == "" && e.Info != nil {
		m.Quant = e.Info.FileType
	}
}

func (idx *index) save() {
	if idx.path == "" || !idx.dirty {
		return
	}
	if b, err := json.Marshal(idx); err == nil {
		if os.MkdirAll(filepath.Dir(idx.path), 0o755) == nil {
			writeAtomic(idx.path, b) // a cache: failing to write it costs only time
		}
	}
}

// readInfo reads a model's metadata: GGUF headers (every shard's tensors
// counted), or a safetensors checkpoint's config.json.
func readInfo(m *Model) (*hub.ModelInfo, string) {
	if m.Kind == hub.KindSafetensors {
		return configInfo(filepath.Join(m.Path, "config.json"))
	}
	var info *hub.ModelInfo
	for _, f := range m.Files {
		h, err := hub.ReadHeaderFile(f)
		if err != nil {
			return nil, fmt.Sprintf("unreadable GGUF header: %v", err)
		}
		shard := h.Info()
		if info == nil {
			info = &shard
			continue
		}
		info.ParamCount += shard.ParamCount
		info.WeightBytes += shard.WeightBytes
	}
	return info, ""
}

// hfConfig is the part of a transformers config.json we show.
type hfConfig struct {
	ModelType    string `json:"model_type"`
	MaxPositions int64  `json:"max_position_embeddings"`
	Layers       int64  `json:"num_hidden_layers"`
	Hidden       int64  `json:"hidden_size"`
	Intermediate int64  `json:"intermediate_size"`
	Heads        int64  `json:"num_attention_heads"`
	KVHeads      int64  `json:"num_key_value_heads"`
	HeadDim      int64  `json:"head_dim"`
	VocabSize    int64  `json:"vocab_size"`
}

func configInfo(path string) (*hub.ModelInfo, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "no config.json"
	}
	var c hfConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Sprintf("config.json: %v", err)
	}
	info := &hub.ModelInfo{Architecture: c.ModelType, ContextLength: c.MaxPositions, BlockCount: c.Layers,
		EmbeddingLength: c.Hidden, FeedForwardLength: c.Intermediate, HeadCount: c.Heads, HeadCountKV: c.KVHeads,
		KeyLength: c.HeadDim, ValueLength: c.HeadDim, VocabSize: c.VocabSize}
	if info.HeadCountKV == 0 {
		info.HeadCountKV = info.HeadCount
	}
	if info.KeyLength == 0 && info.HeadCount > 0 {
		info.KeyLength = info.EmbeddingLength / info.HeadCount
		info.ValueLength = info.KeyLength
	}
	return info, ""
}

// writeAtomic writes through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if werr != nil || serr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("library: writing %s: %v %v %v", path, werr, serr, cerr)
	}
	return os.Rename(tmp.Name(), path)
}

// foldersName is the list of user-added folders, in the data directory.
const foldersName = ".folders.json"

func loadFolders(dataDir string) []string {
	var f []string
	if b, err := os.ReadFile(filepath.Join(dataDir, foldersName)); err == nil {
		json.Unmarshal(b, &f)
	}
	return f
}

func saveFolders(dataDir string, folders []string) error {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("library: %w", err)
	}
	b, _ := json.Marshal(folders)
	return writeAtomic(filepath.Join(dataDir, foldersName), b)
}
