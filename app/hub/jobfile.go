package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"flowchat/engine/fileio"
)

// JobSpec describes a download: files of one repository at one revision,
// into Dir (each file at Dir/<its repo path>).
type JobSpec struct {
	Repo     string     `json:"repo"`
	Revision string     `json:"revision"` // "" means main
	Name     string     `json:"name"`     // for people: "Llama-3.2-1B-Instruct Q4_K_M"
	Files    []FileSpec `json:"files"`
	Dir      string     `json:"-"`
}

// FileSpec is one file of a job with what it must turn out to be.
type FileSpec struct {
	Path   string `json:"path"`              // in the repo, slash-separated
	Size   int64  `json:"size"`              // bytes; 0 if unknown
	SHA256 string `json:"sha256,omitempty"`  // the LFS oid, hex
	GitOID string `json:"git_oid,omitempty"` // git blob sha1 for files outside LFS
}

// SpecFor makes the job that downloads m from repo into dir.
func SpecFor(repo, revision string, m RemoteModel, dir string) JobSpec {
	s := JobSpec{Repo: repo, Revision: revision, Name: m.Name, Dir: dir}
	for _, f := range m.Files {
		fs := FileSpec{Path: f.Path, Size: f.ContentSize(), SHA256: f.SHA256()}
		if fs.SHA256 == "" {
			fs.GitOID = f.OID
		}
		s.Files = append(s.Files, fs)
	}
	return s
}

// ID identifies a job by what it downloads, so the same pull after a
// restart finds the same .part files and job file.
func (s *JobSpec) ID() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", s.Repo, rev(s.Revision))
	for _, f := range s.Files {
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", f.Path, f.Size, f.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// validate refuses specs that would write outside Dir (a hostile listing
// could name "../../.bashrc").
func (s *JobSpec) validate() error {
	if !ValidRepoID(s.Repo) {
		return fmt.Errorf("hub: %q is not a model id like owner/name", s.Repo)
	}
	if len(s.Files) == 0 {
		return fmt.Errorf("hub: nothing to download for %s", s.Repo)
	}
	if s.Dir == "" {
		return fmt.Errorf("hub: no destination directory for %s", s.Repo)
	}
	for _, f := range s.Files {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) || strings.Contains(f.Path, "\\") || f.Size < 0 {
			return fmt.Errorf("hub: refusing file %q of %s: not a plain relative path", f.Path, s.Repo)
		}
	}
	return nil
}

// jobRecord is the job file: the spec plus what was learned while
// downloading. It sits in the destination directory beside the .part files.
type jobRecord struct {
	Version int          `json:"version"`
	ID      string       `json:"id"`
	Spec    JobSpec      `json:"spec"`
	Commit  string       `json:"commit,omitempty"` // the revision pinned on the first answer
	Files   []fileRecord `json:"file_state"`
	Paused  bool         `json:"paused,omitempty"`
}

type fileRecord struct {
	ETag         string `json:"etag,omitempty"`          // the server's validator for If-Range
	LastModified string `json:"last_modified,omitempty"` // the fallback validator
	Done         bool   `json:"done,omitempty"`          // verified and moved into place
}

// jobFileSuffix names job files: <dir>/.<id>.download.json.
const jobFileSuffix = ".download.json"

func jobFilePath(dir, id string) string { return filepath.Join(dir, "."+id+jobFileSuffix) }

// writeAtomic writes data to path through a synced temporary file and a
// rename, so a crash leaves the old or the new content, never a mix.
func writeAtomic(path string, data []byte) error { return fileio.WriteFile(path, data, 0o644) }

func saveRecord(path string, r *jobRecord) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	if err := writeAtomic(path, b); err != nil {
		return fmt.Errorf("hub: saving download state: %w", err)
	}
	return nil
}

func loadRecord(path string) (*jobRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &jobRecord{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("hub: download state %s: %w", path, err)
	}
	r.Spec.Dir = filepath.Dir(path)
	if err := r.Spec.validate(); err != nil || len(r.Files) != len(r.Spec.Files) || r.ID != r.Spec.ID() {
		return nil, fmt.Errorf("hub: download state %s is inconsistent", path)
	}
	return r, nil
}
