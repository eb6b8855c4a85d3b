package llm

import "io"

// EncodedBody is a request body as the segments it is made of: the bytes of
// the messages an earlier request sent stay where they lie, and only the new
// parts are in a buffer of this request (see EncodeCache). Its bytes must
// not be changed. Reader gives a fresh reader for each attempt, so a request
// can be sent again after a failure.
type EncodedBody struct {
	segs [][]byte
	size int
}

// Len is the body's size in bytes.
func (b *EncodedBody) Len() int { return b.size }

// Segments returns the body's segments, in order; they must not be changed.
func (b *EncodedBody) Segments() [][]byte { return b.segs }

// Bytes returns the body in one slice: a copy, unless it is one segment.
func (b *EncodedBody) Bytes() []byte {
	if len(b.segs) == 1 {
		return b.segs[0]
	}
	out := make([]byte, 0, b.size)
	for _, s := range b.segs {
		out = append(out, s...)
	}
	return out
}

// Reader returns a reader of the body from its start.
func (b *EncodedBody) Reader() io.Reader {
	return &bodyReader{segs: append([][]byte(nil), b.segs...)}
}

// bodyReader reads segments in turn; it owns its copy of the list.
type bodyReader struct{ segs [][]byte }

func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.segs) > 0 {
		c := copy(p[n:], r.segs[0])
		n += c
		if c == len(r.segs[0]) {
			r.segs = r.segs[1:]
		} else {
			r.segs[0] = r.segs[0][c:]
		}
	}
	if n == 0 && len(r.segs) == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo writes the rest of the body segment by segment, without a copy
// into an intermediate buffer.
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for len(r.segs) > 0 {
		c, err := w.Write(r.segs[0])
		n += int64(c)
		if err != nil {
			r.segs[0] = r.segs[0][c:]
			return n, err
		}
		r.segs = r.segs[1:]
	}
	return n, nil
}
