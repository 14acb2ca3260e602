package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// localError marks a failure of this machine (file system), which retrying
// the request does not fix.
type localError struct{ err error }

func (e *localError) Error() string { return e.err.Error() }
func (e *localError) Unwrap() error { return e.err }

func local(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return &localError{fmt.Errorf("%w: %v; the partial file is kept: free some space and resume, or cancel to delete it", ErrDiskFull, err)}
	}
	return &localError{err}
}

// retryable: stalls, resets, truncated bodies, 5xx and 429 are; answers
// like 401/403/404, checksum mismatches and local errors are not.
func retryable(err error) bool {
	var he *HTTPError
	var le *localError
	switch {
	case errors.Is(err, ErrStalled):
		return true
	case errors.As(err, &he):
		return he.Temporary()
	case errors.As(err, &le), errors.Is(err, ErrChecksum), errors.Is(err, ErrDiskFull):
		return false
	}
	return true
}

// fetchWithRetries gets file i, retrying transient failures with backoff.
// MaxAttempts counts attempts in a row that made no progress, so a link
// that drops every few minutes still finishes.
func (j *Job) fetchWithRetries(ctx context.Context, i int) error {
	failures := 0
	for attempt := 1; ; attempt++ {
		progressed, err := j.attempt(ctx, i, attempt)
		if err == nil {
			return nil
		}
		if c := context.Cause(ctx); c != nil {
			return c
		}
		if !retryable(err) {
			return err
		}
		if progressed {
			failures = 0
		}
		if failures++; failures >= j.m.o.MaxAttempts {
			return fmt.Errorf("hub: giving up on %s after %d attempts without progress: %w", j.rec.Spec.Files[i].Path, failures, err)
		}
		delay := j.backoff(failures, err)
		j.mu.Lock()
		j.setStateLocked(Retrying, err)
		j.ev.RetryIn = delay
		j.unlockAndEmit(true)
		if err := sleep(ctx, delay); err != nil {
			return err
		}
	}
}

