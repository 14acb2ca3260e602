// Package library is the local model library: models downloaded into
// flowchat's data directory, plus models already on disk that are used in
// place and never copied — the Hugging Face cache
// (~/.cache/huggingface/hub/models--org--name/snapshots/<rev>/…) and
// folders the user adds. Each model is listed with the metadata of its GGUF
// header (read without reading the weights, and cached in an index).
package library

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"flowchat/app/hub"
)

// Source says where a model lives.
type Source int

const (
	FromData    Source = iota // downloaded into the data directory: flowchat's to delete
	FromHFCache               // the Hugging Face cache, used in place
	FromFolder                // a folder the user added, used in place
)

func (s Source) String() string {
	return [...]string{"downloaded", "huggingface cache", "folder"}[s]
}

// Model is one model on disk.
type Model struct {
	Name     string         `json:"name"`               // file name without extension and split suffix
	Kind     string         `json:"kind"`               // hub.KindGGUF, hub.KindProjector or hub.KindSafetensors
	Path     string         `json:"path"`               // what a loader opens: shard 1, or the safetensors directory
	Files    []string       `json:"files"`              // every file of the model
	Size     int64          `json:"size"`               // bytes, all files
	Source   Source         `json:"source"`             //
	Repo     string         `json:"repo,omitempty"`     // "owner/name" when known
	Revision string         `json:"revision,omitempty"` // the HF cache snapshot
	Quant    string         `json:"quant,omitempty"`    // from the name, else general.file_type
	Info     *hub.ModelInfo `json:"info,omitempty"`     // nil when the header could not be read
	Problem  string         `json:"problem,omitempty"`  // why Info is nil, or missing shards
	ModTime  time.Time      `json:"mod_time"`
}

// Library lists and deletes local models.
type Library struct {
	// DataDir holds downloaded models as DataDir/owner/name/<files> (the
	// app passes xdg.DataHome/flowchat/models).
	DataDir string
	// HFCache is the Hugging Face hub cache; "" skips it.
	HFCache string
	// Folders are user-added folders scanned in place.
	Folders []string
}

// New makes a library over dataDir, the default Hugging Face cache and the
// folders saved by AddFolder.
func New(dataDir string) *Library {
	l := &Library{DataDir: dataDir, HFCache: HFCacheDir()}
	l.Folders = loadFolders(dataDir)
	return l
}

// HFCacheDir is $HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub (the official client's rule).
func HFCacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	return filepath.Join(hub.HFHome(), "hub")
}

// DownloadDir is where a download of repo goes: DataDir/owner/name.
func (l *Library) DownloadDir(repo string) string {
	return filepath.Join(l.DataDir, filepath.FromSlash(repo))
}

// Scan lists every model, sorted by name. Unreadable places are skipped;
// the error joins what went wrong (the list is still valid).
func (l *Library) Scan() ([]Model, error) {
	idx := loadIndex(l.DataDir)
	var models []Model
	var errs []error
	add := func(ms []Model, err error) {
		models = append(models, ms...)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	add(scanTree(l.DataDir, FromData))
	if l.HFCache != "" {
		add(scanHFCache(l.HFCache))
	}
	for _, f := range l.Folders {
		add(scanTree(f, FromFolder))
	}
	for i := range models {
		idx.fill(&models[i])
	}
	idx.save()
	sort.SliceStable(models, func(i, j int) bool { return strings.ToLower(models[i].Name) < strings.ToLower(models[j].Name) })
	return models, errors.Join(errs...)
}

// Find returns the model whose name, path, repo or "repo:quant" is ref.
func Find(models []Model, ref string) (Model, bool) {
	for _, m := range models {
		if m.Path == ref || m.Name == ref || slices.Contains(m.Files, ref) {
			return m, true
		}
	}
	repo, quant, _ := strings.Cut(ref, ":")
	for _, m := range models {
		if m.Repo == repo && (quant == "" || strings.EqualFold(m.Quant, quant)) && m.Kind != hub.KindProjector {
			return m, true
		}
	}
	return Model{}, false
}

// AddFolder adds a folder to scan in place and remembers it in DataDir.
func (l *Library) AddFolder(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("library: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return fmt.Errorf("library: %s is not a folder", dir)
	}
	if !slices.Contains(l.Folders, abs) {
		l.Folders = append(l.Folders, abs)
	}
	return saveFolders(l.DataDir, l.Folders)
}

// RemoveFolder stops scanning a folder (its files are left alone).
func (l *Library) RemoveFolder(dir string) error {
	abs, _ := filepath.Abs(dir)
	l.Folders = slices.DeleteFunc(l.Folders, func(f string) bool { return f == abs || f == dir })
	return saveFolders(l.DataDir, l.Folders)
}
