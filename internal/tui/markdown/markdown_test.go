package markdown

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// plain renders src without colour.
func plain(src string, width int) string {
	return New(Options{}).Render(src, width)
}

func TestRenderPlain(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		width int
		want  string
	}{
		{
			name:  "paragraphs wrap at the width",
			src:   "The quick brown fox jumps over the lazy dog and keeps running.\n\nA second\nparagraph.",
			width: 20,
			want: "The quick brown fox\njumps over the lazy\ndog and keeps\nrunning.\n\n" +
				"A second paragraph.",
		},
		{
			name:  "emphasis, strong, strikethrough and code lose their marks",
			src:   "Some *emphasis*, __strong__, ~~struck~~ and `code`.",
			width: 80,
			want:  "Some emphasis, strong, struck and code.",
		},
		{
			name:  "one tilde is not strikethrough",
			src:   "It takes ~5 ms in ~/src, ~~not~~ ~more.",
			width: 80,
			want:  "It takes ~5 ms in ~/src, not ~more.",
		},
		{
			name:  "escapes and entities",
			src:   `\*not emphasis\* &amp; &lt;tag&gt; &#65;`,
			width: 80,
			want:  "*not emphasis* & <tag> A",
		},
		{
			name:  "hard line breaks",
			src:   "first line  \nsecond line\\\nthird",
			width: 80,
			want:  "first line\nsecond line\nthird",
		},
		{
			name:  "headings",
			src:   "# Title\n\nText.\n\n## Section `x`\n\nMore.\n\nSetext\n------",
			width: 80,
			want:  "Title\n\nText.\n\nSection x\n\nMore.\n\nSetext",
		},
		{
			name:  "a word longer than the line is cut",
			src:   "see https://example.com/a/very/long/path/indeed ok",
			width: 16,
			want:  "see\nhttps://example.\ncom/a/very/long/\npath/indeed ok",
		},
		{
			name:  "links show their destination unless it is their text",
			src:   "Read [the docs](https://go.dev/doc \"Docs\"), <https://go.dev> or [https://x.io](https://x.io). ![logo](img.png)",
			width: 80,
			want:  "Read the docs (https://go.dev/doc), https://go.dev or https://x.io. logo\n(img.png)",
		},
		{
			name:  "inline HTML is text",
			src:   "Press <kbd>Ctrl</kbd>+C.",
			width: 80,
			want:  "Press <kbd>Ctrl</kbd>+C.",
		},
		{
			name:  "HTML blocks are text",
			src:   "<details>\n<summary>More</summary>\n\n</details>\n\nAfter.",
			width: 80,
			want:  "<details>\n<summary>More</summary>\n\n</details>\n\nAfter.",
		},
		{
			name:  "thematic break",
			src:   "above\n\n---\n\nbelow",
			width: 10,
			want:  "above\n\n──────────\n\nbelow",
		},
		{
			name:  "block quote",
			src:   "> Quoted text that wraps\n> around.\n>\n> Second paragraph.",
			width: 16,
			want:  "│ Quoted text\n│ that wraps\n│ around.\n│\n│ Second\n│ paragraph.",
		},
		{
			name: "nested lists",
			src: "Steps:\n\n- one\n- two wraps onto the next line\n  - nested\n    1. deep\n    2. deeper\n  - again\n" +
				"- three",
			width: 20,
			want: "Steps:\n\n" +
				"• one\n" +
				"• two wraps onto the\n  next line\n" +
				"  ◦ nested\n" +
				"    1. deep\n" +
				"    2. deeper\n" +
				"  ◦ again\n" +
				"• three",
		},
		{
			name:  "ordered lists align their numbers",
			src:   "8. eight\n9. nine\n10. ten wraps here",
			width: 14,
			want:  " 8. eight\n 9. nine\n10. ten wraps\n    here",
		},
		{
			name:  "loose lists keep blank lines",
			src:   "- a\n\n  more a\n\n- b",
			width: 80,
			want:  "• a\n\n  more a\n\n• b",
		},
		{
			name:  "task lists",
			src:   "- [ ] write the tests\n- [x] write the code\n- [link](u) is not a task\n\n1. [x] numbered",
			width: 80,
			want:  "[ ] write the tests\n[x] write the code\n• link (u) is not a task\n\n1. [x] numbered",
		},
		{
			name:  "fenced code is kept as it is, not wrapped",
			src:   "Code:\n\n```go\nfunc main() {\n\tfmt.Println(\"a very long line that does not wrap at all\")\n\n}\n```\n\nDone.",
			width: 20,
			want: "Code:\n\n" +
				"  func main() {\n" +
				"      fmt.Println(\"a very long line that does not wrap at all\")\n" +
				"\n" +
				"  }\n\n" +
				"Done.",
		},
		{
			name:  "indented code",
			src:   "Text.\n\n    x := *p  // _not_ emphasis\n      y",
			width: 80,
			want:  "Text.\n\n  x := *p  // _not_ emphasis\n    y",
		},
		{
			name:  "code in a list item",
			src:   "- run:\n\n  ```sh\n  go test ./...\n  ```",
			width: 80,
			want:  "• run:\n\n    go test ./...",
		},
		{
			name:  "blank document",
			src:   " \n\n",
			width: 80,
			want:  "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plain(tt.src, tt.width)
			if got != tt.want {
				t.Errorf("Render(%q, %d):\n%s\n--- want:\n%s\n--- (%q)", tt.src, tt.width, got, tt.want, got)
			}
			if strings.Contains(got, "\x1b") {
				t.Errorf("escape sequences without colour: %q", got)
			}
		})
	}
}

