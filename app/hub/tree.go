package hub

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// RepoFile is one file of a repository (an entry of /api/models/{repo}/tree).
type RepoFile struct {
	Type string   `json:"type"` // "file" or "directory"
	Path string   `json:"path"`
	Size int64    `json:"size"` // bytes of the content (for LFS files, of the real file)
	OID  string   `json:"oid"`  // git blob sha1
	LFS  *LFSInfo `json:"lfs,omitempty"`
}

// LFSInfo describes a file stored in LFS: OID is the sha256 of its content.
type LFSInfo struct {
	OID         string `json:"oid"`
	Size        int64  `json:"size"`
	PointerSize int64  `json:"pointerSize"`
}

// SHA256 is the expected sha256 of the file's content (hex), or "" for a
// file kept in git (whose GitOID is a sha1 over "blob <size>\x00" + content).
func (f *RepoFile) SHA256() string {
	if f.LFS == nil {
		return ""
	}
	return strings.ToLower(f.LFS.OID)
}

// ContentSize is the real size of the file (LFS size when there is one).
func (f *RepoFile) ContentSize() int64 {
	if f.LFS != nil && f.LFS.Size > 0 {
		return f.LFS.Size
	}
	return f.Size
}

// ListFiles lists every file of repo at revision ("" = main), following
// the tree endpoint's pagination. Directories are left out.
func (c *Client) ListFiles(ctx context.Context, repo, revision string) ([]RepoFile, error) {
	if !ValidRepoID(repo) {
		return nil, fmt.Errorf("hub: %q is not a model id like owner/name", repo)
	}
	next := fmt.Sprintf("%s/api/models/%s/tree/%s?recursive=true&expand=false", c.endpoint(), repo, url.PathEscape(rev(revision)))
	var files []RepoFile
	for pages := 0; next != ""; pages++ {
		if pages > 1000 {
			return nil, fmt.Errorf("hub: model %s: file listing did not end after 1000 pages", repo)
		}
		var page []RepoFile
		var err error
		if next, err = c.getJSON(ctx, next, what{repo: repo}, &page); err != nil {
			return nil, fmt.Errorf("hub: listing files: %w", err)
		}
		for _, f := range page {
			if f.Type == "file" || f.Type == "" {
				files = append(files, f)
			}
		}
	}
	return files, nil
}
