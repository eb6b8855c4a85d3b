package fs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
)

// The Read of hello.py in compat/samples/tools4.stream-json.stdout.jsonl.
func TestReadMatchesSample(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "hello.py")
	writeFile(t, path, "print('hello')\n", 0o644)
	res := mustCall(t, readTool{}, env, map[string]any{"file_path": path})
	if got, want := textOf(res), "1\tprint('hello')\n2\t"; got != want {
		t.Errorf("content %q, want %q", got, want)
	}
	want := fmt.Sprintf(`{"type":"text","file":{"filePath":%q,"content":"print('hello')\n","numLines":2,"startLine":1,"totalLines":2}}`, path)
	if got := structured(t, res); got != want {
		t.Errorf("structured\n got %s\nwant %s", got, want)
	}
	if res.IsError {
		t.Error("IsError set")
	}
	st, ok := env.Files.Get(path)
	if !ok || st.Partial {
		t.Errorf("stamp %+v recorded=%v, want a full read", st, ok)
	}
}

func numberedLines(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

func TestReadOffsetLimit(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "ten.txt")
	writeFile(t, path, numberedLines(10), 0o644)

	res := mustCall(t, readTool{}, env, map[string]any{"file_path": "ten.txt", "offset": 3, "limit": 2})
	if got, want := textOf(res), "3\tline 3\n4\tline 4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	want := fmt.Sprintf(`{"type":"text","file":{"filePath":%q,"content":"line 3\nline 4","numLines":2,"startLine":3,"totalLines":11}}`, path)
	if got := structured(t, res); got != want {
		t.Errorf("structured\n got %s\nwant %s", got, want)
	}
	if st, _ := env.Files.Get(path); !st.Partial {
		t.Error("a read cut by offset/limit must be recorded as partial")
	}

	// The last lines: through the end, so not partial from that side.
	res = mustCall(t, readTool{}, env, map[string]any{"file_path": path, "offset": 10})
	if got, want := textOf(res), "10\tline 10\n11\t"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}

	res = mustCall(t, readTool{}, env, map[string]any{"file_path": path, "offset": 50})
	if got := textOf(res); !strings.Contains(got, "11 lines") || !strings.Contains(got, "offset 50") {
		t.Errorf("offset past the end: %q", got)
	}
}

func TestReadDefaultLimit(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "long.txt")
	writeFile(t, path, numberedLines(2500), 0o644)
	res := mustCall(t, readTool{}, env, map[string]any{"file_path": path})
	lines := strings.Split(textOf(res), "\n")
	if len(lines) != 2000 || lines[1999] != "2000\tline 2000" {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
	if !strings.Contains(structured(t, res), `"numLines":2000,"startLine":1,"totalLines":2501`) {
		t.Errorf("structured %s", structured(t, res))
	}
	if st, _ := env.Files.Get(path); !st.Partial {
		t.Error("a read cut at 2000 lines must be recorded as partial")
	}
}

func TestReadCRLFAndNoFinalNewline(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "dos.txt")
	writeFile(t, path, "a\r\nb\r\nc", 0o644)
	res := mustCall(t, readTool{}, env, map[string]any{"file_path": path})
	if got, want := textOf(res), "1\ta\n2\tb\n3\tc"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReadCutsLongLines(t *testing.T) {
	env, dir := newEnv(t)
	exact := strings.Repeat("y", maxLineChars)
	wide := strings.Repeat("é", 3000)
	huge := strings.Repeat("z", 100000)
	path := filepath.Join(dir, "long-lines.txt")
	writeFile(t, path, strings.Repeat("x", 3000)+"\n"+exact+"\n"+wide+"\r\n"+huge+"\nend\n", 0o644)
	res := mustCall(t, readTool{}, env, map[string]any{"file_path": path})
	lines := strings.Split(textOf(res), "\n")
	want := []string{
		"1\t" + strings.Repeat("x", maxLineChars) + lineCutMarker,
		"2\t" + exact,
		"3\t" + strings.Repeat("é", maxLineChars) + lineCutMarker,
		"4\t" + strings.Repeat("z", maxLineChars) + lineCutMarker,
		"5\tend",
		"6\t",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d", len(lines), len(want))
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: got %.40q… (%d bytes), want %.40q… (%d bytes)", i+1, lines[i], len(lines[i]), want[i], len(want[i]))
		}
	}
}

