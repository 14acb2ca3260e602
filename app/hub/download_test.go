package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"flowchat/app/hub/hubtest"
)

// payload is n pseudo-random bytes (seeded: runs are reproducible).
func payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// rig is a fake hub, a destination directory and a manager tuned for
// tests (short stall timeout and backoff).
type rig struct {
	t   *testing.T
	hub *hubtest.Hub
	dir string
	m   *Manager

	mu     sync.Mutex
	events []Event
}

func newRig(t *testing.T, tune func(*ManagerOptions)) *rig {
	r := &rig{t: t, hub: fakeHub(t), dir: t.TempDir()}
	o := ManagerOptions{
		Client:        NewClient(Options{Endpoint: r.hub.URL()}),
		StallTimeout:  300 * time.Millisecond,
		BackoffMin:    5 * time.Millisecond,
		BackoffMax:    20 * time.Millisecond,
		ProgressEvery: time.Millisecond,
		FreeDisk:      func(string) (uint64, error) { return 1 << 40, nil },
		OnEvent:       r.record,
	}
	if tune != nil {
		tune(&o)
	}
	r.m = NewManager(o)
	t.Cleanup(r.m.Close)
	return r
}

func (r *rig) record(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *rig) eventsIn(s State) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.State == s {
			out = append(out, e)
		}
	}
	return out
}

// repo adds a repo with the given files (LFS unless the name ends in .json).
func (r *rig) repo(id string, files map[string][]byte) JobSpec {
	rp := &hubtest.Repo{ID: id, Tags: []string{"gguf"}}
	spec := JobSpec{Repo: id, Name: id, Dir: r.dir}
	for _, p := range sortedKeys(files) {
		lfs := !strings.HasSuffix(p, ".json")
		rp.Files = append(rp.Files, &hubtest.File{Path: p, Data: files[p], LFS: lfs})
		fs := FileSpec{Path: p, Size: int64(len(files[p]))}
		if lfs {
			fs.SHA256 = hubtest.SHA256(files[p])
		} else {
			fs.GitOID = hubtest.GitOID(files[p])
		}
		spec.Files = append(spec.Files, fs)
	}
	r.hub.AddRepo(rp)
	return spec
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for k := i + 1; k < len(ks); k++ {
			if ks[k] < ks[i] {
				ks[i], ks[k] = ks[k], ks[i]
			}
		}
	}
	return ks
}

