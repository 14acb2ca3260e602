package hub

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// ParseRef splits a pull reference "owner/name[:QUANT|FILE][@REVISION]".
func ParseRef(ref string) (repo, selector, revision string, err error) {
	rest, revision, _ := strings.Cut(ref, "@")
	repo, selector, _ = strings.Cut(rest, ":")
	if !ValidRepoID(repo) {
		return "", "", "", fmt.Errorf("hub: %q is not a model reference like owner/name[:Q4_K_M]", ref)
	}
	return repo, selector, revision, nil
}

// PullOptions configure Pull.
type PullOptions struct {
	Ref     string                   // "owner/name[:QUANT|FILE][@REVISION]"
	Dir     func(repo string) string // destination folder for a repo (library.DownloadDir)
	Manager *Manager                 // runs the job; its Client talks to the hub
	Out     io.Writer                // messages and the fit verdict; nil for none
	// Estimate options for the fit verdict printed before downloading.
	Estimate EstimateOptions
	Free     Free // free memory to judge against; RAM 0 means FreeRAM()
}

// PullResult is what Pull fetched.
type PullResult struct {
	Repo    string
	Model   RemoteModel
	Path    string   // the file to open (shard 1)
	Verdict *Verdict // nil when the header could not be read
}

// Pull resolves the reference against the repo's file listing, prints the
// memory verdict from the GGUF header (read with range requests), and
// downloads the model as one job, waiting for it. When ctx ends the job is
// paused, its .part kept: the same Pull later resumes it.
func Pull(ctx context.Context, o PullOptions) (*PullResult, error) {
	repo, sel, revision, err := ParseRef(o.Ref)
	if err != nil {
		return nil, err
	}
	c := o.Manager.o.Client
	files, err := c.ListFiles(ctx, repo, revision)
	if err != nil {
		return nil, err
	}
	models := GroupFiles(files)
	m, ok := FindModel(models, sel)
	if !ok {
		return nil, noSuchModel(repo, sel, models)
	}
	res := &PullResult{Repo: repo, Model: m}
	res.Verdict = o.verdict(ctx, c, repo, revision, m)
	dir := o.Dir(repo)
	res.Path = filepath.Join(dir, filepath.FromSlash(m.First().Path))
	o.printf("pulling %s %s (%s in %d file(s)) into %s\n", repo, m.Name, HumanBytes(uint64(m.Size)), len(m.Files), dir)
	return res, o.run(ctx, SpecFor(repo, revision, m, dir))
}

func (o *PullOptions) printf(format string, args ...any) {
	if o.Out != nil {
		fmt.Fprintf(o.Out, format, args...)
	}
}

// verdict reads the GGUF header(s) and judges the fit; problems are only
// reported, since the download can still be wanted.
func (o *PullOptions) verdict(ctx context.Context, c *Client, repo, revision string, m RemoteModel) *Verdict {
	if m.Kind != KindGGUF {
		return nil
	}
	h, err := c.FetchModelHeaders(ctx, repo, revision, m)
	if err != nil {
		o.printf("could not read the model's header (%v); downloading anyway\n", err)
		return nil
	}
	free := o.Free
	if free.RAM == 0 {
		free.RAM = FreeRAM()
	}
	v := Judge(EstimateMemory(h, o.Estimate), free)
	info := h.Info()
	o.printf("%s, %s parameters, %d layers, context %d: %v\n", info.Architecture, humanCount(info.ParamCount), info.BlockCount, info.ContextLength, v)
	return &v
}

// run adds the job and waits; ctx ending pauses it.
func (o *PullOptions) run(ctx context.Context, spec JobSpec) error {
	id, err := o.Manager.Add(spec)
	if err != nil {
		return err
	}
	err = o.Manager.Wait(ctx, id)
	if ctx.Err() != nil {
		o.Manager.Pause(id)
		return fmt.Errorf("hub: download paused (the partial file is kept; run the same pull to resume): %w", ctx.Err())
	}
	return err
}

// noSuchModel lists what the repo offers.
func noSuchModel(repo, sel string, models []RemoteModel) error {
	var have []string
	for _, m := range models {
		if m.Kind == KindGGUF {
			have = append(have, fmt.Sprintf("%s (%s)", orName(m.Quant, m.Name), HumanBytes(uint64(m.Size))))
		}
	}
	if len(have) == 0 {
		return fmt.Errorf("hub: %w: %s has no GGUF files", ErrNotFound, repo)
	}
	what := "a default quant"
	if sel != "" {
		what = fmt.Sprintf("%q", sel)
	}
	return fmt.Errorf("hub: %w: %s has no %s; it has %s", ErrNotFound, repo, what, strings.Join(have, ", "))
}

func orName(q, name string) string {
	if q != "" {
		return q
	}
	return name
}

// humanCount writes 1234567890 as "1.2B".
func humanCount(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
