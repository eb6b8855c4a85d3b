package search

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"
)

const (
	// binaryBlock is how much of a file's start is checked for a NUL
	// byte: a file with one there is binary and skipped.
	binaryBlock = 64 << 10
	// initialBuffer is a worker's read buffer; most files fit at once.
	initialBuffer = 256 << 10
	// maxBuffer bounds the buffer: the longest line (or the largest file
	// in multiline mode) that is searched whole.
	maxBuffer = 64 << 20
	// maxLineDisplay bounds a line as shown; longer ones show a window
	// around the match.
	maxLineDisplay = 500
)

// Output modes of Grep.
const (
	modeContent = "content"
	modeFiles   = "files_with_matches"
	modeCount   = "count"
)

// grepOptions are the settled options of one search.
type grepOptions struct {
	mode          string
	before, after int
	lineNumbers   bool
	onlyMatching  bool
	// budget is how many output lines of one file are worth rendering
	// (offset + head_limit); further lines are only counted. 0: all.
	budget int
}

// fileMatch is what a search found in one file.
type fileMatch struct {
	path    string // absolute
	display string // as shown to the model
	modTime time.Time
	// count is the number of matching lines (matches with -o), for count
	// mode.
	count int
	// out holds the rendered output lines of content mode and lines their
	// number, including those counted but not rendered.
	out   []byte
	lines int
}

// searcher searches files one at a time for one worker, reusing its
// buffers from file to file.
type searcher struct {
	m    *matcher
	o    *grepOptions
	find *finder // nil when the pattern has no required literal
	buf  []byte
	// bufSize is the initial size of buf.
	bufSize int
	stop    func() bool
	// display names a file as the model will see it.
	display func(path string) string

	// per file
	res  *fileMatch
	done bool // nothing more to learn from this file
	em   emitter
}

func newSearcher(m *matcher, o *grepOptions, stop func() bool, display func(string) string) *searcher {
	s := &searcher{m: m, o: o, stop: stop, display: display}
	if m.lits != nil {
		s.find = newFinder(m.lits)
	}
	return s
}

// search searches the file at path and reports whether it matched.
func (s *searcher) search(path string) (fileMatch, bool) {
	f, err := openRaw(path)
	if err != nil {
		return fileMatch{}, false
	}
	defer f.close()
	res := fileMatch{path: path}
	s.res, s.done = &res, false
	s.em = emitter{o: s.o, res: &res, display: s.display, lineNo: 1}
	if s.bufSize == 0 {
		s.bufSize = initialBuffer
	}
	if s.buf == nil || cap(s.buf) > 4*s.bufSize {
		s.buf = make([]byte, 0, s.bufSize)
	}
	var matched bool
	if s.m.multiline {
		matched = s.searchWhole(f)
	} else {
		matched = s.searchLines(f)
	}
	if !matched {
		return fileMatch{}, false
	}
	if s.o.mode == modeFiles {
		res.modTime = f.modTime()
	}
	res.out = s.em.out
	if res.display == "" {
		res.display = s.display(path)
	}
	return res, true
}

// searchLines searches line by line, streaming the file through the buffer
// in chunks of whole lines. Lines of before-context are kept from one chunk
// to the next.
func (s *searcher) searchLines(f rawFile) bool {
	buf := s.buf[:0]
	defer func() { s.buf = buf[:0] }()
	var offset int // file offset of buf[0]
	scanned := 0   // buf[:scanned] has been searched
	matched := false
	for {
		if len(buf) == cap(buf) {
			// Drop what is searched, except lines of before-context; grow
			// instead if that would free less than half of the buffer.
			keep := s.contextStart(buf, scanned)
			switch {
			case keep > 0 && (keep >= len(buf)/2 || cap(buf) >= maxBuffer):
				s.em.shift(buf, keep)
				n := copy(buf, buf[keep:])
				buf = buf[:n]
				offset += keep
				scanned -= keep
			case cap(buf) < maxBuffer:
				bigger := make([]byte, len(buf), 2*cap(buf))
				copy(bigger, buf)
				buf = bigger
			default:
				// A line longer than maxBuffer: search what is there as a
				// line of its own and move on.
				matched = s.searchRegion(buf, scanned, len(buf)) || matched
				s.em.shift(buf, len(buf))
				offset += len(buf)
				buf, scanned = buf[:0], 0
			}
			if s.done || s.stop() {
				return matched
			}
		}
		n := f.read(buf[len(buf):cap(buf)])
		fresh := buf[len(buf) : len(buf)+n]
		buf = buf[:len(buf)+n]
		end := len(buf)
		if n > 0 {
			if i := bytes.IndexByte(fresh, 0); i >= 0 {
				nul := len(buf) - n + i
				if offset+nul < binaryBlock {
					return false
				}
				// Binary past the first block: search the lines before.
				end = bytes.LastIndexByte(buf[:nul], '\n') + 1
				n = 0
			} else {
				end = bytes.LastIndexByte(buf, '\n') + 1
			}
		}
		if end > scanned {
			matched = s.searchRegion(buf, scanned, end) || matched
			scanned = end
		}
		if n == 0 || s.done {
			return matched
		}
	}
}

