package library

import (
	"fmt"
	"io"
	"strings"

	"flowchat/app/hub"
)

// PrintModels writes the library as a table for `flowchat models`; the
// model at path bundled (the demo the app installs itself) is labelled
// "bundled", not "downloaded".
func PrintModels(w io.Writer, models []Model, bundled string) {
	fmt.Fprintf(w, "%-44s %-8s %-10s %9s %7s %7s  %-18s %s\n", "NAME", "QUANT", "ARCH", "SIZE", "PARAMS", "CTX", "WHERE", "PATH")
	for _, m := range models {
		arch, params, ctx := "-", "-", "-"
		if m.Info != nil {
			arch, params, ctx = m.Info.Architecture, count(m.Info.ParamCount), fmt.Sprint(m.Info.ContextLength)
		}
		where := m.Source.String()
		if bundled != "" && m.Path == bundled {
			where = "bundled"
		}
		if m.Problem != "" {
			where += " (!)"
		}
		fmt.Fprintf(w, "%-44s %-8s %-10s %9s %7s %7s  %-18s %s\n", clip(m.Name, 44), dash(m.Quant), arch,
			hub.HumanBytes(uint64(m.Size)), params, ctx, where, m.Path)
		if m.Problem != "" {
			fmt.Fprintf(w, "    %s\n", m.Problem)
		}
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// count writes a parameter count as "1.2B", "135M", "260K".
func count(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Resolve turns a catalog id ("llama-3.2-1b") into its pull reference
// ("bartowski/Llama-3.2-1B-Instruct-GGUF:Llama-3.2-1B-Instruct-Q4_K_M.gguf");
// anything else is returned unchanged.
func (c *Catalog) Resolve(ref string) string {
	if strings.Contains(ref, "/") {
		return ref
	}
	if e, ok := c.Entry(ref); ok {
		return e.Ref()
	}
	return ref
}
