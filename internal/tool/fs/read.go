package fs

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

//go:embed read.md
var readDescription string

const readSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "Absolute path of the file to read"},
    "offset": {"type": "integer", "minimum": 0, "description": "Line number to start reading from (1-based). Use with limit for large files"},
    "limit": {"type": "integer", "minimum": 0, "description": "Number of lines to read (default 2000)"},
    "pages": {"type": "string", "description": "Not supported: PDFs are always read whole, so leave this out"},
    "allow_large": {"type": "boolean", "description": "Read a file over 256 KB without offset/limit"}
  },
  "required": ["file_path"],
  "additionalProperties": false
}`

// Read limits.
const (
	defaultReadLines = 2000
	maxLineChars     = 2000
	// maxLineBytes is enough bytes for maxLineChars characters and a CRLF.
	maxLineBytes = 4*maxLineChars + 2
	// maxReadBytes is the largest text file read whole without offset/limit.
	maxReadBytes = 256 << 10
	// sniffBytes is how much of a file decides whether it is text.
	sniffBytes = 8 << 10
)

const lineCutMarker = "… [line cut: over 2000 characters]"

type readTool struct{}

type readInput struct {
	FilePath   string `json:"file_path"`
	Offset     int    `json:"offset"`
	Limit      int    `json:"limit"`
	Pages      string `json:"pages"`
	AllowLarge bool   `json:"allow_large"`
}

// textFile is the structured result of reading text, as Claude Code reports it.
type textFile struct {
	FilePath   string `json:"filePath"`
	Content    string `json:"content"`
	NumLines   int    `json:"numLines"`
	StartLine  int    `json:"startLine"`
	TotalLines int    `json:"totalLines"`
}

type imageFile struct {
	Base64       string           `json:"base64"`
	Type         string           `json:"type"`
	OriginalSize int64            `json:"originalSize"`
	Dimensions   *imageDimensions `json:"dimensions,omitempty"`
}

// imageDimensions are an image's size on disk and as sent, in pixels
// (omitted when the format's size cannot be read).
type imageDimensions struct {
	OriginalWidth  int `json:"originalWidth"`
	OriginalHeight int `json:"originalHeight"`
	DisplayWidth   int `json:"displayWidth"`
	DisplayHeight  int `json:"displayHeight"`
}

type pdfFile struct {
	FilePath     string `json:"filePath"`
	Base64       string `json:"base64"`
	OriginalSize int64  `json:"originalSize"`
}

type readResult[F any] struct {
	Type string `json:"type"`
	File F      `json:"file"`
}

func (readTool) Name() string                  { return "Read" }
func (readTool) Description() string           { return readDescription }
func (readTool) InputSchema() json.RawMessage  { return json.RawMessage(readSchema) }
func (readTool) ReadOnly(json.RawMessage) bool { return true }

func (t readTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in readInput
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	path := env.Abs(in.FilePath)
	res, err := t.read(ctx, env, in, path)
	if err == nil && env.NestedMemory != nil {
		// Memory of the file's directory (a nested CLAUDE.md) reaches the
		// model the first time it reads there.
		res.Content = append(res.Content, env.NestedMemory(path)...)
	}
	return res, err
}

func (t readTool) read(ctx context.Context, env *tool.Env, in readInput, path string) (tool.Result, error) {
	info, err := statFile(t.Name(), path)
	if err != nil {
		return tool.Result{}, err
	}
	if info == nil {
		return tool.Result{}, missingFile(t.Name(), env, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	// Stamp what is actually being read, not what was stat'ed before opening.
	if info, err = f.Stat(); err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	media := sniff(head)
	if in.Pages != "" {
		if media != mediaPDF {
			return tool.Result{}, tool.BadInput(t.Name(), "pages applies only to PDF files; use offset and limit for %s.", path)
		}
		return tool.Result{}, tool.BadInput(t.Name(), "Reading selected PDF pages is not supported; call Read without pages to get the whole document (up to %d MB).", maxPDFBytes>>20)
	}
	switch {
	case media == mediaPDF:
		return readPDF(env, path, info, br)
	case media != "":
		return readImage(env, path, info, br, media)
	case looksBinary(head, len(head) < sniffBytes):
		return tool.Result{}, tool.BadInput(t.Name(), "%s is a binary file; Read shows text, images (PNG, JPEG, GIF, WebP) and PDFs. Inspect it with a command suited to its format through Bash (e.g. `file`, `xxd | head`).", path)
	}
	var text *string // the editor's buffer, when a host holds the file
	if env.TextFiles != nil {
		t, err := env.TextFiles.ReadTextFile(ctx, path)
		if err != nil {
			return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
		}
		text = &t
		br = bufio.NewReader(strings.NewReader(t))
	}
	res, err := readText(ctx, env, path, info, br, in)
	if err == nil && strings.HasSuffix(path, ".ipynb") && in.Offset == 0 && in.Limit == 0 {
		raw, rerr := []byte(nil), error(nil)
		if text != nil {
			raw = []byte(*text)
		} else {
			raw, rerr = os.ReadFile(path)
		}
		if rerr == nil {
			if nb, ok := readNotebook(path, raw); ok {
				res.Structured = nb
			}
		}
	}
	return res, err
}

func readText(ctx context.Context, env *tool.Env, path string, info os.FileInfo, br *bufio.Reader, in readInput) (tool.Result, error) {
	if in.Offset == 0 && in.Limit == 0 && !in.AllowLarge && info.Size() > maxReadBytes {
		return tool.Result{}, fmt.Errorf("%s is %d KB, over the %d KB that Read returns at once. Read a part of it with offset and limit, search it with Grep, or pass allow_large if you need all of it", path, info.Size()>>10, maxReadBytes>>10)
	}
	// Judge emptiness by content: some files (in /proc) report size 0.
	if _, err := br.Peek(1); errors.Is(err, io.EOF) {
		env.Files.Record(path, info, false)
		return tool.TextResult("The file "+path+" exists but is empty.",
			readResult[textFile]{"text", textFile{FilePath: path, StartLine: 1}}), nil
	}
	first := max(in.Offset, 1)
	count := in.Limit
	if count == 0 {
		count = defaultReadLines
	}
	lines, total, err := scanLines(ctx, br, first, count)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	env.Files.Record(path, info, first > 1 || first+len(lines)-1 < total)
	structured := readResult[textFile]{"text", textFile{
		FilePath: path, Content: strings.Join(lines, "\n"),
		NumLines: len(lines), StartLine: first, TotalLines: total,
	}}
	if len(lines) == 0 {
		return tool.TextResult(fmt.Sprintf("The file %s has %d lines, fewer than offset %d. Read from an earlier line.", path, total, first), structured), nil
	}
	var sb strings.Builder
	for i, l := range lines {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(strconv.Itoa(first + i))
		sb.WriteByte('\t')
		sb.WriteString(l)
	}
	return tool.TextResult(sb.String(), structured), nil
}

// scanLines streams r and returns lines first … first+count-1 (1-based),
// without their line endings and cut to maxLineChars, and the number of
// lines in r; text after the last "\n" counts as a line, even when empty.
// Only the wanted lines are kept in memory.
func scanLines(ctx context.Context, r *bufio.Reader, first, count int) (lines []string, total int, err error) {
	for n := 1; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		want := n >= first && n-first < count
		var buf []byte
		long, ended := false, false
		for {
			chunk, err := r.ReadSlice('\n')
			if want {
				take := min(len(chunk), maxLineBytes-len(buf))
				buf = append(buf, chunk[:take]...)
				long = long || take < len(chunk)
			}
			if err == nil {
				ended = true
				break
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return nil, 0, err
			}
		}
		if want {
			lines = append(lines, finishLine(buf, long))
		}
		if !ended {
			return lines, n, nil
		}
	}
}

// finishLine drops a line's ending and cuts it to maxLineChars characters.
// long says bytes were dropped, which only happens past maxLineChars.
func finishLine(b []byte, long bool) string {
	s := string(b)
	if !long {
		if t, ok := strings.CutSuffix(s, "\n"); ok {
			s = strings.TrimSuffix(t, "\r")
		}
		if len(s) <= maxLineChars || utf8.RuneCountInString(s) <= maxLineChars {
			return s
		}
	}
	i := 0
	for range maxLineChars {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + lineCutMarker
}

func readImage(env *tool.Env, path string, info os.FileInfo, r io.Reader, media string) (tool.Result, error) {
	if info.Size() > maxSourceImageBytes {
		return tool.Result{}, fmt.Errorf("%s is a %d MB image, too large to send (the limit is %d MB)", path, info.Size()>>20, maxSourceImageBytes>>20)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	original, origErr := decodeConfig(data, media)
	data, media, err = fitImage(data, media)
	if err != nil {
		return tool.Result{}, fmt.Errorf("%s: image too large or unreadable: %w", path, err)
	}
	env.Files.Record(path, info, false)
	b64 := base64.StdEncoding.EncodeToString(data)
	block := llm.Block{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "base64", MediaType: media, Data: b64}}
	return tool.Result{
		Content:    []llm.Block{block},
		Structured: readResult[imageFile]{"image", imageFile{Base64: b64, Type: media, OriginalSize: info.Size(), Dimensions: dimensions(original, origErr, data, media)}},
	}, nil
}

// dimensions are the sizes of an image read (original, if origErr is nil)
// and sent (data); nil when either cannot be read.
func dimensions(original image.Config, origErr error, data []byte, media string) *imageDimensions {
	if origErr != nil {
		return nil
	}
	sent, err := decodeConfig(data, media)
	if err != nil {
		return nil
	}
	return &imageDimensions{original.Width, original.Height, sent.Width, sent.Height}
}

func readPDF(env *tool.Env, path string, info os.FileInfo, r io.Reader) (tool.Result, error) {
	if info.Size() > maxPDFBytes {
		return tool.Result{}, fmt.Errorf("%s is a %d MB PDF, over the %d MB that can be sent; extract the text you need with a command through Bash (e.g. pdftotext)", path, info.Size()>>20, maxPDFBytes>>20)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", path, err)
	}
	env.Files.Record(path, info, false)
	b64 := base64.StdEncoding.EncodeToString(data)
	raw, err := jsonx.Marshal(map[string]any{
		"type":   "document",
		"source": map[string]string{"type": "base64", "media_type": mediaPDF, "data": b64},
	})
	if err != nil {
		return tool.Result{}, fmt.Errorf("encode %s: %w", path, err)
	}
	return tool.Result{
		Content:    []llm.Block{{Type: "document", Raw: raw}},
		Structured: readResult[pdfFile]{"pdf", pdfFile{FilePath: path, Base64: b64, OriginalSize: info.Size()}},
	}, nil
}