// contextStart returns where the lines of before-context preceding
// buf[scanned:] start, the part of buf to keep for the next chunk.
func (s *searcher) contextStart(buf []byte, scanned int) int {
	p := scanned
	for range s.o.before {
		if p == 0 {
			break
		}
		p = bytes.LastIndexByte(buf[:p-1], '\n') + 1
	}
	return p
}

// searchRegion searches the whole lines of buf[from:to].
func (s *searcher) searchRegion(buf []byte, from, to int) bool {
	if s.find != nil {
		s.find.reset(buf, to)
	}
	matched := false
	for from < to {
		ls, le, at, ok := s.nextLine(buf, from, to)
		if !ok {
			break
		}
		from = le + 1
		var matches [][]int
		if s.o.onlyMatching {
			matches = nonEmpty(s.m.re.FindAllIndex(buf[ls:le], -1), ls)
			if len(matches) == 0 {
				continue
			}
		}
		matched = true
		switch s.o.mode {
		case modeFiles:
			s.done = true
			return true
		case modeCount:
			s.res.count += max(1, len(matches))
		default:
			s.em.block(buf, ls, le, at, matches)
		}
	}
	if s.o.mode == modeContent {
		s.em.flushAfter(buf, to)
	}
	return matched
}

// nextLine finds the first matching line in buf[from:to] (from at a line
// start): its bounds without the newline, and a position in it to centre
// a long line's display on.
func (s *searcher) nextLine(buf []byte, from, to int) (ls, le, at int, ok bool) {
	if s.find == nil {
		loc := s.m.re.FindIndex(buf[from:to])
		if loc == nil {
			return 0, 0, 0, false
		}
		at = from + loc[0]
		if at == to && (to == from || buf[to-1] == '\n') {
			return 0, 0, 0, false // an empty match after the last line
		}
		return lineStart(buf, from, at), lineEnd(buf, at, to), at, true
	}
	for from < to {
		at = s.find.find(from)
		if at < 0 {
			return 0, 0, 0, false
		}
		ls, le = lineStart(buf, from, at), lineEnd(buf, at, to)
		if s.m.exact || s.m.re.Match(buf[ls:le]) {
			return ls, le, at, true
		}
		from = le + 1
	}
	return 0, 0, 0, false
}

// searchWhole searches a whole file at once for multiline patterns, which
// may match across lines. Files past maxBuffer are searched in their first
// maxBuffer bytes.
func (s *searcher) searchWhole(f rawFile) bool {
	buf := s.buf[:0]
	defer func() { s.buf = buf[:0] }()
	for {
		if len(buf) == cap(buf) {
			if cap(buf) >= maxBuffer {
				break
			}
			bigger := make([]byte, len(buf), 2*cap(buf))
			copy(bigger, buf)
			buf = bigger
		}
		n := f.read(buf[len(buf):cap(buf)])
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
		if len(buf)-n < binaryBlock && bytes.IndexByte(buf[len(buf)-n:min(len(buf), binaryBlock)], 0) >= 0 {
			return false
		}
		if s.stop() {
			return false
		}
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:bytes.LastIndexByte(buf[:i], '\n')+1]
	}
	if s.find != nil {
		s.find.reset(buf, len(buf))
		if s.find.find(0) < 0 {
			return false
		}
	}
	if s.o.mode == modeFiles {
		return s.m.re.Match(buf)
	}
	all := s.m.re.FindAllIndex(buf, -1)
	// Group the matches into blocks of whole lines; matches touching a
	// line of the previous block join it.
	matched := false
	var bs, be int
	var group [][]int
	flush := func() {
		if group == nil {
			return
		}
		if s.o.onlyMatching {
			group = nonEmpty(group, 0)
			if len(group) == 0 {
				group = nil
				return
			}
		}
		matched = true
		switch {
		case s.o.mode == modeCount && s.o.onlyMatching:
			s.res.count += len(group)
		case s.o.mode == modeCount:
			s.res.count++
		default:
			s.em.block(buf, bs, be, group[0][0], group)
		}
		group = nil
	}
	for _, loc := range all {
		st, last := loc[0], loc[0]
		if loc[1] > st {
			last = loc[1] - 1
		}
		if st == len(buf) && (st == 0 || buf[st-1] == '\n') {
			continue // an empty match after the last line
		}
		ls, le := lineStart(buf, 0, st), lineEnd(buf, last, len(buf))
		if group != nil && ls <= be {
			be = max(be, le)
			group = append(group, loc)
			continue
		}
		flush()
		bs, be, group = ls, le, [][]int{loc}
	}
	flush()
	if s.o.mode == modeContent {
		s.em.flushAfter(buf, len(buf))
	}
	return matched
}

// nonEmpty drops empty matches and shifts the rest by base.
func nonEmpty(locs [][]int, base int) [][]int {
	out := locs[:0]
	for _, l := range locs {
		if l[1] > l[0] {
			l[0] += base
			l[1] += base
			out = append(out, l)
		}
	}
	return out
}