// pull adds spec and waits for it to finish.
func (r *rig) pull(spec JobSpec) error {
	id, err := r.m.Add(spec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return r.m.Wait(ctx, id)
}

// cdnRanges lists the Range headers of the CDN requests for a path.
func (r *rig) cdnRequests(suffix string) []hubtest.Request {
	var out []hubtest.Request
	for _, q := range r.hub.Requests() {
		if q.Server == "cdn" && strings.HasSuffix(q.Path, suffix) {
			out = append(out, q)
		}
	}
	return out
}

// expectFile checks the file landed intact with no leftovers.
func (r *rig) expectFile(path string, want []byte) {
	r.t.Helper()
	got, err := os.ReadFile(filepath.Join(r.dir, path))
	if err != nil || !bytes.Equal(got, want) {
		r.t.Fatalf("%s: %d bytes (%v), want %d", path, len(got), err, len(want))
	}
	if _, err := os.Stat(filepath.Join(r.dir, path+".part")); !os.IsNotExist(err) {
		r.t.Errorf("%s.part left behind", path)
	}
	if left, _ := filepath.Glob(filepath.Join(r.dir, "*"+jobFileSuffix)); len(left) != 0 {
		r.t.Errorf("job files left: %v", left)
	}
}

func (r *rig) expectAbsent(path string) {
	r.t.Helper()
	if _, err := os.Stat(filepath.Join(r.dir, path)); !os.IsNotExist(err) {
		r.t.Errorf("%s exists", path)
	}
}

// TestResumeAfterDrops: the connection drops three times mid-body; each
// retry asks for the rest with Range + If-Range and the server sends each
// byte once.
func TestResumeAfterDrops(t *testing.T) {
	r := newRig(t, nil)
	data := payload(1<<20, 1)
	spec := r.repo("o/m", map[string][]byte{"m-Q4_K_M.gguf": data})
	r.hub.AddFault("o/m", "m-Q4_K_M.gguf", hubtest.Fault{DropAfter: 100_000}, hubtest.Fault{DropAfter: 200_000}, hubtest.Fault{DropAfter: 50_000})
	if err := r.pull(spec); err != nil {
		t.Fatal(err)
	}
	r.expectFile("m-Q4_K_M.gguf", data)
	reqs := r.cdnRequests("m-Q4_K_M.gguf")
	wantRanges := []string{"", "bytes=100000-", "bytes=300000-", "bytes=350000-"}
	if len(reqs) != len(wantRanges) {
		t.Fatalf("%d CDN requests: %+v", len(reqs), reqs)
	}
	for i, q := range reqs {
		if q.Range != wantRanges[i] || (i > 0 && (q.IfRange == "" || q.Status != 206)) || q.Auth != "" {
			t.Errorf("request %d: %+v, want range %q with If-Range", i, q, wantRanges[i])
		}
	}
	if sent := r.hub.BytesServed("m-Q4_K_M.gguf"); sent != int64(len(data)) {
		t.Errorf("server sent %d bytes for a %d-byte file", sent, len(data))
	}
	if len(r.eventsIn(Retrying)) != 3 || len(r.eventsIn(Done)) != 1 {
		t.Errorf("%d retrying, %d done events", len(r.eventsIn(Retrying)), len(r.eventsIn(Done)))
	}
}

// TestServerIgnoresRange: after a drop, the server answers 200 to the
// Range request; the download starts over and the file is intact.
func TestServerIgnoresRange(t *testing.T) {
	r := newRig(t, nil)
	data := payload(600_000, 2)
	spec := r.repo("o/m", map[string][]byte{"a.gguf": data})
	r.hub.AddFault("o/m", "a.gguf", hubtest.Fault{DropAfter: 300_000}, hubtest.Fault{IgnoreRange: true})
	if err := r.pull(spec); err != nil {
		t.Fatal(err)
	}
	r.expectFile("a.gguf", data)
	reqs := r.cdnRequests("a.gguf")
	if len(reqs) != 2 || reqs[1].Status != 200 || reqs[1].Range == "" {
		t.Errorf("requests %+v", reqs)
	}
}

// TestETagChangeRestarts: the file changes between attempts; If-Range makes
// the server send the new file whole, never a splice of old and new.
func TestETagChangeRestarts(t *testing.T) {
	old, fresh := payload(500_000, 3), payload(500_000, 4)
	for _, c := range []struct {
		name   string
		expect []byte
		err    error
	}{{"new content listed", fresh, nil}, {"old content listed", old, ErrChecksum}} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, nil)
			spec := r.repo("o/m", map[string][]byte{"a.gguf": old})
			spec.Files[0].SHA256 = hubtest.SHA256(c.expect)
			r.hub.AddFault("o/m", "a.gguf", hubtest.Fault{DropAfter: 200_000}, hubtest.Fault{Replace: fresh})
			err := r.pull(spec)
			if !errors.Is(err, c.err) {
				t.Fatalf("%v, want %v", err, c.err)
			}
			reqs := r.cdnRequests("a.gguf")
			if len(reqs) != 2 || reqs[1].Status != 200 || reqs[1].IfRange == "" {
				t.Fatalf("requests %+v", reqs)
			}
			if c.err == nil {
				r.expectFile("a.gguf", fresh)
			} else {
				r.expectAbsent("a.gguf")
				r.expectAbsent("a.gguf.part")
			}
		})
	}
}

func Test5xxThenSuccess(t *testing.T) {
	r := newRig(t, nil)
	data := payload(100_000, 5)
	spec := r.repo("o/m", map[string][]byte{"a.gguf": data})
	r.hub.AddFault("o/m", "a.gguf", hubtest.Fault{Status: 500}, hubtest.Fault{Status: 503}, hubtest.Fault{Status: 502})
	if err := r.pull(spec); err != nil {
		t.Fatal(err)
	}
	r.expectFile("a.gguf", data)
	retries := r.eventsIn(Retrying)
	if len(retries) != 3 || !errors.Is(retries[0].Err, ErrServer) {
		t.Errorf("retries %+v", retries)
	}
}