// backoff is BackoffMin·2^(n-1), at most BackoffMax, ±20% jitter; a
// Retry-After from the server wins (up to 15 minutes).
func (j *Job) backoff(n int, err error) time.Duration {
	var he *HTTPError
	if errors.As(err, &he) && he.RetryAfter > 0 {
		return min(he.RetryAfter, 15*time.Minute)
	}
	d := j.m.o.BackoffMin << min(n-1, 30)
	if d <= 0 || d > j.m.o.BackoffMax {
		d = j.m.o.BackoffMax
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// attempt makes one request for file i, appending to its .part file when
// the server agrees the file is unchanged, and finishes the file when the
// body is complete. progressed says whether bytes were written.
func (j *Job) attempt(ctx context.Context, i, n int) (progressed bool, err error) {
	f := j.rec.Spec.Files[i]
	part := j.partPath(i)
	if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
		return false, local(err)
	}
	off := fileSize(part)
	if f.Size > 0 && off > f.Size || !j.canResume(i) {
		off = 0 // longer than the file, or nothing to detect a splice with
	}
	j.startFile(i, off, n)
	if f.Size > 0 && off == f.Size {
		return false, j.finish(ctx, i) // complete before a crash, not yet verified
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := time.AfterFunc(j.m.o.StallTimeout, func() { cancel(ErrStalled) })
	defer stall.Stop()
	resp, err := j.request(actx, i, off)
	if err != nil {
		return false, causeOr(actx, err)
	}
	defer resp.Body.Close()
	start, done, err := j.accept(i, resp, off)
	switch {
	case err != nil:
		return false, err
	case done:
		stall.Stop()
		return false, j.finish(ctx, i)
	case start != off:
		j.startFile(i, start, n) // the server sent the whole file
	}
	wrote, err := j.copyBody(actx, i, resp.Body, start, stall)
	if err != nil {
		return wrote > 0, causeOr(actx, err)
	}
	stall.Stop()
	if got := start + wrote; f.Size > 0 && got != f.Size {
		return wrote > 0, fmt.Errorf("hub: %s: the connection ended at byte %d of %d", f.Path, got, f.Size)
	}
	return wrote > 0, j.finish(ctx, i)
}

// causeOr prefers the reason ctx was canceled (a stall) over the error it
// caused (context canceled, connection closed).
func causeOr(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return err
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// request asks for file i from byte off: Range plus If-Range with the
// validator of the earlier answer, so a changed file comes back whole.
func (j *Job) request(ctx context.Context, i int, off int64) (*http.Response, error) {
	c := j.m.o.Client
	revision := j.rec.Commit
	if revision == "" {
		revision = j.rec.Spec.Revision
	}
	log := &redirectLog{}
	req, err := c.newRequest(context.WithValue(ctx, redirectKey{}, log), http.MethodGet, c.ResolveURL(j.rec.Spec.Repo, revision, j.rec.Spec.Files[i].Path))
	if err != nil {
		return nil, err
	}
	if off > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
		if v := j.validator(i); v != "" {
			req.Header.Set("If-Range", v)
		}
	}
	resp, err := c.HTTP.Do(req)
	err = c.transport(err)
	if err != nil {
		return nil, err
	}
	j.learn(i, resp, log)
	return resp, nil
}

// canResume: appending is safe when the server can refuse a changed file
// (If-Range) or the result is checked against a hash.
func (j *Job) canResume(i int) bool {
	f := j.rec.Spec.Files[i]
	return j.validator(i) != "" || f.SHA256 != "" || f.GitOID != ""
}

// validator is the If-Range value: a strong ETag, else Last-Modified.
// With neither, the Range request still goes out when a hash will check
// the result (and the revision is pinned to a commit).
func (j *Job) validator(i int) string {
	fr := j.rec.Files[i]
	if fr.ETag != "" && !strings.HasPrefix(fr.ETag, "W/") {
		return fr.ETag
	}
	return fr.LastModified
}

// learn pins the commit (X-Repo-Commit, from the hub's answer before any
// redirect) and records the file's validators, saving the job file when
// they change.
func (j *Job) learn(i int, resp *http.Response, log *redirectLog) {
	if resp.StatusCode/100 != 2 {
		return
	}
	commit := resp.Header.Get("X-Repo-Commit")
	for _, h := range log.hops {
		if c := h.Header.Get("X-Repo-Commit"); c != "" {
			commit = c
		}
	}
	fr := &j.rec.Files[i]
	old := *fr
	oldCommit := j.rec.Commit
	if j.rec.Commit == "" && len(commit) == 40 {
		j.rec.Commit = commit
	}
	fr.ETag, fr.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if *fr != old || j.rec.Commit != oldCommit {
		j.save() // best effort: without it a restart re-downloads from zero
	}
}

// accept checks the answer and returns the offset the body starts at, or
// done when the .part already holds the whole file.
func (j *Job) accept(i int, resp *http.Response, off int64) (int64, bool, error) {
	f := j.rec.Spec.Files[i]
	switch resp.StatusCode {
	case http.StatusOK:
		return 0, false, nil // no range support, or the file changed: start over
	case http.StatusPartialContent:
		start, _, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			return 0, false, fmt.Errorf("hub: %s: asked for bytes from %d, got Content-Range %q", f.Path, off, resp.Header.Get("Content-Range"))
		}
		if f.Size > 0 && total >= 0 && total != f.Size {
			return 0, false, &localError{fmt.Errorf("hub: %s is %d bytes on the server but %d in the file listing: the file changed; pull again", f.Path, total, f.Size)}
		}
		return off, false, nil
	case http.StatusRequestedRangeNotSatisfiable:
		if f.Size == 0 || off >= f.Size {
			return off, true, nil
		}
		// The server's file is shorter than our part: start over.
		if err := os.Truncate(j.partPath(i), 0); err != nil {
			return 0, false, local(err)
		}
		return 0, false, fmt.Errorf("hub: %s: the server refused the range from byte %d (416); restarting", f.Path, off)
	}
	return 0, false, j.m.o.Client.responseError(resp, what{repo: j.rec.Spec.Repo, path: f.Path})
}

// startFile resets the event for file i starting at byte off.
func (j *Job) startFile(i int, off int64, attempt int) {
	j.mu.Lock()
	j.ev.File, j.ev.FileSize, j.ev.FileDone, j.ev.Attempt = j.rec.Spec.Files[i].Path, j.rec.Spec.Files[i].Size, off, attempt
	j.ev.Done = j.doneBefore(i) + off
	j.setStateLocked(Running, nil)
	j.unlockAndEmit(true)
}

// doneBefore is the bytes of the files before i (all complete by then).
func (j *Job) doneBefore(i int) int64 {
	var n int64
	for _, f := range j.rec.Spec.Files[:i] {
		n += f.Size
	}
	return n
}

// copyBody appends body to the .part file from byte off, resetting the
// stall timer on every read and emitting throttled progress.
func (j *Job) copyBody(ctx context.Context, i int, body io.Reader, off int64, stall *time.Timer) (int64, error) {
	out, err := os.OpenFile(j.partPath(i), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return 0, local(err)
	}
	defer out.Close()
	if err := out.Truncate(off); err != nil {
		return 0, local(err)
	}
	if _, err := out.Seek(off, io.SeekStart); err != nil {
		return 0, local(err)
	}
	var w io.Writer = out
	if j.m.o.wrapWriter != nil {
		w = j.m.o.wrapWriter(out)
	}
	meter := newMeter(j, off)
	buf := make([]byte, 256<<10)
	var wrote int64
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			stall.Reset(j.m.o.StallTimeout)
			if _, err := w.Write(buf[:n]); err != nil {
				return wrote, local(err)
			}
			wrote += int64(n)
			meter.add(int64(n))
		}
		if rerr == io.EOF {
			return wrote, out.Close()
		}
		if rerr != nil {
			return wrote, rerr
		}
	}
}

