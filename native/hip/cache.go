package hip

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/adrg/xdg"

	"flowchat/native/internal/atomicfile"
)

// cacheFormat changes when the key or the file contents change meaning.
const cacheFormat = "flowchat-hip-kernel-cache-v1"

// Cache keeps compiled code objects on disk, so hipRTC runs once per
// (source, target, compiler) and not at every start. It shares
// native/cuda's directory; names differ by target ("gfx…" versus "sm_…").
// Files are written atomically (temporary file, then rename).
type Cache struct {
	Dir          string
	hits, misses atomic.Int64
}

// DefaultCacheDir is $XDG_CACHE_HOME/flowchat/kernels.
func DefaultCacheDir() string { return filepath.Join(xdg.CacheHome, "flowchat", "kernels") }

// NewCache returns a cache in dir ("" for DefaultCacheDir).
func NewCache(dir string) *Cache {
	if dir == "" {
		dir = DefaultCacheDir()
	}
	return &Cache{Dir: dir}
}

// Stats returns how many Compile calls were served from disk and compiled.
func (c *Cache) Stats() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }

// Compile returns src compiled by n for arch, from the cache when it holds
// that code object. A cache that cannot be written is not an error.
func (c *Cache) Compile(n *HIPRTC, src Source, arch string, extra ...string) (*Image, error) {
	path := filepath.Join(c.Dir, cacheName(src, arch, n.Version(), extra))
	if data, err := os.ReadFile(path); err == nil && ValidImage(data) {
		c.hits.Add(1)
		return &Image{Arch: arch, Data: data}, nil
	}
	c.misses.Add(1)
	img, err := n.Compile(src, arch, extra...)
	if err != nil {
		return nil, err
	}
	_ = atomicfile.Write(path, img.Data) // best effort; see the doc comment
	return img, nil
}

// cacheName is "<unit>-<target>-hiprtc<version>-<hash>.hsaco"; the hash
// covers the source, every header, the options, the target (features
// included) and the compiler's version.
func cacheName(src Source, arch, version string, extra []string) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(cacheFormat)
	field(src.Name)
	field(src.Code)
	for _, name := range slices.Sorted(maps.Keys(src.Headers)) {
		field(name)
		field(src.Headers[name])
	}
	for _, o := range append(slices.Clone(CompileOptions), extra...) {
		field(o)
	}
	field(arch)
	field(version)
	base := strings.TrimSuffix(filepath.Base(src.Name), filepath.Ext(src.Name))
	target := strings.NewReplacer(":", "_", "+", "p", "-", "m").Replace(arch)
	return fmt.Sprintf("%s-%s-hiprtc%s-%s.hsaco", base, target, version, hex.EncodeToString(h.Sum(nil))[:24])
}
