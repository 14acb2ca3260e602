// Command screenshot renders the chat window with a scripted conversation,
// without a display, and writes it as PNG for the README:
//
//	go run -tags x11 ./ui/internal/screenshot docs/screenshot.png
//
// It drives the real window (ui.NewMainWindow) on Fyne's test driver and
// software painter, with the fake engine streaming at a plausible speed.
package main

import (
	"context"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

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
		"```go\nbytes := layers * 2 * ctx * kvDim * 2 // fp16\n// 16 × 2 × 4096 × 512 × 2 = 128 MiB\n```\n" +
			"Small next to the weights, but it grows with every token of context."},
}

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

func (w waitable) Generate(ctx context.Context, msgs []ui.Message, on func(string)) (ui.Stats, error) {
	defer func() { w.done <- struct{}{} }()
	return w.Engine.Generate(ctx, msgs, on)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: screenshot OUT.png")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	a := test.NewApp()
	a.Settings().SetTheme(dark{theme.DefaultTheme()})
	turn := 0
	e := waitable{done: make(chan struct{}), Engine: &fake.Engine{
		Model: "stories-1B-Q4_K_M",
		Delay: 12 * time.Millisecond,
		Reply: func([]ui.Message) string { return script[turn].reply },
	}}
	w := ui.NewMainWindow(a, e)
	for turn = range script {
		composer := w.Canvas().Focused()
		test.Type(composer, script[turn].ask)
		composer.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
		<-e.done
		// The test driver runs fyne.Do inline on the generating goroutine:
		// give it a moment to finish the turn after Generate returned.
		time.Sleep(100 * time.Millisecond)
	}
	test.Type(w.Canvas().Focused(), "And with a Q8 cache?")
	relayout(w)
	return writePNG(out, w)
}

// relayout lays the whole window out again. A real driver does this each
// frame for widgets whose minimum size changed; the test canvas does not.
func relayout(w fyne.Window) {
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
