package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a small strict JSON scanner for transcript lines. Loading a
// long transcript is dominated by JSON decoding, and encoding/json scans a
// nested value once per level (a record, its message, its content, each
// block), through reflection. The scanner validates a line in one pass and
// records every value's span on a tape, which the decoders then walk
// without scanning again; a string is decoded from its span by a copy when
// it holds no escape. It accepts exactly what JSON.parse accepts, so a line
// tack skips is a line the Agent SDK skips too.

// maxDepth bounds nesting so a hostile line cannot exhaust the stack.
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

// Value kinds of a span.
const (
	kindNone   byte = 0 // absent
	kindString byte = 's'
	kindNumber byte = 'n'
	kindObject byte = 'o'
	kindArray  byte = 'a'
	kindTrue   byte = 't'
	kindFalse  byte = 'f'
	kindNull   byte = 'z'
)

// span is where one JSON value sits in a buffer.
type span struct {
	start, end int32 // [start, end) of the whole value (quotes included)
	// next is the tape index just past this value and its members.
	next int32
	kind byte // one of the kind constants
	esc  bool // a string holding a backslash escape or non-ASCII bytes
}

func (s span) ok() bool               { return s.kind != kindNone }
func (s span) raw(data []byte) []byte { return data[s.start:s.end] }
func (s span) isString() bool         { return s.kind == kindString }
func (s span) isNull() bool           { return s.kind == kindNull }
func (s span) str(data []byte) string { return decodeString(data, s) }

// is reports whether s is the string lit.
func (s span) is(data []byte, lit string) bool {
	if s.kind != kindString {
		return false
	}
	if s.esc {
		return s.str(data) == lit
	}
	return string(data[s.start+1:s.end-1]) == lit
}

// truthy is JavaScript truthiness, which the SDK applies to flags such as
// isSidechain and isMeta.
func (s span) truthy(data []byte) bool {
	switch s.kind {
	case kindTrue, kindObject, kindArray:
		return true
	case kindString:
		return s.end-s.start > 2
	case kindNumber:
		for _, c := range data[s.start:s.end] {
			if c >= '1' && c <= '9' {
				return true
			}
			if c == 'e' || c == 'E' {
				break
			}
		}
	}
	return false
}

// doc is one scanned JSON text: its bytes and the tape of its values in
// document order, object members as key, value pairs. The tape is reused
// from line to line.
type doc struct {
	data  []byte
	tape  []span
	pos   int
	depth int
	// repeats is what the lines decoded with this doc share (decode.go).
	repeats repeats
}

// parse validates data as one JSON value, surrounded by whitespace only,
// and fills the tape; the root is d.tape[0].
func (d *doc) parse(data []byte) error {
	d.data, d.tape, d.pos, d.depth = data, d.tape[:0], 0, 0
	if err := d.value(); err != nil {
		return err
	}
	d.ws()
	if d.pos != len(d.data) {
		return errSyntax
	}
	return nil
}

func (d *doc) root() span { return d.tape[0] }

// members calls fn with the tape indexes of each key and value of the
// object at index i.
func (d *doc) members(i int, fn func(k, v int)) {
	for j := i + 1; j < int(d.tape[i].next); j = int(d.tape[j+1].next) {
		fn(j, j+1)
	}
}

// elements calls fn with the tape index of each element of the array at i.
func (d *doc) elements(i int, fn func(v int)) {
	for j := i + 1; j < int(d.tape[i].next); j = int(d.tape[j].next) {
		fn(j)
	}
}

// count is the number of elements or members of the container at i.
func (d *doc) count(i int) int {
	n := 0
	for j := i + 1; j < int(d.tape[i].next); j = int(d.tape[j].next) {
		n++
	}
	return n
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (d *doc) ws() {
	for d.pos < len(d.data) && isSpace(d.data[d.pos]) {
		d.pos++
	}
}

func (d *doc) push(kind byte) int {
	d.tape = append(d.tape, span{start: int32(d.pos), kind: kind})
	return len(d.tape) - 1
}

func (d *doc) done(i int) {
	d.tape[i].end = int32(d.pos)
	d.tape[i].next = int32(len(d.tape))
}

// value scans the value at the current position (after whitespace).
func (d *doc) value() error {
	d.ws()
	if d.pos >= len(d.data) {
		return errSyntax
	}
	var err error
	switch c := d.data[d.pos]; {
	case c == '"':
		i := d.push(kindString)
		d.tape[i].esc, err = d.str()
		d.done(i)
	case c == '{':
		err = d.object()
	case c == '[':
		err = d.array()
	case c == 't':
		err = d.lit(kindTrue, "true")
	case c == 'f':
		err = d.lit(kindFalse, "false")
	case c == 'n':
		err = d.lit(kindNull, "null")
	case c == '-' || c >= '0' && c <= '9':
		i := d.push(kindNumber)
		err = d.number()
		d.done(i)
	default:
		err = errSyntax
	}
	return err
}

func (d *doc) lit(kind byte, word string) error {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return errSyntax
	}
	i := d.push(kind)
	d.pos += len(word)
	d.done(i)
	return nil
}

func (d *doc) digits() int {
	n := 0
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		d.pos++
		n++
	}
	return n
}

