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
// tape, while the next ones are read. The caller takes the decoded lines
// in file order, each batch as soon as it and those before it are
// decoded, so that taking them in runs beside the decoding of the rest.
// Decoding is by far the largest part of a load.

// batchSize is how much of the file one batch reads.
const batchSize = 1 << 20

// batch is a run of whole lines and what they decode to.
type batch struct {
	data      []byte // the lines, in buf
	buf       []byte // the buffer read into, read into again once taken when reused
	firstLine int    // 1-based number of its first line
	lines     []decodedLine
}

// decodedLine is one non-blank line.
type decodedLine struct {
	line
	ok     bool   // a JSON object
	lineNo int    // 1-based
	raw    []byte // the line without surrounding whitespace, valid until its batch is reused
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

// batchSink is what decodeBatches gives the decoded batches to.
type batchSink struct {
	// size is the length of what is read, in bytes; 0 when not known.
	size int64
	// sized is told, before the first batch is taken, about how many
	// lines there are: a guess from the first batch and size.
	sized func(lines int)
	// take receives each batch, decoded, in file order.
	take func(*batch)
	// reuse says that take keeps no slice of a batch's data (its raw
	// lines), so that its buffer can be read into again.
	reuse bool
}

// readAhead is how many batches the reading runs ahead of the workers:
// one more is read while each decodes, and the next is read into the
// buffer of the first taken.
const readAhead = 1

// decodeBatches reads rd to the end and gives each batch, decoded, to
// sink.
func decodeBatches(rd io.Reader, sink batchSink) error {
	r := batchReader{rd: rd, line: 1}
	first, err := r.next()
	if err != nil || first == nil {
		return err
	}
	second, err := r.next()
	if err != nil {
		return err
	}
	taken := func(b *batch) {
		sink.take(b)
		if sink.reuse {
			r.reuse(b)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 8)
	if second == nil || workers == 1 {
		// One batch (most files) or one CPU: no goroutines.
		var d doc
		for b := first; b != nil; {
			b.decode(&d)
			if b == first {
				sink.sized(guessLines(first, sink.size))
			}
			taken(b)
			if b, second = second, nil; b == nil {
				if b, err = r.next(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	type job struct {
		b    *batch
		done chan struct{}
	}
	var (
		wg      sync.WaitGroup
		work    = make(chan *job, workers)
		pending []*job // read, not yet taken, in file order
	)
	for range workers {
		wg.Go(func() {
			var d doc
			for j := range work {
				j.b.decode(&d)
				close(j.done)
			}
		})
	}
	submit := func(b *batch) {
		j := &job{b: b, done: make(chan struct{})}
		pending = append(pending, j)
		work <- j
	}
	takeFirst := func() {
		j := pending[0]
		<-j.done
		if j.b == first {
			sink.sized(guessLines(first, sink.size))
		}
		taken(j.b)
		pending = pending[1:]
	}
	decoded := func(j *job) bool {
		select {
		case <-j.done:
			return true
		default:
			return false
		}
	}
	submit(first)
	submit(second)
	for {
		for len(pending) > 0 && decoded(pending[0]) {
			takeFirst()
		}
		if len(pending) >= workers+readAhead {
			takeFirst()
		}
		var b *batch
		if b, err = r.next(); err != nil || b == nil {
			break
		}
		submit(b)
	}
	close(work)
	if err == nil {
		for len(pending) > 0 {
			takeFirst()
		}
	}
	wg.Wait()
	return err
}

// guessLines is about how many lines a text of size bytes holds whose first
// batch is b: as many per byte as b.
func guessLines(b *batch, size int64) int {
	if size <= int64(len(b.data)) || len(b.data) == 0 {
		return len(b.lines)
	}
	return int(int64(len(b.lines)) * size / int64(len(b.data)))
}

// batchReader cuts a reader into batches of whole lines.
type batchReader struct {
	rd    io.Reader
	carry []byte // the start of a line cut by the previous read, in a buffer of its own
	line  int    // number of the next batch's first line
	eof   bool
	spare [][]byte // buffers of taken batches, to read into again
}

// next reads whole lines of about batchSize bytes (more when one line is
// longer); the last batch may end without a newline. nil at the end.
func (r *batchReader) next() (*batch, error) {
	if r.eof {
		return nil, nil
	}
	buf := r.buffer(max(batchSize, 2*len(r.carry)))
	buf = append(buf, r.carry...)
	r.carry = r.carry[:0]
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
			r.carry = append(r.carry, buf[i+1:]...)
			return r.cut(buf, i+1), nil
		}
		// One line longer than the buffer: grow it.
		grown := make([]byte, len(buf), 2*cap(buf))
		copy(grown, buf)
		buf = grown
	}
}

// buffer is an empty buffer of at least n bytes: a spare one when one is
// large enough.
func (r *batchReader) buffer(n int) []byte {
	for i, b := range r.spare {
		if cap(b) >= n {
			r.spare = append(r.spare[:i], r.spare[i+1:]...)
			return b[:0]
		}
	}
	return make([]byte, 0, n)
}

// reuse takes back the buffer of b, which has been taken: its lines' raw
// bytes go with it.
func (r *batchReader) reuse(b *batch) {
	for i := range b.lines {
		b.lines[i].raw = nil
	}
	r.spare = append(r.spare, b.buf)
	b.data, b.buf = nil, nil
}

func (r *batchReader) cut(buf []byte, end int) *batch {
	b := &batch{data: buf[:end:end], buf: buf, firstLine: r.line}
	r.line += bytes.Count(b.data, []byte{'\n'})
	return b
}
