package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"flowchat/app/hub"
	"flowchat/app/library"
	"flowchat/ui"
)

// guiHub adapts the hub client, its download manager, the model library
// (where downloads go) and the curated catalog to ui.Hub and
// ui.Downloader.
type guiHub struct {
	client  *hub.Client
	lib     *library.Library
	catalog []ui.CatalogEntry
	mgr     *hub.Manager
	// free is the memory fit verdicts are judged against.
	free func() hub.Free

	mu     sync.Mutex
	models map[string][]hub.RemoteModel // by repo, from its last listing
	paths  map[string]string            // job id → the file a loader opens
	watch  func(ui.DownloadJob)
}

var (
	_ ui.Hub        = (*guiHub)(nil)
	_ ui.Downloader = (*guiHub)(nil)
)

// newGUIHub makes the adapter; mo's Client and OnEvent are set here.
// catalog is assets.Catalog (a bad one lists nothing and is reported).
func newGUIHub(c *hub.Client, lib *library.Library, catalog []byte, mo hub.ManagerOptions) (*guiHub, error) {
	g := &guiHub{client: c, lib: lib, models: map[string][]hub.RemoteModel{}, paths: map[string]string{},
		free: func() hub.Free { return hub.Free{RAM: hub.FreeRAM()} }}
	mo.Client, mo.OnEvent = c, g.event
	g.mgr = hub.NewManager(mo)
	cat, err := library.ParseCatalog(catalog)
	if err != nil {
		return g, fmt.Errorf("the model catalog: %w", err)
	}
	for _, e := range cat.Models {
		g.catalog = append(g.catalog, catalogEntry(e))
	}
	return g, nil
}

func catalogEntry(e library.CatalogEntry) ui.CatalogEntry {
	var notes []string
	if !e.SpecAvailable {
		notes = append(notes, "needs spec "+e.Spec+", which this build lacks: "+e.SpecNote)
	}
	if e.LicenseNote != "" {
		notes = append(notes, e.LicenseNote)
	}
	return ui.CatalogEntry{Name: e.Name, Description: e.Description, Repo: e.Repo, File: e.File, Quant: e.Quant,
		Params: e.Params, Size: e.SizeBytes, License: e.License, Note: strings.Join(notes, "; ")}
}

func (g *guiHub) Catalog() []ui.CatalogEntry { return g.catalog }

var uiSorts = map[string]hub.Sort{ui.SortDownloads: hub.SortDownloads, ui.SortLikes: hub.SortLikes,
	ui.SortUpdated: hub.SortUpdated, ui.SortTrending: hub.SortTrending}

func (g *guiHub) Search(ctx context.Context, q ui.HubQuery) (ui.HubPage, error) {
	sq := hub.SearchQuery{Text: q.Text, Library: q.Library, All: q.Library == "", Sort: uiSorts[q.Sort], Limit: 30}
	p, err := g.client.Search(ctx, sq)
	return hubPage(p), plainError(err)
}

func (g *guiHub) More(ctx context.Context, next string) (ui.HubPage, error) {
	p, err := g.client.SearchPage(ctx, next)
	return hubPage(p), plainError(err)
}

func hubPage(p *hub.SearchPage) ui.HubPage {
	if p == nil {
		return ui.HubPage{}
	}
	out := ui.HubPage{Next: p.Next}
	for _, m := range p.Models {
		out.Models = append(out.Models, ui.HubModel{ID: m.ID, Downloads: m.Downloads, Likes: m.Likes, Updated: m.LastModified, Gated: m.Gated()})
	}
	return out
}

// Files lists repo and groups its files; the recommended quant is the one
// `flowchat pull REPO` takes.
func (g *guiHub) Files(ctx context.Context, repo string) ([]ui.RemoteFile, error) {
	files, err := g.client.ListFiles(ctx, repo, "")
	if err != nil {
		return nil, g.explain(repo, err)
	}
	models := hub.GroupFiles(files)
	g.mu.Lock()
	g.models[repo] = models
	g.mu.Unlock()
	rec, hasRec := hub.FindModel(models, "")
	out := make([]ui.RemoteFile, len(models))
	for i, m := range models {
		out[i] = ui.RemoteFile{Repo: repo, Name: m.Name, Kind: m.Kind, Quant: m.Quant, Size: m.Size, Files: len(m.Files),
			Complete: m.Complete, Selector: m.First().Path, Recommended: hasRec && m.First().Path == rec.First().Path}
	}
	return out, nil
}

// explain turns the hub's access errors into the window's gated note.
func (g *guiHub) explain(repo string, err error) error {
	if errors.Is(err, hub.ErrGated) {
		return &ui.GatedError{Repo: repo, Page: g.client.ModelPage(repo), Message: err.Error()}
	}
	return plainError(err)
}

