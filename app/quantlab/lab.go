package quantlab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"flowchat/engine/eval"
	"flowchat/engine/quant"
)

// DefaultLevels are the rows `flowchat quantlab` evaluates without
// --types: the base, every Inferflow level, and GGML's two classic types
// for comparison.
var DefaultLevels = []string{"F32", "Q8", "Q6", "Q5", "Q4_B32", "Q4_B64", "Q3H", "Q3", "Q2", "Q8_0", "Q4_0"}

// Request is one Lab run: the eval.LabOptions that decide its numbers.
type Request struct {
	Model       string   // full-precision GGUF
	Levels      []string // see eval.LabOptions.Levels
	Text        string   // evaluation text; "" = DefaultText
	Ctx         int      // tokens per chunk; 0 = 128
	MaxChunks   int      // 0 = the whole text
	OutputType  string   // output head's type for converted levels; "" = the level's
	MinElements int      // matrices with fewer elements stay as stored
	Threads     int      // 0 = all cores (part of the key: it changes tok/s)
	GenTokens   int      // > 0: time greedy generation of this many tokens
}

func (r Request) normalized() Request {
	if r.Text == "" {
		r.Text = DefaultText
	}
	if r.Ctx <= 0 {
		r.Ctx = 128
	}
	return r
}

// Key is the request's cache key; it stats the model and file levels.
func (r Request) Key() (Key, error) {
	r = r.normalized()
	k, err := newKey("lab", r.Model, r.Levels)
	k.TextSHA256, k.Ctx, k.MaxChunks = textHash(r.Text), r.Ctx, r.MaxChunks
	k.OutputType, k.MinElems, k.Threads, k.GenTokens = r.OutputType, r.MinElements, r.Threads, r.GenTokens
	return k, err
}

// ComputeFunc runs a Lab; eval.RunLab is the real one.
type ComputeFunc func(ctx context.Context, basePath string, opt eval.LabOptions) (*eval.LabReport, error)

// Options say where results are cached and who hears about progress.
type Options struct {
	// CacheDir holds one JSON file per result; "" caches nothing. The CLI
	// passes filepath.Join(xdg.CacheHome, "flowchat", "quantlab").
	CacheDir string
	// NoCache recomputes even when a result is cached (and replaces it).
	NoCache bool
	// Progress, if set, is called from the running goroutine.
	Progress func(eval.LabProgress)
	// Compute replaces eval.RunLab (tests count calls; a GUI test can fake
	// a run). nil = eval.RunLab.
	Compute ComputeFunc
}

// Result is a Lab report and where it came from.
type Result struct {
	Report  *eval.LabReport
	Key     Key
	Created time.Time // when it was computed
	Cached  bool      // read from the cache, not computed now
}

// Run returns the Lab report for req: from opt.CacheDir when a result
// with the same key is there, else computed and stored. A failed or
// cancelled run is not cached.
func Run(ctx context.Context, req Request, opt Options) (*Result, error) {
	req = req.normalized()
	if err := ValidateLevels(req.Levels); err != nil {
		return nil, err
	}
	key, err := req.Key()
	if err != nil {
		return nil, err
	}
	res := &Result{Key: key}
	if !opt.NoCache {
		if res.Created, res.Cached = load(opt.CacheDir, key, &res.Report); res.Cached {
			return res, nil
		}
	}
	if res.Report, err = compute(ctx, req, opt); err != nil {
		return nil, err
	}
	res.Created = time.Now().UTC()
	return res, store(opt.CacheDir, key, res.Created, res.Report)
}

func compute(ctx context.Context, req Request, opt Options) (*eval.LabReport, error) {
	run := opt.Compute
	if run == nil {
		run = eval.RunLab
	}
	rep, err := run(ctx, req.Model, eval.LabOptions{
		Levels: req.Levels, Text: req.Text, Ctx: req.Ctx, MaxChunks: req.MaxChunks,
		OutputType: req.OutputType, MinElements: req.MinElements, Threads: req.Threads,
		GenTokens: req.GenTokens, Progress: opt.Progress,
	})
	if err == nil && rep == nil {
		err = errors.New("quantlab: the Lab returned no report")
	}
	return rep, err
}

// ErrNoLevels is returned for a request without levels.
var ErrNoLevels = errors.New("quantlab: no levels to evaluate")

// ValidateLevels checks every level name before a long run starts: "F32",
// an Inferflow or GGML type, or an existing GGUF file.
func ValidateLevels(levels []string) error {
	if len(levels) == 0 {
		return ErrNoLevels
	}
	var errs []error
	var unknown []string // type names after the first, whose error lists the known ones
	for _, l := range levels {
		err := validateLevel(l)
		switch {
		case err == nil:
		case isFileLevel(l) || len(unknown) == 0:
			errs = append(errs, err)
			if !isFileLevel(l) {
				unknown = append(unknown, l)
			}
		default:
			unknown = append(unknown, l)
		}
	}
	if len(unknown) > 1 {
		errs = append(errs, fmt.Errorf("quantlab: also unknown: %s", strings.Join(unknown[1:], ", ")))
	}
	return errors.Join(errs...)
}

func validateLevel(l string) error {
	switch {
	case strings.EqualFold(l, "F32"):
		return nil
	case isFileLevel(l):
		if _, err := os.Stat(l); err != nil {
			return fmt.Errorf("quantlab: level file: %w", err)
		}
		return nil
	}
	_, err := quant.ParseType(l)
	return err
}

// isFileLevel is eval's rule: a level naming a GGUF file, not a type.
func isFileLevel(level string) bool {
	return strings.HasSuffix(strings.ToLower(level), ".gguf") || strings.ContainsRune(level, filepath.Separator)
}

// ParseLevels splits a comma-separated list ("Q8, Q4_B32,Q3H"), dropping
// empty items.
func ParseLevels(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
