//go:build !(linux || darwin || freebsd)

package hub

import "errors"

// FreeDisk is unknown on this system; the download manager then skips its
// free-space check and relies on write errors.
func FreeDisk(dir string) (uint64, error) {
	return 0, errors.ErrUnsupported
}
