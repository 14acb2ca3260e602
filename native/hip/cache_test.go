package hip

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheCompile: a miss compiles and writes the code object, a hit
// reads it back identical, a damaged file is recompiled, and another
// target or source is another file.
func TestCacheCompile(t *testing.T) {
	n := needHIPRTC(t)
	src := Source{Name: "tiny.cu", Code: "extern \"C\" __global__ void tiny(float* x) { x[threadIdx.x] *= 2.0f; }\n"}
	c := NewCache(t.TempDir())
	first, err := c.Compile(n, src, "gfx90a")
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Compile(n, src, "gfx90a")
	if err != nil {
		t.Fatal(err)
	}
	if hits, misses := c.Stats(); hits != 1 || misses != 1 || string(again.Data) != string(first.Data) {
		t.Fatalf("hits %d misses %d, same image %v", hits, misses, string(again.Data) == string(first.Data))
	}
	files, _ := filepath.Glob(filepath.Join(c.Dir, "tiny-gfx90a-hiprtc*.hsaco"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	os.WriteFile(files[0], []byte("junk"), 0o644)
	if _, err := c.Compile(n, src, "gfx90a"); err != nil {
		t.Fatal(err)
	}
	if _, misses := c.Stats(); misses != 2 {
		t.Errorf("damaged file served from cache")
	}
}

func TestCacheName(t *testing.T) {
	src := Source{Name: "matmul.cu", Code: "a", Headers: map[string]string{"fc_port.h": "h"}}
	base := cacheName(src, "gfx90a:sramecc+:xnack-", "5.2", nil)
	if !strings.HasPrefix(base, "matmul-gfx90a_srameccp_xnackm-hiprtc5.2-") || !strings.HasSuffix(base, ".hsaco") {
		t.Errorf("cacheName = %q", base)
	}
	changed := src
	changed.Headers = map[string]string{"fc_port.h": "h2"}
	for _, other := range []string{cacheName(changed, "gfx90a:sramecc+:xnack-", "5.2", nil),
		cacheName(src, "gfx90a", "5.2", nil), cacheName(src, "gfx90a:sramecc+:xnack-", "6.0", nil),
		cacheName(src, "gfx90a:sramecc+:xnack-", "5.2", []string{"-DX"})} {
		if other == base {
			t.Errorf("cache key ignores a change: %q", other)
		}
	}
}
