package ui_test

import (
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"flowchat/app/remote/remoteui"
	"flowchat/app/store"
	"flowchat/ui"
	"flowchat/ui/fake"
)

// lightTheme is the app theme's light variant.
type lightTheme struct{ fyne.Theme }

func (l lightTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return l.Theme.Color(n, theme.VariantLight)
}

// auditReply is a streamed reply with the markdown a chat shows.
const auditReply = "It keeps the **keys and values** of every token already processed, so each new token " +
	"attends to them without recomputing the prompt:\n\n- prefill fills it once\n- each decode step appends one row per layer\n\n" +
	"```go\nfunc kvBytes(layers, ctx, kvDim int) int {\n\treturn layers * 2 * ctx * kvDim * 2 // fp16\n}\n```"

// fullHarness starts the app with every optional screen: hub (offline
// when hubErr is set), downloads, Lab, remotes and the local server.
func fullHarness(t *testing.T, hubErr error, welcome bool) (*harness, *fake.Downloads) {
	hub := testHub()
	hub.Err = hubErr
	dl := &fake.Downloads{}
	dir := t.TempDir()
	loc := store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}
	keys := store.Keys{Dir: filepath.Join(dir, "keys")}
	h := startHarnessWith(t, scripted(auditReply), loc, func(d *ui.Deps) {
		lib := d.Library.(*fake.Library)
		lib.Files = append(lib.Files, f32Model)
		lib.GPUStatus = ui.GPUStatus{Reason: "libcuda.so.1 not found; running on CPU"}
		d.Hub, d.Downloads, d.Lab, d.Remotes, d.Server, d.Welcome = hub, dl, &fake.Lab{}, remoteui.New(keys), &fakeServer{}, welcome
	})
	return h, dl
}

// capture lays the window out at size in th and writes it to dir/name.png.
func capture(t *testing.T, h *harness, th fyne.Theme, size fyne.Size, dir, name string) {
	t.Helper()
	fyne.CurrentApp().Settings().SetTheme(th)
	h.pumpIdle()
	h.w.Content().Refresh()
	h.w.Resize(size.AddWidthHeight(1, 1))
	h.w.Resize(size)
	h.pumpIdle()
	f, err := os.Create(filepath.Join(dir, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, h.w.Canvas().Capture()); err != nil {
		t.Fatal(err)
	}
}

// TestAuditScreens renders every screen in both theme variants at a
// typical and a small window size, for a look by eye:
//
//	FLOWCHAT_AUDIT_DIR=/tmp/audit go test -tags x11 ./ui -run TestAuditScreens
func TestAuditScreens(t *testing.T) {
	dir := os.Getenv("FLOWCHAT_AUDIT_DIR")
	if dir == "" {
		t.Skip("FLOWCHAT_AUDIT_DIR not set")
	}
	themes := map[string]fyne.Theme{"dark": darkTheme{ui.Theme()}, "light": lightTheme{ui.Theme()}}
	sizes := map[string]fyne.Size{"1200": fyne.NewSize(1200, 800), "900": fyne.NewSize(900, 600)}
	for tn, th := range themes {
		for sn, size := range sizes {
			shot := func(h *harness, name string) {
				capture(t, h, th, size, dir, fmt.Sprintf("%s-%s-%s", name, tn, sn))
			}
			for name, f := range map[string]func(*testing.T, func(*harness, string)){
				"chat": auditChat, "screens": auditScreens, "offline": auditOffline, "welcome": auditWelcome} {
				if only := os.Getenv("FLOWCHAT_AUDIT_ONLY"); only == "" || only == name {
					f(t, shot)
				}
			}
		}
	}
}

func auditChat(t *testing.T, shot func(*harness, string)) {
	h, _ := fullHarness(t, nil, false)
	defer h.cleanup()
	for _, title := range []string{"Summarise the Inferflow paper", "Regex for ISO dates"} {
		h.say(title)
		h.a.NewConversation()
	}
	h.say("What does a KV cache do?")
	test.Type(h.a.Composer(), "And with a Q8 cache?")
	h.pumpIdle()
	shot(h, "chat")
	for _, d := range h.a.DecodingSelect().Options {
		h.a.DecodingSelect().SetSelected(d)
		h.pumpIdle()
		shot(h, "sampling-"+d)
	}
	h.a.SideTabs().SelectIndex(1)
	h.SelectModelByName("big-test")
	shot(h, "model")
	test.Tap(h.a.ServerToggle())
	h.pumpIdle()
	shot(h, "server")
	h.a.ShowLoadDialog()
	h.pumpIdle()
	shot(h, "load-dialog")
}

// SelectModelByName selects the model panel's row for name.
func (h *harness) SelectModelByName(name string) {
	for i, m := range h.a.ListedModels() {
		if m.Name == name {
			h.a.SelectModel(i)
		}
	}
	h.pumpIdle()
}

func auditScreens(t *testing.T, shot func(*harness, string)) {
	h, dl := fullHarness(t, nil, false)
	defer h.cleanup()
	h.a.SideTabs().SelectIndex(2)
	shot(h, "remote")
	h.a.ShowScreen("Discover")
	h.pumpIdle()
	shot(h, "discover-catalog")
	h.search("llama", 3)
	h.a.DiscoverOpen(1)
	h.pumpUntil("files", func() bool { return len(h.a.RepoFiles()) > 0 })
	h.a.RepoSelect(1)
	h.pumpIdle()
	shot(h, "discover")
	h.a.ShowScreen("Downloads")
	h.pumpIdle()
	shot(h, "downloads-empty")
	test.Tap(h.a.DownloadButton())
	j := dl.Jobs()[0]
	dl.Progress(j.ID, j.Total/3, 21.4*(1<<20))
	h.pumpIdle()
	shot(h, "downloads")
	h.a.ShowScreen("Quantization Lab")
	h.pumpUntil("the model list", func() bool { return h.a.LabModel().SelectedIndex() >= 0 })
	shot(h, "lab-start")
	h.a.LabLevels().SetSelected(h.a.LabLevels().Options)
	test.Tap(h.a.LabRun())
	h.pumpUntil("results", func() bool { return !h.a.LabRunning() })
	shot(h, "lab-charts")
	h.a.LabTabs().SelectIndex(1)
	shot(h, "lab-table")
	h.a.LabTabs().SelectIndex(2)
	test.Tap(h.a.SideGenerate())
	h.pumpUntil("side rows", func() bool { return len(h.a.SideRows()) > 0 })
	shot(h, "lab-side")
}

func auditOffline(t *testing.T, shot func(*harness, string)) {
	h, _ := fullHarness(t, errors.New("You appear to be offline: huggingface.co cannot be reached."), false)
	defer h.cleanup()
	h.a.ShowScreen("Discover")
	h.a.DiscoverQuery().SetText("llama")
	h.a.DiscoverQuery().OnSubmitted("llama")
	time.Sleep(50 * time.Millisecond)
	h.pumpIdle()
	shot(h, "discover-offline")
	h.a.ShowScreen("Chat")
	h.pumpIdle()
	shot(h, "chat-after-offline")
}

func auditWelcome(t *testing.T, shot func(*harness, string)) {
	h, _ := fullHarness(t, nil, true)
	defer h.cleanup()
	h.pumpIdle()
	shot(h, "welcome")
}
