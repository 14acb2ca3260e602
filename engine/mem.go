package engine

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// availableMemory returns the bytes of memory available to new work
// (Linux MemAvailable), or 0 when unknown.
func availableMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// hugePagesFit reports whether copying a model of size bytes out of its
// file mapping leaves room: the copy must take at most half of the
// available memory, else the page cache (and the OS's freedom to drop
// clean pages) serves the model better.
func hugePagesFit(size int64) bool {
	avail := availableMemory()
	return avail > 0 && size <= avail/2
}
