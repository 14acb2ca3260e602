package quantlab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"flowchat/engine/eval"
)

// fakeLab is a Lab that returns one row per level and counts its runs.
type fakeLab struct{ runs int }

func (f *fakeLab) compute(_ context.Context, base string, opt eval.LabOptions) (*eval.LabReport, error) {
	f.runs++
	rep := &eval.LabReport{Model: base, Ctx: opt.Ctx, Chunks: 3, BasePPL: 4}
	for i, l := range opt.Levels {
		rep.Levels = append(rep.Levels, eval.LevelResult{Level: l, BitsPerWeight: 8 - float64(i), PPL: 4 + float64(i), KLD: 0.01 * float64(i+1), Top1: 0.9})
	}
	return rep, nil
}

// copyModel puts a model-like file in a temporary directory, so its
// modification time can change.
func copyModel(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(p, []byte("GGUF not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCacheKey checks what makes a cached result stale: the model file's
// time or size, the text, the levels, the chunk count; and what does not:
// the same request again, or Text "" against the bundled text itself.
func TestCacheKey(t *testing.T) {
	model := copyModel(t)
	f := &fakeLab{}
	opt := Options{CacheDir: t.TempDir(), Compute: f.compute}
	req := Request{Model: model, Levels: []string{"Q8", "Q4"}, MaxChunks: 2}
	steps := []struct {
		name   string
		change func(r *Request)
		runs   int
	}{
		{"first", func(*Request) {}, 1},
		{"same again", func(*Request) {}, 1},
		{"bundled text named", func(r *Request) { r.Text = DefaultText }, 1},
		{"chunks", func(r *Request) { r.MaxChunks = 3 }, 2},
		{"levels", func(r *Request) { r.Levels = []string{"Q8"} }, 3},
		{"text", func(r *Request) { r.Text = "other text" }, 4},
		{"model touched", func(*Request) { touch(t, model, time.Hour) }, 5},
		{"model rewritten", func(*Request) { os.WriteFile(model, []byte("GGUF longer than before"), 0o644) }, 6},
		{"same again", func(*Request) {}, 6},
	}
	prev := 0
	for _, s := range steps {
		s.change(&req)
		res, err := Run(context.Background(), req, opt)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if f.runs != s.runs || res.Cached != (s.runs == prev) {
			t.Errorf("%s: %d runs, want %d (cached %v)", s.name, f.runs, s.runs, res.Cached)
		}
		prev = s.runs
	}
	if _, err := Run(context.Background(), req, Options{CacheDir: opt.CacheDir, Compute: f.compute, NoCache: true}); err != nil || f.runs != 7 {
		t.Errorf("NoCache: %d runs, err %v; want a 7th run", f.runs, err)
	}
}

// TestCacheDamagedEntry recomputes over a truncated or foreign entry and
// leaves a good one; a failed run stores nothing.
func TestCacheDamagedEntry(t *testing.T) {
	model := copyModel(t)
	f := &fakeLab{}
	dir := t.TempDir()
	req := Request{Model: model, Levels: []string{"Q8"}}
	key, err := req.Key()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, key.ID()+".json")
	for i, junk := range []string{`{"version":1,"key":`, `{"version":1,"key":{"kind":"lab"},"value":{}}`, `[]`} {
		if err := os.WriteFile(path, []byte(junk), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), req, Options{CacheDir: dir, Compute: f.compute})
		if err != nil || res.Cached || f.runs != i+1 {
			t.Fatalf("entry %q: cached %v, %d runs, err %v", junk, res.Cached, f.runs, err)
		}
	}
	if res, err := Run(context.Background(), req, Options{CacheDir: dir, Compute: f.compute}); err != nil || !res.Cached {
		t.Errorf("the rewritten entry is not a hit: %v", err)
	}
	boom := errors.New("boom")
	failing := func(context.Context, string, eval.LabOptions) (*eval.LabReport, error) { return nil, boom }
	req.Levels = []string{"Q2"}
	if _, err := Run(context.Background(), req, Options{CacheDir: dir, Compute: failing}); !errors.Is(err, boom) {
		t.Errorf("failing run: err %v", err)
	}
	if saved, _ := List(dir); len(saved) != 1 {
		t.Errorf("%d entries listed after a failed run, want 1", len(saved))
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestValidateLevels rejects unknown names before any work.
func TestValidateLevels(t *testing.T) {
	f := &fakeLab{}
	_, err := Run(context.Background(), Request{Model: copyModel(t), Levels: []string{"Q8", "Q7", "nope/x.gguf"}}, Options{Compute: f.compute})
	if err == nil || f.runs != 0 || !strings.Contains(err.Error(), "Q7") || !strings.Contains(err.Error(), "x.gguf") {
		t.Errorf("err %v after %d runs; want both bad levels named, nothing run", err, f.runs)
	}
	if _, err := Run(context.Background(), Request{Model: copyModel(t)}, Options{Compute: f.compute}); !errors.Is(err, ErrNoLevels) {
		t.Errorf("no levels: %v", err)
	}
	if got := ParseLevels(" Q8, ,Q4_B32,Q3H "); !reflect.DeepEqual(got, []string{"Q8", "Q4_B32", "Q3H"}) {
		t.Errorf("ParseLevels = %q", got)
	}
}

func touch(t *testing.T, path string, d time.Duration) {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime().Add(d), st.ModTime().Add(d)); err != nil {
		t.Fatal(err)
	}
}
