package hubtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

func (h *Hub) serveHub(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	switch {
	case p == "/api/models":
		h.serveSearch(w, r)
	case strings.HasPrefix(p, "/api/models/"):
		h.serveTree(w, r, strings.TrimPrefix(p, "/api/models/"))
	case strings.Contains(p, "/resolve/"):
		h.serveResolve(w, r, strings.TrimPrefix(p, "/"))
	default:
		http.NotFound(w, r)
	}
}

// hubError answers as the hub does: a status, X-Error-Code and a JSON body.
func hubError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// authorize applies the hub's access rules; false when it answered.
func (h *Hub) authorize(w http.ResponseWriter, r *http.Request, repo *Repo, id string) bool {
	tok, hasTok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	valid := hasTok && slices.Contains(h.Tokens, tok)
	switch {
	case hasTok && !valid:
		hubError(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
	case repo == nil && !valid:
		hubError(w, http.StatusUnauthorized, "RepoNotFound", "Repository Not Found for url: "+r.URL.String()+". Please make sure you specified the correct `repo_id` and `repo_type`. If you are trying to access a private or gated repo, make sure you are authenticated.")
	case repo == nil:
		hubError(w, http.StatusNotFound, "RepoNotFound", "Repository not found")
	case repo.Gated && !valid:
		hubError(w, http.StatusUnauthorized, "GatedRepo", "Access to model "+id+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
	case repo.Gated && !slices.Contains(repo.Allowed, tok):
		hubError(w, http.StatusForbidden, "GatedRepo", "Access to model "+id+" is restricted and you are not in the authorized list. Visit "+h.URL()+"/"+id+" to ask for access.")
	default:
		return true
	}
	return false
}

type summary struct {
	ID           string    `json:"id"`
	MongoID      string    `json:"_id"`
	Author       string    `json:"author"`
	Downloads    int64     `json:"downloads"`
	Likes        int64     `json:"likes"`
	Tags         []string  `json:"tags"`
	PipelineTag  string    `json:"pipeline_tag"`
	LibraryName  string    `json:"library_name,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	LastModified time.Time `json:"lastModified"`
	Private      bool      `json:"private"`
	Gated        any       `json:"gated"`
}

func (h *Hub) serveSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rows := h.matching(q.Get("search"), q.Get("filter"), q.Get("author"))
	sortRows(rows, q.Get("sort"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 || limit > h.PageSize {
		limit = h.PageSize
	}
	start, _ := strconv.Atoi(q.Get("cursor"))
	page, next := paginate(rows, start, limit)
	if next > 0 {
		q.Set("cursor", strconv.Itoa(next))
		w.Header().Set("Link", fmt.Sprintf(`<%s/api/models?%s>; rel="next"`, h.URL(), q.Encode()))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(page)
}

func (h *Hub) matching(text, filter, author string) []summary {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []summary
	for _, id := range h.order {
		r := h.repos[id]
		owner, _, _ := strings.Cut(id, "/")
		if !strings.Contains(strings.ToLower(id), strings.ToLower(text)) ||
			filter != "" && !slices.Contains(r.Tags, filter) || author != "" && owner != author {
			continue
		}
		var gated any = false
		if r.Gated {
			gated = "manual"
		}
		out = append(out, summary{ID: id, MongoID: r.Commit[:24], Author: owner, Downloads: r.Downloads, Likes: r.Likes,
			Tags: r.Tags, PipelineTag: "text-generation", LibraryName: r.Library, CreatedAt: r.LastModified.Add(-time.Hour),
			LastModified: r.LastModified, Gated: gated})
	}
	return out
}

func sortRows(rows []summary, by string) {
	sort.SliceStable(rows, func(i, j int) bool {
		switch by {
		case "likes":
			return rows[i].Likes > rows[j].Likes
		case "lastModified":
			return rows[i].LastModified.After(rows[j].LastModified)
		}
		return rows[i].Downloads > rows[j].Downloads
	})
}

// paginate returns rows[start:start+limit] and the next start (0 at the end).
func paginate[T any](rows []T, start, limit int) ([]T, int) {
	if start < 0 || start > len(rows) {
		start = len(rows)
	}
	end := min(start+limit, len(rows))
	page := rows[start:end]
	if page == nil {
		page = []T{}
	}
	if end < len(rows) {
		return page, end
	}
	return page, 0
}

type lfsJSON struct {
	OID         string `json:"oid"`
	Size        int64  `json:"size"`
	PointerSize int64  `json:"pointerSize"`
}

type treeEntry struct {
	Type string   `json:"type"`
	OID  string   `json:"oid"`
	Size int64    `json:"size"`
	Path string   `json:"path"`
	LFS  *lfsJSON `json:"lfs,omitempty"`
}

// serveTree answers /api/models/{owner}/{name}/tree/{rev}.
func (h *Hub) serveTree(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 4 || parts[2] != "tree" {
		hubError(w, http.StatusNotFound, "", "not found")
		return
	}
	id := parts[0] + "/" + parts[1]
	repo, _ := h.lookup(id, "")
	if !h.authorize(w, r, repo, id) {
		return
	}
	entries := h.entries(repo)
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	page, next := paginate(entries, start, h.PageSize)
	if next > 0 {
		q := r.URL.Query()
		q.Set("cursor", strconv.Itoa(next))
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, h.URL(), r.URL.EscapedPath(), q.Encode()))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(page)
}

// entries lists a repo's files and the directories above them.
func (h *Hub) entries(repo *Repo) []treeEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []treeEntry
	dirs := map[string]bool{}
	for _, f := range repo.Files {
		for d := f.Path; strings.Contains(d, "/"); {
			d = d[:strings.LastIndexByte(d, '/')]
			if !dirs[d] {
				dirs[d] = true
				out = append(out, treeEntry{Type: "directory", OID: GitOID([]byte(d)), Path: d})
			}
		}
		e := treeEntry{Type: "file", OID: GitOID(f.Data), Size: int64(len(f.Data)), Path: f.Path}
		if f.LFS {
			e.LFS = &lfsJSON{OID: SHA256(f.Data), Size: int64(len(f.Data)), PointerSize: 134}
		}
		out = append(out, e)
	}
	return out
}

// serveResolve answers {owner}/{name}/resolve/{rev}/{path}: LFS files
// redirect to the CDN (with the hub's X-Linked-* headers), others are
// served here.
func (h *Hub) serveResolve(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.SplitN(rest, "/", 5)
	if len(parts) < 5 {
		hubError(w, http.StatusNotFound, "", "not found")
		return
	}
	id := parts[0] + "/" + parts[1]
	path, err := url.PathUnescape(parts[4])
	if err != nil {
		hubError(w, http.StatusBadRequest, "", "bad path")
		return
	}
	repo, file := h.lookup(id, path)
	if !h.authorize(w, r, repo, id) {
		return
	}
	if file == nil {
		hubError(w, http.StatusNotFound, "EntryNotFound", path+" does not exist on \"main\"")
		return
	}
	w.Header().Set("X-Repo-Commit", repo.Commit)
	if !file.LFS {
		h.serveFile(w, r, "hub", id+"/"+path, file)
		return
	}
	data := h.content(file)
	w.Header().Set("X-Linked-Etag", `"`+SHA256(data)+`"`)
	w.Header().Set("X-Linked-Size", strconv.Itoa(len(data)))
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/%s?X-Amz-Signature=%d", h.CDN.URL, id, url.PathEscape(path), time.Now().UnixNano()))
	w.WriteHeader(http.StatusFound)
	h.record(Request{Server: "hub", Method: r.Method, Path: r.URL.Path, Range: r.Header.Get("Range"), IfRange: r.Header.Get("If-Range"), Auth: r.Header.Get("Authorization"), Status: http.StatusFound})
}

func (h *Hub) content(f *File) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return f.Data
}

// serveCDN answers /repos/{owner}/{name}/{path} for LFS files.
func (h *Hub) serveCDN(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/repos/")
	parts := strings.SplitN(rest, "/", 3)
	if !ok || len(parts) < 3 {
		http.NotFound(w, r)
		return
	}
	_, file := h.lookup(parts[0]+"/"+parts[1], parts[2])
	if file == nil || !file.LFS {
		http.NotFound(w, r)
		return
	}
	h.serveFile(w, r, "cdn", rest, file)
}

// serveFile serves a file's bytes with Range, If-Range and ETag support
// (http.ServeContent), after applying the next queued fault.
func (h *Hub) serveFile(w http.ResponseWriter, r *http.Request, server, key string, f *File) {
	fault, _ := h.popFault(key)
	if fault.Replace != nil {
		h.mu.Lock()
		f.Data = fault.Replace
		h.mu.Unlock()
	}
	data := h.content(f)
	cw := &countingWriter{ResponseWriter: w, drop: fault.DropAfter, stall: fault.StallAfter, ctx: r}
	seen := Request{Server: server, Method: r.Method, Path: r.URL.Path, Range: r.Header.Get("Range"),
		IfRange: r.Header.Get("If-Range"), Auth: r.Header.Get("Authorization")}
	defer func() {
		seen.Status, seen.BytesSent = cw.code, cw.n
		h.record(seen)
	}()
	if fault.Delay > 0 {
		time.Sleep(fault.Delay)
	}
	if fault.Status != 0 {
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		cw.WriteHeader(fault.Status)
		return
	}
	if fault.IgnoreRange {
		r.Header.Del("Range")
	}
	w.Header().Set("ETag", etag(data))
	w.Header().Set("Accept-Ranges", "bytes")
	http.ServeContent(cw, r, "", time.Time{}, bytes.NewReader(data))
}

// countingWriter counts body bytes and injects drops and stalls.
type countingWriter struct {
	http.ResponseWriter
	n, drop, stall int64
	code           int
	ctx            *http.Request
}

func (c *countingWriter) WriteHeader(code int) {
	c.code = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	for _, limit := range []int64{c.drop, c.stall} {
		if limit > 0 && c.n+int64(len(p)) > limit {
			k := limit - c.n
			c.ResponseWriter.Write(p[:k])
			c.n += k
			c.ResponseWriter.(http.Flusher).Flush()
			if limit == c.stall {
				<-c.ctx.Context().Done() // hold the connection open, sending nothing
			}
			panic(http.ErrAbortHandler) // cut the connection mid-body
		}
	}
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}
