package shellcmd

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeResolver holds scripts by name and one program alias.
type fakeResolver struct {
	scripts map[string]string // name → text; "#!…" lines decide shebang runs
	alias   map[string]string // command name → alias
	asked   []string
}

func (r *fakeResolver) Script(w Word, at *Command, shebang bool) (string, bool, string) {
	r.asked = append(r.asked, fmt.Sprintf("%s shebang=%v dirs=%q", w.Text, shebang, at.Dirs))
	if !w.Static() {
		return "", true, "runs a script whose name is only known at run time"
	}
	src, ok := r.scripts[w.Text]
	if !ok || shebang && !IsShellScript([]byte(src)) {
		return "", false, ""
	}
	return src, true, ""
}

func (r *fakeResolver) Alias(name string, _ *Command) string { return r.alias[name] }

// render shows argument lists with run-time parts as $.
func render(lists [][]Word) []string {
	var out []string
	for _, l := range lists {
		var ws []string
		for _, w := range l {
			ws = append(ws, strings.ReplaceAll(w.Text, RunTime, "$"))
		}
		out = append(out, strings.Join(ws, " "))
	}
	return out
}

func TestTargetsThroughWrappersShellsAndScripts(t *testing.T) {
	r := &fakeResolver{
		scripts: map[string]string{
			"setup.sh": "rm -rf build",
			"./run":    "#!/usr/bin/env bash\ncd sub && curl x",
			"./bin":    "\x7fELF",
		},
		alias: map[string]string{"./x": "rm"},
	}
	tests := []struct {
		src     string
		cmds    []string // every argument list, each name it goes by
		nested  []string // commands of shell strings and scripts
		unknown bool
	}{
		{src: "sudo -u root env A=1 nice -n 5 rm -f x",
			cmds: []string{"sudo -u root env A=1 nice -n 5 rm -f x", "env A=1 nice -n 5 rm -f x", "nice -n 5 rm -f x", "rm -f x"}},
		{src: "/bin/rm x", cmds: []string{"/bin/rm x", "rm x"}},
		{src: "./x y", cmds: []string{"./x y", "x y", "rm y"}},
		{src: `bash -c "git push; rm -r out"`,
			cmds:   []string{"bash -c git push; rm -r out", "git push", "rm -r out"},
			nested: []string{"git push", "rm -r out"}},
		{src: "find . -name '*.o' -exec rm {} +", cmds: []string{"find . -name *.o -exec rm {} +", "rm $"}},
		{src: "xargs rm", cmds: []string{"xargs rm", "rm $"}},
		{src: "source setup.sh", cmds: []string{"source setup.sh", "rm -rf build"}, nested: []string{"rm -rf build"}},
		{src: "./run", cmds: []string{"./run", "run", "cd sub", "curl x"}, nested: []string{"cd sub", "curl x"}},
		{src: "./bin", cmds: []string{"./bin", "bin"}},
		{src: "bash <<EOF\nrm -rf /\nEOF", cmds: []string{"bash", "rm -rf /"}, nested: []string{"rm -rf /"}},
		{src: "sudo $CMD", cmds: []string{"sudo $"}, unknown: true},
		{src: "cat x | sh", cmds: []string{"sh"}, unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			line := Parse(tt.src)
			if line.Err != nil {
				t.Fatal(line.Err)
			}
			c := line.Commands[len(line.Commands)-1]
			got := c.Targets(r)
			if cmds := render(got.Cmds); !slices.Equal(cmds, tt.cmds) {
				t.Errorf("commands %q, want %q", cmds, tt.cmds)
			}
			var nested [][]Word
			for _, n := range got.Nested {
				nested = append(nested, n.Args)
			}
			if ns := render(nested); !slices.Equal(ns, tt.nested) {
				t.Errorf("nested %q, want %q", ns, tt.nested)
			}
			if got.Unknown != tt.unknown {
				t.Errorf("unknown %v, want %v", got.Unknown, tt.unknown)
			}
		})
	}
}

func TestTargetsScriptDirectories(t *testing.T) {
	// The script's own cd composes with the directory the line moved to.
	r := &fakeResolver{scripts: map[string]string{"./run": "#!/bin/sh\ncd lib; cat f"}}
	line := Parse("cd src && ./run")
	got := line.Commands[1].Targets(r)
	if want := []string{`./run shebang=true dirs=["" "src"]`}; !slices.Equal(r.asked, want) {
		t.Errorf("asked %q, want %q", r.asked, want)
	}
	last := got.Nested[len(got.Nested)-1]
	if want := []string{"", "lib", "src", "src/lib"}; !slices.Equal(last.Dirs, want) {
		t.Errorf("cat runs in %q, want %q", last.Dirs, want)
	}
}
