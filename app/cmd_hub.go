package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"flowchat/app/hub"
	"flowchat/app/library"
	"flowchat/assets"
)

func init() {
	register(command{name: "search", summary: "search the Hugging Face hub for models (GGUF by default)", run: cmdSearch})
	register(command{name: "pull", summary: "download a model (resumable, verified) into the library", run: cmdPull})
}

func cmdSearch(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("search", stdout, stderr)
	sort := fs.String("sort", "downloads", "downloads | likes | updated | trending")
	limit := fs.Int("limit", 20, "results")
	all := fs.Bool("all", false, "all libraries, not only GGUF")
	files := fs.String("files", "", "list a repository's downloadable models (quant, size) instead of searching")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := hub.NewClient(hub.Options{})
	if *files != "" {
		fl, err := c.ListFiles(ctx, *files, "")
		if err != nil {
			return err
		}
		hub.PrintFiles(stdout, hub.GroupFiles(fl), nil)
		return nil
	}
	sorts := map[string]hub.Sort{"downloads": hub.SortDownloads, "likes": hub.SortLikes, "updated": hub.SortUpdated, "trending": hub.SortTrending}
	s, ok := sorts[*sort]
	if !ok {
		return fmt.Errorf("%w: --sort downloads|likes|updated|trending", errUsage)
	}
	page, err := c.Search(ctx, hub.SearchQuery{Text: strings.Join(fs.Args(), " "), Sort: s, Limit: *limit, All: *all})
	if err != nil {
		return err
	}
	hub.PrintSearch(stdout, page.Models)
	return nil
}

func modelLibrary() *library.Library { return library.New(filepath.Join(dataDir(), "models")) }

func cmdPull(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pull", stdout, stderr)
	ctxLen := fs.Int("ctx", 4096, "context length for the memory estimate")
	ngl := fs.Int("ngl", 0, "GPU layers for the memory estimate")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: flowchat pull OWNER/NAME[:QUANT|FILE][@REVISION] or a catalog id (flowchat pull --help)", errUsage)
	}
	ref := fs.Arg(0)
	if cat, err := library.ParseCatalog(assets.Catalog); err == nil {
		if e, ok := cat.Entry(ref); ok {
			ref = e.Repo + ":" + e.File
		}
	}
	lib := modelLibrary()
	bar := hub.NewProgressBar(stderr)
	m := hub.NewManager(hub.ManagerOptions{Client: hub.NewClient(hub.Options{}), OnEvent: bar.Event})
	defer m.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := hub.Pull(ctx, hub.PullOptions{Ref: ref, Manager: m, Dir: lib.DownloadDir, Out: stdout,
		Estimate: hub.EstimateOptions{Context: *ctxLen, GPULayers: *ngl}})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("paused; run the same pull again to resume (%v)", err)
		}
		return err
	}
	fmt.Fprintf(stdout, "ready: %s\nchat with it: flowchat chat --model %s\n", res.Path, res.Path)
	return nil
}
