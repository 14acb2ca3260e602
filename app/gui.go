package main

import (
	"cmp"
	"fmt"
	"io"
	"log"
	"os"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"flowchat/app/hub"
	"flowchat/app/remote/remoteui"
	"flowchat/app/store"
	"flowchat/assets"
	"flowchat/ui"
)

// hasDisplay reports whether a GUI can open.
func hasDisplay() bool {
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// memoryPoll is how often the status bar's memory figure is refreshed.
const memoryPoll = 2 * time.Second

// gui opens the desktop app; with no display it falls back to the terminal
// chat. The window opens at once and the model (--model, else the one
// used last, else the bundled demo) loads in the background.
func gui(args []string, stdout, stderr io.Writer) error {
	if !hasDisplay() {
		return chatWithNote(args, stdout, stderr, "flowchat: no display found; starting the terminal chat instead\n")
	}
	fs := newFlags("", stdout, stderr)
	var mf modelFlags
	mf.register(fs)
	mf.registerSpec(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	demo, err := demoModelPath()
	if err != nil {
		fmt.Fprintf(stderr, "flowchat: %v\n", err)
	}
	// Save errors happen on the store's goroutine; once the window exists
	// they are shown in its status bar too.
	var window atomic.Pointer[ui.App]
	files, err := store.Open(store.DefaultLocations(), func(err error) {
		fmt.Fprintf(stderr, "flowchat: saving: %v\n", err)
		if w := window.Load(); w != nil {
			fyne.Do(func() { w.ReportError(err) })
		}
	})
	if err != nil {
		return err
	}
	defer files.Close()
	// Fyne logs through the standard logger: drop its harmless errors. It
	// also expects the user cache directory to exist, which a fresh
	// account (or an empty XDG_CACHE_HOME) does not have.
	log.SetOutput(&fyneLog{out: stderr})
	if d, err := os.UserCacheDir(); err == nil {
		os.MkdirAll(d, 0o700)
	}
	// A plain `go build` does not read FyneApp.toml; set what it says here.
	fyneapp.SetMetadata(fyne.AppMetadata{ID: "io.flowchat.app", Name: "flowchat", Version: cmp.Or(version, appVersion), Migrations: map[string]bool{"fyneDo": true}})
	a := fyneapp.NewWithID("io.flowchat.app")
	a.Settings().SetTheme(ui.Theme()) // WCAG AA text contrast
	models := modelLibrary()
	lib := &guiLibrary{spec: mf.spec, demo: demo, threads: mf.threads, ctx: mf.ctx, models: models, devices: mf.gpu.devices}
	hubs, err := newGUIHub(hub.NewClient(hub.Options{}), models, assets.Catalog, hub.ManagerOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "flowchat: %v\n", err)
	}
	w, app := ui.NewMainWindow(a, ui.Deps{
		Library: lib, Storage: files, Model: mf.model, DefaultModel: demo, PollMemory: memoryPoll,
		Hub: hubs, Downloads: hubs, Lab: newGUILab(quantlabCacheDir(), mf.threads), Welcome: true,
		Remotes: remoteui.New(files.Keys()), Server: &guiServer{port: 8080},
	})
	window.Store(app)
	w.ShowAndRun()
	return nil
}
