package sandbox

import "path/filepath"

// stageInside is where the stage program is mounted when its own path is
// hidden in the sandbox (a test binary under /tmp): on bubblewrap's /tmp.
const stageInside = "/tmp/.tack-sandbox-stage"

// bwrapArgs are bubblewrap's options for one command, up to the program:
// the namespaces, the read-only root with a private /tmp, /dev and a
// read-only /proc,
// the writable directories and files, the pins of the guards' ancestors
// and the guards themselves, read-only.
func (b *Sandbox) bwrapArgs(dirs, files []string, g guards) []string {
	args := namespaceArgs(b.backend.userNS, b.backend.nestedOff)
	args = append(args,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		// bubblewrap covers few of /proc's writable files (not
		// /proc/sys), and root inside is the host's root to the sysctls.
		"--remount-ro", "/proc",
		"--tmpfs", "/tmp",
	)
	for _, d := range dirs {
		args = append(args, "--bind", d, d)
	}
	for _, f := range files {
		args = append(args, "--bind", f, f)
	}
	for _, p := range g.pins {
		args = append(args, "--bind", p, p)
	}
	for _, gd := range g.guards {
		args = append(args, "--ro-bind", gd.path, gd.path)
	}
	return args
}

// exeInside is the path the stage program has in the sandbox: its own when
// the sandbox shows it (not under the private /tmp, or under a writable
// directory bound there), else stageInside.
func (b *Sandbox) exeInside(dirs, files []string) string {
	if !within(b.exe, "/tmp") || withinAny(b.exe, dirs) || withinAny(b.exe, files) {
		return b.exe
	}
	if real, err := filepath.EvalSymlinks("/tmp"); err == nil && real != "/tmp" && !within(b.exe, real) {
		return b.exe
	}
	return stageInside
}
