// Command rssprobe loads a model with every block and the head offloaded to
// a CPU stand-in device (engine/device) and prints the process's memory
// lines from /proc/self/status after the load: what a full offload leaves
// in host memory (docs/PERFORMANCE.md, "host memory of a full offload").
// The stand-in's own "device memory" is host memory too, about the size
// of the offloaded weights. Linux only.
//
//	go run ./tools/rssprobe MODEL.gguf
package main

import (
	"fmt"
	"os"
	"strings"

	"flowchat/engine"
	"flowchat/engine/device"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rssprobe MODEL.gguf")
		os.Exit(2)
	}
	m, err := engine.Load(os.Args[1], engine.LoadOptions{Threads: 2, HugePages: true,
		GPU: &engine.GPUOptions{Devices: []device.Device{device.NewStandIn("cpu:0", 0, 32)}, Layers: -1}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "rssprobe:", err)
		os.Exit(1)
	}
	defer m.Close()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, "rssprobe:", err)
		os.Exit(1)
	}
	var out []string
	for _, l := range strings.Split(string(status), "\n") {
		for _, k := range []string{"VmHWM", "VmRSS", "RssAnon", "RssFile"} {
			if strings.HasPrefix(l, k+":") {
				out = append(out, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	fmt.Println(strings.Join(out, ", "))
}
