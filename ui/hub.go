package ui

import (
	"context"
	"time"
)

// Search orders the Discover screen offers (always most first).
const (
	SortDownloads = "downloads"
	SortLikes     = "likes"
	SortUpdated   = "updated"
	SortTrending  = "trending"
)

// HubQuery is a model search on the hub.
type HubQuery struct {
	Text    string
	Sort    string // one of the Sort constants; "" = SortDownloads
	Library string // "gguf", "safetensors", or "" for every library
}

// HubModel is one search result: a repository.
type HubModel struct {
	ID               string // "owner/name"
	Downloads, Likes int64
	Updated          time.Time
	Gated            bool // its licence must be accepted on the hub first
}

// HubPage is one page of search results; Next is "" on the last page.
type HubPage struct {
	Models []HubModel
	Next   string
}

// RemoteFile is one downloadable model of a repository: one quant of a
// GGUF (one file, or every shard of a split file), or a safetensors
// checkpoint. One RemoteFile is one download.
type RemoteFile struct {
	Repo     string
	Name     string // base file name, or the repo's for safetensors
	Kind     string // "gguf", "mmproj" or "safetensors"
	Quant    string // "Q4_K_M", … ; "" when the name says none
	Size     int64  // bytes, every file
	Files    int
	Complete bool   // false when a split GGUF misses shards in the listing
	Selector string // names it to Fit and Download (its first file's path)
	// Recommended marks the quant a first download should take.
	Recommended bool
}

// Fit verdicts, as the badge shows them.
const (
	FitUnknown = "unknown"
	Fits       = "fits"
	FitTight   = "tight"
	FitNo      = "does not fit"
)

// FitReport is what a model's GGUF header (read with range requests, not
// downloaded) says, and whether it fits in this machine's free memory.
type FitReport struct {
	Verdict      string // one of the Fit constants
	Numbers      string // "needs 1.2 GiB RAM of 7.9 GiB free (context 4096, …)"
	Arch         string
	Params       uint64
	Layers       int64
	ContextTrain int64 // tokens
	RAM, FreeRAM uint64
}

// CatalogEntry is one recommended model for a first download.
type CatalogEntry struct {
	Name, Description string
	Repo, File        string // File is a Selector of Repo's files
	Quant, Params     string
	Size              int64 // approximate, bytes
	License           string
	Note              string // a spec or licence caveat; "" when none
}

// GatedError says a model needs a Hugging Face token with access.
// Message is the hub client's explanation (what to do); Page is where the
// licence is accepted.
type GatedError struct {
	Repo, Page, Message string
}

func (e *GatedError) Error() string { return e.Message }

// Hub searches the Hugging Face hub and reads models' headers.
type Hub interface {
	// Catalog is the curated list shown before any search.
	Catalog() []CatalogEntry
	Search(ctx context.Context, q HubQuery) (HubPage, error)
	// More fetches the page after one (HubPage.Next).
	More(ctx context.Context, next string) (HubPage, error)
	// Files groups a repository's files into downloadable models.
	Files(ctx context.Context, repo string) ([]RemoteFile, error)
	// Fit reads f's GGUF header over range requests and estimates the
	// memory it needs with a KV cache of contextLen tokens.
	Fit(ctx context.Context, f RemoteFile, contextLen int) (FitReport, error)
	// ModelPage is the repository's page on the hub.
	ModelPage(repo string) string
}

// Download job states.
const (
	JobQueued    = "queued"
	JobRunning   = "downloading"
	JobRetrying  = "retrying"
	JobVerifying = "verifying"
	JobPaused    = "paused"
	JobDone      = "done"
	JobFailed    = "failed"
	JobCanceled  = "canceled"
)

// DownloadJob is a download's latest state. Byte counts are for the whole
// job.
type DownloadJob struct {
	ID, Name, Repo string
	State          string // one of the Job constants
	File           string // the file being transferred
	Done, Total    int64  // bytes; Total 0 when unknown
	Speed          float64
	ETA            time.Duration // -1 when unknown
	RetryIn        time.Duration // with JobRetrying
	Attempt        int
	Err            string // with JobFailed, and the transient error with JobRetrying
	Path           string // what a loader opens, when known
}

// Final reports whether the job will not move by itself any more.
func (j DownloadJob) Final() bool {
	return j.State == JobPaused || j.State == JobDone || j.State == JobFailed || j.State == JobCanceled
}

// Downloader runs resumable, verified downloads.
type Downloader interface {
	// Watch sets the function told of every change of every job. It is
	// called from the downloads' goroutines and must return quickly.
	Watch(func(DownloadJob))
	// Restore registers the partial downloads an earlier run left, paused.
	Restore() ([]DownloadJob, error)
	Start(f RemoteFile) (DownloadJob, error)
	Jobs() []DownloadJob
	Pause(id string) error
	Resume(id string) error
	Cancel(id string) error
	// Close pauses every job, keeping its partial files for the next run.
	Close()
}
