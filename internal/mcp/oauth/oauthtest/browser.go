package oauthtest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/atomicfile"
)

// The modes of the browser.
const (
	// Follow follows every redirect to the client's callback, as a browser
	// whose user approves does.
	Follow = "follow"
	// ForgeState changes the state on the way to the callback, as a
	// forged callback would.
	ForgeState = "forge-state"
)

// helperArg marks the test binary run as the browser. The binary is also
// given -test.run=^$, so that one whose TestMain does not call HelperMain
// runs no test rather than every test again.
const helperArg = "oauthtest-browser"

// Browser returns a $BROWSER value that runs the test binary as a browser
// in mode, and the file where it writes the status and body of the
// callback's answer ("200 …") once done; the file is written whole, so
// one that exists is complete. The test's package must call HelperMain
// in its TestMain. When the test ends, it waits for every browser that
// started to be done, so that none is still writing in a removed folder.
func Browser(t testing.TB, mode string) (browser, statusFile string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("oauthtest: the test binary: %v", err)
	}
	if strings.ContainsAny(exe, ": ") {
		t.Fatalf("oauthtest: the test binary's path %q has a space or a colon, which $BROWSER cannot hold", exe)
	}
	status := filepath.Join(t.TempDir(), "browser-status")
	t.Cleanup(func() {
		started, _ := filepath.Glob(status + ".started.*")
		for _, s := range started {
			WaitFile(t, strings.Replace(s, ".started.", ".done.", 1))
		}
	})
	return fmt.Sprintf("%s -test.run=^$ %s %s %s", exe, helperArg, mode, status), status
}

// HelperMain runs the browser and exits when the process is one Browser
// started; otherwise it returns. Call it first in TestMain.
func HelperMain() {
	args := os.Args
	if len(args) == 6 && args[2] == helperArg {
		os.Exit(browse(args[3], args[4], args[5]))
	}
}

// browse follows the authorization server's redirects from u to the
// client's callback, and writes the callback's status and body to
// statusFile.
func browse(mode, statusFile, u string) int {
	pid := strconv.Itoa(os.Getpid())
	atomicfile.Write(statusFile+".started."+pid, nil, 0o600)
	defer atomicfile.Write(statusFile+".done."+pid, nil, 0o600)
	c := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for range 10 {
		resp, err := c.Get(u)
		if err != nil {
			atomicfile.Write(statusFile, []byte("error "+err.Error()), 0o600)
			return 1
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
			next, err := resp.Request.URL.Parse(loc)
			if err != nil {
				return 1
			}
			if mode == ForgeState && next.Path == "/callback" {
				q := next.Query()
				q.Set("state", "forged")
				next.RawQuery = q.Encode()
			}
			u = next.String()
			continue
		}
		atomicfile.Write(statusFile, fmt.Appendf(nil, "%d %s", resp.StatusCode, body), 0o600)
		if resp.StatusCode != 200 {
			return 1
		}
		return 0
	}
	return 1
}

// WaitFile returns the contents of path once it exists, for a file its
// writer writes whole (a temporary file renamed into place) and possibly
// after the code under test is done, as the browser writes its status. It
// fails the test after 10 seconds without it.
func WaitFile(t testing.TB, path string) []byte {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(path); err == nil {
			return data
		}
	}
	t.Errorf("%s was not written", path)
	return nil
}
