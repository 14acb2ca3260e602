package quantlab

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"flowchat/engine/eval"
)

// Table is the report as text cells, one row per level, for the CLI's
// markdown table and the GUI's table widget. Right[i] says whether column
// i holds numbers (right-aligned).
type Table struct {
	Header []string
	Right  []bool
	Rows   [][]string
}

// column is one table column: its title and how a level fills it.
type column struct {
	title string
	right bool
	cell  func(r *eval.LevelResult) string
}

var columns = []column{
	{"level", false, func(r *eval.LevelResult) string { return r.Level }},
	{"types", false, func(r *eval.LevelResult) string { return r.Types }},
	{"size", true, func(r *eval.LevelResult) string { return Bytes(r.FileSize) }},
	{"bits/weight", true, func(r *eval.LevelResult) string { return fmt.Sprintf("%.2f", r.BitsPerWeight) }},
	{"PPL", true, func(r *eval.LevelResult) string {
		return PPL(r.PPL) + " ± " + decimals(r.PPLStdErr, pplDecimals(r.PPL))
	}},
	{"KLD", true, func(r *eval.LevelResult) string {
		return KLD(r.KLD) + " ± " + kldErr(r.KLD, r.KLDStdErr)
	}},
	{"top-1", true, func(r *eval.LevelResult) string { return fmt.Sprintf("%.1f%%", 100*r.Top1) }},
	{"weight rel. RMS", true, func(r *eval.LevelResult) string { return fmt.Sprintf("%.4f", r.WeightRelRMS) }},
}

var tpsColumn = column{"tok/s", true, func(r *eval.LevelResult) string { return fmt.Sprintf("%.1f", r.GenTPS) }}

// NewTable lays out rep; the tok/s column is there when a level was timed.
func NewTable(rep *eval.LabReport) Table {
	cols := columns
	if hasTPS(rep) {
		cols = append(cols[:len(cols):len(cols)], tpsColumn)
	}
	var t Table
	for _, c := range cols {
		t.Header = append(t.Header, c.title)
		t.Right = append(t.Right, c.right)
	}
	for i := range rep.Levels {
		row := make([]string, len(cols))
		for j, c := range cols {
			row[j] = c.cell(&rep.Levels[i])
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func hasTPS(rep *eval.LabReport) bool {
	for _, l := range rep.Levels {
		if l.GenTPS > 0 {
			return true
		}
	}
	return false
}

// WriteMarkdown writes the table as markdown with padded columns, which
// reads as a table in a terminal too.
func (t Table) WriteMarkdown(w io.Writer) error {
	width := make([]int, len(t.Header))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)), 3)
		}
	}
	var b strings.Builder
	t.line(&b, t.Header, width)
	for i, n := range width {
		rule := strings.Repeat("-", n)
		if t.Right[i] {
			rule = rule[:n-1] + ":"
		}
		b.WriteString("| " + rule + " ")
	}
	b.WriteString("|\n")
	for _, row := range t.Rows {
		t.line(&b, row, width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t Table) line(b *strings.Builder, row []string, width []int) {
	for i, c := range row {
		pad := strings.Repeat(" ", width[i]-len([]rune(c)))
		if t.Right[i] {
			c = pad + c
		} else {
			c += pad
		}
		b.WriteString("| " + c + " ")
	}
	b.WriteString("|\n")
}

// Summary is the line above the table: model, context, chunks, base PPL.
func Summary(rep *eval.LabReport) string {
	return fmt.Sprintf("%s: %d chunks of %d tokens, base perplexity %s", rep.Model, rep.Chunks, rep.Ctx, PPL(rep.BasePPL))
}

// PPL formats a perplexity with four significant digits (3.327, 12.35,
// 518.5, 1235), on every chart label and table cell alike: a level's
// digits beyond the fourth are below its standard error.
func PPL(v float64) string { return decimals(v, pplDecimals(v)) }

func pplDecimals(v float64) int { return sigDecimals(v, 4) }

// KLD formats a KL divergence with three significant digits (4.90,
// 0.0238, 0.000530), in e-notation below 1e-5 (7.40e-07), and the base's
// 0 as "0".
func KLD(v float64) string {
	switch {
	case v == 0:
		return "0"
	case tinyKLD(v):
		return strconv.FormatFloat(v, 'e', 2, 64)
	}
	return decimals(v, sigDecimals(v, 3))
}

func tinyKLD(v float64) bool { return v != 0 && finite(v) && math.Abs(v) < 1e-5 }

// kldErr formats a KLD's standard error to the decimals of the KLD (the
// base's 0 ± 0 as such).
func kldErr(v, e float64) string {
	switch {
	case v == 0 && e == 0:
		return "0"
	case tinyKLD(v):
		return strconv.FormatFloat(e, 'e', 1, 64)
	}
	return decimals(e, sigDecimals(v, 3))
}

// sigDecimals is how many decimals show n significant digits of v.
func sigDecimals(v float64, n int) int {
	if v == 0 || !finite(v) {
		return n - 1
	}
	return max(0, n-1-int(math.Floor(math.Log10(math.Abs(v)))))
}

func decimals(v float64, n int) string { return strconv.FormatFloat(v, 'f', n, 64) }

// Bytes formats a size in binary units: "1.13 MiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.2f %ciB", v, "KMGT"[i])
}
