package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// probe is one entry of testdata/probes.txt.
type probe struct {
	kind, name, script string
	flags              map[string]string
}

// has reports whether the probe carries flag.
func (p probe) has(flag string) bool {
	_, ok := p.flags[flag]
	return ok
}

// loadProbes reads the corpus.
func loadProbes(t *testing.T) []probe {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "probes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []probe
	var cur *probe
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --") {
			f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(line, "-- "), " --"))
			if len(f) < 2 || f[0] != "escape" && f[0] != "control" {
				t.Fatalf("probes.txt:%d: want -- escape|control NAME [flags] --", i+1)
			}
			out = append(out, probe{kind: f[0], name: f[1], flags: map[string]string{}})
			cur = &out[len(out)-1]
			for _, fl := range f[2:] {
				fl = strings.Trim(fl, "[]")
				k, v, _ := strings.Cut(fl, "=")
				cur.flags[k] = v
			}
			continue
		}
		if cur == nil || strings.HasPrefix(line, "#") {
			continue
		}
		cur.script += line + "\n"
	}
	seen := map[string]bool{}
	for _, p := range out {
		if seen[p.name] {
			t.Fatalf("probes.txt: %s twice", p.name)
		}
		seen[p.name] = true
	}
	return out
}

// TestProbeCorpus runs every probe through the real sandbox, on both
// backends, as root and as an unprivileged user, and counts escapes and
// broken controls: both must be zero.
func TestProbeCorpus(t *testing.T) {
	needRoot(t)
	probes := loadProbes(t)
	exe := stageCopy(t)
	for _, be := range []string{kindBwrap, kindLandlock} {
		for _, as := range []string{"root", "user"} {
			t.Run(be+"/"+as, func(t *testing.T) {
				needBackend(t, be)
				var uid, gid int
				if as == "user" {
					uid, gid = unprivileged(t)
				}
				var escapes, broken, ran, skipped atomic.Int32
				for _, p := range probes {
					t.Run(p.name, func(t *testing.T) {
						if only := p.flags["only"]; only != "" && only != be {
							skipped.Add(1)
							t.Skipf("%s only: the %s backend documents this cost", only, be)
						}
						if need := p.flags["need"]; need != "" {
							if _, err := exec.LookPath(need); err != nil {
								skipped.Add(1)
								t.Skipf("%s is not installed", need)
							}
						}
						ran.Add(1)
						h := newHarness(t, be, exe, uid, gid, p.flags)
						res := h.run(p.script, p.has("pty"))
						switch p.kind {
						case "escape":
							if moved := h.canariesMoved(res); len(moved) > 0 {
								escapes.Add(1)
								t.Errorf("ESCAPED: %s\nexit %d\n%s", strings.Join(moved, "; "), res.code, res.out)
							}
						case "control":
							want, _ := strconv.Atoi(p.flags["exit"])
							if res.code != want || strings.Contains(res.out, "BROKEN") {
								broken.Add(1)
								t.Errorf("control broken: exit %d (want %d)\n%s", res.code, want, res.out)
							}
							if moved := h.canariesMoved(res); len(moved) > 0 {
								broken.Add(1)
								t.Errorf("control moved canaries: %s\n%s", strings.Join(moved, "; "), res.out)
							}
						}
					})
				}
				t.Logf("%s as %s: %d probes run (%d skipped), %d escapes, %d controls broken", be, as, ran.Load(), skipped.Load(), escapes.Load(), broken.Load())
			})
		}
	}
}

