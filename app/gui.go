package main

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"flowchat/engine"
	"flowchat/engine/chat"
	"flowchat/ui"
)

// hasDisplay reports whether a GUI can open.
func hasDisplay() bool {
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// gui opens the desktop app on the chosen (or demo) model; with no display
// it falls back to the terminal chat on the same model.
func gui(args []string, stdout, stderr io.Writer) error {
	if !hasDisplay() {
		io.WriteString(stderr, "flowchat: no display found; starting the terminal chat instead\n")
		return cmdChat(args, stdout, stderr)
	}
	fs := newFlags("", stderr)
	var mf modelFlags
	mf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	m, err := mf.load()
	if err != nil {
		return err
	}
	defer m.Close()
	// A plain `go build` does not read FyneApp.toml; set what it says here.
	fyneapp.SetMetadata(fyne.AppMetadata{ID: "io.flowchat.app", Name: "flowchat", Version: "0.1.0", Migrations: map[string]bool{"fyneDo": true}})
	a := fyneapp.NewWithID("io.flowchat.app")
	w := ui.NewMainWindow(a, &guiEngine{m: m, sess: m.NewSession(mf.ctx)})
	w.ShowAndRun()
	return nil
}

// guiEngine adapts an engine.Model to ui.Engine.
type guiEngine struct {
	mu   sync.Mutex // one generation at a time
	m    *engine.Model
	sess *engine.Session
}

func (g *guiEngine) ModelName() string { return g.m.Info.Name }

func (g *guiEngine) Generate(ctx context.Context, msgs []ui.Message, onPiece func(string)) (ui.Stats, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cm := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		cm[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	prompt, err := g.m.RenderChat(cm, true)
	if err != nil {
		return ui.Stats{}, err
	}
	ids := g.m.Tok.Encode(prompt, !strings.HasPrefix(prompt, g.m.Tok.Token(g.m.Tok.BOS())), true)
	t0 := time.Now()
	var first time.Duration
	opt := engine.GenerateOptions{MaxTokens: 512}
	opt.Sampling = defaultChatSampling()
	opt.OnPiece = func(s string) bool {
		if first == 0 {
			first = time.Since(t0)
		}
		onPiece(s)
		return true
	}
	st, err := g.sess.Generate(ctx, ids, opt)
	out := ui.Stats{PromptTokens: st.PromptTokens + st.CachedTokens, GenTokens: st.GenTokens, TimeToFirstToken: first, Total: time.Since(t0)}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return out, err
}
