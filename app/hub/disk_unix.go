//go:build linux || darwin || freebsd

package hub

import "syscall"

// FreeDisk returns the bytes available to an unprivileged user on the
// file system holding dir.
func FreeDisk(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