// number accepts -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (d *doc) number() error {
	if d.data[d.pos] == '-' {
		d.pos++
	}
	if d.pos >= len(d.data) {
		return errSyntax
	}
	if d.data[d.pos] == '0' {
		d.pos++
	} else if d.digits() == 0 {
		return errSyntax
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if d.digits() == 0 {
			return errSyntax
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if d.digits() == 0 {
			return errSyntax
		}
	}
	return nil
}

// SWAR constants: eight bytes at a time.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// ctlOrHigh reports whether one of 8 bytes is a control character (below
// 0x20) or not ASCII. Subtracting 0x20 from each byte sets the high bit of
// those below 0x20; borrows only start at such a byte, so a word without
// one reports none.
func ctlOrHigh(w uint64) bool { return ((w-lsb*0x20)|w)&msb != 0 }

// slashOrHigh reports whether one of 8 bytes is a backslash or not ASCII.
func slashOrHigh(w uint64) bool {
	x := w ^ (lsb * '\\')
	return ((x-lsb)&^x|w)&msb != 0
}

// str scans a string starting at its opening quote. It reports whether the
// string needs more than a copy to decode: an escape, or bytes that may be
// invalid UTF-8 (checked when decoding).
func (d *doc) str() (bool, error) {
	data := d.data
	i := d.pos + 1
	esc := false
	for {
		// Jump to the next quote or backslash (SIMD in IndexByte), then
		// check the bytes jumped over for control characters.
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			d.pos = len(data)
			return esc, errSyntax
		}
		run := data[i : i+q]
		if b := bytes.IndexByte(run, '\\'); b >= 0 {
			run = run[:b]
		}
		j := 0
		for ; j+8 <= len(run); j += 8 {
			if ctlOrHigh(binary.LittleEndian.Uint64(run[j:])) {
				break
			}
		}
		for ; j < len(run); j++ {
			if c := run[j]; c < 0x20 {
				return esc, errSyntax
			} else if c >= utf8.RuneSelf {
				esc = true
			}
		}
		i += len(run)
		if data[i] == '"' {
			d.pos = i + 1
			return esc, nil
		}
		// A backslash: the scanner checks the escape.
		esc = true
		if i+1 >= len(data) {
			d.pos = len(data)
			return esc, errSyntax
		}
		switch data[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(data) || !isHex4(data[i+2:i+6]) {
				return esc, errSyntax
			}
			i += 6
		default:
			return esc, errSyntax
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (d *doc) object() error {
	if d.depth++; d.depth > maxDepth {
		return errSyntax
	}
	i := d.push(kindObject)
	d.pos++ // {
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		d.done(i)
		return nil
	}
	for {
		d.ws()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return errSyntax
		}
		k := d.push(kindString)
		esc, err := d.str()
		if err != nil {
			return err
		}
		d.tape[k].esc = esc
		d.done(k)
		d.ws()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return errSyntax
		}
		d.pos++
		if err := d.value(); err != nil {
			return err
		}
		d.ws()
		if d.pos >= len(d.data) {
			return errSyntax
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			d.done(i)
			return nil
		default:
			return errSyntax
		}
	}
}

func (d *doc) array() error {
	if d.depth++; d.depth > maxDepth {
		return errSyntax
	}
	i := d.push(kindArray)
	d.pos++ // [
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		d.done(i)
		return nil
	}
	for {
		if err := d.value(); err != nil {
			return err
		}
		d.ws()
		if d.pos >= len(d.data) {
			return errSyntax
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			d.done(i)
			return nil
		default:
			return errSyntax
		}
	}
}

// scanLine validates data as one JSON value and returns its span.
func scanLine(data []byte) (span, error) {
	var d doc
	if err := d.parse(data); err != nil {
		return span{}, err
	}
	return d.root(), nil
}

// decodeString decodes the string at sp, replacing invalid UTF-8 and lone
// surrogates with U+FFFD as encoding/json does.
func decodeString(data []byte, sp span) string {
	if sp.kind != kindString {
		return ""
	}
	body := data[sp.start+1 : sp.end-1]
	if !sp.esc {
		return string(body)
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		// Copy the run of plain ASCII up to the next escape in one go.
		j := i
		for ; j+8 <= len(body); j += 8 {
			if slashOrHigh(binary.LittleEndian.Uint64(body[j:])) {
				break
			}
		}
		for ; j < len(body) && body[j] != '\\' && body[j] < utf8.RuneSelf; j++ {
		}
		out = append(out, body[i:j]...)
		if i = j; i == len(body) {
			break
		}
		if c := body[i]; c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...)
			} else {
				out = append(out, body[i:i+size]...)
			}
			i += size
			continue
		}
		// body[i] is a backslash; the scanner checked the escape.
		switch c := body[i+1]; c {
		case 'u':
			r := rune(hex4(body[i+2 : i+6]))
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, rune(hex4(body[i+2:i+6]))); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // " \\ /
			out = append(out, c)
		}
		i += 2
	}
	return string(out)
}

func hex4(b []byte) uint16 {
	var v uint16
	for _, c := range b[:4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= uint16(c - '0')
		case c >= 'a' && c <= 'f':
			v |= uint16(c - 'a' + 10)
		default:
			v |= uint16(c - 'A' + 10)
		}
	}
	return v
}
