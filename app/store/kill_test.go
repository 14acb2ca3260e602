//go:build unix

package store

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary act as a chat that streams replies and
// saves as the app does, reporting each durable step on stdout.
const childEnv = "FLOWCHAT_STORE_KILL_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		streamForever(dir)
		return
	}
	os.Exit(m.Run())
}

// streamForever saves a user turn, journals a reply piece by piece, saves
// it, and repeats. It prints "user N" once turn N is on disk (in the file or
// the journal) and "piece N K" once piece K of reply N is journalled.
func streamForever(path string) {
	d, err := OpenDir(path)
	if err != nil {
		panic(err)
	}
	c := New()
	c.ID = "killtest"
	out := bufio.NewWriter(os.Stdout)
	for n := 0; ; n++ {
		u := c.Add(c.Leaf(), Message{Role: RoleUser, Content: fmt.Sprintf("question %d", n)})
		// Odd questions reach the disk only through the reply's journal,
		// as when the app dies before its save of the question ran.
		if n%2 == 0 {
			if err := d.Save(c); err != nil {
				panic(err)
			}
		}
		reply := Message{ID: NewID(), Parent: u.ID, Role: RoleAssistant}
		j, err := d.BeginReply(c, reply)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(out, "user %d\n", n)
		out.Flush()
		var text strings.Builder
		for k := range 30 {
			piece := fmt.Sprintf("w%d ", k)
			j.Append(piece)
			text.WriteString(piece)
			fmt.Fprintf(out, "piece %d %d\n", n, k)
			out.Flush()
			time.Sleep(200 * time.Microsecond)
		}
		reply.Content = text.String()
		c.Add(u.ID, reply)
		if err := d.Save(c); err != nil {
			panic(err)
		}
		j.Discard()
	}
}

// TestKillDuringStreamingLosesNoEarlierMessage kills -9 a process that is
// streaming replies, at several moments, and checks that every user turn it
// reported saved is there, and the reply being streamed is recovered with
// at least the pieces it reported journalled.
func TestKillDuringStreamingLosesNoEarlierMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, after := range []int{5, 47, 130, 301} {
		t.Run(strconv.Itoa(after), func(t *testing.T) { killAfter(t, after) })
	}
}

func killAfter(t *testing.T, lines int) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	lastUser, lastReply, lastPiece := -1, -1, -1
	for i := 0; i < lines && sc.Scan(); i++ {
		f := strings.Fields(sc.Text())
		n, _ := strconv.Atoi(f[1])
		if f[0] == "user" {
			lastUser = n
		} else {
			lastReply = n
			lastPiece, _ = strconv.Atoi(f[2])
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	d, _ := OpenDir(dir)
	c, err := d.Load("killtest")
	if err != nil {
		t.Fatal(err)
	}
	path := c.Path()
	users := 0
	for _, m := range path {
		if m.Role == RoleUser {
			if want := fmt.Sprintf("question %d", users); m.Content != want {
				t.Fatalf("user turn %d = %q, want %q", users, m.Content, want)
			}
			users++
		}
	}
	if users < lastUser+1 {
		t.Fatalf("%d user turns survived, %d were reported saved", users, lastUser+1)
	}
	if lastReply == lastUser && lastPiece >= 0 {
		last := path[len(path)-1]
		var want strings.Builder
		for k := 0; k <= lastPiece; k++ {
			fmt.Fprintf(&want, "w%d ", k)
		}
		if last.Role != RoleAssistant || !strings.HasPrefix(last.Content, want.String()) {
			t.Fatalf("reply being streamed: got %q (interrupted %v), want it to start with %q", last.Content, last.Interrupted, want.String())
		}
	}
}
