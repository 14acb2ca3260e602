//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"flowchat/app/store"
)

// TestGUIEndToEnd starts the real binary under Xvfb with the demo model,
// types a message with xdotool, and checks that the reply appeared: the
// conversation the window saved holds a non-empty reply from the demo
// model. It leaves a screenshot of the screen (FLOWCHAT_E2E_SHOT names
// where; else the test's temporary directory). Skipped without Xvfb and
// xdotool (make test installs them).
func TestGUIEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the GUI")
	}
	for _, tool := range []string{"Xvfb", "xdotool", "xwd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "flowchat")
	build := exec.Command("go", "build", "-tags", "x11", "-o", bin, ".")
	build.Env = userBuildEnv()
	t0 := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("go build: %.1fs", time.Since(t0).Seconds())
	// The welcome screen a first start shows is tested with Fyne's test
	// driver (ui/welcome_test.go); here the chat is typed into at once.
	settings := filepath.Join(dir, "config", "flowchat", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	if err := os.WriteFile(settings, []byte(`{"version": 1, "welcome_shown": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	display := startXvfb(t)
	env := append(os.Environ(), "DISPLAY="+display, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	app := exec.Command(bin)
	app.Env = env
	var logs bytes.Buffer
	app.Stdout, app.Stderr = &logs, &logs
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	defer app.Process.Kill()

	waitFor(t, "the demo model to load", 30*time.Second, func() bool {
		b, _ := os.ReadFile(settings)
		return bytes.Contains(b, []byte(`"last_model"`))
	})
	xdo(t, env, "search", "--sync", "--name", "^flowchat$", "windowfocus", "--sync")
	xdo(t, env, "type", "--delay", "20", "Once upon a time")
	xdo(t, env, "key", "Return")

	convs := filepath.Join(dir, "data", "flowchat", "conversations")
	var reply store.Message
	waitFor(t, "the reply to be saved", 60*time.Second, func() bool {
		reply = savedReply(convs)
		return reply.Content != "" && reply.Stats != nil
	})
	if reply.Model == "" || reply.Stats.GenTokens == 0 {
		t.Errorf("saved reply %+v", reply)
	}
	time.Sleep(500 * time.Millisecond) // let the window draw the end of the reply
	shot := os.Getenv("FLOWCHAT_E2E_SHOT")
	if shot == "" {
		shot = filepath.Join(dir, "e2e.png")
	}
	img := screenshot(t, env, shot)
	if n := colours(img); n < 16 {
		t.Errorf("screenshot has %d colours: the window did not draw", n)
	}
	// SIGTERM (Ctrl+C in the terminal of `make run`) quits cleanly, and
	// the whole session printed nothing: the harmless Fyne errors of a
	// desktop without dbus-launch are filtered out
	if err := app.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- app.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("still running 15 s after SIGTERM")
	}
	if logs.Len() > 0 {
		t.Errorf("the app printed:\n%s", logs.String())
	}
	t.Logf("reply: %.60q…; screenshot %s", reply.Content, shot)
}

// userBuildEnv is the environment with the user's XDG_CACHE_HOME back, so
// that go build uses the Go build cache every other build uses.
func userBuildEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "XDG_CACHE_HOME=") })
	if hadCacheHome {
		env = append(env, "XDG_CACHE_HOME="+userCacheHome)
	}
	return env
}

// startXvfb runs Xvfb on the first free display from :90 and returns it.
// A display is taken while its lock file names a live process: the lock
// and socket of an Xvfb that was killed stay behind, and counting them
// as taken had left every display from :90 to :109 "taken" by dead
// servers, so the test skipped. Xvfb replaces a stale lock itself.
func startXvfb(t *testing.T) string {
	for n := 90; n < 110; n++ {
		if displayTaken(n) {
			continue
		}
		d := fmt.Sprintf(":%d", n)
		x := exec.Command("Xvfb", d, "-screen", "0", "1400x900x24", "-nolisten", "tcp")
		if err := x.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stopGently(x) })
		sock := fmt.Sprintf("/tmp/.X11-unix/X%d", n)
		waitFor(t, "Xvfb", 10*time.Second, func() bool {
			if lockPID(n) != x.Process.Pid {
				return false // a stale socket may still be there
			}
			c, err := net.Dial("unix", sock)
			if err == nil {
				c.Close()
			}
			return err == nil
		})
		return d
	}
	t.Skip("no free X display")
	return ""
}

// lockPID is the process /tmp/.X<n>-lock names, or 0.
func lockPID(n int) int {
	b, err := os.ReadFile(fmt.Sprintf("/tmp/.X%d-lock", n))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func displayTaken(n int) bool {
	pid := lockPID(n)
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// stopGently ends c with SIGTERM, so that an X server removes its lock
// and socket, and kills it if it is still there after 5 s.
func stopGently(c *exec.Cmd) {
	c.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.Process.Kill()
		<-done
	}
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func xdo(t *testing.T, env []string, args ...string) {
	t.Helper()
	c := exec.Command("xdotool", args...)
	c.Env = env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("xdotool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// savedReply returns the first assistant message of any saved conversation.
func savedReply(dir string) store.Message {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var c store.Conversation
		if json.Unmarshal(b, &c) != nil {
			continue
		}
		for _, m := range c.Messages {
			if m.Role == store.RoleAssistant {
				return m
			}
		}
	}
	return store.Message{}
}

// screenshot grabs the root window with xwd and writes it as PNG.
func screenshot(t *testing.T, env []string, path string) image.Image {
	t.Helper()
	c := exec.Command("xwd", "-root", "-silent")
	c.Env = env
	raw, err := c.Output()
	if err != nil {
		t.Fatalf("xwd: %v", err)
	}
	img, err := decodeXWD(raw)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return img
}

// decodeXWD reads the ZPixmap dumps (24 or 32 bits per pixel) that xwd
// makes of a 24-bit TrueColor screen. The header is 25
// big-endian uint32 fields followed by the window name; then 12-byte
// colour map entries; then the pixels.
func decodeXWD(b []byte) (image.Image, error) {
	if len(b) < 100 {
		return nil, errors.New("xwd: short header")
	}
	f := func(i int) uint32 { return binary.BigEndian.Uint32(b[4*i:]) }
	headerSize, format, width, height := f(0), f(2), int(f(4)), int(f(5))
	byteOrder, bpp, bytesPerLine, ncolors := f(7), f(11), int(f(12)), int(f(19))
	if format != 2 || bpp != 24 && bpp != 32 {
		return nil, fmt.Errorf("xwd: format %d with %d bits per pixel not handled", format, bpp)
	}
	off := int(headerSize) + 12*ncolors
	if off+bytesPerLine*height > len(b) {
		return nil, errors.New("xwd: short pixel data")
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	for y := range height {
		row := b[off+y*bytesPerLine:]
		n := int(bpp / 8)
		for x := range width {
			p := row[n*x : n*x+n]
			if byteOrder == 0 { // LSBFirst: B, G, R[, X]
				img.Set(x, y, color.RGBA{p[2], p[1], p[0], 0xff})
			} else { // MSBFirst: [X,] R, G, B
				img.Set(x, y, color.RGBA{p[n-3], p[n-2], p[n-1], 0xff})
			}
		}
	}
	return img, nil
}

func colours(img image.Image) int {
	seen := map[color.Color]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 3 {
		for x := r.Min.X; x < r.Max.X; x += 3 {
			seen[img.At(x, y)] = true
		}
	}
	return len(seen)
}

// TestBuildUsesUserGoCache: the end-to-end test's go build sees the Go
// build cache of the user running the tests, not one under the tests'
// temporary XDG_CACHE_HOME.
func TestBuildUsesUserGoCache(t *testing.T) {
	c := exec.Command("go", "env", "GOCACHE")
	c.Env = userBuildEnv()
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(string(out))
	if tmp := os.Getenv("XDG_CACHE_HOME"); strings.HasPrefix(got, tmp) {
		t.Errorf("GOCACHE %s is under the tests' XDG_CACHE_HOME %s", got, tmp)
	}
}
