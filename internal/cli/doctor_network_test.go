package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/transport/transporttest"
)

// clearNetworkEnv unsets every variable of the network setup for the test.
func clearNetworkEnv(t *testing.T) {
	for _, v := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
		"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "CLAUDE_CODE_CLIENT_CERT", "CLAUDE_CODE_CLIENT_KEY"} {
		t.Setenv(v, "")
	}
}

// The network lines name the proxy, the authorities and the client
// certificate in use, only those set; one from the settings' env counts.
func TestDoctorListsTheNetworkSetup(t *testing.T) {
	e := newCmdEnv(t)
	clearNetworkEnv(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-doctor-0123456789")
	out, _, _ := e.tack(t, "", "doctor")
	if strings.Contains(out, "network: ") {
		t.Errorf("nothing set, yet:\n%s", out)
	}
	ca := transporttest.NewCA(t, "corp-ca")
	cert, key := ca.Client("laptop")
	e.writeUserSettings(t, `{"env": {"HTTPS_PROXY": "http://127.0.0.1:9"}}`)
	t.Setenv("NO_PROXY", "localhost")
	t.Setenv("NODE_EXTRA_CA_CERTS", ca.CertFile)
	t.Setenv("CLAUDE_CODE_CLIENT_CERT", cert)
	t.Setenv("CLAUDE_CODE_CLIENT_KEY", key)
	out, _, _ = e.tack(t, "", "doctor")
	got := regexp.MustCompile(`(?m)^.*network: .*$`).FindAllString(out, -1)
	want := []string{
		"ok    network: proxy HTTPS_PROXY=http://127.0.0.1:9 (not for NO_PROXY=localhost)",
		"ok    network: certificate authorities of the system and NODE_EXTRA_CA_CERTS=" + ca.CertFile,
		"ok    network: client certificate CLAUDE_CODE_CLIENT_CERT=" + cert + ", key CLAUDE_CODE_CLIENT_KEY=" + key,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("network lines\n got %q\nwant %q", got, want)
	}
}

func TestDoctorFailsAnUnreadableCABundle(t *testing.T) {
	e := newCmdEnv(t)
	clearNetworkEnv(t)
	missing := filepath.Join(t.TempDir(), "corp.pem")
	t.Setenv("NODE_EXTRA_CA_CERTS", missing)
	out, _, code := e.tack(t, "", "doctor")
	line := doctorLine(t, out, "network")
	if code != 1 || !strings.HasPrefix(line, "fail  network: NODE_EXTRA_CA_CERTS: read the certificate authorities: open "+missing) {
		t.Errorf("exit %d: %q", code, line)
	}
}
