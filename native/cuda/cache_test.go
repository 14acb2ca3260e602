package cuda

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheName: the key changes with everything that changes the output.
func TestCacheName(t *testing.T) {
	src := Source{Name: "norm.cu", Code: "a", Headers: map[string]string{"x.h": "1", "y.h": "2"}}
	base := cacheName(src, CUBIN, 80, "11.8", nil)
	if !strings.HasPrefix(base, "norm-sm_80-nvrtc11.8-") || !strings.HasSuffix(base, ".cubin") {
		t.Errorf("cacheName = %q, want norm-sm_80-nvrtc11.8-<hash>.cubin", base)
	}
	same := Source{Name: "norm.cu", Code: "a", Headers: map[string]string{"y.h": "2", "x.h": "1"}}
	if got := cacheName(same, CUBIN, 80, "11.8", nil); got != base {
		t.Errorf("key depends on map order: %q vs %q", got, base)
	}
	variants := map[string]string{
		"source":  cacheName(Source{Name: "norm.cu", Code: "b", Headers: src.Headers}, CUBIN, 80, "11.8", nil),
		"header":  cacheName(Source{Name: "norm.cu", Code: "a", Headers: map[string]string{"x.h": "1", "y.h": "3"}}, CUBIN, 80, "11.8", nil),
		"arch":    cacheName(src, CUBIN, 90, "11.8", nil),
		"kind":    cacheName(src, PTX, 80, "11.8", nil),
		"version": cacheName(src, CUBIN, 80, "12.4", nil),
		"option":  cacheName(src, CUBIN, 80, "11.8", []string{"-DX=1"}),
		"split":   cacheName(Source{Name: "norm.cu", Code: "a", Headers: map[string]string{"x.h": "12", "y.h": ""}}, CUBIN, 80, "11.8", nil),
	}
	for what, name := range variants {
		if name == base {
			t.Errorf("changing the %s does not change the key", what)
		}
	}
}

// TestCacheCompile: a miss compiles and stores, a hit returns the stored
// image, a damaged file is replaced.
func TestCacheCompile(t *testing.T) {
	n := needNVRTC(t)
	c := NewCache(t.TempDir())
	src, _ := KernelSource("act.cu")
	first, err := c.Compile(n, src, 80)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Compile(n, src, 80)
	if err != nil {
		t.Fatal(err)
	}
	if hits, misses := c.Stats(); hits != 1 || misses != 1 || string(first.Data) != string(second.Data) || second.Kind != CUBIN {
		t.Fatalf("hits %d misses %d, same image %v; want 1, 1, true", hits, misses, string(first.Data) == string(second.Data))
	}
	files, _ := filepath.Glob(filepath.Join(c.Dir, "act-sm_80-nvrtc"+n.Version()+"-*.cubin"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one", files)
	}
	if err := os.WriteFile(files[0], []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, err := c.Compile(n, src, 80)
	if err != nil || string(third.Data) != string(first.Data) {
		t.Fatalf("after damage: %v, same image %v", err, err == nil && string(third.Data) == string(first.Data))
	}
	if _, misses := c.Stats(); misses != 2 {
		t.Errorf("damaged file served from the cache (misses %d, want 2)", misses)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	if d := DefaultCacheDir(); !strings.HasSuffix(d, filepath.Join("flowchat", "kernels")) || !filepath.IsAbs(d) {
		t.Errorf("DefaultCacheDir = %q", d)
	}
}
