package cuda

import (
	"bytes"
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
const cacheFormat = "flowchat-kernel-cache-v1"

// Cache keeps compiled kernel images on disk, so NVRTC runs once per
// (source, architecture, NVRTC version) and not at every start: compiling
// all of kernels/ takes seconds. Files are written atomically (a temporary
// file in the same directory, then rename), so concurrent processes and
// crashes never leave a partial image under a final name.
type Cache struct {
	Dir          string
	hits, misses atomic.Int64
}

// DefaultCacheDir is $XDG_CACHE_HOME/flowchat/kernels (~/.cache/… on Linux).
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

// Compile returns src compiled by n for compute capability arch, from the
// cache when it holds that image. A cache that cannot be written (read-only
// home, full disk) is not an error: the image is still returned.
func (c *Cache) Compile(n *NVRTC, src Source, arch int, extra ...string) (*Image, error) {
	kind, tarch, err := n.target(arch)
	if err != nil {
		return nil, &CompileError{Source: src.Name, Arch: arch, Err: err}
	}
	path := filepath.Join(c.Dir, cacheName(src, kind, tarch, n.Version(), extra))
	if data, err := os.ReadFile(path); err == nil && validImage(kind, data) {
		c.hits.Add(1)
		return &Image{Kind: kind, Arch: tarch, Data: data}, nil
	}
	c.misses.Add(1)
	img, err := n.Compile(src, arch, extra...)
	if err != nil {
		return nil, err
	}
	_ = atomicfile.Write(path, img.Data) // best effort; see the doc comment
	return img, nil
}

// cacheName is the file name of an image: readable fields for people
// looking in the directory, and a hash of everything that affects the
// output (the source, every header, the options, the target, NVRTC's
// version) for the cache's correctness.
func cacheName(src Source, kind ImageKind, arch int, nvrtcVersion string, extra []string) string {
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
	field(fmt.Sprint(kind, arch, nvrtcVersion))
	prefix := "sm"
	if kind == PTX {
		prefix = "compute"
	}
	base := strings.TrimSuffix(filepath.Base(src.Name), filepath.Ext(src.Name))
	return fmt.Sprintf("%s-%s_%d-nvrtc%s-%s.%v", base, prefix, arch, nvrtcVersion, hex.EncodeToString(h.Sum(nil))[:24], kind)
}

// validImage rejects files that are not what their name says (a cache
// touched by something else): a CUBIN is an ELF file, PTX ends in NUL.
func validImage(kind ImageKind, data []byte) bool {
	if kind == CUBIN {
		return bytes.HasPrefix(data, []byte("\x7fELF"))
	}
	return len(data) > 1 && data[len(data)-1] == 0
}
