package netproxy

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
)

// SOCKS5 wire values (RFC 1928).
const (
	socksVersion = 5

	socksNoAuth       = 0x00
	socksNoAcceptable = 0xff

	socksConnect = 0x01

	socksIPv4   = 0x01
	socksDomain = 0x03
	socksIPv6   = 0x04

	socksSucceeded           = 0x00
	socksGeneralFailure      = 0x01
	socksNotAllowed          = 0x02
	socksNetworkUnreachable  = 0x03
	socksHostUnreachable     = 0x04
	socksConnectionRefused   = 0x05
	socksCommandNotSupported = 0x07
	socksAddressNotSupported = 0x08
)

// serveSOCKS serves one SOCKS5 CONNECT: method negotiation (no
// authentication), the request, the reply, then a raw tunnel. Reads take
// exactly the bytes of each message, so nothing the client sends early is
// lost to a buffer before the tunnel.
//
// The protocol is small enough to read here, and the Go SOCKS5 server
// library at hand (armon/go-socks5) does not fit: it resolves a name before
// its rule check (a denied name would be looked up), takes no context, logs
// to stderr, and panics when a dialer returns other than a TCP connection.
func (p *Proxy) serveSOCKS(ctx context.Context, c net.Conn) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	var hello [2]byte // VER NMETHODS, then the methods
	if _, err := io.ReadFull(c, hello[:]); err != nil || hello[0] != socksVersion {
		return
	}
	methods := make([]byte, hello[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return
	}
	method := byte(socksNoAcceptable)
	for _, m := range methods {
		if m == socksNoAuth {
			method = socksNoAuth
		}
	}
	if _, err := c.Write([]byte{socksVersion, method}); err != nil || method != socksNoAuth {
		return
	}

	var req [4]byte // VER CMD RSV ATYP, then the address and port
	if _, err := io.ReadFull(c, req[:]); err != nil || req[0] != socksVersion {
		return
	}
	host, ok, err := readSOCKSAddr(c, req[3])
	if err != nil {
		return
	}
	if !ok {
		socksReply(c, socksAddressNotSupported, nil)
		return
	}
	var port [2]byte
	if _, err := io.ReadFull(c, port[:]); err != nil {
		return
	}
	if req[1] != socksConnect {
		socksReply(c, socksCommandNotSupported, nil)
		return
	}
	h, err := canonicalHost(host)
	if err != nil {
		socksReply(c, socksNotAllowed, nil)
		return
	}
	up, err := p.open(ctx, dest{host: h, port: int(binary.BigEndian.Uint16(port[:]))})
	if err != nil {
		socksReply(c, socksFailure(p, err), nil)
		return
	}
	if socksReply(c, socksSucceeded, up.LocalAddr()) != nil {
		p.release(up)
		return
	}
	p.tunnel(c, c, up)
}

// readSOCKSAddr reads a destination address of type atyp; ok is false for an
// unknown type, whose length cannot be known.
func readSOCKSAddr(r io.Reader, atyp byte) (host string, ok bool, err error) {
	var n int
	switch atyp {
	case socksIPv4:
		n = 4
	case socksIPv6:
		n = 16
	case socksDomain:
		var l [1]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return "", false, err
		}
		n = int(l[0])
	default:
		return "", false, nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", false, err
	}
	if atyp == socksDomain {
		return string(b), true, nil
	}
	ip, _ := netip.AddrFromSlice(b)
	return ip.String(), true, nil
}

// socksFailure is the reply code for a failed open, telling OnDenied of a
// refusal.
func socksFailure(p *Proxy, err error) byte {
	if _, ok := p.refused(err); ok {
		return socksNotAllowed
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return socksConnectionRefused
	case errors.Is(err, syscall.ENETUNREACH):
		return socksNetworkUnreachable
	case errors.Is(err, errClosed):
		return socksGeneralFailure
	}
	return socksHostUnreachable
}

// socksReply sends a reply with the bound address (zeros when there is
// none).
func socksReply(w io.Writer, code byte, bound net.Addr) error {
	ap := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	if a, ok := bound.(*net.TCPAddr); ok {
		ap = a.AddrPort()
	}
	ip := ap.Addr().Unmap()
	if !ip.IsValid() {
		ip = netip.IPv4Unspecified()
	}
	msg := []byte{socksVersion, code, 0, socksIPv4}
	if ip.Is6() {
		msg[3] = socksIPv6
	}
	msg = append(msg, ip.AsSlice()...)
	msg = binary.BigEndian.AppendUint16(msg, ap.Port())
	_, err := w.Write(msg)
	return err
}
