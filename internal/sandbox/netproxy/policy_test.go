package netproxy

import (
	"reflect"
	"strings"
	"testing"
)

func TestPolicyAllows(t *testing.T) {
	type probe struct {
		host string
		want bool
	}
	tests := []struct {
		name            string
		allowed, denied []string
		probes          []probe
	}{
		{
			name:    "an exact name matches itself only",
			allowed: []string{"example.com"},
			probes: []probe{
				{"example.com", true},
				{"api.example.com", false},
				{"example.org", false},
				{"notexample.com", false},
				{"example.com.evil.test", false},
			},
		},
		{
			name:    "a wildcard matches subdomains at any depth, not the domain itself",
			allowed: []string{"*.example.com"},
			probes: []probe{
				{"api.example.com", true},
				{"a.b.c.example.com", true},
				{"example.com", false},
				{"evilexample.com", false},
				{"example.com.evil.test", false},
				{"api.example.com.evil.test", false},
			},
		},
		{
			name:    "case and a trailing dot do not matter, in hosts or entries",
			allowed: []string{"Example.COM.", "*.Docs.Example.org"},
			probes: []probe{
				{"EXAMPLE.com", true},
				{"example.com.", true},
				{"API.docs.example.ORG.", true},
				{"example.com..", false},
			},
		},
		{
			name:    "denied beats allowed",
			allowed: []string{"*.example.com", "example.com"},
			denied:  []string{"secret.example.com", "*.internal.example.com"},
			probes: []probe{
				{"example.com", true},
				{"api.example.com", true},
				{"secret.example.com", false},
				{"SECRET.example.com.", false},
				{"db.internal.example.com", false},
				{"internal.example.com", true},
			},
		},
		{
			name:   "an empty allow list refuses everything",
			denied: []string{"evil.test"},
			probes: []probe{
				{"example.com", false},
				{"127.0.0.1", false},
				{"localhost", false},
			},
		},
		{
			name:    "IP literals match only when listed literally",
			allowed: []string{"127.0.0.1", "[::1]", "2001:db8::1", "*.example.com"},
			probes: []probe{
				{"127.0.0.1", true},
				{"::1", true},
				{"[::1]", true},
				{"2001:db8:0:0:0:0:0:1", true},
				{"[2001:DB8::1]", true},
				{"::ffff:127.0.0.1", true},
				{"127.0.0.2", false},
				{"::2", false},
				{"10.0.0.1", false},
			},
		},
		{
			name:    "an address in disguise is no host",
			allowed: []string{"127.0.0.1", "*.example.com"},
			probes: []probe{
				{"127.1", false},
				{"2130706433", false},
				{"0x7f.0.0.1", false},
				{"0177.0.0.1", false},
				{"1.example.com.2", false},
			},
		},
		{
			name:    "a denied address is denied in every spelling",
			allowed: []string{"::ffff:10.0.0.1", "10.0.0.2"},
			denied:  []string{"10.0.0.1"},
			probes: []probe{
				{"10.0.0.1", false},
				{"::ffff:10.0.0.1", false},
				{"[::ffff:10.0.0.1]", false},
				{"10.0.0.2", true},
			},
		},
		{
			name:    "what is not a bare host never matches",
			allowed: []string{"example.com", "::1"},
			probes: []probe{
				{"", false},
				{".", false},
				{"example.com:443", false},
				{"user@example.com", false},
				{"example.com/path", false},
				{"exa mple.com", false},
				{"example.com\x00.evil.test", false},
				{"[example.com]", false},
				{"[::1", false},
				{"fe80::1%eth0", false},
				{"[::1%25lo]", false},
				{".example.com", false},
				{"example..com", false},
			},
		},
		{
			name:    "names are compared in punycode",
			allowed: []string{"xn--bcher-kva.example"},
			probes: []probe{
				{"xn--bcher-kva.example", true},
				{"XN--BCHER-KVA.example", true},
				{"bücher.example", false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.allowed, tt.denied)
			if err != nil {
				t.Fatal(err)
			}
			var got []probe
			for _, pr := range tt.probes {
				got = append(got, probe{pr.host, p.Allows(pr.host)})
			}
			if !reflect.DeepEqual(got, tt.probes) {
				t.Errorf("Allows:\n got  %+v\n want %+v", got, tt.probes)
			}
		})
	}
}

func TestNewPolicyRejectsBadEntries(t *testing.T) {
	tests := []struct {
		entry, why string
	}{
		{"", "empty"},
		{"*", `"*" alone`},
		{"*.", "empty host"},
		{"api.*.example.com", `"*" may only start`},
		{"*example.com", `"*" may only start`},
		{"**.example.com", `"*" may only start`},
		{"example.com:443", "a port is not part of an entry"},
		{"https://example.com", "without a scheme"},
		{"10.0.0.0/8", "ranges"},
		{"example.com/api", "paths"},
		{"exa mple.com", `contains ' '`},
		{"bücher.example", "punycode"},
		{"*.10.0.0.1", "not an IP address"},
		{"127.1", "standard form"},
		{"2130706433", "standard form"},
		{"fe80::1%eth0", "zone"},
		{"[::1", "brackets"},
		{"[127.0.0.1]", "brackets"},
		{"example..com", "empty label"},
		{strings.Repeat("a", 64) + ".com", "longer than 63"},
		{strings.Repeat("abcdefgh.", 30) + "com", "longer than 253"},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			_, err := NewPolicy([]string{"ok.example"}, []string{tt.entry})
			if err == nil {
				t.Fatalf("NewPolicy accepted %q", tt.entry)
			}
			msg := err.Error()
			for _, want := range []string{"sandbox.network.deniedDomains", `"` + tt.entry + `"`, tt.why} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
		})
	}
}

func TestNewPolicyNamesEveryBadEntryAndItsList(t *testing.T) {
	_, err := NewPolicy([]string{"good.example", "bad:1", "*"}, []string{"x y"})
	if err == nil {
		t.Fatal("NewPolicy accepted bad entries")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		`sandbox.network.allowedDomains: entry "bad:1"`,
		`sandbox.network.allowedDomains: entry "*"`,
		`sandbox.network.deniedDomains: entry "x y"`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
}

func TestNewPolicyWritesEntriesInCanonicalForm(t *testing.T) {
	p, err := NewPolicy([]string{"API.Example.com.", "*.Example.ORG", "[2001:DB8::1]", "::ffff:10.1.2.3"}, []string{"Secret.Example.com"})
	if err != nil {
		t.Fatal(err)
	}
	want := &Policy{
		Allowed: []string{"api.example.com", "*.example.org", "2001:db8::1", "10.1.2.3"},
		Denied:  []string{"secret.example.com"},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("NewPolicy = %q, want %q", *p, *want)
	}
}

func TestPolicyLiteralFailsClosed(t *testing.T) {
	// A Policy written by hand skips NewPolicy's checks: a Denied entry it
	// cannot read must not let anything through.
	p := &Policy{Allowed: []string{"example.com", "bad entry"}, Denied: []string{"also bad:1"}}
	if p.Allows("example.com") {
		t.Error("a policy with an unreadable Denied entry allowed example.com")
	}
	p = &Policy{Allowed: []string{"bad entry", "example.com"}}
	if !p.Allows("example.com") {
		t.Error("an unreadable Allowed entry stopped a good one from matching")
	}
	if p.Allows("bad entry") {
		t.Error("an unreadable Allowed entry matched")
	}
	var nilPolicy *Policy
	if nilPolicy.Allows("example.com") {
		t.Error("a nil policy allowed a host")
	}
}
