package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
)

// maxHeadBytes bounds a request's line and headers (the read buffer's size).
const maxHeadBytes = 64 << 10

const errHeadTooLarge = proxyError("tack sandbox proxy: request headers larger than 64 KiB")

// serveHTTP reads requests from c one after another, each judged on its own.
// It reads them with http.ReadRequest rather than serving c with an
// http.Server, which drops the Host header before a handler could compare
// it with the URL (see peekHostHeaders).
func (p *Proxy) serveHTTP(ctx context.Context, c net.Conn) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	br := bufio.NewReaderSize(c, maxHeadBytes)
	bw := bufio.NewWriter(c)
	for {
		hosts, err := peekHostHeaders(br)
		if err != nil {
			if errors.Is(err, errHeadTooLarge) {
				reply(bw, http.StatusRequestHeaderFieldsTooLarge, err.Error())
			}
			return
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			reply(bw, http.StatusBadRequest, "tack sandbox proxy: malformed request: "+err.Error())
			return
		}
		if req.Method == http.MethodConnect {
			p.connect(ctx, c, br, bw, req, hosts)
			return
		}
		if !p.forward(ctx, bw, req, hosts) {
			return
		}
	}
}

// connect serves a CONNECT request: a raw tunnel to the host:port it names.
func (p *Proxy) connect(ctx context.Context, c net.Conn, br *bufio.Reader, bw *bufio.Writer, req *http.Request, hosts []string) {
	d, err := connectTarget(req, hosts)
	if err != nil {
		reply(bw, http.StatusBadRequest, err.Error())
		return
	}
	up, err := p.open(ctx, d)
	if err != nil {
		if de, ok := p.refused(err); ok {
			reply(bw, http.StatusForbidden, de.Error())
		} else {
			reply(bw, http.StatusBadGateway, "tack sandbox proxy: "+err.Error())
		}
		return
	}
	if _, err := io.WriteString(bw, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || bw.Flush() != nil {
		p.release(up)
		return
	}
	p.tunnel(c, br, up)
}

// connectTarget is the destination of a CONNECT request: an authority with a
// port, no user information, the same as the Host header when there is one.
func connectTarget(req *http.Request, hosts []string) (dest, error) {
	if req.URL.Scheme != "" || req.URL.Path != "" || req.URL.User != nil || req.URL.RawQuery != "" {
		return dest{}, fmt.Errorf("tack sandbox proxy: CONNECT takes host:port, not %q", req.RequestURI)
	}
	d, err := parseHostPort(req.URL.Host, 0)
	if err != nil {
		return dest{}, err
	}
	return d, sameHost(d, hosts, 0)
}

// forward serves an absolute-URI request by sending it on to the host of its
// URL; it reports whether the client connection can carry another request.
func (p *Proxy) forward(ctx context.Context, bw *bufio.Writer, req *http.Request, hosts []string) bool {
	body := &requestBody{r: req.Body}
	// A client waiting for "100 Continue" sends no body unless it is told
	// to; otherwise the body is on its way, and reading some of it before
	// closing lets the client read the answer rather than a reset.
	refuse := func(status int, msg string) bool {
		if req.Header.Get("Expect") == "" {
			body.finish()
		}
		reply(bw, status, msg)
		return false
	}
	d, err := absoluteTarget(req, hosts)
	if err != nil {
		return refuse(http.StatusBadRequest, err.Error())
	}
	if err := p.check(d); err != nil {
		p.refused(err)
		return refuse(http.StatusForbidden, err.Error())
	}
	out, err := outgoing(ctx, req, bw)
	if err != nil {
		return refuse(http.StatusExpectationFailed, err.Error())
	}
	if out.Body != http.NoBody {
		out.Body = body
	}
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		body.finish()
		if de, ok := p.refused(err); ok {
			reply(bw, http.StatusForbidden, de.Error())
		} else {
			reply(bw, http.StatusBadGateway, fmt.Sprintf("tack sandbox proxy: forwarding to %s failed: %v", d, err))
		}
		return false
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		resp.Body.Close()
		body.finish()
		reply(bw, http.StatusBadGateway, "tack sandbox proxy: "+d.String()+" switched protocols, which only a CONNECT tunnel can carry")
		return false
	}
	keep := writeResponse(bw, req, resp)
	return body.finish() && keep
}

