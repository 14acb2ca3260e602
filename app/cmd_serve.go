package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"flowchat/app/serve"
)

func init() {
	register(command{name: "serve", summary: "serve the model over an OpenAI-compatible HTTP API (/v1/chat/completions, …)", run: cmdServe})
}

// serveFlags are serve's own flags besides the model flags.
type serveFlags struct {
	host, apiKey, cors, name string
	port, parallel, queue    int
	maxBody                  int64
	insecureNoKey            bool
}

func (f *serveFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
	Int64Var(*int64, string, int64, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&f.host, "host", "127.0.0.1", "address to listen on; anything but loopback needs --api-key")
	fs.IntVar(&f.port, "port", 8080, "TCP port (0 = any free port)")
	fs.StringVar(&f.apiKey, "api-key", os.Getenv("FLOWCHAT_API_KEY"), "require \"Authorization: Bearer KEY\" (default: $FLOWCHAT_API_KEY)")
	fs.IntVar(&f.parallel, "parallel", 4, "requests generating at once, each with its own KV cache of --ctx tokens")
	fs.IntVar(&f.queue, "queue", 64, "requests waiting for a free slot before new ones get 503")
	fs.Int64Var(&f.maxBody, "max-body", serve.DefaultMaxBody, "largest request body in bytes (413 above)")
	fs.StringVar(&f.cors, "cors", "", "allow browser requests from this origin (default: CORS off)")
	fs.StringVar(&f.name, "name", "", "model id clients use (default: the file name without .gguf)")
	fs.BoolVar(&f.insecureNoKey, "insecure-no-key", false, "allow a non-loopback --host without --api-key")
}

func cmdServe(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveMain(ctx, args, stdout, stderr, nil)
}

// serveMain serves until ctx ends; ready, when set, gets the listening
// address (tests use port 0).
func serveMain(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) error {
	fs := newFlags("serve", stdout, stderr)
	var mf modelFlags
	var sf serveFlags
	mf.register(fs)
	mf.registerSpec(fs)
	sf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkExposure(sf, stderr); err != nil {
		return err
	}
	mf.parallel = sf.parallel // the scheduler's seats
	m, err := mf.load()
	if err != nil {
		return err
	}
	defer m.Close()
	logger := log.New(stderr, "flowchat serve: ", log.LstdFlags)
	backend := serve.NewModelBackend(m, sf.parallel, mf.ctx, sf.queue)
	srv := serve.New(serve.Config{Model: m, Backend: backend, ModelID: modelID(sf.name, m.Path), EndTexts: eogTexts(m),
		APIKey: sf.apiKey, MaxBodyBytes: sf.maxBody, CORSOrigin: sf.cors, Log: logger})
	ln, err := net.Listen("tcp", net.JoinHostPort(sf.host, strconv.Itoa(sf.port)))
	if err != nil {
		return err
	}
	logger.Printf("serving %s on http://%s/v1 (%d sequences at once, %d-token contexts, batched)", modelID(sf.name, m.Path), ln.Addr(), sf.parallel, backend.Ctx())
	if ready != nil {
		ready(ln.Addr().String())
	}
	hs := newHTTPServer(srv, logger)
	// Requests inherit ctx: on shutdown their generations stop at the next
	// token instead of holding Shutdown until they finish.
	hs.BaseContext = func(net.Listener) context.Context { return ctx }
	return listen(ctx, hs, ln)
}

// checkExposure refuses to put an unauthenticated model on the network:
// anyone who can reach the port could use the machine's CPU and read what
// the model says.
func checkExposure(sf serveFlags, stderr io.Writer) error {
	if isLoopback(sf.host) || sf.apiKey != "" {
		return nil
	}
	if sf.insecureNoKey {
		fmt.Fprintf(stderr, "flowchat serve: warning: listening on %s with no API key; anyone who can reach it can use it\n", sf.host)
		return nil
	}
	return fmt.Errorf("%w: --host %s is reachable from other machines; set --api-key (or FLOWCHAT_API_KEY), or pass --insecure-no-key to serve without one", errUsage, sf.host)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// modelID is the id clients send as "model": a name, never a path.
func modelID(name, path string) string {
	if name != "" {
		return name
	}
	return strings.TrimSuffix(filepath.Base(path), ".gguf")
}

// newHTTPServer sets the timeouts that keep slow clients from holding
// connections: headers and body must arrive promptly, idle keep-alives
// end. There is no write timeout, because a long generation streams for
// as long as it takes.
func newHTTPServer(h http.Handler, logger *log.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, ErrorLog: logger}
}

// listen serves on ln until ctx ends, then lets requests in flight finish
// for a few seconds.
func listen(ctx context.Context, hs *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(<-errc, http.ErrServerClosed) && err == nil {
		return nil
	}
	return err
}