// finish verifies file i's .part and moves it into place.
func (j *Job) finish(ctx context.Context, i int) error {
	j.setState(Verifying, nil)
	f := j.rec.Spec.Files[i]
	part := j.partPath(i)
	if err := verify(part, f); err != nil {
		os.Remove(part)
		j.rec.Files[i] = fileRecord{}
		j.save()
		return err
	}
	if err := syncFile(part); err != nil {
		return local(err)
	}
	if err := os.Rename(part, j.finalPath(i)); err != nil {
		return local(err)
	}
	syncDir(filepath.Dir(part))
	j.rec.Files[i].Done = true
	return j.save()
}

// verify hashes the file: sha256 against the LFS oid, or the git blob
// sha1 for files kept in git.
func verify(path string, f FileSpec) error {
	var h hash.Hash
	want, kind := f.SHA256, "sha256"
	switch {
	case f.SHA256 != "":
		h = sha256.New()
	case f.GitOID != "":
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", fileSize(path))
		want, kind = f.GitOID, "git blob id"
	default:
		return nil
	}
	in, err := os.Open(path)
	if err != nil {
		return local(err)
	}
	defer in.Close()
	if _, err := io.Copy(h, in); err != nil {
		return local(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want) {
		return fmt.Errorf("%w: %s has %s %s but the hub lists %s; the download was corrupted, so the partial file was deleted: pull again", ErrChecksum, f.Path, kind, got, want)
	}
	return nil
}

func syncFile(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// syncDir makes a rename durable (best effort; not possible everywhere).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// meter turns byte counts into throttled progress events with a smoothed
// speed and an ETA.
type meter struct {
	j          *Job
	last       time.Time
	lastBytes  int64
	fileDone   int64
	sinceEvent int64
}

func newMeter(j *Job, off int64) *meter {
	return &meter{j: j, last: time.Now(), fileDone: off}
}

func (m *meter) add(n int64) {
	m.fileDone += n
	m.sinceEvent += n
	now := time.Now()
	dt := now.Sub(m.last)
	emit := dt >= m.j.m.o.ProgressEvery
	m.j.progress(func(ev *Event) {
		ev.FileDone += n
		ev.Done += n
		if !emit {
			return
		}
		inst := float64(m.sinceEvent) / dt.Seconds()
		if ev.Speed == 0 {
			ev.Speed = inst
		} else {
			ev.Speed = 0.7*ev.Speed + 0.3*inst // ~3 s memory at 4 events/s
		}
		ev.ETA = -1
		if ev.Total > 0 && ev.Speed > 0 {
			ev.ETA = time.Duration(float64(ev.Total-ev.Done) / ev.Speed * float64(time.Second))
		}
	}, emit)
	if emit {
		m.last, m.sinceEvent = now, 0
	}
}
