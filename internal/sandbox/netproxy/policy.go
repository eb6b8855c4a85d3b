package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Policy is the sandbox's network allow-list in Claude Code's syntax (settings
// sandbox.network.allowedDomains / deniedDomains): "example.com" matches that
// host only, "*.example.com" its subdomains at any depth (not example.com
// itself). Denied wins over allowed. Hosts are compared case-insensitively,
// without a trailing dot; IP literals (v4 and v6, bracketed or not) match only
// when listed literally. Nothing matches when Allowed is empty.
//
// Every port of a matching host is allowed. Names are compared in ASCII:
// internationalised names are written in punycode ("xn--…"), as clients send
// them. Build a Policy with [NewPolicy], which checks the entries and writes
// them in canonical form; a Policy written as a literal works too, but a
// malformed Denied entry then makes it refuse everything, and a malformed
// Allowed entry matches nothing.
type Policy struct {
	Allowed, Denied []string
}

// NewPolicy returns the policy of the two lists, or an error naming every
// entry that is not a host name, a "*." wildcard or an IP address.
func NewPolicy(allowed, denied []string) (*Policy, error) {
	p := &Policy{}
	var errs []error
	for _, list := range []struct {
		setting string
		in      []string
		out     *[]string
	}{
		{"sandbox.network.allowedDomains", allowed, &p.Allowed},
		{"sandbox.network.deniedDomains", denied, &p.Denied},
	} {
		for _, entry := range list.in {
			pt, err := parsePattern(entry)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: entry %q: %w", list.setting, entry, err))
				continue
			}
			*list.out = append(*list.out, pt.String())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// Allows reports whether the policy lets a sandboxed command reach host (a
// name or an IP address, without a port).
func (p *Policy) Allows(host string) bool {
	h, err := canonicalHost(host)
	return err == nil && p.verdict(h) == allowed
}

// verdict is the policy's answer for one host.
type verdict int

const (
	allowed    verdict = iota
	notListed          // matches no Allowed entry
	listDenied         // matches a Denied entry (or Denied cannot be read)
)

// setting names the setting a refusal comes from.
func (v verdict) setting() string {
	if v == listDenied {
		return "sandbox.network.deniedDomains"
	}
	return "sandbox.network.allowedDomains"
}

// verdict judges h, a host in canonicalHost's form.
func (p *Policy) verdict(h string) verdict {
	if p == nil {
		return notListed
	}
	ip, _ := netip.ParseAddr(h)
	for _, entry := range p.Denied {
		pt, err := parsePattern(entry)
		if err != nil || pt.matches(h, ip) {
			return listDenied
		}
	}
	for _, entry := range p.Allowed {
		if pt, err := parsePattern(entry); err == nil && pt.matches(h, ip) {
			return allowed
		}
	}
	return notListed
}

// deniesIP reports whether a Denied entry names ip: the check made on the
// address a name resolved to, so that an allowed name cannot lead to a denied
// address.
func (p *Policy) deniesIP(ip netip.Addr) bool {
	return p.verdict(ip.Unmap().String()) == listDenied
}

// pattern is one parsed entry of a list.
type pattern struct {
	ip       netip.Addr // an IP literal, or
	name     string     // a host name (the part after "*." for a wildcard)
	wildcard bool
}

func (pt pattern) String() string {
	switch {
	case pt.ip.IsValid():
		return pt.ip.String()
	case pt.wildcard:
		return "*." + pt.name
	}
	return pt.name
}

// matches reports whether the entry covers host h (canonical), whose address
// is ip when h is an IP literal.
func (pt pattern) matches(h string, ip netip.Addr) bool {
	switch {
	case pt.ip.IsValid():
		return ip.IsValid() && ip == pt.ip
	case ip.IsValid():
		return false
	case pt.wildcard:
		return strings.HasSuffix(h, "."+pt.name)
	}
	return h == pt.name
}

// parsePattern reads one entry of allowedDomains or deniedDomains.
func parsePattern(entry string) (pattern, error) {
	switch {
	case entry == "":
		return pattern{}, errors.New("an empty entry matches nothing")
	case entry == "*":
		return pattern{}, errors.New(`"*" alone is not a pattern: list the hosts, or "*.example.com" for the subdomains of one`)
	case strings.Contains(entry, "://"):
		return pattern{}, errors.New("give the host alone, without a scheme")
	case strings.Contains(entry, "/"):
		return pattern{}, errors.New("address ranges and paths are not supported: list each host or address")
	}
	name, wildcard := strings.CutPrefix(entry, "*.")
	if strings.Contains(name, "*") {
		return pattern{}, errors.New(`"*" may only start an entry, as in "*.example.com"`)
	}
	h, err := canonicalHost(name)
	if err != nil {
		if !wildcard && strings.Count(entry, ":") == 1 {
			return pattern{}, errors.New("a port is not part of an entry: every port of a listed host is allowed")
		}
		return pattern{}, err
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if wildcard {
			return pattern{}, errors.New(`"*." can only precede a domain name, not an IP address`)
		}
		return pattern{ip: ip}, nil
	}
	return pattern{name: h, wildcard: wildcard}, nil
}

// canonicalHost returns host as the policy compares it, or an error saying
// why it is not a host: IP addresses (v4, v6 with or without brackets, v4
// mapped into v6 taken as v4) in their canonical form, names in lower case
// without a trailing dot. A name must be ASCII letters, digits, '-' and '_'
// in dot-separated labels of at most 63 bytes (253 in all), and its last
// label cannot be all digits: "127.1" or "2130706433" are addresses in
// disguise, which resolvers read as 127.0.0.1.
func canonicalHost(host string) (string, error) {
	if host == "" {
		return "", errors.New("empty host")
	}
	if inner, ok := strings.CutPrefix(host, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		ip, err := netip.ParseAddr(inner)
		if !ok || err != nil || !ip.Is6() {
			return "", fmt.Errorf("%q is not an IPv6 address in brackets", host)
		}
		return canonicalIP(host, ip)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return canonicalIP(host, ip)
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if len(name) > 253 {
		return "", fmt.Errorf("host name %.40q… is longer than 253 bytes", host)
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if label == "" {
			return "", fmt.Errorf("host name %q has an empty label", host)
		}
		if len(label) > 63 {
			return "", fmt.Errorf("host name %q has a label longer than 63 bytes", host)
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; c >= 0x80 {
				return "", fmt.Errorf("host name %q is not ASCII: write it in punycode (xn--…)", host)
			} else if !isNameByte(c) {
				return "", fmt.Errorf("host name %q contains %q", host, c)
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "", fmt.Errorf("%q is neither a host name nor an IP address in standard form", host)
	}
	return name, nil
}

// canonicalIP refuses zoned addresses, which name an interface rather than
// a host, and writes v4-mapped v6 addresses as v4.
func canonicalIP(host string, ip netip.Addr) (string, error) {
	if ip.Zone() != "" {
		return "", fmt.Errorf("%q has a zone: name the address without one", host)
	}
	return ip.Unmap().String(), nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}
