package netproxy

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// TestCurl drives the proxy with curl, as a sandboxed command would.
func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed (apt-get install curl)")
	}
	f := newFixture(t, []string{"allowed.test", "*.allowed.test", "denied.test"}, []string{"denied.test"})
	httpProxy := []string{"--proxy", "http://" + f.httpAddr}
	socksProxy := []string{"--socks5-hostname", f.socksAddr}
	tests := []struct {
		name   string
		args   []string
		exit   int
		stdout string // with the status code on the last line
		stderr string // a part of it
	}{
		{"http allowed", append(httpProxy, "http://allowed.test/curl"), 0, "hello from allowed.test/curl\n200", ""},
		{"http denied", append(httpProxy, "http://denied.test/curl"), 0, refusal("denied.test", "deniedDomains") + "\n403", ""},
		{"http unlisted", append(httpProxy, "http://other.test/"), 0, refusal("other.test", "allowedDomains") + "\n403", ""},
		// -k: the test server's certificate is issued for example.com.
		{"https allowed", append(httpProxy, "-k", "https://api.allowed.test/tls"), 0, "hello from api.allowed.test/tls\n200", ""},
		{"https denied", append(httpProxy, "-k", "https://denied.test/"), 56, "\n000", "CONNECT tunnel failed, response 403"},
		{"socks allowed", append(socksProxy, "http://allowed.test/socks"), 0, "hello from allowed.test/socks\n200", ""},
		{"socks https allowed", append(socksProxy, "-k", "https://allowed.test/socks-tls"), 0, "hello from allowed.test/socks-tls\n200", ""},
		{"socks denied", append(socksProxy, "http://denied.test/"), 97, "\n000", "denied.test"},
		{"socks unlisted", append(socksProxy, "http://other.test/"), 97, "\n000", "other.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(curl, append([]string{"-sS", "--max-time", "20", "-w", "\n%{http_code}"}, tt.args...)...)
			// No proxy settings of the machine's: only the ones given.
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			exit := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if exit != tt.exit || stdout.String() != tt.stdout || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("curl %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
					strings.Join(tt.args, " "), exit, stdout.String(), stderr.String(), tt.exit, tt.stdout, tt.stderr)
			}
		})
	}
	want := []string{"denied.test:80", "other.test:80", "denied.test:443", "denied.test:80", "other.test:80"}
	if got := f.log(&f.denied); !reflect.DeepEqual(got, want) {
		t.Errorf("OnDenied was told %q, want %q", got, want)
	}
	f.neverContacted("denied.test")
	f.neverContacted("other.test")
}
