package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"flowchat/app/store"
	"flowchat/assets"
	"flowchat/ui"
	"flowchat/ui/fake"
)

// llamaRepo is the catalog entry the Discover screenshot opens, with the
// quants bartowski's repositories usually hold (sizes in bytes).
const llamaRepo = "bartowski/Llama-3.2-1B-Instruct-GGUF"

var llamaQuants = []struct {
	quant string
	size  int64
}{{"Q2_K", 581e6}, {"Q3_K_M", 691e6}, {"Q4_K_M", 808e6}, {"Q5_K_M", 912e6}, {"Q6_K", 1.02e9}, {"Q8_0", 1.32e9}, {"f16", 2.48e9}}

// screenshotHub is the fake hub the Discover screenshot shows: the real
// catalog and one repository, judged against 1.8 GiB of free memory so
// every badge appears.
func screenshotHub() (*fake.Hub, error) {
	var cat struct {
		Models []struct {
			Name, Description, Repo, File, Quant, Params, License string
			Size                                                  int64 `json:"size_bytes"`
		}
	}
	if err := json.Unmarshal(assets.Catalog, &cat); err != nil {
		return nil, err
	}
	h := &fake.Hub{Free: 1843 << 20, Params: 1.24e9}
	for _, m := range cat.Models {
		h.Entries = append(h.Entries, ui.CatalogEntry{Name: m.Name, Description: m.Description, Repo: m.Repo, File: m.File,
			Quant: m.Quant, Params: m.Params, Size: m.Size, License: m.License})
	}
	repo := fake.HubRepo{Model: ui.HubModel{ID: llamaRepo, Downloads: 182_000, Likes: 141, Updated: time.Date(2024, 9, 25, 0, 0, 0, 0, time.UTC)}}
	for _, q := range llamaQuants {
		name := "Llama-3.2-1B-Instruct-" + q.quant
		repo.Files = append(repo.Files, ui.RemoteFile{Repo: llamaRepo, Name: name, Kind: "gguf", Quant: strings.ToUpper(q.quant), Size: q.size,
			Files: 1, Complete: true, Selector: name + ".gguf", Recommended: q.quant == "Q4_K_M"})
	}
	h.Repos = append(h.Repos, repo)
	return h, nil
}

// openWindow opens the main window with the fake library, hub and
// downloads, in a temporary store.
func openWindow(dl *fake.Downloads) (fyne.Window, *ui.App, func(), error) {
	dir, err := os.MkdirTemp("", "flowchat-screenshot")
	if err != nil {
		return nil, nil, nil, err
	}
	files, err := store.Open(store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	h, err := screenshotHub()
	if err != nil {
		return nil, nil, nil, err
	}
	a := test.NewApp()
	a.Settings().SetTheme(dark{ui.Theme()})
	lib := &fake.Library{Files: []ui.ModelInfo{{Path: "/models/stories260K-demo.gguf", Name: "stories260K", Arch: "llama", Params: 260e3,
		Quant: "F32", FileSize: 1185376, ContextTrain: 512, Layers: 5, Bundled: true}}}
	w, app := ui.NewMainWindow(a, ui.Deps{Library: lib, Storage: files, DefaultModel: "/models/stories260K-demo.gguf", Hub: h, Downloads: dl})
	return w, app, func() { files.Close(); os.RemoveAll(dir) }, nil
}

// discover opens the Llama 3.2 1B catalog entry and checks the fit of
// every quant, ending on the recommended one.
func discover(out string) error {
	w, app, done, err := openWindow(&fake.Downloads{})
	if err != nil {
		return err
	}
	defer done()
	app.ShowScreen("Discover")
	time.Sleep(100 * time.Millisecond)
	results, files := lists(w.Content())
	results.Select(6) // Llama 3.2 1B Instruct
	time.Sleep(200 * time.Millisecond)
	for _, i := range []int{0, 1, 3, 4, 5, 6, 2} {
		files.Select(i)
		time.Sleep(60 * time.Millisecond)
	}
	relayout(w)
	return writePNG(out, w)
}

// downloads shows three jobs: one running, one paused from an earlier
// run, one done.
func downloads(out string) error {
	dl := &fake.Downloads{Leftover: []ui.DownloadJob{{ID: "q", Name: "Qwen2.5-1.5B-Instruct-Q4_K_M", Done: 412 << 20, Total: 1117 << 20, ETA: -1}}}
	w, app, done, err := openWindow(dl)
	if err != nil {
		return err
	}
	defer done()
	time.Sleep(100 * time.Millisecond)
	for _, f := range []ui.RemoteFile{{Repo: llamaRepo, Name: "Llama-3.2-1B-Instruct-Q4_K_M", Selector: "a", Size: 808e6},
		{Repo: "bartowski/SmolLM2-360M-Instruct-GGUF", Name: "SmolLM2-360M-Instruct-Q8_0", Selector: "b", Size: 386e6}} {
		if _, err := dl.Start(f); err != nil {
			return err
		}
	}
	app.ShowScreen("Downloads")
	jobs := dl.Jobs()
	dl.Progress(jobs[1].ID, 297e6, 21.4*(1<<20)) // the screen hears of jobs by their events
	dl.Progress(jobs[2].ID, 386e6, 0)
	time.Sleep(200 * time.Millisecond)
	relayout(w)
	return writePNG(out, w)
}

// lists finds the Discover screen's result list and file list.
func lists(root fyne.CanvasObject) (results, files *widget.List) {
	var found []*widget.List
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.List:
			found = append(found, x)
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case *container.AppTabs:
			walk(x.Selected().Content)
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(x).Objects() {
				walk(c)
			}
		}
	}
	walk(root)
	if len(found) < 2 {
		panic(fmt.Sprintf("found %d lists on the Discover screen", len(found)))
	}
	return found[0], found[1]
}