// TestProbesDetectEscapes runs the escape probes with no sandbox, as an
// unprivileged user: each must then be caught escaping (except those that
// need root to do harm), which shows that the canaries see what the
// sandbox stops.
func TestProbesDetectEscapes(t *testing.T) {
	needRoot(t)
	uid, gid := unprivileged(t)
	exe := stageCopy(t)
	missed := 0
	for _, p := range loadProbes(t) {
		if p.kind != "escape" {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			if p.has("root") {
				t.Skip("only root could do harm this way")
			}
			if need := p.flags["need"]; need != "" {
				if _, err := exec.LookPath(need); err != nil {
					t.Skipf("%s is not installed", need)
				}
			}
			h := newHarness(t, "", exe, uid, gid, p.flags)
			res := h.run(p.script, p.has("pty"))
			if moved := h.canariesMoved(res); len(moved) == 0 {
				missed++
				t.Errorf("without a sandbox the probe did not escape: its canaries do not show what it tries\nexit %d\n%s", res.code, res.out)
			}
		})
	}
	t.Logf("escape probes the canaries missed without a sandbox: %d", missed)
}

// result is how a probe ended.
type result struct {
	code int
	out  string
}

// harness is one probe's world: the working directory and the canaries
// around it.
type harness struct {
	t                                        *testing.T
	sb                                       *Sandbox
	uid, gid                                 int
	base                                     string
	work                                     string
	outside                                  string
	home                                     string
	env                                      []string
	exeIn                                    string
	hostSleep                                *exec.Cmd
	sleepDone                                atomic.Bool
	unixHits, abstractHits, tcpHits, udpHits atomic.Int32
	abstract                                 string
	unixSock                                 string
	tcpPort, udpPort                         int
	before                                   map[string]string
	// canary is the name of the files probes try to create in shared
	// folders (/etc, /tmp…): its own per harness, so that runs side by side
	// do not see each other's.
	canary string
	fixed  []string
}

// newHarness builds a fresh world for one probe.
func newHarness(t *testing.T, be, exe string, uid, gid int, flags map[string]string) *harness {
	t.Helper()
	h := &harness{t: t, uid: uid, gid: gid}
	base, err := os.MkdirTemp("", "tack-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	h.base, _ = filepath.EvalSymlinks(base)
	h.work = filepath.Join(h.base, "work")
	h.outside = filepath.Join(h.base, "outside")
	h.home = filepath.Join(h.base, "userhome")
	if _, ok := flags["home-inside"]; ok {
		h.home = filepath.Join(h.work, "home")
	}
	for _, d := range []string{h.work, h.outside, filepath.Join(h.outside, "sub"), h.home} {
		mustMkdir(t, d)
	}
	writeFile(t, filepath.Join(h.outside, "existing"), "original\n")
	writeFile(t, filepath.Join(h.base, "outside-marker"), "")
	writeFile(t, filepath.Join(h.home, ".bashrc"), "# rc\n")
	mustMkdir(t, filepath.Join(h.home, "projects"))
	h.env = []string{"HOME=" + h.home, "PATH=" + filepath.Join(h.home, ".local", "bin") + ":/usr/local/bin:/usr/bin:/bin",
		"GIT_AUTHOR_NAME=p", "GIT_AUTHOR_EMAIL=p@x", "GIT_COMMITTER_NAME=p", "GIT_COMMITTER_EMAIL=p@x",
		"GIT_CONFIG_NOSYSTEM=1", "LANG=C"}

	// The repository.
	_, worktree := flags["worktree"]
	_, norepo := flags["norepo"]
	repo := h.work
	if worktree {
		repo = filepath.Join(h.base, "main")
		mustMkdir(t, repo)
	}
	if !norepo {
		h.git(repo, "init", "-q", "-b", "main")
		h.git(repo, "config", "core.hooksPath", ".husky")
		h.git(repo, "config", "include.path", "../project.gitconfig")
		os.RemoveAll(filepath.Join(repo, ".git", "hooks"))
		writeFile(t, filepath.Join(repo, "README"), "readme\n")
		h.git(repo, "add", "README")
		h.git(repo, "commit", "-qm", "first")
		if worktree {
			os.Remove(h.work)
			h.git(repo, "worktree", "add", "-q", h.work)
		}
	}
	if _, ok := flags["nested"]; ok {
		h.git(h.work, "init", "-q", "proj")
		os.RemoveAll(filepath.Join(h.work, "proj", ".git", "hooks"))
		writeFile(t, filepath.Join(h.work, "proj", "f"), "")
	}
	writeFile(t, filepath.Join(h.work, "README"), "readme\n")
	mustMkdir(t, filepath.Join(h.work, "src"))
	mustMkdir(t, filepath.Join(h.work, ".husky"))
	writeFile(t, filepath.Join(h.work, "project.gitconfig"), "[user]\n\tname = p\n")
	writeFile(t, filepath.Join(h.work, ".claude", "settings.json"), "{}\n")
	if _, ok := flags["mcp"]; ok {
		writeFile(t, filepath.Join(h.work, ".mcp.json"), `{"mcpServers": {}}`+"\n")
	}
	if uid != 0 {
		if err := chownAll(h.base, uid, gid); err != nil {
			t.Fatal(err)
		}
	}

	h.startListeners()
	h.startSleep()

	h.exeIn = exe
	if be != "" {
		sb, err := New(Settings{Enabled: true}, Options{
			Writable:   func() []string { return []string{h.work} },
			Getenv:     h.getenv(be),
			Executable: exe,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sb.Close() })
		h.sb = sb
		switch sb.backend.kind {
		case kindLandlock:
			// Commands run as the session's user; here that is uid.
			tmp, err := sb.privateTmp()
			if err != nil {
				t.Fatal(err)
			}
			os.Chown(tmp, uid, gid)
		}
	}
	h.canary = "tack-probe-canary-" + filepath.Base(base)
	for _, dir := range []string{"/etc", "/tmp", "/var/tmp", "/dev/shm"} {
		h.fixed = append(h.fixed, filepath.Join(dir, h.canary))
	}
	t.Cleanup(func() {
		for _, f := range h.fixed {
			os.Remove(f)
		}
	})
	h.before = h.snapshot()
	return h
}

// getenv is the session environment of the harness's sandbox.
func (h *harness) getenv(be string) func(string) string {
	return func(k string) string {
		if k == "TACK_SANDBOX" {
			return be
		}
		for _, kv := range h.env {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v
			}
		}
		return ""
	}
}

