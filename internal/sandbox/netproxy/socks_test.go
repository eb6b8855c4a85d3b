package netproxy

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
)

func TestSOCKSWithGoClient(t *testing.T) {
	f := newFixture(t, []string{"allowed.test", "*.allowed.test", "denied.test"}, []string{"denied.test"})
	c := f.client("socks5h://" + f.socksAddr)
	for _, u := range []string{"http://allowed.test/socks", "https://api.allowed.test/socks"} {
		if status, body, err := get(c, u); err != nil || status != 200 || body != "hello from "+strings.SplitN(u, "/", 3)[2] {
			t.Errorf("GET %s through SOCKS = %d %q %v", u, status, body, err)
		}
	}
	for _, u := range []string{"http://denied.test/", "https://other.test/"} {
		_, _, err := get(c, u)
		if err == nil || !strings.Contains(err.Error(), "connection not allowed by ruleset") {
			t.Errorf("GET %s through SOCKS: err = %v, want the ruleset refusal", u, err)
		}
	}
	if got, want := f.log(&f.denied), []string{"denied.test:80", "other.test:443"}; !reflect.DeepEqual(got, want) {
		t.Errorf("OnDenied was told %q, want %q", got, want)
	}
	f.neverContacted("denied.test")
	f.neverContacted("other.test")
}

// socksRequest is a CONNECT request of address type atyp.
func socksRequest(cmd, atyp byte, addr []byte, port uint16) []byte {
	b := []byte{5, cmd, 0, atyp}
	if atyp == socksDomain {
		b = append(b, byte(len(addr)))
	}
	b = append(b, addr...)
	return binary.BigEndian.AppendUint16(b, port)
}

func TestSOCKSProtocol(t *testing.T) {
	f := newFixture(t, []string{"allowed.test", "10.1.2.3", "2001:db8::1"}, []string{"denied.test"})
	up := f.rawServer(7002)
	tests := []struct {
		name  string
		hello []byte // the method negotiation
		req   []byte // the request, when negotiation succeeds
		reply byte   // the reply code, or 0xff for a refused negotiation
	}{
		{"a domain name", []byte{5, 1, 0}, socksRequest(1, socksDomain, []byte("allowed.test"), 7002), socksSucceeded},
		{"a domain name in upper case with a trailing dot", []byte{5, 2, 2, 0}, socksRequest(1, socksDomain, []byte("ALLOWED.test."), 7002), socksSucceeded},
		{"a listed IPv4 address", []byte{5, 1, 0}, socksRequest(1, socksIPv4, []byte{10, 1, 2, 3}, 7002), socksSucceeded},
		{"a listed IPv6 address", []byte{5, 1, 0}, socksRequest(1, socksIPv6, net.ParseIP("2001:db8::1"), 7002), socksSucceeded},
		{"a listed IPv4 address sent as IPv6", []byte{5, 1, 0}, socksRequest(1, socksIPv6, net.ParseIP("10.1.2.3").To16(), 7002), socksSucceeded},
		{"a listed address sent as a name", []byte{5, 1, 0}, socksRequest(1, socksDomain, []byte("10.1.2.3"), 7002), socksSucceeded},
		{"a denied name", []byte{5, 1, 0}, socksRequest(1, socksDomain, []byte("denied.test"), 7002), socksNotAllowed},
		{"an unlisted address", []byte{5, 1, 0}, socksRequest(1, socksIPv4, []byte{127, 0, 0, 1}, 7002), socksNotAllowed},
		{"an address in disguise", []byte{5, 1, 0}, socksRequest(1, socksDomain, []byte("2130706433"), 7002), socksNotAllowed},
		{"an empty name", []byte{5, 1, 0}, socksRequest(1, socksDomain, nil, 7002), socksNotAllowed},
		{"a name with a port in it", []byte{5, 1, 0}, socksRequest(1, socksDomain, []byte("allowed.test:22"), 7002), socksNotAllowed},
		{"a name with a NUL in it", []byte{5, 1, 0}, socksRequest(1, socksDomain, []byte("allowed.test\x00.denied.test"), 7002), socksNotAllowed},
		{"BIND", []byte{5, 1, 0}, socksRequest(2, socksDomain, []byte("allowed.test"), 7002), socksCommandNotSupported},
		{"UDP ASSOCIATE", []byte{5, 1, 0}, socksRequest(3, socksIPv4, []byte{10, 1, 2, 3}, 7002), socksCommandNotSupported},
		{"an unknown address type", []byte{5, 1, 0}, []byte{5, 1, 0, 9}, socksAddressNotSupported},
		{"an allowed host with no server", []byte{5, 1, 0}, socksRequest(1, socksDomain, []byte("allowed.test"), 7999), socksHostUnreachable},
		{"only password authentication offered", []byte{5, 1, 2}, nil, socksNoAcceptable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.raw(f.socksAddr)
			c.send(string(tt.hello))
			var method [2]byte
			if _, err := io.ReadFull(c.br, method[:]); err != nil {
				t.Fatal(err)
			}
			if tt.reply == socksNoAcceptable {
				if method != [2]byte{5, socksNoAcceptable} || !c.closed() {
					t.Errorf("negotiation answered %v, want [5 255] and a close", method)
				}
				return
			}
			if method != [2]byte{5, socksNoAuth} {
				t.Fatalf("negotiation answered %v, want no authentication", method)
			}
			c.send(string(tt.req))
			var reply [4]byte // VER REP RSV ATYP, then the bound address
			if _, err := io.ReadFull(c.br, reply[:]); err != nil {
				t.Fatal(err)
			}
			if reply[0] != 5 || reply[1] != tt.reply {
				t.Fatalf("reply %v, want code %#x", reply, tt.reply)
			}
			n := map[byte]int{socksIPv4: 4 + 2, socksIPv6: 16 + 2}[reply[3]]
			if n == 0 {
				t.Fatalf("bound address of type %d", reply[3])
			}
			if _, err := io.ReadFull(c.br, make([]byte, n)); err != nil {
				t.Fatal(err)
			}
			if tt.reply != socksSucceeded {
				if !c.closed() {
					t.Error("the connection stayed open after a failure")
				}
				return
			}
			if line, err := c.br.ReadString('\n'); err != nil || line != "ready\n" {
				t.Fatalf("through the tunnel: %q, %v", line, err)
			}
			c.send("through " + tt.name)
			c.Conn.(*net.TCPConn).CloseWrite()
			if got := <-up.got; !bytes.Equal(got, []byte("through "+tt.name)) {
				t.Errorf("the host received %q", got)
			}
		})
	}
	f.neverContacted("denied.test")
	f.neverContacted("127.0.0.1")
	if got, want := f.log(&f.denied), []string{"denied.test:7002", "127.0.0.1:7002"}; !reflect.DeepEqual(got, want) {
		t.Errorf("OnDenied was told %q, want %q", got, want)
	}
}

func TestSOCKSRefusesAnotherVersion(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil)
	c := f.raw(f.socksAddr)
	c.send("\x04\x01\x00\x50\x7f\x00\x00\x01\x00") // a SOCKS4 CONNECT
	if !c.closed() {
		t.Error("a SOCKS4 request was not answered by closing")
	}
	if got := f.log(&f.dialed); len(got) != 0 {
		t.Errorf("the proxy dialed %q", got)
	}
}
