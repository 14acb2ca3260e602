package fake

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"flowchat/ui"
)

// Hub is an in-memory ui.Hub: repositories with their files, and a fit
// verdict per file. A gated repository answers Files and Fit with a
// *ui.GatedError.
type Hub struct {
	Entries []ui.CatalogEntry
	Repos   []HubRepo
	// PageSize is the results per page; 0 = all on one.
	PageSize int
	// Free is the free RAM fit verdicts are judged against; 0 = 8 GiB.
	Free uint64
	// Params is the parameter count headers report; 0 = the file's size.
	Params uint64
	// Err, when set, is every request's error (an offline hub).
	Err error

	mu       sync.Mutex
	searches []ui.HubQuery
	fits     []string
}

// HubRepo is a repository of the fake hub.
type HubRepo struct {
	Model ui.HubModel
	Files []ui.RemoteFile
}

var _ ui.Hub = (*Hub)(nil)

func (h *Hub) Catalog() []ui.CatalogEntry { return slices.Clone(h.Entries) }

// Search matches ids containing the text (any case), in the query's order.
func (h *Hub) Search(ctx context.Context, q ui.HubQuery) (ui.HubPage, error) {
	h.mu.Lock()
	h.searches = append(h.searches, q)
	h.mu.Unlock()
	if h.Err != nil {
		return ui.HubPage{}, h.Err
	}
	return h.page(q, h.matching(q), 0), ctx.Err()
}

func (h *Hub) matching(q ui.HubQuery) []ui.HubModel {
	var rows []ui.HubModel
	for _, r := range h.Repos {
		if strings.Contains(strings.ToLower(r.Model.ID), strings.ToLower(q.Text)) {
			rows = append(rows, r.Model)
		}
	}
	slices.SortStableFunc(rows, func(a, b ui.HubModel) int {
		if q.Sort == ui.SortLikes {
			return int(b.Likes - a.Likes)
		}
		return int(b.Downloads - a.Downloads)
	})
	return rows
}

// More returns the page that starts at the offset Next encodes
// ("start:sort:text").
func (h *Hub) More(ctx context.Context, next string) (ui.HubPage, error) {
	if h.Err != nil {
		return ui.HubPage{}, h.Err
	}
	parts := strings.SplitN(next, ":", 3)
	start, err := strconv.Atoi(parts[0])
	if len(parts) != 3 || err != nil {
		return ui.HubPage{}, fmt.Errorf("bad page token %q", next)
	}
	q := ui.HubQuery{Sort: parts[1], Text: parts[2]}
	return h.page(q, h.matching(q), start), ctx.Err()
}

func (h *Hub) page(q ui.HubQuery, rows []ui.HubModel, start int) ui.HubPage {
	if h.PageSize <= 0 || start+h.PageSize >= len(rows) {
		return ui.HubPage{Models: rows[min(start, len(rows)):]}
	}
	return ui.HubPage{Models: rows[start : start+h.PageSize], Next: fmt.Sprintf("%d:%s:%s", start+h.PageSize, q.Sort, q.Text)}
}

// Searches returns the queries searched so far.
func (h *Hub) Searches() []ui.HubQuery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.searches)
}

func (h *Hub) repo(id string) (*HubRepo, error) {
	for i := range h.Repos {
		if h.Repos[i].Model.ID == id {
			return &h.Repos[i], nil
		}
	}
	return nil, fmt.Errorf("model %s not found", id)
}

func (h *Hub) Files(ctx context.Context, repo string) ([]ui.RemoteFile, error) {
	if h.Err != nil {
		return nil, h.Err
	}
	r, err := h.repo(repo)
	if err != nil {
		return nil, err
	}
	if r.Model.Gated {
		return nil, h.gated(repo)
	}
	return slices.Clone(r.Files), ctx.Err()
}

func (h *Hub) gated(repo string) error {
	return &ui.GatedError{Repo: repo, Page: h.ModelPage(repo), Message: "model " + repo + " needs a Hugging Face token: it is gated"}
}