// TestGivesUpWithoutProgress: a server that always fails ends the job
// after MaxAttempts, with the server's error.
func TestGivesUpWithoutProgress(t *testing.T) {
	r := newRig(t, func(o *ManagerOptions) { o.MaxAttempts = 3 })
	spec := r.repo("o/m", map[string][]byte{"a.gguf": payload(1000, 6)})
	r.hub.AddFault("o/m", "a.gguf", hubtest.Fault{Status: 500}, hubtest.Fault{Status: 500}, hubtest.Fault{Status: 500}, hubtest.Fault{Status: 500})
	err := r.pull(spec)
	if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("%v", err)
	}
}

func TestRateLimitRetryAfter(t *testing.T) {
	r := newRig(t, nil)
	data := payload(1000, 7)
	spec := r.repo("o/m", map[string][]byte{"a.gguf": data})
	r.hub.AddFault("o/m", "a.gguf", hubtest.Fault{Status: 429, RetryAfter: "1"})
	start := time.Now()
	if err := r.pull(spec); err != nil {
		t.Fatal(err)
	}
	retries := r.eventsIn(Retrying)
	if len(retries) != 1 || retries[0].RetryIn != time.Second || !errors.Is(retries[0].Err, ErrRateLimited) || time.Since(start) < time.Second {
		t.Errorf("retries %+v after %v", retries, time.Since(start))
	}
	r.expectFile("a.gguf", data)
}

// TestStallDetection: the server sends part of the body and then nothing;
// the stall timeout ends the request and the next resumes.
func TestStallDetection(t *testing.T) {
	r := newRig(t, nil)
	data := payload(400_000, 8)
	spec := r.repo("o/m", map[string][]byte{"a.gguf": data})
	r.hub.AddFault("o/m", "a.gguf", hubtest.Fault{StallAfter: 150_000}, hubtest.Fault{Delay: time.Second})
	if err := r.pull(spec); err != nil {
		t.Fatal(err)
	}
	r.expectFile("a.gguf", data)
	retries := r.eventsIn(Retrying)
	if len(retries) != 2 || !errors.Is(retries[0].Err, ErrStalled) || !errors.Is(retries[1].Err, ErrStalled) {
		t.Errorf("retries %+v", retries)
	}
	reqs := r.cdnRequests("a.gguf")
	if reqs[len(reqs)-1].Range != "bytes=150000-" {
		t.Errorf("last request %+v", reqs[len(reqs)-1])
	}
}

// TestChecksumMismatch: a file whose bytes do not match its sha256 is
// refused, removed and not fetched again. The rig's 300 ms stall timeout
// is for the stall tests: under make test's load it once cut this
// 5000-byte body short, and the retry it caused read as a second request.
func TestChecksumMismatch(t *testing.T) {
	r := newRig(t, func(o *ManagerOptions) { o.StallTimeout = time.Minute })
	spec := r.repo("o/m", map[string][]byte{"a.gguf": payload(5000, 9)})
	spec.Files[0].SHA256 = strings.Repeat("0", 64)
	err := r.pull(spec)
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "sha256") || !strings.Contains(err.Error(), "a.gguf") {
		t.Fatalf("%v", err)
	}
	r.expectAbsent("a.gguf")
	r.expectAbsent("a.gguf.part")
	if n := len(r.cdnRequests("a.gguf")); n != 1 {
		t.Errorf("%d requests: a checksum mismatch is not retried", n)
	}
}

// TestGitFileVerified: files outside LFS come from the hub itself and are
// checked against their git blob id.
func TestGitFileVerified(t *testing.T) {
	r := newRig(t, nil)
	spec := r.repo("o/m", map[string][]byte{"config.json": []byte(`{"a":1}`)})
	if err := r.pull(spec); err != nil {
		t.Fatal(err)
	}
	r.expectFile("config.json", []byte(`{"a":1}`))
	spec.Files[0].GitOID = strings.Repeat("1", 40)
	os.Remove(filepath.Join(r.dir, "config.json"))
	if err := r.pull(spec); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "git blob id") {
		t.Errorf("%v", err)
	}
}

