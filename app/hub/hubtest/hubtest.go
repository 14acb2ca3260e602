// Package hubtest is a fake Hugging Face hub on loopback for tests: the
// search, tree and resolve endpoints with the hub's JSON shapes and error
// headers, a second "CDN" server that resolve/ redirects LFS files to, and
// fault injection (dropped connections, ignored ranges, changed files,
// 5xx/429 answers, stalls). The GUI's tests can drive it as well as the
// hub package's.
package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// File is a file of a fake repository.
type File struct {
	Path string
	Data []byte
	LFS  bool // stored in LFS: listed with an sha256 oid, served by the CDN
}

// Repo is a fake model repository.
type Repo struct {
	ID           string
	Files        []*File
	Gated        bool     // needs a valid token listed in Allowed
	Allowed      []string // tokens granted access to a gated repo
	Downloads    int64
	Likes        int64
	Tags         []string // "gguf" is how the library filter matches
	Library      string
	LastModified time.Time
	Commit       string // 40 hex; default derived from the id
}

// Fault changes how one request for a file is answered. Faults queued for
// a path are used one per request, in order.
type Fault struct {
	Status      int           // answer with this status and no body (500, 503, 429, …)
	RetryAfter  string        // Retry-After header with Status
	DropAfter   int64         // send this many body bytes, then cut the connection
	StallAfter  int64         // send this many body bytes, then send nothing until the client gives up
	IgnoreRange bool          // answer 200 with the whole file even to a Range request
	Replace     []byte        // before answering, replace the file content (its ETag changes)
	Delay       time.Duration // wait before answering
}

// Request is one request the fake hub or CDN saw.
type Request struct {
	Server    string // "hub" or "cdn"
	Method    string
	Path      string
	Range     string
	IfRange   string
	Auth      string
	Status    int
	BytesSent int64
}

// Hub is the fake hub. Create it with New; Close it when done.
type Hub struct {
	Server *httptest.Server // the hub: API and resolve/
	CDN    *httptest.Server // where resolve/ redirects LFS files
	// Tokens are the valid tokens; any other bearer token gets 401.
	Tokens []string
	// PageSize is the number of entries per page of search and tree.
	PageSize int

	mu     sync.Mutex
	repos  map[string]*Repo
	order  []string
	faults map[string][]Fault // by file path (repo/path)
	log    []Request
}

// New starts a fake hub and CDN on loopback.
func New() *Hub {
	h := &Hub{repos: map[string]*Repo{}, faults: map[string][]Fault{}, PageSize: 1000}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serveHub))
	h.CDN = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	return h
}

// URL is the hub's base URL (what HF_ENDPOINT would be set to).
func (h *Hub) URL() string { return h.Server.URL }

// Close stops both servers.
func (h *Hub) Close() {
	h.Server.CloseClientConnections()
	h.CDN.CloseClientConnections()
	h.Server.Close()
	h.CDN.Close()
}

// AddRepo adds (or replaces) a repository.
func (h *Hub) AddRepo(r *Repo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Commit == "" {
		sum := sha1.Sum([]byte(r.ID))
		r.Commit = hex.EncodeToString(sum[:])
	}
	if _, ok := h.repos[r.ID]; !ok {
		h.order = append(h.order, r.ID)
	}
	h.repos[r.ID] = r
}

// AddFault queues faults for requests of the file path in repo.
func (h *Hub) AddFault(repo, path string, f ...Fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := repo + "/" + path
	h.faults[k] = append(h.faults[k], f...)
}

// Requests returns the requests seen so far.
func (h *Hub) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.log...)
}

// BytesServed is the body bytes sent for requests whose path ends in
// suffix.
func (h *Hub) BytesServed(suffix string) int64 {
	var n int64
	for _, r := range h.Requests() {
		if strings.HasSuffix(r.Path, suffix) {
			n += r.BytesSent
		}
	}
	return n
}

func (h *Hub) record(r Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, r)
}

// SHA256 is the hex sha256 of data (an LFS oid).
func SHA256(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// GitOID is the git blob id of data: sha1("blob <len>\x00" + data).
func GitOID(data []byte) string {
	s := sha1.New()
	fmt.Fprintf(s, "blob %d\x00", len(data))
	s.Write(data)
	return hex.EncodeToString(s.Sum(nil))
}

// etag is the strong validator of a file's content (the CDN's ETag).
func etag(data []byte) string { return `"` + SHA256(data)[:32] + `"` }

func (h *Hub) popFault(key string) (Fault, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.faults[key]
	if len(q) == 0 {
		return Fault{}, false
	}
	h.faults[key] = q[1:]
	return q[0], true
}

// lookup finds a repo and file by id and path.
func (h *Hub) lookup(repo, path string) (*Repo, *File) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.repos[repo]
	if r == nil {
		return nil, nil
	}
	for _, f := range r.Files {
		if f.Path == path {
			return r, f
		}
	}
	return r, nil
}

// findBySHA finds the LFS file whose content hash is oid.
func (h *Hub) findBySHA(oid string) (string, *File) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, r := range h.repos {
		for _, f := range r.Files {
			if f.LFS && SHA256(f.Data) == oid {
				return id + "/" + f.Path, f
			}
		}
	}
	return "", nil
}
