package fake

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"strings"
	"sync"
	"time"

	"flowchat/ui"
)

// Lab is an in-memory ui.Lab. Run reports progress for the base and each
// level, waiting for Gate before each step when it is set; its report has
// a row per level and two small charts. Reports are kept by request, so a
// repeated run is a cached one, as with the real cache.
type Lab struct {
	// Gate, when not nil, must yield a value before each progress step.
	Gate chan struct{}
	// Err fails every run.
	Err error

	mu    sync.Mutex
	runs  int
	cache map[string]ui.LabReport
	last  *ui.LabReport
	sides []ui.SideRequest
}

var _ ui.Lab = (*Lab)(nil)

// Levels offers a base and four levels.
func (l *Lab) Levels() []ui.Choice {
	return []ui.Choice{{Value: "F32", Label: "F32 · base"}, {Value: "Q8", Label: "Q8 · 8.5 bits"},
		{Value: "Q4_B32", Label: "Q4_B32 · 5 bits"}, {Value: "Q3H", Label: "Q3H · 4 bits"}, {Value: "Q2", Label: "Q2 · 3 bits"}}
}

func (l *Lab) DefaultLevels() []string { return []string{"F32", "Q8", "Q4_B32"} }

func key(r ui.LabRequest) string { return fmt.Sprintf("%+v", r) }

// Run computes a report, or returns the cached one at once.
func (l *Lab) Run(ctx context.Context, r ui.LabRequest, progress func(ui.LabProgress)) (ui.LabReport, error) {
	l.mu.Lock()
	if rep, ok := l.cache[key(r)]; ok {
		l.mu.Unlock()
		rep.Cached = true
		return rep, nil
	}
	l.runs++
	l.mu.Unlock()
	for i := -1; i < len(r.Levels); i++ {
		if err := l.step(ctx); err != nil {
			return ui.LabReport{}, err
		}
		p := ui.LabProgress{Index: i, Levels: len(r.Levels), Stage: "eval", Frac: 0.5}
		if i >= 0 {
			p.Level = r.Levels[i]
		} else {
			p.Stage = "base"
		}
		progress(p)
	}
	if l.Err != nil {
		return ui.LabReport{}, l.Err
	}
	rep := Report(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cache == nil {
		l.cache = map[string]ui.LabReport{}
	}
	l.cache[key(r)] = rep
	l.last = &rep
	return rep, nil
}

func (l *Lab) step(ctx context.Context) error {
	if l.Gate == nil {
		return ctx.Err()
	}
	select {
	case <-l.Gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Report is the fake's report for r: perplexity grows as levels shrink.
func Report(r ui.LabRequest) ui.LabReport {
	rep := ui.LabReport{Request: r, Summary: fmt.Sprintf("%s · ctx %d · base PPL 4.1", r.Model, r.Ctx),
		Header: []string{"level", "bits/weight", "PPL"}, Right: []bool{false, true, true}, Created: time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)}
	for i, lv := range r.Levels {
		rep.Rows = append(rep.Rows, []string{lv, fmt.Sprintf("%.2f", 32/float64(i+1)), fmt.Sprintf("%.3f", 4.1+0.2*float64(i))})
	}
	for i, t := range []string{"Size vs quality", "Perplexity"} {
		img := image.NewRGBA(image.Rect(0, 0, 64, 40))
		img.Set(i, i, color.White)
		rep.Charts = append(rep.Charts, ui.LabChart{Title: t, Image: img})
	}
	return rep
}

// Runs is the number of reports computed (not read from the cache).
func (l *Lab) Runs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.runs
}

// Side continues the prompt per level: the base says "a cat sat", each
// level changes its last word.
func (l *Lab) Side(ctx context.Context, r ui.SideRequest, progress func(ui.LabProgress)) (ui.SideResult, error) {
	l.mu.Lock()
	l.sides = append(l.sides, r)
	l.mu.Unlock()
	res := ui.SideResult{Rows: []ui.SideRow{{Level: "base", Note: "10 tok/s", Spans: []ui.SideSpan{{Text: " a cat sat"}}}}}
	for i, lv := range r.Levels {
		if strings.EqualFold(lv, "F32") {
			continue
		}
		progress(ui.LabProgress{Level: lv, Index: i, Levels: len(r.Levels), Stage: "generate"})
		res.Rows = append(res.Rows, ui.SideRow{Level: lv, Note: "diverges at token 3", Spans: []ui.SideSpan{{Text: " a cat "}, {Text: "ran", Changed: true}}})
	}
	return res, ctx.Err()
}

// Sides returns the side-by-side requests made.
func (l *Lab) Sides() []ui.SideRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ui.SideRequest(nil), l.sides...)
}

// Last is the newest report computed.
func (l *Lab) Last() (ui.LabReport, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		return ui.LabReport{}, false
	}
	rep := *l.last
	rep.Cached = true
	return rep, true
}