// requestBody is a client's request body as the transport reads it. The
// transport may go on reading it after the response (the upstream answered
// before the end of the body); finish stops that and reads what is left, up
// to a bound, so that the next request is read from where it starts.
type requestBody struct {
	mu    sync.Mutex
	r     io.Reader
	eof   bool
	ended bool // by finish: the transport reads no more
}

// maxDiscard bounds how much of a request body nobody reads is discarded
// before the connection is given up.
const maxDiscard = 256 << 10

const errBodyFinished = proxyError("the client's request is over")

func (b *requestBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.ended:
		return 0, errBodyFinished
	case b.eof:
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	b.eof = err == io.EOF
	return n, err
}

// Close leaves the rest of the body to finish: the transport closes a body
// it is done with, which must not mean reading all that the client sends.
func (b *requestBody) Close() error { return nil }

// finish ends the transport's reading and discards the rest of the body, up
// to maxDiscard; it reports whether the body ended.
func (b *requestBody) finish() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
	if !b.eof {
		_, err := io.CopyN(io.Discard, b.r, maxDiscard)
		b.eof = err == io.EOF
	}
	return b.eof
}

// absoluteTarget is the destination of an absolute-URI request: http or
// https, a host, and a Host header (if any) naming the same host and port.
func absoluteTarget(req *http.Request, hosts []string) (dest, error) {
	defaultPort := 0
	switch req.URL.Scheme {
	case "http":
		defaultPort = 80
	case "https":
		defaultPort = 443
	}
	if !req.URL.IsAbs() || req.URL.Opaque != "" || defaultPort == 0 {
		return dest{}, fmt.Errorf("tack sandbox proxy: only absolute http:// and https:// URLs and CONNECT are served, not %q", req.RequestURI)
	}
	d, err := parseHostPort(req.URL.Host, defaultPort)
	if err != nil {
		return dest{}, err
	}
	return d, sameHost(d, hosts, defaultPort)
}

// sameHost checks that the Host header, when present, names d.
func sameHost(d dest, hosts []string, defaultPort int) error {
	for _, h := range hosts {
		if hd, err := parseHostPort(h, defaultPort); err != nil || hd != d {
			return fmt.Errorf("tack sandbox proxy: the Host header %q does not name the request's host %s", h, d)
		}
	}
	return nil
}

// parseHostPort reads "host", "host:port", "[v6]" or "[v6]:port"; a missing
// port is defaultPort, or an error when that is 0.
func parseHostPort(hostport string, defaultPort int) (dest, error) {
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host, port = hostport[:i], hostport[i+1:]
		if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
			return dest{}, fmt.Errorf("tack sandbox proxy: %q: an IPv6 address must be in brackets", hostport)
		}
	}
	h, err := canonicalHost(host)
	if err != nil {
		return dest{}, fmt.Errorf("tack sandbox proxy: %w", err)
	}
	d := dest{host: h, port: defaultPort}
	if port != "" || defaultPort == 0 {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 || port[0] == '+' {
			return dest{}, fmt.Errorf("tack sandbox proxy: %q: a port from 1 to 65535 is needed", hostport)
		}
		d.port = int(n)
	}
	return d, nil
}

