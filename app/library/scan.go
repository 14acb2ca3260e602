package library

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"flowchat/app/hub"
)

// found is a file seen by a scan (symlinks resolved for size and time).
type found struct {
	path string
	size int64
	mod  time.Time
}

// walkFiles lists the files under root by directory, skipping hidden
// entries (job files, .cache) and unfinished downloads (.part).
func walkFiles(root string) (map[string][]found, error) {
	byDir := map[string][]found{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable corner: skip it
		}
		name := d.Name()
		if p != root && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || strings.HasSuffix(name, ".part") {
			return nil
		}
		st, err := os.Stat(p) // follows the HF cache's symlinks to blobs
		if err != nil || !st.Mode().IsRegular() {
			return nil
		}
		dir := filepath.Dir(p)
		byDir[dir] = append(byDir[dir], found{path: p, size: st.Size(), mod: st.ModTime()})
		return nil
	})
	return byDir, err
}

// scanTree lists the models under root (the data dir or a user folder).
func scanTree(root string, src Source) ([]Model, error) {
	if root == "" {
		return nil, nil
	}
	byDir, err := walkFiles(root)
	if err != nil {
		return nil, fmt.Errorf("library: %w", err)
	}
	var out []Model
	for dir, files := range byDir {
		for _, m := range groupDir(dir, files) {
			m.Source = src
			if src == FromData {
				m.Repo = repoFromPath(root, dir)
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// repoFromPath reads owner/name from DataDir/owner/name/…, or "".
func repoFromPath(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) < 2 || parts[0] == "." {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// groupDir makes models of one directory's files: each GGUF (all shards
// of a split one together), and one safetensors checkpoint if there are
// safetensors weights.
func groupDir(dir string, files []found) []Model {
	groups := map[string]*Model{}
	var keys []string
	var st []found
	for _, f := range files {
		fn := hub.ParseFileName(f.path)
		switch fn.Ext {
		case "gguf":
			g, ok := groups[fn.Base]
			if !ok {
				g = &Model{Name: fn.Base, Kind: ggufKind(fn.Base), Quant: fn.Quant}
				groups[fn.Base] = g
				keys = append(keys, fn.Base)
			}
			addFile(g, f)
		case "safetensors":
			st = append(st, f)
		}
	}
	var out []Model
	for _, k := range keys {
		out = append(out, finishGGUF(*groups[k]))
	}
	if len(st) > 0 {
		out = append(out, safetensorsModel(dir, files))
	}
	return out
}

func ggufKind(base string) string {
	if strings.Contains(strings.ToLower(base), "mmproj") {
		return hub.KindProjector
	}
	return hub.KindGGUF
}

func addFile(m *Model, f found) {
	m.Files = append(m.Files, f.path)
	m.Size += f.size
	if f.mod.After(m.ModTime) {
		m.ModTime = f.mod
	}
}

// finishGGUF orders shards, points Path at shard 1, and notes missing ones.
func finishGGUF(m Model) Model {
	sort.SliceStable(m.Files, func(i, j int) bool {
		return hub.ParseFileName(m.Files[i]).Part < hub.ParseFileName(m.Files[j]).Part
	})
	m.Path = m.Files[0]
	for i, f := range m.Files {
		fn := hub.ParseFileName(f)
		if fn.Parts != 0 && (fn.Part != i+1 || fn.Parts != len(m.Files)) {
			m.Problem = fmt.Sprintf("split model: %d of %d parts present", len(m.Files), fn.Parts)
		}
	}
	return m
}

// safetensorsModel is the checkpoint in dir: its weights and support files.
func safetensorsModel(dir string, files []found) Model {
	m := Model{Name: filepath.Base(dir), Kind: hub.KindSafetensors, Path: dir}
	for _, f := range files {
		name := filepath.Base(f.path)
		if strings.HasSuffix(name, ".safetensors") || strings.HasSuffix(name, ".json") || name == "tokenizer.model" || name == "merges.txt" {
			addFile(&m, f)
		}
	}
	sort.Strings(m.Files)
	return m
}

// scanHFCache lists the models of a Hugging Face cache:
// models--owner--name/snapshots/<rev>/…, the snapshot refs/main points at
// first, and a file seen in a newer snapshot not listed again from an
// older one.
func scanHFCache(cache string) ([]Model, error) {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return nil, err
	}
	var out []Model
	for _, e := range entries {
		repo, ok := repoFromCacheName(e.Name())
		if !e.IsDir() || !ok {
			continue
		}
		out = append(out, scanCachedRepo(filepath.Join(cache, e.Name()), repo)...)
	}
	return out, nil
}

// repoFromCacheName turns "models--owner--name" into "owner/name".
func repoFromCacheName(n string) (string, bool) {
	rest, ok := strings.CutPrefix(n, "models--")
	owner, name, ok2 := strings.Cut(rest, "--")
	if !ok || !ok2 || owner == "" || name == "" {
		return "", false
	}
	return owner + "/" + name, true
}

func scanCachedRepo(repoDir, repo string) []Model {
	var out []Model
	seen := map[string]bool{} // names already listed from a preferred snapshot
	for _, rev := range snapshots(repoDir) {
		snap := filepath.Join(repoDir, "snapshots", rev)
		byDir, err := walkFiles(snap)
		if err != nil {
			continue
		}
		for dir, files := range byDir {
			rel, _ := filepath.Rel(snap, dir)
			for _, m := range groupDir(dir, files) {
				key := filepath.Join(rel, m.Name) + "\x00" + m.Kind
				if seen[key] {
					continue
				}
				seen[key] = true
				m.Source, m.Repo, m.Revision = FromHFCache, repo, rev
				if m.Kind == hub.KindSafetensors {
					m.Name = repo[strings.IndexByte(repo, '/')+1:]
				}
				out = append(out, m)
			}
		}
	}
	return out
}

// snapshots lists a cached repo's snapshot revisions, refs/main's first,
// then newest first.
func snapshots(repoDir string) []string {
	entries, err := os.ReadDir(filepath.Join(repoDir, "snapshots"))
	if err != nil {
		return nil
	}
	main := ""
	if b, err := os.ReadFile(filepath.Join(repoDir, "refs", "main")); err == nil {
		main = strings.TrimSpace(string(b))
	}
	type snap struct {
		rev string
		mod time.Time
	}
	var snaps []snap
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() {
			snaps = append(snaps, snap{e.Name(), info.ModTime()})
		}
	}
	sort.SliceStable(snaps, func(i, j int) bool {
		if (snaps[i].rev == main) != (snaps[j].rev == main) {
			return snaps[i].rev == main
		}
		return snaps[i].mod.After(snaps[j].mod)
	})
	revs := make([]string, len(snaps))
	for i, s := range snaps {
		revs[i] = s.rev
	}
	return revs
}
