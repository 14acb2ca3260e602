package ui_test

import (
	"errors"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"flowchat/app/store"
	"flowchat/ui"
	"flowchat/ui/fake"
)

// welcomeHub offers three catalog models on a machine with 7.5 GiB free:
// a 1 GiB one that fits, a 6 GiB one that is tight and a 9 GiB one that
// does not fit.
func welcomeHub() *fake.Hub {
	hub := testHub()
	hub.Free = 15 << 29
	hub.Entries = []ui.CatalogEntry{
		{Name: "Tiny Chat", Description: "small", Repo: "acme/tiny-GGUF", File: "m-Q2_K.gguf", Quant: "Q2_K", Params: "135M", Size: 1 << 30},
		{Name: "Too Big Chat", Description: "large", Repo: "other/llama-chat-GGUF", File: "m-Q8_0-00001-of-00002.gguf", Quant: "Q8_0", Params: "8B", Size: 9 << 30},
		{Name: "Llama Chat", Description: "medium", Repo: "acme/llama-GGUF", File: "m-Q4_K_M.gguf", Quant: "Q4_K_M", Params: "3B", Size: 6 << 30},
	}
	return hub
}

func welcomeHarness(t *testing.T, hub *fake.Hub, dl *fake.Downloads, loc store.Locations) *harness {
	return startHarnessWith(t, scripted("ok"), loc, func(d *ui.Deps) { d.Hub, d.Downloads, d.Welcome = hub, dl, true })
}

func tempLocations(t *testing.T) store.Locations {
	dir := t.TempDir()
	return store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}
}

// TestWelcomeFlow: the first start opens the welcome screen, which says
// what the demo is and offers the catalog models that fit (best first,
// with their badge); one click downloads one and opens it in a new chat.
// The screen is not shown at the next start, and Help ▸ Welcome reopens
// it.
func TestWelcomeFlow(t *testing.T) {
	hub, dl, loc := welcomeHub(), &fake.Downloads{}, tempLocations(t)
	h := welcomeHarness(t, hub, dl, loc)
	if !h.a.WelcomeOpen() {
		t.Fatal("the first start did not show the welcome screen")
	}
	h.pumpUntil("the fit checks", func() bool { return strings.HasPrefix(h.a.WelcomeState(), "One click") })
	if text := h.a.WelcomeText(); !strings.Contains(text, "continues the text you type") || !strings.Contains(text, "does not chat") || !strings.Contains(text, "offline") {
		t.Errorf("the welcome screen does not say what the demo is:\n%s", text)
	}
	names, badges, get := h.a.WelcomeRows()
	if !slices.Equal(names, []string{"Tiny Chat", "Llama Chat"}) || !slices.Equal(badges, []string{ui.Fits, ui.FitTight}) {
		t.Fatalf("offered %v %v; want the fitting ones, best first", names, badges)
	}
	if dir := os.Getenv("FLOWCHAT_SHOT_DIR"); dir != "" {
		welcomeShot(t, h, filepath.Join(dir, "screenshot-welcome.png"))
	}

	before := h.a.Conversation()
	test.Tap(get[0])
	jobs := dl.Jobs()
	if len(jobs) != 1 || jobs[0].Repo != "acme/tiny-GGUF" {
		t.Fatalf("downloads %+v", jobs)
	}
	j := jobs[0]
	h.lib.Files = append(h.lib.Files, ui.ModelInfo{Path: j.Path, Name: "tiny-chat", Arch: "llama", Params: 135e6, Quant: "Q2_K", FileSize: j.Total, ContextTrain: 8192})
	dl.Progress(j.ID, j.Total/2, 1e6)
	h.pumpIdle()
	if !h.a.WelcomeOpen() {
		t.Error("the welcome screen closed before the download ended")
	}
	dl.Progress(j.ID, j.Total, 1e6)
	h.pumpUntil("the downloaded model to load", func() bool {
		return h.a.Engine() != nil && h.a.Engine().Info().Name == "tiny-chat" && !h.a.Loading()
	})
	if h.a.Conversation() == before || len(h.a.Conversation().Messages) != 0 || h.a.WelcomeOpen() {
		t.Errorf("after the download: new chat %v, welcome open %v", h.a.Conversation() != before, h.a.WelcomeOpen())
	}
	if !h.a.Settings().WelcomeShown {
		t.Error("the settings do not remember that the welcome was shown")
	}

	h2 := h.restart()
	if h2.a.WelcomeOpen() {
		t.Error("the welcome screen was shown again at the next start")
	}
	h2.a.ShowWelcome() // Help ▸ Welcome…
	if !h2.a.WelcomeOpen() {
		t.Error("Help ▸ Welcome did not open it")
	}
}

// TestWelcomeDemoAndOffline: offline, the welcome screen says so in plain
// words, and that the demo works offline once (the hub's sentence says
// it, and the screen said it again); the demo is one click away.
func TestWelcomeDemoAndOffline(t *testing.T) {
	hub := welcomeHub()
	hub.Err = errors.New("the hub answered 503 Service Unavailable")
	h := welcomeHarness(t, hub, &fake.Downloads{}, tempLocations(t))
	h.pumpUntil("the check to fail", func() bool { return strings.HasPrefix(h.a.WelcomeState(), "the hub answered") })
	if st := h.a.WelcomeState(); !strings.Contains(st, "demo model above works offline") {
		t.Errorf("state after a hub error %q", st)
	}
	h.cleanup()
	hub = welcomeHub()
	// app/hub's OfflineError, word for word
	hub.Err = errors.New("You appear to be offline: huggingface.co cannot be reached. Check the network connection (or HF_ENDPOINT) and try again; the bundled demo model works without one.")
	h = welcomeHarness(t, hub, &fake.Downloads{}, tempLocations(t))
	h.pumpUntil("the check to fail", func() bool { return strings.HasPrefix(h.a.WelcomeState(), "You appear to be offline") })
	if st := h.a.WelcomeState(); strings.Count(st, "demo model") != 1 {
		t.Errorf("offline state names the demo model %d times: %q", strings.Count(st, "demo model"), st)
	}
	h.a.UnloadModel()
	h.pumpIdle()
	test.Tap(h.a.WelcomeDemo())
	h.pumpUntil("the demo to load", func() bool { return h.a.Engine() != nil && !h.a.Loading() })
	if h.a.Engine().Info().Name != "tiny-test" || h.a.WelcomeOpen() || len(h.a.Conversation().Messages) != 0 {
		t.Errorf("demo: engine %q, welcome open %v", h.a.Engine().Info().Name, h.a.WelcomeOpen())
	}
}

// darkTheme is the default theme's dark variant (the test app has none).
type darkTheme struct{ fyne.Theme }

func (d darkTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return d.Theme.Color(n, theme.VariantDark)
}

// welcomeShot writes the window with the welcome screen as PNG for the
// docs (FLOWCHAT_SHOT_DIR=$PWD/docs go test -tags x11 ./ui -run TestWelcomeFlow).
func welcomeShot(t *testing.T, h *harness, path string) {
	fyne.CurrentApp().Settings().SetTheme(darkTheme{ui.Theme()})
	h.w.Content().Refresh()
	size := h.w.Canvas().Size()
	h.w.Resize(size.AddWidthHeight(1, 1))
	h.w.Resize(size)
	h.pumpIdle()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, h.w.Canvas().Capture()); err != nil {
		t.Fatal(err)
	}
}
