package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// FirstHeaderRead is the first prefix fetched for a header: enough for the
// metadata and tensor directory of most models with vocabularies up to
// ~30k tokens; bigger ones take one or two more requests.
const FirstHeaderRead = 1 << 20

// prefixFunc returns the first n bytes of a file (fewer at its end), given
// the prefix already read.
type prefixFunc func(ctx context.Context, have []byte, n int64) ([]byte, error)

// readHeader grows a prefix until the header parses: first bytes, then
// at least double or what the walker says it needs.
func readHeader(ctx context.Context, first int64, fetch prefixFunc) (*Header, error) {
	want := max(first, 64)
	var buf []byte
	for {
		var err error
		if buf, err = fetch(ctx, buf, want); err != nil {
			return nil, err
		}
		h, err := ParseHeader(buf)
		var short *ShortError
		if !errors.As(err, &short) {
			return h, err
		}
		if int64(len(buf)) < want {
			return nil, fmt.Errorf("%w: the file ends (%d bytes) inside its header: truncated?", ErrBadHeader, len(buf))
		}
		want = min(max(short.Need, 2*want), MaxHeaderBytes)
		if short.Need > MaxHeaderBytes {
			return nil, fmt.Errorf("%w: header longer than %d bytes", ErrBadHeader, MaxHeaderBytes)
		}
	}
}

// ReadHeaderFile reads the GGUF header of a local file without reading
// its tensor data.
func ReadHeaderFile(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	defer f.Close()
	h, err := readHeader(context.Background(), 256<<10, func(_ context.Context, have []byte, n int64) ([]byte, error) {
		buf := make([]byte, n)
		copy(buf, have)
		m, err := f.ReadAt(buf[len(have):], int64(len(have)))
		if err != nil && err != io.EOF {
			return nil, err
		}
		return buf[:len(have)+m], nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// FetchHeader reads the GGUF header of a file on the hub with HTTP range
// requests, fetching a growing prefix (FirstHeaderRead, then more) rather
// than the file.
func (c *Client) FetchHeader(ctx context.Context, repo, revision, path string) (*Header, error) {
	return c.fetchHeaderURL(ctx, c.ResolveURL(repo, revision, path), what{repo: repo, path: path}, FirstHeaderRead)
}

// fetchHeaderURL is FetchHeader for any URL; first is the first prefix
// length in bytes.
func (c *Client) fetchHeaderURL(ctx context.Context, rawURL string, w what, first int64) (*Header, error) {
	h, err := readHeader(ctx, first, func(ctx context.Context, have []byte, n int64) ([]byte, error) {
		return c.fetchRange(ctx, rawURL, w, have, n)
	})
	if err != nil {
		return nil, fmt.Errorf("hub: reading the header of %s: %w", w, err)
	}
	return h, nil
}

// fetchRange extends have to the first n bytes of the file with a request
// for bytes len(have)…n-1. A server that ignores Range (200) is read from
// the start and cut at n bytes; 416 means have already holds the whole file.
func (c *Client) fetchRange(ctx context.Context, rawURL string, w what, have []byte, n int64) ([]byte, error) {
	req, err := c.newRequest(ctx, http.MethodGet, rawURL)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", len(have), n-1))
	resp, err := c.HTTP.Do(req)
	err = c.transport(err)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		defer resp.Body.Close()
		if start, _, _, ok := parseContentRange(resp.Header.Get("Content-Range")); !ok || start != int64(len(have)) {
			return nil, fmt.Errorf("server sent Content-Range %q for a request from byte %d", resp.Header.Get("Content-Range"), len(have))
		}
		return readAppend(have, resp.Body, n-int64(len(have)))
	case http.StatusOK:
		defer resp.Body.Close()
		return readAppend(nil, resp.Body, n)
	case http.StatusRequestedRangeNotSatisfiable:
		resp.Body.Close()
		return have, nil
	}
	return nil, c.responseError(resp, w)
}

// readAppend appends up to n bytes of r to buf.
func readAppend(buf []byte, r io.Reader, n int64) ([]byte, error) {
	out := make([]byte, len(buf), int64(len(buf))+n)
	copy(out, buf)
	m, err := io.ReadFull(r, out[len(buf):cap(out)])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return out[:len(buf)+m], nil
}

// parseContentRange parses "bytes START-END/TOTAL" (TOTAL may be "*", -1).
func parseContentRange(v string) (start, end, total int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	s, e, found2 := strings.Cut(rng, "-")
	if !found || !found2 {
		return 0, 0, 0, false
	}
	var err1, err2, err3 error
	start, err1 = strconv.ParseInt(s, 10, 64)
	end, err2 = strconv.ParseInt(e, 10, 64)
	total = -1
	if tot != "*" {
		total, err3 = strconv.ParseInt(tot, 10, 64)
	}
	ok = err1 == nil && err2 == nil && err3 == nil && start >= 0 && end >= start
	return start, end, total, ok
}

// FetchModelHeaders reads the header of every GGUF file of m (each shard
// of a split model has its own tensor directory) and merges them: the
// metadata of shard 1, the tensors of all.
func (c *Client) FetchModelHeaders(ctx context.Context, repo, revision string, m RemoteModel) (*Header, error) {
	var merged *Header
	for _, f := range m.Files {
		h, err := c.FetchHeader(ctx, repo, revision, f.Path)
		if err != nil {
			return nil, err
		}
		if merged == nil {
			merged = h
			continue
		}
		merged.Tensors = append(merged.Tensors, h.Tensors...)
	}
	if merged == nil {
		return nil, fmt.Errorf("hub: model %s has no files", m.Name)
	}
	return merged, nil
}
