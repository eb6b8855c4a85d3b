package sandbox

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestParseAndPolicy(t *testing.T) {
	s, err := Parse(json.RawMessage(`{"enabled": true, "excludedCommands": ["docker", "git push"], "network": {"allowedDomains": ["x"]}}`))
	if err != nil || !s.Enabled || !s.AutoAllow() {
		t.Fatalf("%+v %v", s, err)
	}
	for cmd, want := range map[string]bool{"docker ps": true, "docker": true, "dockerd": false, "git push origin": true, "git pull": false, " docker run x": true} {
		if got := s.Excluded(cmd); got != want {
			t.Errorf("Excluded(%q) = %v", cmd, got)
		}
	}
	off := false
	if (Settings{AutoAllowBashIfSandboxed: &off}).AutoAllow() {
		t.Error("autoAllowBashIfSandboxed false is not honoured")
	}
	if _, err := Parse(json.RawMessage(`{"enabled": "yes"}`)); err == nil {
		t.Error("a bad value was accepted")
	}
	if s, err := Parse(nil); err != nil || s.Enabled {
		t.Errorf("absent: %+v %v", s, err)
	}
}

func TestWrap(t *testing.T) {
	look := func(string) (string, error) { return "/usr/bin/bwrap", nil }
	b, err := New(Settings{Enabled: true, ExcludedCommands: []string{"docker"}}, func() []string { return []string{"/work", "/extra"} }, look)
	if err != nil {
		t.Fatal(err)
	}
	argv := b.Wrap("make test", []string{"/bin/bash", "-c", "script"}, "/tmp/cwd-file")
	want := []string{"/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-net", "--die-with-parent",
		"--bind", "/work", "/work", "--bind", "/extra", "/extra", "--bind", "/tmp/cwd-file", "/tmp/cwd-file", "--", "/bin/bash", "-c", "script"}
	if !slices.Equal(argv, want) {
		t.Errorf("argv %q", argv)
	}
	if argv := b.Wrap("docker ps", []string{"/bin/bash", "-c", "x"}); !slices.Equal(argv, []string{"/bin/bash", "-c", "x"}) {
		t.Errorf("an excluded command was wrapped: %q", argv)
	}
	if b, err := New(Settings{}, nil, look); b != nil || err != nil {
		t.Errorf("disabled: %v %v", b, err)
	}
	missing := func(string) (string, error) { return "", errors.New("not found") }
	if _, err := New(Settings{Enabled: true}, nil, missing); !errors.Is(err, ErrNoBwrap) {
		t.Errorf("without bwrap: %v", err)
	}
}