// model finds f among its repo's last listing.
func (g *guiHub) model(f ui.RemoteFile) (hub.RemoteModel, error) {
	g.mu.Lock()
	models, ok := g.models[f.Repo]
	g.mu.Unlock()
	if !ok {
		return hub.RemoteModel{}, fmt.Errorf("the files of %s were not listed", f.Repo)
	}
	m, ok := hub.FindModel(models, f.Selector)
	if !ok {
		return hub.RemoteModel{}, fmt.Errorf("%s has no %s", f.Repo, f.Selector)
	}
	return m, nil
}

// Fit reads the header of every file of f with range requests and judges
// the estimate (CPU only, the engine's F32 KV cache) against free RAM.
func (g *guiHub) Fit(ctx context.Context, f ui.RemoteFile, contextLen int) (ui.FitReport, error) {
	m, err := g.model(f)
	if err != nil {
		return ui.FitReport{}, err
	}
	h, err := g.client.FetchModelHeaders(ctx, f.Repo, "", m)
	if err != nil {
		return ui.FitReport{}, g.explain(f.Repo, err)
	}
	v := hub.Judge(hub.EstimateMemory(h, hub.EstimateOptions{Context: contextLen}), g.free())
	info := h.Info()
	return ui.FitReport{Verdict: v.Fit.String(), Numbers: strings.TrimPrefix(v.String(), v.Fit.String()+": "),
		Arch: info.Architecture, Params: info.ParamCount, Layers: info.BlockCount, ContextTrain: info.ContextLength,
		RAM: v.Estimate.RAM, FreeRAM: v.Free.RAM}, nil
}

func (g *guiHub) ModelPage(repo string) string { return g.client.ModelPage(repo) }

func (g *guiHub) Watch(f func(ui.DownloadJob)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.watch = f
}

// event is the manager's OnEvent: it converts and passes on.
func (g *guiHub) event(e hub.Event) {
	g.mu.Lock()
	watch, path := g.watch, g.paths[e.JobID]
	g.mu.Unlock()
	if watch != nil {
		watch(downloadJob(e, path))
	}
}

var jobStates = map[hub.State]string{hub.Queued: ui.JobQueued, hub.Running: ui.JobRunning, hub.Retrying: ui.JobRetrying,
	hub.Verifying: ui.JobVerifying, hub.Paused: ui.JobPaused, hub.Done: ui.JobDone, hub.Failed: ui.JobFailed, hub.Canceled: ui.JobCanceled}

func downloadJob(e hub.Event, path string) ui.DownloadJob {
	j := ui.DownloadJob{ID: e.JobID, Name: e.Name, State: jobStates[e.State], File: e.File, Done: e.Done, Total: e.Total,
		Speed: e.Speed, ETA: e.ETA, RetryIn: e.RetryIn, Attempt: e.Attempt, Path: path}
	if e.Err != nil {
		j.Err = hub.Message(e.Err)
	}
	return j
}

// Restore finds the partial downloads under the library's data directory.
func (g *guiHub) Restore() ([]ui.DownloadJob, error) {
	ids, err := g.mgr.Restore(g.lib.DataDir)
	var out []ui.DownloadJob
	for _, id := range ids {
		if e, serr := g.mgr.Status(id); serr == nil {
			out = append(out, downloadJob(e, ""))
		}
	}
	return out, err
}

// Start downloads f into the library's folder for its repo.
func (g *guiHub) Start(f ui.RemoteFile) (ui.DownloadJob, error) {
	m, err := g.model(f)
	if err != nil {
		return ui.DownloadJob{}, err
	}
	dir := g.lib.DownloadDir(f.Repo)
	spec := hub.SpecFor(f.Repo, "", m, dir)
	path := filepath.Join(dir, filepath.FromSlash(m.First().Path))
	g.mu.Lock()
	g.paths[spec.ID()] = path
	g.mu.Unlock()
	id, err := g.mgr.Add(spec)
	if err != nil {
		return ui.DownloadJob{}, err
	}
	e, err := g.mgr.Status(id)
	j := downloadJob(e, path)
	j.Repo = f.Repo
	return j, err
}

func (g *guiHub) Jobs() []ui.DownloadJob {
	var out []ui.DownloadJob
	for _, e := range g.mgr.Jobs() {
		g.mu.Lock()
		path := g.paths[e.JobID]
		g.mu.Unlock()
		out = append(out, downloadJob(e, path))
	}
	return out
}

func (g *guiHub) Pause(id string) error  { return g.mgr.Pause(id) }
func (g *guiHub) Resume(id string) error { return g.mgr.Resume(id) }
func (g *guiHub) Cancel(id string) error { return g.mgr.Cancel(id) }
func (g *guiHub) Close()                 { g.mgr.Close() }

// plainError is err as the window shows it: an offline error is its
// sentence alone ("You appear to be offline…"), not the chain of what
// wrapped it with the request's URL.
func plainError(err error) error {
	var off *hub.OfflineError
	if errors.As(err, &off) {
		return off
	}
	return err
}