// Fit says a file needs its size plus 64 KiB per context token, judged
// against Free as the hub package does (fits up to 80%).
func (h *Hub) Fit(ctx context.Context, f ui.RemoteFile, contextLen int) (ui.FitReport, error) {
	h.mu.Lock()
	h.fits = append(h.fits, f.Selector)
	h.mu.Unlock()
	if r, err := h.repo(f.Repo); err == nil && r.Model.Gated {
		return ui.FitReport{}, h.gated(f.Repo)
	}
	free := h.Free
	if free == 0 {
		free = 8 << 30
	}
	need := uint64(f.Size) + uint64(contextLen)<<16
	v := ui.Fits
	switch {
	case need > free:
		v = ui.FitNo
	case need*5 > free*4:
		v = ui.FitTight
	}
	return ui.FitReport{Verdict: v, Numbers: fmt.Sprintf("needs %s RAM of %s free (context %d, 0 GPU layers)", gib(need), gib(free), contextLen),
		Arch: "llama", Params: cmp.Or(h.Params, uint64(f.Size)), Layers: 16, ContextTrain: 8192, RAM: need, FreeRAM: free}, ctx.Err()
}

func gib(n uint64) string { return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30)) }

// Fits returns the selectors whose fit was asked, in order.
func (h *Hub) Fits() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.fits)
}

func (h *Hub) ModelPage(repo string) string { return "https://hub.example/" + repo }

// Downloads is an in-memory ui.Downloader whose jobs move only when the
// test says: Progress sends bytes, Finish completes a job.
type Downloads struct {
	mu       sync.Mutex
	watch    func(ui.DownloadJob)
	jobs     map[string]*ui.DownloadJob
	order    []string
	Leftover []ui.DownloadJob // what Restore finds
	closed   bool
}

var _ ui.Downloader = (*Downloads)(nil)

func (d *Downloads) Watch(f func(ui.DownloadJob)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.watch = f
}

func (d *Downloads) add(j ui.DownloadJob) {
	if d.jobs == nil {
		d.jobs = map[string]*ui.DownloadJob{}
	}
	if _, ok := d.jobs[j.ID]; !ok {
		d.order = append(d.order, j.ID)
	}
	d.jobs[j.ID] = &j
}

func (d *Downloads) Restore() ([]ui.DownloadJob, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, j := range d.Leftover {
		j.State = ui.JobPaused
		d.add(j)
	}
	return d.snapshot(), nil
}

func (d *Downloads) Start(f ui.RemoteFile) (ui.DownloadJob, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	j := ui.DownloadJob{ID: f.Repo + ":" + f.Selector, Name: f.Name, Repo: f.Repo, State: ui.JobRunning, Total: f.Size, ETA: -1,
		Path: "/downloads/" + f.Repo + "/" + f.Selector}
	d.add(j)
	return j, nil
}

func (d *Downloads) snapshot() []ui.DownloadJob {
	out := make([]ui.DownloadJob, 0, len(d.order))
	for _, id := range d.order {
		out = append(out, *d.jobs[id])
	}
	return out
}

func (d *Downloads) Jobs() []ui.DownloadJob {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.snapshot()
}

// change edits job id and tells the watcher, outside the lock.
func (d *Downloads) change(id string, f func(j *ui.DownloadJob)) error {
	d.mu.Lock()
	j, ok := d.jobs[id]
	if !ok {
		d.mu.Unlock()
		return fmt.Errorf("no download %q", id)
	}
	f(j)
	ev, watch := *j, d.watch
	d.mu.Unlock()
	if watch != nil {
		watch(ev)
	}
	return nil
}

func (d *Downloads) Pause(id string) error {
	return d.change(id, func(j *ui.DownloadJob) { j.State, j.Speed, j.ETA = ui.JobPaused, 0, -1 })
}

func (d *Downloads) Resume(id string) error {
	return d.change(id, func(j *ui.DownloadJob) { j.State = ui.JobRunning })
}

func (d *Downloads) Cancel(id string) error {
	return d.change(id, func(j *ui.DownloadJob) { j.State, j.Done = ui.JobCanceled, 0 })
}

// Progress reports done bytes at speed bytes/s; reaching the total
// finishes the job.
func (d *Downloads) Progress(id string, done int64, speed float64) error {
	return d.change(id, func(j *ui.DownloadJob) {
		j.Done, j.Speed = done, speed
		j.ETA = -1
		if speed > 0 {
			j.ETA = time.Duration(float64(j.Total-done) / speed * float64(time.Second))
		}
		if j.Total > 0 && done >= j.Total {
			j.State, j.Done = ui.JobDone, j.Total
		}
	})
}

// Fail stops a job with an error.
func (d *Downloads) Fail(id string, err error) error {
	return d.change(id, func(j *ui.DownloadJob) { j.State, j.Err = ui.JobFailed, err.Error() })
}

func (d *Downloads) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
}

// Closed reports whether Close was called.
func (d *Downloads) Closed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}
