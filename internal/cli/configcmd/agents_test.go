package configcmd_test

import (
	"path/filepath"
	"strings"
	"testing"
)

func agentFile(name, desc, extra string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\nYou are " + name + ".\n"
}

// block returns the lines of the listing entry whose header starts with
// "  name · ", up to the next entry.
func block(t *testing.T, out, name string) string {
	t.Helper()
	i := strings.Index(out, "\n  "+name+" · ")
	if i < 0 {
		t.Fatalf("no entry %q in:\n%s", name, out)
	}
	rest := out[i+1:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func TestAgentsListing(t *testing.T) {
	e := newPlugEnv(t)
	project := writeFile(t, e.proj, ".claude/agents/code-reviewer.md",
		agentFile("code-reviewer", "Reviews code for quality and best practices", "tools: Read, Glob, Grep\nmodel: sonnet\n"))
	userReviewer := writeFile(t, e.config, "agents/code-reviewer.md", agentFile("code-reviewer", "The user's reviewer", ""))
	helper := writeFile(t, e.config, "agents/helper.md", agentFile("helper", "Helps  with\n  things", "model: opus\n"))
	broken := writeFile(t, e.proj, ".claude/agents/broken.md", "---\nname: broken\nmodel: sonnet\n---\nNo description.\n")
	pluginRoot := writePlugin(t, t.TempDir())

	out, errOut, code := e.tack("agents", "--plugin-dir", pluginRoot,
		"--agents", `{"flagged": {"description": "From the flag", "prompt": "p"}}`)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, "7 agents:\n") {
		t.Errorf("header: %s", out)
	}
	want := map[string]string{
		"code-reviewer": "  code-reviewer · project " + project + "\n    Reviews code for quality and best practices\n    model: sonnet · tools: Read, Glob, Grep",
		"helper":        "  helper · user " + helper + "\n    Helps with things\n    model: opus",
		"my-first-plugin:reviewer": "  my-first-plugin:reviewer · plugin my-first-plugin (" + filepath.Join(pluginRoot, "agents", "reviewer.md") + ")\n" +
			"    Reviews greetings\n    model: haiku · tools: Read, Grep",
		"flagged":         "  flagged · --agents\n    From the flag",
		"general-purpose": "  general-purpose · built-in\n",
		"Explore":         "  Explore · built-in\n",
		"Plan":            "  Plan · built-in\n",
	}
	for name, w := range want {
		if b := block(t, out, name); !strings.HasPrefix(b, w) {
			t.Errorf("entry %s:\n%s\nwant it to start:\n%s", name, b, w)
		}
	}
	// Sorted by name, the overridden ones after.
	order := []string{"  Explore ·", "  Plan ·", "  code-reviewer · project", "  flagged ·", "  general-purpose ·", "  helper ·",
		"  my-first-plugin:reviewer ·", "\nOverridden (1):\n", "  code-reviewer · user"}
	last := -1
	for _, s := range order {
		i := strings.Index(out, s)
		if i <= last {
			t.Errorf("%q out of order in:\n%s", s, out)
		}
		last = i
	}
	shadowed := out[strings.Index(out, "Overridden"):]
	if w := "  code-reviewer · user " + userReviewer + "\n    The user's reviewer\n    overridden by project " + project + "\n"; !strings.Contains(shadowed, w) {
		t.Errorf("overridden entry:\n%s\nwant:\n%s", shadowed, w)
	}
	if strings.Contains(out, "broken") {
		t.Errorf("a broken definition is listed:\n%s", out)
	}
	if w := broken + `:2:1: description: missing "description"`; !strings.HasPrefix(errOut, w) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("problems on stderr:\n%s\nwant one line starting %s", errOut, w)
	}

	// --setting-sources user leaves the project's agents out: the user's
	// reviewer is in effect and nothing is overridden.
	out = e.ok("agents", "--setting-sources", "user")
	if b := block(t, out, "code-reviewer"); !strings.HasPrefix(b, "  code-reviewer · user "+userReviewer) {
		t.Errorf("user-only reviewer: %s", b)
	}
	if strings.Contains(out, "Overridden") || !strings.HasPrefix(out, "5 agents:\n") {
		t.Errorf("user-only listing:\n%s", out)
	}
	if msg := e.fails("agents", "--setting-sources", "everyone"); !strings.Contains(msg, "--setting-sources") {
		t.Errorf("bad --setting-sources: %s", msg)
	}

	// A broken --agents JSON is reported, and the files still load.
	out, errOut, code = e.tack("agents", "--agents", `{"x": 1}`)
	if code != 0 || !strings.HasPrefix(out, "5 agents:\n") || !strings.Contains(errOut, "--agents") {
		t.Errorf("broken --agents: exit %d\n%s\n%s", code, out, errOut)
	}
}
