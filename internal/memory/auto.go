package memory

import (
	"bytes"
	"io"
	"strings"
)

// Auto memory limits: MEMORY.md is an index the model keeps itself; only
// its beginning sits in every prompt.
const (
	autoMaxLines = 200
	autoMaxBytes = 25_000
)

// Notes appended to a cut MEMORY.md, so the model knows there is more and
// keeps the index short.
const (
	autoLinesNote = "\n\n(Only the first 200 lines of MEMORY.md were loaded; the rest was cut off. Keep MEMORY.md a short index and move details into topic files.)"
	autoBytesNote = "\n\n(Only the first 25000 bytes of MEMORY.md were loaded; the rest was cut off. Keep MEMORY.md a short index and move details into topic files.)"
)

// auto reads the auto memory MEMORY.md: no imports, no exclusions, cut to
// its first 200 lines or 25 000 bytes, whichever is shorter, at a line
// boundary.
func (l *loader) auto() *File {
	p := l.opts.AutoMemoryPath
	if p == "" {
		return nil
	}
	if _, ok := l.probe(p); !ok {
		return nil
	}
	f, err := l.sys.open(p)
	if err != nil {
		l.problem("memory: %v", err)
		return nil
	}
	defer f.Close()
	// One byte past the limit tells whether the file goes on.
	data, err := io.ReadAll(io.LimitReader(f, autoMaxBytes+1))
	if err != nil {
		l.problem("memory: read %s: %v", p, err)
		return nil
	}
	if bytes.IndexByte(data, 0) >= 0 {
		l.problem("memory: %s: not a text file", p)
		return nil
	}
	content := truncateAuto(data)
	if strings.TrimSpace(content) == "" {
		return nil
	}
	return &File{Path: p, Kind: AutoMem, Content: content}
}

// truncateAuto applies the auto memory limits to the first autoMaxBytes+1
// bytes of MEMORY.md.
func truncateAuto(data []byte) string {
	note := ""
	if end := afterLine(data, autoMaxLines); end < len(data) {
		data, note = data[:end], autoLinesNote
	}
	if len(data) > autoMaxBytes {
		data, note = cutAt(data, autoMaxBytes), autoBytesNote
	}
	return tidy(string(data)) + note
}

// afterLine returns the index just past the n-th newline of data, or
// len(data) when it has fewer.
func afterLine(data []byte, n int) int {
	pos := 0
	for range n {
		i := bytes.IndexByte(data[pos:], '\n')
		if i < 0 {
			return len(data)
		}
		pos += i + 1
	}
	return pos
}
