package session

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
)

// Reading a transcript: the file is read in large batches of whole lines,
// and the batches are decoded in parallel, each by a worker with its own
// tape, while the next ones are read. The caller then takes the decoded
// lines in file order. Decoding is by far the largest part of a load.

// batchSize is how much of the file one batch reads.
const batchSize = 1 << 20

// batch is a run of whole lines and what they decode to.
type batch struct {
	data      []byte // never reused: decoded lines may keep slices of it
	firstLine int    // 1-based number of its first line
	lines     []decodedLine
}

// decodedLine is one non-blank line.
type decodedLine struct {
	line
	ok     bool   // a JSON object
	lineNo int    // 1-based
	raw    []byte // the line without surrounding whitespace
}

// decode decodes every non-blank line of b with d.
func (b *batch) decode(d *doc) {
	data := b.data
	b.lines = make([]decodedLine, 0, bytes.Count(data, []byte{'\n'})+1)
	for lineNo := b.firstLine; len(data) > 0; lineNo++ {
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		// Leading bytes up to the space are skipped, as the SDK does.
		i := 0
		for i < len(l) && l[i] <= ' ' {
			i++
		}
		if i == len(l) {
			continue // blank
		}
		l = trimLine(l[i:])
		ln, ok := d.decodeLine(l)
		b.lines = append(b.lines, decodedLine{line: ln, ok: ok, lineNo: lineNo, raw: l})
	}
}

// decodeBatches reads rd to the end and calls take with each batch,
// decoded, in file order. When the batches are all decoded before the
// first is taken, sized is told first how many lines they hold.
func decodeBatches(rd io.Reader, sized func(lines int), take func(*batch)) error {
	r := batchReader{rd: rd, line: 1}
	first, err := r.next()
	if err != nil || first == nil {
		return err
	}
	second, err := r.next()
	if err != nil {
		return err
	}
	workers := min(runtime.GOMAXPROCS(0), 8)
	if second == nil || workers == 1 {
		// One batch (most files) or one CPU: no goroutines.
		var d doc
		for b := first; b != nil; {
			b.decode(&d)
			take(b)
			if b, second = second, nil; b == nil {
				if b, err = r.next(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var (
		all  = []*batch{first}
		wg   sync.WaitGroup
		work = make(chan *batch, workers)
	)
	for range workers {
		wg.Go(func() {
			var d doc
			for b := range work {
				b.decode(&d)
			}
		})
	}
	work <- first
	for b := second; b != nil && err == nil; b, err = r.next() {
		all = append(all, b)
		work <- b
	}
	close(work)
	wg.Wait()
	if err != nil {
		return err
	}
	lines := 0
	for _, b := range all {
		lines += len(b.lines)
	}
	sized(lines)
	for _, b := range all {
		take(b)
	}
	return nil
}

// batchReader cuts a reader into batches of whole lines.
type batchReader struct {
	rd    io.Reader
	carry []byte // the start of a line cut by the previous read
	line  int    // number of the next batch's first line
	eof   bool
}

// next reads whole lines of about batchSize bytes (more when one line is
// longer); the last batch may end without a newline. nil at the end.
func (r *batchReader) next() (*batch, error) {
	if r.eof {
		return nil, nil
	}
	buf := make([]byte, len(r.carry), max(batchSize, 2*len(r.carry)))
	copy(buf, r.carry)
	r.carry = nil
	for {
		n, err := io.ReadFull(r.rd, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			r.eof = true
			if len(buf) == 0 {
				return nil, nil
			}
			return r.cut(buf, len(buf)), nil
		}
		if err != nil {
			return nil, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			r.carry = buf[i+1:]
			return r.cut(buf, i+1), nil
		}
		// One line longer than the buffer: grow it.
		grown := make([]byte, len(buf), 2*cap(buf))
		copy(grown, buf)
		buf = grown
	}
}

func (r *batchReader) cut(buf []byte, end int) *batch {
	b := &batch{data: buf[:end:end], firstLine: r.line}
	r.line += bytes.Count(b.data, []byte{'\n'})
	return b
}