func TestRenderTable(t *testing.T) {
	src := "Sizes:\n\n| Name | Size | Note |\n|:-----|-----:|:----:|\n| `a\\|b.go` | 12 | ok |\n| main.go | 1024 |\n"
	want := "Sizes:\n\n" +
		"Name    │ Size │ Note\n" +
		"────────┼──────┼─────\n" +
		"a|b.go  │   12 │  ok\n" +
		"main.go │ 1024 │"
	if got := plain(src, 80); got != want {
		t.Errorf("table:\n%s\n--- want:\n%s\n--- (%q)", got, want, got)
	}
}

func TestRenderNarrowTable(t *testing.T) {
	src := "| Option | Meaning |\n|---|---|\n| -v | print every step that the command takes |\n"
	want := "Option │ Meaning\n" +
		"───────┼──────────────\n" +
		"-v     │ print every\n" +
		"       │ step that the\n" +
		"       │ command takes"
	if got := plain(src, 22); got != want {
		t.Errorf("table:\n%s\n--- want:\n%s\n--- (%q)", got, want, got)
	}
}

func TestNotATable(t *testing.T) {
	// The header and the delimiter row disagree on the columns.
	src := "| a | b |\n|---|\n| 1 | 2 |"
	if got, want := plain(src, 80), "| a | b | |---| | 1 | 2 |"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLinesFitTheWidth(t *testing.T) {
	src := "# A heading long enough to be wrapped somewhere\n\n" +
		"Paragraph with **bold words**, `inline code` and [a link](https://example.com/x) that has to wrap several times.\n\n" +
		"> - quoted list item with text that wraps\n>   1. and a numbered one inside it\n\n" +
		"| a | b |\n|---|---|\n| some words in a cell | more words in the other cell |\n"
	for _, color := range []bool{false, true} {
		for width := 20; width <= 50; width++ {
			out := New(Options{Color: color}).Render(src, width)
			for _, l := range strings.Split(out, "\n") {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("color %v, width %d: line %q is %d wide", color, width, ansi.Strip(l), w)
				}
				if strings.HasSuffix(ansi.Strip(l), " ") {
					t.Errorf("color %v, width %d: trailing blank in %q", color, width, ansi.Strip(l))
				}
			}
		}
	}
}

func TestColorOnlyAddsStyle(t *testing.T) {
	src := "# Title\n\nSome *emphasis*, **strong**, ~~struck~~, `code`, [link](https://x.io) and <b>html</b>.\n\n" +
		"- [x] done\n- [ ] not\n\n> quote\n\n---\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n" +
		"```python\ndef f(x):\n    \"\"\"Doc.\n    more\"\"\"\n    return x + 1  # one\n```\n"
	colored := New(Options{Color: true}).Render(src, 40)
	if !strings.Contains(colored, "\x1b[") {
		t.Fatalf("no styles in colour: %q", colored)
	}
	if got, want := ansi.Strip(colored), plain(src, 40); got != want {
		t.Errorf("coloured text differs from plain:\n%s\n--- plain:\n%s", got, want)
	}
}

func TestColorStylesInline(t *testing.T) {
	out := New(Options{Color: true}).Render("a **bold** and `code`", 80)
	for _, want := range []string{style(aBold).Render("bold"), style(aCode).Render("code")} {
		if !strings.Contains(out, want) {
			t.Errorf("%q lacks %q", out, want)
		}
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"# h\n\n- [ ] a\n  - b\n\n> q\n\n```go\nx\n```",
		"| a | b |\n|:-|-:|\n| `x\\|y` | ~~z~~ |",
		"***a*** ~~b~~ <i>c</i> [d](e) ![f](g) <h@i.j>",
		"1. a\n\n   ```\n   b\n   ```\n2) c",
	} {
		f.Add(s, 30)
	}
	f.Fuzz(func(t *testing.T, src string, width int) {
		width = 20 + (width%60+60)%60
		colored := New(Options{Color: true}).Render(src, width)
		if got, want := ansi.Strip(colored), plain(src, width); got != want {
			t.Errorf("coloured text differs from plain:\n%q\n%q", got, want)
		}
	})
}