// run runs script in the sandbox as the harness's user.
func (h *harness) run(script string, pty bool) result {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", script)
	cmd.Dir = h.work
	cmd.Env = append(append([]string(nil), h.env...),
		"WORK="+h.work, "OUTSIDE="+h.outside, "CANARY="+h.canary, "HOSTPID="+strconv.Itoa(h.hostSleep.Process.Pid),
		"UNIXSOCK="+h.unixSock, "ABSTRACT="+h.abstract, "TCPPORT="+strconv.Itoa(h.tcpPort),
		"UDPPORT="+strconv.Itoa(h.udpPort), "PROBE="+h.exeIn)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	attr := &syscall.SysProcAttr{}
	if h.uid != 0 {
		attr.Credential = &syscall.Credential{Uid: uint32(h.uid), Gid: uint32(h.gid)}
	}
	if pty {
		tty := h.openPTY()
		cmd.Stdin = tty
		attr.Setsid, attr.Setctty, attr.Ctty = true, true, 0
	}
	cmd.SysProcAttr = attr
	release := func() {}
	if h.sb != nil {
		var err error
		if release, err = h.sb.Wrap(cmd, script, false, nil); err != nil {
			h.t.Fatalf("wrap: %v", err)
		}
	}
	err := cmd.Run()
	release()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		h.t.Fatalf("run: %v", err)
	}
	// Connections and datagrams may arrive just after the command ends.
	time.Sleep(20 * time.Millisecond)
	return result{code: code, out: out.String()}
}

