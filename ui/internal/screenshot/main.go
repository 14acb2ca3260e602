// Command screenshot renders the main window with a scripted conversation,
// without a display, and writes it as PNG for the README:
//
//	go run -tags x11 ./ui/internal/screenshot docs/screenshot.png
//	go run -tags x11 ./ui/internal/screenshot -screen discover docs/screenshot-discover.png
//	go run -tags x11 ./ui/internal/screenshot -screen downloads docs/screenshot-downloads.png
//
// (The Lab's screenshot shows real results, so it is taken by a test of
// the app with the engine behind it: see app/gui_lab_test.go.)
//
// It drives the real window (ui.NewMainWindow) on Fyne's test driver and
// software painter, with the fake library and engine streaming at a
// plausible speed and a store in a temporary directory seeded with a few
// earlier conversations.
package main

import (
	"context"
	"flag"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"flowchat/app/presets"
	"flowchat/app/store"
	"flowchat/ui"
	"flowchat/ui/fake"
)

// script is the conversation: what the user types, and the reply.
var script = []struct{ ask, reply string }{
	{"What does a KV cache do?",
		"It keeps the **keys and values** of every token already processed, so each new token " +
			"attends to them without recomputing the whole prompt:\n\n" +
			"- prefill fills it once, at *matrix–matrix* speed\n" +
			"- each decode step appends one row per layer\n\n" +
			"Memory grows as `layers × 2 × ctx × kv_dim` values."},
	{"Show the size for a 1B model in Go",
		"```go\nfunc kvBytes(layers, ctx, kvDim int) int {\n\treturn layers * 2 * ctx * kvDim * 2 // fp16\n}\n\n// 16 × 2 × 4096 × 512 × 2 = 128 MiB\n```\n" +
			"Small next to the weights, but it grows with every token of context."},
}

// earlier conversations listed in the sidebar.
var earlier = []string{"Summarise the Inferflow paper", "Regex for ISO dates", "Why is Q4_K compute-bound?", "Bedtime story about a robot"}

// dark forces the dark variant: the test app's settings report none.
type dark struct{ fyne.Theme }

func (d dark) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return d.Theme.Color(n, theme.VariantDark)
}

// waitable signals when each reply has been generated.
type waitable struct {
	*fake.Engine
	done chan struct{}
}

func (w waitable) Generate(ctx context.Context, req ui.Request, on func(string)) (ui.Stats, error) {
	defer func() { w.done <- struct{}{} }()
	return w.Engine.Generate(ctx, req, on)
}

func main() {
	screen := flag.String("screen", "chat", "chat | discover | downloads")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: screenshot [-screen chat|discover|downloads] OUT.png")
		os.Exit(2)
	}
	run := map[string]func(string) error{"chat": run, "discover": discover, "downloads": downloads}[*screen]
	if run == nil {
		fmt.Fprintln(os.Stderr, "screenshot: unknown screen", *screen)
		os.Exit(2)
	}
	if err := run(flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	dir, err := os.MkdirTemp("", "flowchat-screenshot")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files, err := seededStore(dir, modelPath)
	if err != nil {
		return err
	}
	defer files.Close()

	a := test.NewApp()
	a.Settings().SetTheme(dark{ui.Theme()})
	turn := 0
	e := waitable{done: make(chan struct{}, 1), Engine: &fake.Engine{
		Model: "Llama-3.2-1B-Instruct", Context: 4096, Delay: 12 * time.Millisecond,
		Reply: func([]ui.Message) string { return script[turn].reply },
	}}
	loaded := make(chan struct{}, 1)
	model := ui.ModelInfo{Path: modelPath, Name: "Llama-3.2-1B-Instruct", Arch: "llama", Params: 1.24e9, Quant: "Q4_K", FileSize: 808 << 20, ContextTrain: 131072, Layers: 16}
	lib := &fake.Library{
		Files: []ui.ModelInfo{model,
			{Path: "/models/stories260K-demo.gguf", Name: "stories260K", Arch: "llama", Params: 260e3, Quant: "F32", FileSize: 1185376, ContextTrain: 512, Layers: 5, Bundled: true},
			{Path: "/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", Name: "Qwen2.5-7B-Instruct", Arch: "qwen2", Params: 7.6e9, Quant: "Q4_K", FileSize: 4680 << 20, ContextTrain: 32768, Layers: 28}},
		GPUStatus: ui.GPUStatus{Reason: "libcuda.so.1 not found; running on CPU"},
		Engine: func(ui.ModelInfo, ui.LoadOptions) *fake.Engine {
			loaded <- struct{}{}
			return e.Engine
		},
	}
	w, _ := ui.NewMainWindow(a, ui.Deps{Library: wrapLib{lib, e}, Storage: files, DefaultModel: model.Path})
	<-loaded
	time.Sleep(200 * time.Millisecond)
	for turn = range script {
		composer := w.Canvas().Focused()
		test.Type(composer, script[turn].ask)
		composer.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
		<-e.done
		// The test driver runs fyne.Do inline on the generating goroutine:
		// give it a moment to finish the turn after Generate returned.
		time.Sleep(150 * time.Millisecond)
	}
	test.Type(w.Canvas().Focused(), "And with a Q8 cache?")
	time.Sleep(200 * time.Millisecond)
	relayout(w)
	return writePNG(out, w)
}

// wrapLib hands out the waitable engine.
type wrapLib struct {
	*fake.Library
	e waitable
}

func (l wrapLib) Load(ctx context.Context, path string, o ui.LoadOptions) (ui.Engine, error) {
	if _, err := l.Library.Load(ctx, path, o); err != nil {
		return nil, err
	}
	return l.e, nil
}

// modelPath is the model the screenshot shows loaded.
const modelPath = "/models/Llama-3.2-1B-Instruct-Q4_K_M.gguf"

// seededStore opens a store in dir holding the earlier conversations and
// sampling settings for the model whose chart shows a truncating stage.
func seededStore(dir, model string) (*store.Files, error) {
	files, err := store.Open(store.Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "s.json")}, nil)
	if err != nil {
		return nil, err
	}
	var st store.Settings
	p := presets.Default()
	p.TopK, p.Temperature = 4, 0.7
	st.SetModel(model, store.ModelSettings{Sampling: p})
	files.SaveSettingsAsync(st)
	files.Flush()
	for i, title := range earlier {
		c := store.New()
		c.Add("", store.Message{Role: store.RoleUser, Content: title})
		c.Updated = time.Now().Add(-time.Duration(i+1) * 26 * time.Hour)
		if err := files.Save(c); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// relayout lays the whole window out again. A real driver does this each
// frame for widgets whose minimum size changed; the test canvas does not.
func relayout(w fyne.Window) {
	w.Content().Refresh()
	size := w.Canvas().Size()
	w.Resize(size.AddWidthHeight(1, 1))
	w.Resize(size)
}

func writePNG(path string, w fyne.Window) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, w.Canvas().Capture()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
