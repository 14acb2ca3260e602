package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"
	"strconv"
	"strings"

	"flowchat/app/hub"
)

// cmdHelp is what a subcommand's --help shows above its flags: the
// positional arguments and an example or two.
type cmdHelp struct {
	args     string   // after "flowchat NAME", e.g. "[flags] [PROMPT]"
	examples []string // whole command lines
}

// helpTexts is keyed by the name given to newFlags ("models inspect" for a
// sub-subcommand). TestEveryCommandHelp fails for a command without one.
var helpTexts = map[string]cmdHelp{
	"":               {"[flags]", []string{"flowchat", "flowchat --model M.gguf"}},
	"run":            {"[flags] [PROMPT]", []string{`flowchat run --prompt "Once upon a time" -n 48 --greedy`, `flowchat run --model M.gguf --chat --temperature 0.7 "Hi"`}},
	"chat":           {"[flags]", []string{"flowchat chat", "flowchat chat --model M.gguf --system \"Answer briefly.\""}},
	"bench":          {"[flags]", []string{"flowchat bench --model M.gguf -p 512 -n 128 -t 1,2 -r 5", "flowchat bench --model M.gguf --parallel 1,2,4,8,16 -p 0 -n 32 -o json", "flowchat bench --model M.gguf --draft-quant Q4_0 -n 256 --spec-rounds 10", "flowchat bench --suite issue6 --report docs/PERFORMANCE.md"}},
	"serve":          {"[flags]", []string{"flowchat serve --model M.gguf --port 8080", "flowchat serve --model M.gguf --host 0.0.0.0 --api-key KEY --parallel 8"}},
	"remote":         {"list | add NAME URL | rm NAME | models URL|NAME", []string{"flowchat remote add lab http://gpu-box:8000 --api-key-stdin", "flowchat remote models lab"}},
	"embed":          {"[flags] [TEXT]", []string{`flowchat embed --model bert.gguf --prompt "a sentence"`}},
	"search":         {"[flags] [WORDS...]", []string{"flowchat search qwen2.5 instruct", "flowchat search --files bartowski/Qwen2.5-0.5B-Instruct-GGUF"}},
	"pull":           {"[flags] REPO[:QUANT] | CATALOG-NAME", []string{"flowchat pull bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M", "flowchat pull qwen2.5-0.5b"}},
	"perplexity":     {"[flags]", []string{"flowchat perplexity --model M.gguf --file text.txt -c 128", "flowchat perplexity --model Q.gguf --file text.txt --kl-base base.bin"}},
	"quantize":       {"[flags] IN.gguf OUT.gguf", []string{"flowchat quantize IN.gguf OUT.gguf --type Q3H", "flowchat quantize IN.gguf OUT.gguf --type Q4_0 --output-type Q8_0"}},
	"quantlab":       {"[flags] [MODEL]", []string{"flowchat quantlab --model M.gguf --file text.txt", `flowchat quantlab M.gguf --prompt "Once upon a time"`}},
	"synth":          {"[flags]", []string{"flowchat synth --shape tinyllama --type Q4_K_M --out tl.gguf"}},
	"logits":         {"[flags]", []string{`flowchat logits --model M.gguf --prompt "Hello" --out logits.f32`, "flowchat logits --tokens 1,15043 --out logits.f32"}},
	"tokenize":       {"[flags] [TEXT]", []string{`flowchat tokenize --model M.gguf --prompt "Hello world"`, `flowchat tokenize --pieces "Hello world"`}},
	"models":         {"[inspect PATH]", []string{"flowchat models", "flowchat models inspect ~/.local/share/flowchat/models/stories260K-demo.gguf"}},
	"gpu":            {"[compile]", []string{"flowchat gpu", "flowchat gpu compile --arch sm_70,sm_80,sm_86,sm_89,sm_90"}},
	"gpu compile":    {"[flags]", []string{"flowchat gpu compile --arch sm_80,sm_90", "flowchat gpu compile --hip-arch gfx906,gfx90a,gfx1030", "flowchat gpu compile --backend hip"}},
	"models inspect": {"[flags] PATH", []string{"flowchat models inspect M.gguf", "flowchat models inspect ./Qwen2.5-0.5B-Instruct/"}},
}

// printUsage writes a command's synopsis, summary, examples and flags.
func printUsage(w io.Writer, name string, fs *flag.FlagSet) {
	h, ok := helpTexts[name]
	if !ok {
		h.args = "[flags]"
	}
	fmt.Fprintf(w, "Usage: %s %s\n", strings.TrimSpace("flowchat "+name), h.args)
	if c, ok := commands[name]; ok && c.summary != "" {
		fmt.Fprintf(w, "\n%s.\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
	}
	if len(h.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range h.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

// helpHint is the line printed under a command-line error.
func helpHint(name string) string {
	return fmt.Sprintf("Run '%s --help' for usage.", strings.TrimSpace("flowchat "+name))
}

// negativeOK names the integer flags for which a negative value means
// something (-1 = the whole history).
var negativeOK = map[string]bool{"repeat-last-n": true, "dry-penalty-last-n": true}

// checkNumbers rejects a negative value given to an integer flag: a count,
// length or thread number below zero is a mistake, never a request for the
// default.
func checkNumbers(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil || negativeOK[f.Name] {
			return
		}
		var neg bool
		switch v := g.Get().(type) {
		case int:
			neg = v < 0
		case int64:
			neg = v < 0
		case float64:
			neg = v < 0
		}
		if neg {
			err = fmt.Errorf("invalid value %q for flag -%s: must not be negative", f.Value, f.Name)
		}
	})
	return err
}

// optInt is an integer flag whose absence means something of its own
// (run's -n: until end of generation), so its help shows no made-up
// default; given, it is checked like any other number (≥ 0).
type optInt struct {
	v   int
	set bool
}

func (o *optInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.v)
}

func (o *optInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("parse error")
	}
	o.v, o.set = v, true
	return nil
}

func (o *optInt) Get() any { return o.v }

// or is the value given, else def.
func (o *optInt) or(def int) int {
	if o.set {
		return o.v
	}
	return def
}

// appVersion is the release (FyneApp.toml's Version); the Makefile may
// override it and commit with -ldflags "-X main.version=… -X main.commit=…".
// A plain go build stamps the commit itself unless -buildvcs=false.
const appVersion = "0.1.0"

var version, commit string

// versionString is "flowchat VERSION (commit REV[, modified][, DATE])".
func versionString() string {
	v, rev := cmp.Or(version, appVersion), commit
	var when string
	var dirty bool
	if bi, ok := debug.ReadBuildInfo(); ok && rev == "" {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev == "" {
		return "flowchat " + v + " (commit unknown: built without version control information; make build stamps it)"
	}
	if len(rev) > 12 && !strings.Contains(rev, "-") {
		rev = rev[:12]
	}
	if dirty {
		rev += ", modified"
	}
	if when != "" {
		rev += ", " + when
	}
	return fmt.Sprintf("flowchat %s (commit %s)", v, rev)
}

// cleanError is err's message without a repeated "op path: " (gguf.Open
// and others wrap an *fs.PathError in their own "open PATH: "), and an
// offline hub error as its one sentence.
func cleanError(err error) string {
	msg := hub.Message(err)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		dup := pe.Op + " " + pe.Path + ": "
		if strings.Count(msg, dup) > 1 {
			msg = strings.Replace(msg, dup, "", 1)
		}
	}
	return msg
}