func TestReadLargeFileNeedsRange(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "big.log")
	writeFile(t, path, strings.Repeat(strings.Repeat("x", 99)+"\n", 3000), 0o644) // ~300 KB
	err := callErr(t, readTool{}, env, map[string]any{"file_path": path}, "offset", "limit", "256 KB")
	if _, ok := env.Files.Get(path); ok {
		t.Errorf("a refused read must not be recorded (%v)", err)
	}
	res := mustCall(t, readTool{}, env, map[string]any{"file_path": path, "offset": 2990})
	if got := strings.Count(textOf(res), "\n") + 1; got != 12 {
		t.Errorf("offset read returned %d lines, want 12", got)
	}
	res = mustCall(t, readTool{}, env, map[string]any{"file_path": path, "allow_large": true})
	if got := strings.Count(textOf(res), "\n") + 1; got != 2000 {
		t.Errorf("allow_large read returned %d lines, want 2000", got)
	}
}

func TestReadEmptyFile(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "empty.txt")
	writeFile(t, path, "", 0o644)
	res := mustCall(t, readTool{}, env, map[string]any{"file_path": path})
	if got := textOf(res); !strings.Contains(got, "exists but is empty") {
		t.Errorf("got %q", got)
	}
	if _, ok := env.Files.Get(path); !ok {
		t.Error("an empty file read must be recorded so it can be written")
	}
}