// lineStart returns the start of the line holding position p, not before
// from (which is a line start).
func lineStart(buf []byte, from, p int) int {
	return from + bytes.LastIndexByte(buf[from:p], '\n') + 1
}

// lineEnd returns the end, newline excluded, of the line holding position
// p, not after to.
func lineEnd(buf []byte, p, to int) int {
	if i := bytes.IndexByte(buf[p:to], '\n'); i >= 0 {
		return p + i
	}
	return to
}

// emitter renders content mode for one file: matching lines, lines of
// context around them, and "--" between groups that are not adjacent.
type emitter struct {
	o       *grepOptions
	res     *fileMatch
	display func(string) string
	out     []byte
	// pos is a line start in the buffer and lineNo its number.
	pos, lineNo int
	// printed is the number of the last line output, 0 for none.
	printed int
	// afterLeft is how many lines of after-context are still due.
	afterLeft int
}

// block outputs the matching lines buf[ls:le] (one line, or several for a
// multiline match), preceded by any after-context still due and by their
// before-context. at is where the first match is, matches the matches for
// -o (absolute offsets).
func (e *emitter) block(buf []byte, ls, le, at int, matches [][]int) {
	e.flushAfter(buf, ls)
	e.advance(buf, ls)
	n := e.lineNo
	first := max(n-e.o.before, e.printed+1, 1)
	p := ls
	for ln := n; ln > first; ln-- {
		if p == 0 { // context lost to a line longer than the buffer
			first = ln
			break
		}
		p = bytes.LastIndexByte(buf[:p-1], '\n') + 1
	}
	if e.printed > 0 && first > e.printed+1 && (e.o.before > 0 || e.o.after > 0) {
		e.separator()
	}
	for ln := first; ln < n; ln++ {
		end := lineEnd(buf, p, ls)
		e.line('-', ln, buf[p:end], 0)
		p = end + 1
	}
	last := n + bytes.Count(buf[ls:le], []byte{'\n'})
	if e.o.onlyMatching {
		for _, m := range matches {
			ln := n + bytes.Count(buf[ls:m[0]], []byte{'\n'})
			for part := range bytes.SplitSeq(buf[m[0]:m[1]], []byte{'\n'}) {
				if len(part) > 0 {
					e.line(':', ln, part, 0)
				}
				ln++
			}
		}
	} else {
		p = ls
		for ln := n; ln <= last; ln++ {
			end := lineEnd(buf, p, le)
			e.line(':', ln, buf[p:end], max(0, at-p))
			p = end + 1
			at = 0
		}
	}
	e.printed, e.afterLeft = last, e.o.after
	e.pos, e.lineNo = min(le+1, len(buf)), last+1
}

// flushAfter outputs the lines of after-context due before position limit.
func (e *emitter) flushAfter(buf []byte, limit int) {
	for e.afterLeft > 0 && e.pos < limit {
		end := lineEnd(buf, e.pos, limit)
		e.line('-', e.lineNo, buf[e.pos:end], 0)
		e.printed = e.lineNo
		e.pos, e.lineNo = end+1, e.lineNo+1
		e.afterLeft--
	}
}

// advance moves pos forward to p, counting lines.
func (e *emitter) advance(buf []byte, p int) {
	if p > e.pos {
		e.lineNo += bytes.Count(buf[e.pos:p], []byte{'\n'})
		e.pos = p
	}
}

// shift accounts for the buffer dropping its first n bytes.
func (e *emitter) shift(buf []byte, n int) {
	e.advance(buf, n)
	e.pos -= n
}

func (e *emitter) separator() {
	if e.o.budget == 0 || e.res.lines < e.o.budget {
		e.out = append(e.out, "--\n"...)
	}
	e.res.lines++
}

// line outputs one line of the file: kind ':' for a match, '-' for
// context; the display window of a long line covers position at.
func (e *emitter) line(kind byte, n int, text []byte, at int) {
	if e.o.budget == 0 || e.res.lines < e.o.budget {
		if e.res.display == "" {
			e.res.display = e.display(e.res.path)
		}
		e.out = append(e.out, e.res.display...)
		e.out = append(e.out, kind)
		if e.o.lineNumbers {
			e.out = strconv.AppendInt(e.out, int64(n), 10)
			e.out = append(e.out, kind)
		}
		e.out = appendClipped(e.out, text, at)
		e.out = append(e.out, '\n')
	}
	e.res.lines++
}

// appendClipped appends text, or for a line longer than maxLineDisplay a
// window of it around position at, marked with ellipses where cut.
func appendClipped(out, text []byte, at int) []byte {
	if len(text) <= maxLineDisplay {
		return append(out, text...)
	}
	start := 0
	if at > maxLineDisplay/5 {
		start = min(at-maxLineDisplay/5, len(text)-maxLineDisplay)
	}
	end := start + maxLineDisplay
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	if start > 0 {
		out = append(out, "…"...)
	}
	out = append(out, text[start:end]...)
	if end < len(text) {
		out = append(out, "…"...)
	}
	return out
}