// canariesMoved lists what shows an escape.
func (h *harness) canariesMoved(res result) []string {
	var moved []string
	if strings.Contains(res.out, "ESCAPED") {
		moved = append(moved, "the probe says ESCAPED")
	}
	after := h.snapshot()
	var keys []string
	for k := range after {
		keys = append(keys, k)
	}
	for k := range h.before {
		if _, ok := after[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 && keys[i-1] == k {
			continue
		}
		if a, b := h.before[k], after[k]; a != b {
			moved = append(moved, fmt.Sprintf("%s: %q -> %q", k, short(a), short(b)))
		}
	}
	if h.sleepDone.Load() {
		moved = append(moved, "the host process was killed")
	}
	for _, c := range []struct {
		name string
		n    *atomic.Int32
	}{{"unix socket in $HOME", &h.unixHits}, {"abstract socket", &h.abstractHits}, {"TCP listener", &h.tcpHits}, {"UDP listener", &h.udpHits}} {
		if c.n.Load() > 0 {
			moved = append(moved, "the host's "+c.name+" was reached")
		}
	}
	return moved
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// snapshot hashes every canary file: everything outside the working
// directory the probe may reach, and every protected path inside it.
func (h *harness) snapshot() map[string]string {
	out := map[string]string{}
	walk := func(root string) {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			out[p] = describe(p)
			return nil
		})
		if _, ok := out[root]; !ok {
			out[root] = "absent"
		}
	}
	walk(h.outside)
	for _, rel := range []string{".git/config", ".git/hooks", ".git/commondir", ".git/modules", ".husky", "project.gitconfig",
		".claude", ".mcp.json", ".git", "proj/.git/config", "proj/.git/hooks", "proj/.claude"} {
		p := filepath.Join(h.work, rel)
		if rel == ".git" {
			out[p] = describe(p) // its type, not its contents
			continue
		}
		walk(p)
	}
	if common, err := h.gitOut(h.work, "rev-parse", "--path-format=absolute", "--git-common-dir"); err == nil && !within(common, h.work) {
		walk(filepath.Join(common, "config"))
		walk(filepath.Join(common, "hooks"))
	}
	if within(h.home, h.work) {
		for _, rel := range []string{".bashrc", ".profile", ".zshenv", ".ssh", ".gitconfig", ".claude", ".claude.json", ".local"} {
			walk(filepath.Join(h.home, rel))
		}
	} else {
		walk(h.home)
		delete(out, h.unixSock)
	}
	for _, f := range h.fixed {
		out[f] = describe(f)
	}
	return out
}

// describe is what a canary is: absent, a directory, a link, or a file's
// hash.
func describe(p string) string {
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return "absent"
	case fi.IsDir():
		return "dir " + fi.Mode().Perm().String()
	case fi.Mode()&fs.ModeSymlink != 0:
		l, _ := os.Readlink(p)
		return "link " + l
	case fi.Mode()&fs.ModeSocket != 0:
		return "socket"
	}
	b, _ := os.ReadFile(p)
	sum := sha256.Sum256(b)
	return fmt.Sprintf("file %x %s", sum[:6], fi.Mode().Perm())
}

// startListeners opens the host's unix (in $HOME), abstract, TCP and UDP
// listeners, counting what reaches them.
func (h *harness) startListeners() {
	t := h.t
	count := func(ln net.Listener, n *atomic.Int32) {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				n.Add(1)
				c.Close()
			}
		}()
		t.Cleanup(func() { ln.Close() })
	}
	h.unixSock = filepath.Join(h.home, "agent.sock")
	ln, err := net.Listen("unix", h.unixSock)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(h.unixSock, 0o777)
	if h.uid != 0 {
		os.Lchown(h.unixSock, h.uid, h.gid)
	}
	count(ln, &h.unixHits)
	h.abstract = fmt.Sprintf("tack-probe-%d-%d", os.Getpid(), time.Now().UnixNano())
	if ln, err = net.Listen("unix", "@"+h.abstract); err != nil {
		t.Fatal(err)
	}
	count(ln, &h.abstractHits)
	if ln, err = net.Listen("tcp", "0.0.0.0:0"); err != nil {
		t.Fatal(err)
	}
	h.tcpPort = ln.Addr().(*net.TCPAddr).Port
	count(ln, &h.tcpHits)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.udpPort = pc.LocalAddr().(*net.UDPAddr).Port
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			h.udpHits.Add(1)
		}
	}()
	t.Cleanup(func() { pc.Close() })
}