func TestDownloadAccessErrors(t *testing.T) {
	r := newRig(t, nil)
	r.hub.Tokens = []string{"hf_ok"}
	spec := r.repo("meta-llama/gated", map[string][]byte{"a.gguf": []byte("x")})
	r.hub.AddRepo(&hubtest.Repo{ID: "meta-llama/gated", Gated: true, Files: []*hubtest.File{{Path: "a.gguf", Data: []byte("x"), LFS: true}}})
	err := r.pull(spec)
	if !errors.Is(err, ErrGated) || !strings.Contains(err.Error(), "HF_TOKEN") || !strings.Contains(err.Error(), "accept the licence") {
		t.Errorf("gated: %v", err)
	}
	missing := spec
	missing.Files = []FileSpec{{Path: "nope.gguf", Size: 1}}
	r.m.o.Client = NewClient(Options{Endpoint: r.hub.URL(), Token: "hf_ok"})
	missing.Repo = "o/m"
	r.repo("o/m", map[string][]byte{"a.gguf": []byte("y")})
	if err := r.pull(missing); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nope.gguf") {
		t.Errorf("missing: %v", err)
	}
	if len(r.eventsIn(Retrying)) != 0 {
		t.Error("access errors were retried")
	}
}

// TestEndpointFromEnvManager: a manager with a default client downloads
// from HF_ENDPOINT, and the token never reaches the CDN.
func TestEndpointFromEnvManager(t *testing.T) {
	r := newRig(t, nil)
	t.Setenv("HF_ENDPOINT", r.hub.URL())
	t.Setenv("HF_TOKEN", "hf_secret")
	r.hub.Tokens = []string{"hf_secret"}
	r.m = NewManager(ManagerOptions{FreeDisk: r.m.o.FreeDisk})
	data := payload(3000, 10)
	spec := r.repo("o/m", map[string][]byte{"a.gguf": data})
	if err := r.pull(spec); err != nil {
		t.Fatal(err)
	}
	r.expectFile("a.gguf", data)
	for _, q := range r.hub.Requests() {
		if q.Server == "hub" && q.Auth != "Bearer hf_secret" || q.Server == "cdn" && q.Auth != "" {
			t.Errorf("request %+v", q)
		}
	}
}

func TestDiskFullBeforeStart(t *testing.T) {
	r := newRig(t, func(o *ManagerOptions) {
		o.FreeDisk = func(string) (uint64, error) { return 100 << 20, nil }
	})
	spec := r.repo("o/m", map[string][]byte{"a.gguf": payload(1000, 11)})
	spec.Files[0].Size = 1 << 30 // as the listing would say for a 1 GiB file
	err := r.pull(spec)
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "1.0 GiB") || !strings.Contains(err.Error(), "100.0 MiB free") {
		t.Fatalf("%v", err)
	}
	if n := len(r.cdnRequests("a.gguf")); n != 0 {
		t.Errorf("%d requests before the disk check failed", n)
	}
}

// limitWriter fails with ENOSPC after n bytes, like a full disk.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		k, _ := l.w.Write(p[:l.n])
		l.n = 0
		return k, &os.PathError{Op: "write", Path: "part", Err: syscall.ENOSPC}
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}

func TestDiskFullWhileWriting(t *testing.T) {
	r := newRig(t, func(o *ManagerOptions) {
		o.wrapWriter = func(w io.Writer) io.Writer { return &limitWriter{w: w, n: 200_000} }
	})
	spec := r.repo("o/m", map[string][]byte{"a.gguf": payload(500_000, 12)})
	err := r.pull(spec)
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "free some space") {
		t.Fatalf("%v", err)
	}
	r.expectAbsent("a.gguf")
	if len(r.eventsIn(Retrying)) != 0 {
		t.Error("a full disk was retried")
	}
}

