// Command flowchat is a desktop chat application for running language
// models locally, with an inference engine of its own. Without arguments it
// opens the GUI (or, with no display, a terminal chat); subcommands expose
// every engine capability to scripts.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type command struct {
	name, usage, summary string
	run                  func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// errUsage marks a command line that does not make sense (exit status 2).
var errUsage = errors.New("usage")

// errFlags marks flag errors the flag package has already printed, with
// the usage.
var errFlags = errors.New("bad flags")

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
		return exitCode(gui(args, stdout, stderr), stderr)
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		printHelp(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "flowchat: unknown command %q\n\n", name)
		printHelp(stderr)
		return 2
	}
	return exitCode(c.run(args[1:], stdout, stderr), stderr)
}

func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errFlags):
		return 2
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "flowchat: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "flowchat: %v\n", err)
	return 1
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "flowchat — chat with language models on your own machine.")
	fmt.Fprintln(w, "\nUsage:\n  flowchat                 open the app (terminal chat when there is no display)\n  flowchat <command> [flags]")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'flowchat <command> -h' for a command's flags.")
}

// newFlags makes a flag set that reports errors instead of exiting.
func newFlags(c string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("flowchat "+c, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args, accepting flags after positional arguments too.
func parse(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %v", errFlags, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}
