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

// errFlags marks command-line errors already printed (one line and a
// hint).
var errFlags = errors.New("bad flags")

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version") {
		fmt.Fprintln(stdout, versionString())
		return 0
	}
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
		fmt.Fprintf(stderr, "flowchat: unknown command %q\n%s\n", name, helpHint(""))
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
		fmt.Fprintf(stderr, "flowchat: %s\n", cleanError(err))
		return 2
	}
	fmt.Fprintf(stderr, "flowchat: %s\n", cleanError(err))
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
	fmt.Fprintln(w, "\nRun 'flowchat <command> --help' for a command's arguments, flags and examples;\n'flowchat --version' for the version.")
}

// newFlags makes a flag set that reports errors instead of exiting; c is
// the command's name as helpTexts knows it.
func newFlags(c string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(strings.TrimSpace("flowchat "+c), flag.ContinueOnError)
	fs.SetOutput(stderr)
	// --help asked for is output, as `flowchat --help`'s is: it pipes to
	// less or grep (it went to stderr, so `| less` showed nothing)
	fs.Usage = func() { printUsage(stdout, c, fs) }
	return fs
}

// parse parses args, accepting flags after positional arguments too. -h
// prints the command's usage; a bad flag or value prints one line and a
// hint, never the whole usage; a negative count is a bad value.
func parse(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard) // the flag package's own messages
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	err := parseAll(fs, args)
	if err == nil {
		err = checkNumbers(fs)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(out)
		usage()
		return err
	}
	fmt.Fprintf(out, "%s: %v\n%s\n", fs.Name(), err, helpHint(strings.TrimSpace(strings.TrimPrefix(fs.Name(), "flowchat"))))
	return fmt.Errorf("%w: %v", errFlags, err)
}

func parseAll(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
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