// TestSplitModelPauseResumeCancel: a three-shard model is one job; pausing
// keeps its .part, resuming finishes it; canceling deletes everything.
func TestSplitModelPauseResumeCancel(t *testing.T) {
	r := newRig(t, func(o *ManagerOptions) { o.StallTimeout = time.Minute })
	shards := map[string][]byte{}
	for i := 1; i <= 3; i++ {
		shards[fmt.Sprintf("q8/M-Q8_0-%05d-of-00003.gguf", i)] = payload(200_000, uint64(20+i))
	}
	spec := r.repo("o/split", shards)
	second := "q8/M-Q8_0-00002-of-00003.gguf"
	r.hub.AddFault("o/split", second, hubtest.Fault{StallAfter: 50_000})
	id, err := r.m.Add(spec)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return fileSize(filepath.Join(r.dir, second+".part")) == 50_000 })
	if err := r.m.Pause(id); err != nil {
		t.Fatal(err)
	}
	if st, _ := r.m.Status(id); st.State != Paused || st.Done != 250_000 || st.Total != 600_000 {
		t.Errorf("after pause: %+v", st)
	}
	if err := r.m.Resume(id); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Wait(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	for p, d := range shards {
		r.expectFile(p, d)
	}
	// The whole-file request and the resume from byte 50000. The rig
	// records a request when its handler returns, and the paused one can
	// return after the resumed one has finished (seen under load), so the
	// order is not checked.
	if reqs := r.cdnRequests(second); len(reqs) != 2 || reqs[0].Range+reqs[1].Range != "bytes=50000-" {
		t.Errorf("second shard requests %+v", reqs)
	}

	r.hub.AddFault("o/split", second, hubtest.Fault{StallAfter: 10_000})
	for p := range shards {
		os.Remove(filepath.Join(r.dir, p))
	}
	r.m = NewManager(r.m.o) // a fresh manager: the finished job is forgotten
	id, _ = r.m.Add(spec)
	waitFor(t, func() bool { return fileSize(filepath.Join(r.dir, second+".part")) == 10_000 })
	r.m.Cancel(id)
	if err := r.m.Wait(context.Background(), id); !errors.Is(err, ErrCanceled) {
		t.Errorf("wait after cancel: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(r.dir, "*", "*"))
	hidden, _ := filepath.Glob(filepath.Join(r.dir, ".*"))
	if len(left)+len(hidden) != 0 {
		t.Errorf("left after cancel: %v %v", left, hidden)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
	}
}

// TestConcurrencyLimit: with one slot, a second job waits queued.
func TestConcurrencyLimit(t *testing.T) {
	r := newRig(t, func(o *ManagerOptions) { o.Concurrency = 1; o.StallTimeout = time.Minute })
	a := r.repo("o/a", map[string][]byte{"a.gguf": payload(100_000, 30)})
	b := r.repo("o/b", map[string][]byte{"b.gguf": payload(100_000, 31)})
	r.hub.AddFault("o/a", "a.gguf", hubtest.Fault{StallAfter: 1000})
	ida, _ := r.m.Add(a)
	waitFor(t, func() bool { return fileSize(filepath.Join(r.dir, "a.gguf.part")) == 1000 })
	idb, _ := r.m.Add(b)
	time.Sleep(50 * time.Millisecond)
	if st, _ := r.m.Status(idb); st.State != Queued {
		t.Errorf("second job %v while the first holds the only slot", st.State)
	}
	r.m.Pause(ida)
	if err := r.m.Wait(context.Background(), idb); err != nil {
		t.Fatal(err)
	}
	if jobs := r.m.Jobs(); len(jobs) != 2 {
		t.Errorf("jobs %+v", jobs)
	}
}

// TestRestartPicksUpPart: a manager stops mid-file (Close, as on quit);
// a new manager finds the job file, resumes from the .part with a Range
// request, and finishes.
func TestRestartPicksUpPart(t *testing.T) {
	r := newRig(t, func(o *ManagerOptions) { o.BackoffMin, o.BackoffMax = time.Hour, time.Hour })
	data := payload(500_000, 40)
	spec := r.repo("o/m", map[string][]byte{"a.gguf": data})
	r.hub.AddFault("o/m", "a.gguf", hubtest.Fault{DropAfter: 123_456})
	id, _ := r.m.Add(spec)
	waitFor(t, func() bool { st, _ := r.m.Status(id); return st.State == Retrying })
	r.m.Close()
	if fileSize(filepath.Join(r.dir, "a.gguf.part")) != 123_456 {
		t.Fatal("no .part after the drop")
	}
	m2 := NewManager(ManagerOptions{Client: r.m.o.Client, FreeDisk: r.m.o.FreeDisk})
	ids, err := m2.Restore(r.dir)
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("restore: %v %v", ids, err)
	}
	if st, _ := m2.Status(id); st.State != Paused || st.Done != 123_456 {
		t.Errorf("restored job %v with %d bytes, want paused with the .part's 123456", st.State, st.Done)
	}
	m2.Resume(id)
	if err := m2.Wait(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	r.expectFile("a.gguf", data)
	reqs := r.cdnRequests("a.gguf")
	if last := reqs[len(reqs)-1]; last.Range != "bytes=123456-" || last.IfRange == "" {
		t.Errorf("resumed with %+v", last)
	}
}

// TestCompletePartNotRenamed: a crash after the last byte but before the
// rename leaves a whole .part; with the size unknown the server's 416
// says so, and the file is verified and moved into place.
func TestCompletePartNotRenamed(t *testing.T) {
	r := newRig(t, nil)
	data := payload(70_000, 50)
	spec := r.repo("o/m", map[string][]byte{"a.gguf": data})
	spec.Files[0].Size = 0
	os.WriteFile(filepath.Join(r.dir, "a.gguf.part"), data, 0o644)
	if err := r.pull(spec); err != nil {
		t.Fatal(err)
	}
	r.expectFile("a.gguf", data)
	if reqs := r.cdnRequests("a.gguf"); len(reqs) != 1 || reqs[0].Status != 416 {
		t.Errorf("requests %+v", reqs)
	}
}

func TestSpecRejectsEscapingPaths(t *testing.T) {
	r := newRig(t, nil)
	for _, p := range []string{"../evil.gguf", "/etc/passwd", "a/../../b", `..\x`} {
		if _, err := r.m.Add(JobSpec{Repo: "o/m", Dir: r.dir, Files: []FileSpec{{Path: p}}}); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

// TestProcessKilledMidDownload runs a download in a child process, kills it
// with SIGKILL mid-file (no Close, no deferred code), and resumes the job
// from its .part and job file in this process.
func TestProcessKilledMidDownload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	r := newRig(t, nil)
	data := payload(400_000, 60)
	spec := r.repo("o/m", map[string][]byte{"a.gguf": data})
	r.hub.AddFault("o/m", "a.gguf", hubtest.Fault{StallAfter: 222_222})
	specJSON, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledChildHelper$")
	cmd.Env = append(os.Environ(), "HUB_CHILD_SPEC="+string(specJSON), "HUB_CHILD_DIR="+r.dir, "HF_ENDPOINT="+r.hub.URL())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return fileSize(filepath.Join(r.dir, "a.gguf.part")) == 222_222 })
	cmd.Process.Kill()
	cmd.Wait()
	ids, err := r.m.Restore(r.dir)
	if err != nil || len(ids) != 1 {
		t.Fatalf("restore: %v %v", ids, err)
	}
	r.m.Resume(ids[0])
	if err := r.m.Wait(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	r.expectFile("a.gguf", data)
	reqs := r.cdnRequests("a.gguf")
	if last := reqs[len(reqs)-1]; len(reqs) != 2 || last.Range != "bytes=222222-" || last.IfRange == "" {
		t.Errorf("requests %+v", reqs)
	}
}

// TestKilledChildHelper is the child of TestProcessKilledMidDownload.
func TestKilledChildHelper(t *testing.T) {
	raw := os.Getenv("HUB_CHILD_SPEC")
	if raw == "" {
		t.Skip("runs only as a child process")
	}
	var spec JobSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	spec.Dir = os.Getenv("HUB_CHILD_DIR")
	m := NewManager(ManagerOptions{StallTimeout: time.Hour, FreeDisk: func(string) (uint64, error) { return 1 << 40, nil }})
	id, err := m.Add(spec)
	if err != nil {
		t.Fatal(err)
	}
	m.Wait(context.Background(), id) // killed before it returns
}