// outgoing is the request sent upstream: the client's, less its hop-by-hop
// headers and user information, with a Host header from the URL. A client
// expecting "100 Continue" gets it now: the request is allowed, so its body
// is welcome.
func outgoing(ctx context.Context, req *http.Request, bw *bufio.Writer) (*http.Request, error) {
	if expect := req.Header.Get("Expect"); expect != "" {
		if !strings.EqualFold(expect, "100-continue") {
			return nil, fmt.Errorf("tack sandbox proxy: unsupported Expect %q", expect)
		}
		io.WriteString(bw, "HTTP/1.1 100 Continue\r\n\r\n")
		bw.Flush()
	}
	out := req.Clone(ctx)
	out.RequestURI = ""
	out.URL.User = nil
	out.Host = ""
	out.Close = false
	out.TransferEncoding = nil
	removeHopHeaders(out.Header)
	out.Header.Del("Expect")
	return out, nil
}

// writeResponse sends resp to the client, framed for it; it reports whether
// the connection can carry another request.
func writeResponse(bw *bufio.Writer, req *http.Request, resp *http.Response) bool {
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	keep := !req.Close && req.ProtoAtLeast(1, 1)
	resp.TransferEncoding = nil
	switch {
	case req.Method == http.MethodHead:
	case resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified || resp.StatusCode < 200:
		resp.ContentLength = 0
		resp.Body.Close()
		resp.Body = http.NoBody
	case resp.ContentLength < 0 && keep:
		resp.TransferEncoding = []string{"chunked"}
	case resp.ContentLength < 0:
		keep = false
	}
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	resp.Close = !keep
	resp.Body = flushingBody{resp.Body, bw}
	// The writer hides bufio.Writer.ReadFrom, which would read the body into
	// the buffer that flushingBody flushes.
	if err := resp.Write(struct{ io.Writer }{bw}); err != nil {
		return false
	}
	return bw.Flush() == nil && keep
}

// flushingBody sends what was written so far before waiting for more of the
// upstream body, so that streamed responses reach the client as they come.
type flushingBody struct {
	io.ReadCloser
	bw *bufio.Writer
}

func (b flushingBody) Read(p []byte) (int, error) {
	if err := b.bw.Flush(); err != nil {
		return 0, err
	}
	return b.ReadCloser.Read(p)
}

// hopHeaders concern one connection, not the request passed on (RFC 9110
// §7.6.1).
var hopHeaders = [...]string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func removeHopHeaders(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = textproto.TrimString(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// reply answers with status and a one-line body, and asks the client to
// close: the connection is not used again.
func reply(bw *bufio.Writer, status int, msg string) {
	fmt.Fprintf(bw, "HTTP/1.1 %03d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		status, http.StatusText(status), len(msg)+1, msg)
	bw.Flush()
}

// peekHostHeaders returns the Host headers of the next request without
// consuming it: http.ReadRequest drops them, keeping only the URL's host,
// and a request whose Host header disagrees with its URL is refused. It
// returns io.EOF when the client closed between requests.
func peekHostHeaders(br *bufio.Reader) ([]string, error) {
	scanned := 0
	for {
		buf, _ := br.Peek(br.Buffered()) // what is buffered, without reading
		if end := headEnd(buf, scanned); end >= 0 {
			return headerValues(buf[:end], "Host"), nil
		}
		if len(buf) == br.Size() {
			return nil, errHeadTooLarge
		}
		scanned = max(len(buf)-2, 0)
		if _, err := br.Peek(len(buf) + 1); err != nil { // waits for more
			return nil, err
		}
	}
}

// headEnd returns the end of the blank line closing a request head in buf
// ("\n\n" or "\n\r\n"), looking from offset from on, or -1.
func headEnd(buf []byte, from int) int {
	for i := from; i < len(buf); i++ {
		if buf[i] != '\n' {
			continue
		}
		if j := i + 1; j < len(buf) && buf[j] == '\n' {
			return j + 1
		}
		if j := i + 2; j < len(buf) && buf[j-1] == '\r' && buf[j] == '\n' {
			return j + 1
		}
	}
	return -1
}

// headerValues reads the values of one header from a request head, with the
// parser http.ReadRequest uses, so both see the same headers.
func headerValues(head []byte, name string) []string {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	if _, err := tp.ReadLine(); err != nil {
		return nil
	}
	h, _ := tp.ReadMIMEHeader()
	return h.Values(name)
}