// startSleep starts the host process the probes try to kill and trace,
// as the probes' user, with a secret in its environment.
func (h *harness) startSleep() {
	cmd := exec.Command("sleep", "300")
	cmd.Env = []string{"TACK_PROBE_SECRET=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if h.uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(h.uid), Gid: uint32(h.gid)}
	}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.hostSleep = cmd
	go func() {
		cmd.Wait()
		h.sleepDone.Store(true)
	}()
	h.t.Cleanup(func() {
		if !h.sleepDone.Load() {
			h.sleepDone.Store(true) // not the probe's doing
		}
		cmd.Process.Kill()
	})
}

// openPTY opens a pseudo-terminal and returns its terminal side.
func (h *harness) openPTY() *os.File {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		h.t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		h.t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	if h.uid != 0 {
		s.Chown(h.uid, h.gid)
	}
	h.t.Cleanup(func() { s.Close() })
	return s
}

func (h *harness) git(dir string, args ...string) {
	h.t.Helper()
	if out, err := h.gitOut(dir, args...); err != nil {
		h.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (h *harness) gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), h.env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// needRoot skips where the corpus cannot be run as it must be: as root
// (to run it as another user, and as root).
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the probe corpus runs as root (and, through it, as an unprivileged user); CI runs it as root")
	}
}

// needBackend skips a backend this machine cannot provide, saying why.
func needBackend(t *testing.T, be string) {
	t.Helper()
	if _, err := pickBackend(be, exec.LookPath); err != nil {
		t.Skipf("the %s backend is not available here: %v", be, err)
	}
}

// unprivileged is the uid and gid of the user "tester", or nobody.
func unprivileged(t *testing.T) (int, int) {
	t.Helper()
	for _, name := range []string{"tester", "nobody"} {
		if u, err := user.Lookup(name); err == nil {
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			return uid, gid
		}
	}
	t.Skip("no unprivileged user (tester or nobody) on this machine")
	return 0, 0
}

// stageCopy copies the test binary where any user can run it and the
// sandbox shows it (not under the private /tmp): the stage and the probe
// helpers are this binary. TestMain removes it.
var stageOnce sync.Once
var stagePath string

func stageCopy(t *testing.T) string {
	t.Helper()
	stageOnce.Do(func() {
		parent := "/var/tmp"
		if _, err := os.Stat(parent); err != nil {
			parent = ""
		}
		dir, err := os.MkdirTemp(parent, "tack-probe-bin-")
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, 0o755)
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		src, err := os.Open(self)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		stagePath = filepath.Join(dir, "sandbox.test")
		dst, err := os.OpenFile(stagePath, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		dst.Close()
	})
	return stagePath
}

func mustMkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func chownAll(root string, uid, gid int) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// probeHelpers are what probe scripts run as TACK_PROBE=NAME "$PROBE":
// system calls a shell cannot make. Each prints ESCAPED when the call it
// tries succeeds where the sandbox must stop it, or exits non-zero when a
// control's call fails.
var probeHelpers = map[string]func(args []string) error{}

// runProbeHelper runs the helper named by TACK_PROBE, if any.
func runProbeHelper() (bool, int) {
	name := os.Getenv("TACK_PROBE")
	if name == "" {
		return false, 0
	}
	f, ok := probeHelpers[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "no probe helper %q\n", name)
		return true, 2
	}
	if err := f(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return true, 1
	}
	return true, 0
}

func escaped(format string, args ...any) error {
	fmt.Printf("ESCAPED: "+format+"\n", args...)
	return nil
}