func encodeImage(t *testing.T, format string, w, h int, opaque bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			a := uint8(255)
			if !opaque && x == 0 {
				a = 0
			}
			img.Set(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x ^ y), a})
		}
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadImages(t *testing.T) {
	env, dir := newEnv(t)
	webp := []byte("RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00\x30\x01\x00\x9d\x01\x2a\x01\x00\x01\x00\x02\x00\x34\x25\xa4\x00\x03\x70\x00\xfe\xfb\x94\x00\x00")
	tests := []struct {
		name, media string
		data        []byte
		dimensions  string // "" when the format's size is not read
	}{
		{"pic.png", "image/png", encodeImage(t, "png", 8, 8, false), `{"originalWidth":8,"originalHeight":8,"displayWidth":8,"displayHeight":8}`},
		{"pic.jpg", "image/jpeg", encodeImage(t, "jpeg", 8, 8, true), `{"originalWidth":8,"originalHeight":8,"displayWidth":8,"displayHeight":8}`},
		{"pic.gif", "image/gif", encodeImage(t, "gif", 8, 8, true), `{"originalWidth":8,"originalHeight":8,"displayWidth":8,"displayHeight":8}`},
		{"pic.webp", "image/webp", webp, ""},
		// Content decides, not the extension.
		{"actually-png.txt", "image/png", encodeImage(t, "png", 4, 4, true), `{"originalWidth":4,"originalHeight":4,"displayWidth":4,"displayHeight":4}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			res := mustCall(t, readTool{}, env, map[string]any{"file_path": path})
			if len(res.Content) != 1 || res.Content[0].Type != llm.TypeImage || res.Content[0].Source == nil {
				t.Fatalf("content %+v, want one image block", res.Content)
			}
			src := res.Content[0].Source
			b64 := base64.StdEncoding.EncodeToString(tt.data)
			if src.Type != "base64" || src.MediaType != tt.media || src.Data != b64 {
				t.Errorf("source type %q media %q, want base64 %q with the file's bytes", src.Type, src.MediaType, tt.media)
			}
			dims := ""
			if tt.dimensions != "" {
				dims = `,"dimensions":` + tt.dimensions
			}
			want := fmt.Sprintf(`{"type":"image","file":{"base64":%q,"type":%q,"originalSize":%d%s}}`, b64, tt.media, len(tt.data), dims)
			if got := structured(t, res); got != want {
				t.Errorf("structured\n got %s\nwant %s", got, want)
			}
			if _, err := json.Marshal(res.Content[0]); err != nil {
				t.Errorf("image block does not encode: %v", err)
			}
		})
	}

	// A text file named like an image is read as text.
	path := filepath.Join(dir, "notes.png")
	writeFile(t, path, "just text\n", 0o644)
	if got := textOf(mustCall(t, readTool{}, env, map[string]any{"file_path": path})); got != "1\tjust text\n2\t" {
		t.Errorf("text named .png: %q", got)
	}
}

func TestReadShrinksOversizedImage(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "wide.png")
	if err := os.WriteFile(path, encodeImage(t, "png", 9000, 20, true), 0o644); err != nil {
		t.Fatal(err)
	}
	res := mustCall(t, readTool{}, env, map[string]any{"file_path": path})
	src := res.Content[0].Source
	if src.MediaType != mediaJPEG {
		t.Fatalf("media %q, want a JPEG re-encoding", src.MediaType)
	}
	data, err := base64.StdEncoding.DecodeString(src.Data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != fitImageSide || cfg.Height != 4 {
		t.Errorf("shrunk to %dx%d, want %dx4", cfg.Width, cfg.Height, fitImageSide)
	}
}

func TestReadPDF(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "doc.pdf")
	data := "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
	writeFile(t, path, data, 0o644)
	res := mustCall(t, readTool{}, env, map[string]any{"file_path": path})
	if len(res.Content) != 1 || res.Content[0].Type != "document" {
		t.Fatalf("content %+v, want one document block", res.Content)
	}
	var doc struct {
		Type   string `json:"type"`
		Source struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
	}
	enc, err := json.Marshal(res.Content[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(enc, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Type != "document" || doc.Source.Type != "base64" || doc.Source.MediaType != "application/pdf" ||
		doc.Source.Data != base64.StdEncoding.EncodeToString([]byte(data)) {
		t.Errorf("document block %s", enc)
	}
	callErr(t, readTool{}, env, map[string]any{"file_path": path, "pages": "1-2"}, "pages", "not supported")
	txt := filepath.Join(dir, "a.txt")
	writeFile(t, txt, "a\n", 0o644)
	callErr(t, readTool{}, env, map[string]any{"file_path": txt, "pages": "1"}, "only to PDF")
}

func TestReadRefusesBinary(t *testing.T) {
	env, dir := newEnv(t)
	withNUL := filepath.Join(dir, "prog.bin")
	writeFile(t, withNUL, "\x7fELF\x02\x01\x01\x00\x00\x00rest", 0o755)
	isInputError(t, callErr(t, readTool{}, env, map[string]any{"file_path": withNUL}, "binary"))

	var noise []byte
	for i := range 4096 {
		noise = append(noise, byte(0x80+i%120))
	}
	invalid := filepath.Join(dir, "noise.dat")
	writeFile(t, invalid, string(noise), 0o644)
	callErr(t, readTool{}, env, map[string]any{"file_path": invalid}, "binary")
	if _, ok := env.Files.Get(invalid); ok {
		t.Error("a refused binary file must not be recorded")
	}

	// Mostly text with a few Latin-1 bytes is still text.
	latin1 := filepath.Join(dir, "latin1.txt")
	writeFile(t, latin1, "caf\xe9 au lait, cr\xe8me br\xfbl\xe9e\n", 0o644)
	mustCall(t, readTool{}, env, map[string]any{"file_path": latin1})
}

func TestReadDirectory(t *testing.T) {
	env, dir := newEnv(t)
	err := callErr(t, readTool{}, env, map[string]any{"file_path": dir}, "is a directory", "ls", "Glob")
	isInputError(t, err)
}

func TestReadMissingFile(t *testing.T) {
	env, dir := newEnv(t)
	writeFile(t, filepath.Join(dir, "hello.py"), "x\n", 0o644)
	writeFile(t, filepath.Join(dir, "src", "main.go"), "x\n", 0o644)
	tests := []struct{ path, suggestion string }{
		{"helo.py", filepath.Join(dir, "hello.py")},
		{"HELLO.py", filepath.Join(dir, "hello.py")},
		{"hello.js", filepath.Join(dir, "hello.py")},
		{"/src/main.go", filepath.Join(dir, "src", "main.go")},
		{"nothing-like-it.rs", ""},
	}
	for _, tt := range tests {
		err := callErr(t, readTool{}, env, map[string]any{"file_path": tt.path}, "File does not exist.", dir)
		isInputError(t, err)
		if tt.suggestion != "" && !strings.Contains(err.Error(), "Did you mean "+tt.suggestion+"?") {
			t.Errorf("%s: %q does not suggest %s", tt.path, err, tt.suggestion)
		}
		if tt.suggestion == "" && strings.Contains(err.Error(), "Did you mean") {
			t.Errorf("%s: unexpected suggestion in %q", tt.path, err)
		}
	}
}
