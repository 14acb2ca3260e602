package library

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrDeclined is returned when the confirmation callback says no.
var ErrDeclined = errors.New("library: deletion not confirmed")

// ErrInPlace is returned for models in a user-added folder: flowchat only
// uses those files, and leaves deleting them to the user.
var ErrInPlace = errors.New("library: the model is used in place from a folder you added; delete the file yourself or remove the folder from the library")

// Delete removes a model after confirm approves the exact list of paths
// that will go. Downloaded models lose their files (and empty parent
// folders up to DataDir). Hugging Face cache models lose their snapshot
// links and the blobs no other snapshot uses, as the official cache
// cleaner does.
func (l *Library) Delete(m Model, confirm func(m Model, paths []string) bool) error {
	var paths []string
	switch m.Source {
	case FromFolder:
		return ErrInPlace
	case FromData:
		if err := l.owned(m); err != nil {
			return err
		}
		paths = m.Files
	case FromHFCache:
		var err error
		if paths, err = l.cachePaths(m); err != nil {
			return err
		}
	}
	if confirm == nil || !confirm(m, paths) {
		return ErrDeclined
	}
	var errs []error
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	for _, p := range m.Files {
		l.pruneDirs(filepath.Dir(p), m.Source)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("library: deleting %s: %w", m.Name, err)
	}
	return nil
}

// owned checks that every file is inside DataDir (a Model is plain data
// and could have been built by hand).
func (l *Library) owned(m Model) error {
	for _, f := range m.Files {
		if !within(l.DataDir, f) {
			return fmt.Errorf("library: %s is not in %s; refusing to delete it", f, l.DataDir)
		}
	}
	return nil
}

func within(root, p string) bool {
	if root == "" {
		return false
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// cachePaths lists what deleting a cached model removes: its snapshot
// symlinks, and each blob they point to unless another snapshot of the
// repo points to it too.
func (l *Library) cachePaths(m Model) ([]string, error) {
	var paths []string
	for _, f := range m.Files {
		if !within(l.HFCache, f) {
			return nil, fmt.Errorf("library: %s is not in the Hugging Face cache %s", f, l.HFCache)
		}
		paths = append(paths, f)
		blob, err := filepath.EvalSymlinks(f)
		if err != nil || blob == f || !within(l.HFCache, blob) {
			continue
		}
		if !l.blobShared(repoDirOf(l.HFCache, f), blob, m.Files) {
			paths = append(paths, blob)
		}
	}
	return paths, nil
}

// repoDirOf returns cache/models--o--n for a path under it.
func repoDirOf(cache, p string) string {
	rel, _ := filepath.Rel(cache, p)
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return filepath.Join(cache, first)
}

// blobShared reports whether a snapshot link other than those in skip
// resolves to blob.
func (l *Library) blobShared(repoDir, blob string, skip []string) bool {
	shared := false
	filepath.WalkDir(filepath.Join(repoDir, "snapshots"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || shared || slices.Contains(skip, p) {
			return nil
		}
		if t, err := filepath.EvalSymlinks(p); err == nil && t == blob {
			shared = true
		}
		return nil
	})
	return shared
}

// pruneDirs removes now-empty folders from dir up to (not including) the
// data dir or the cache's snapshot folder.
func (l *Library) pruneDirs(dir string, src Source) {
	root := l.DataDir
	if src == FromHFCache {
		root = l.HFCache
	}
	for within(root, dir) && filepath.Base(dir) != "snapshots" {
		if os.Remove(dir) != nil { // fails unless empty
			return
		}
		dir = filepath.Dir(dir)
	}
}
