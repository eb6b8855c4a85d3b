package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// mainIn runs the command in-process with the environment the test set.
func mainIn(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

// frames splits stream-json output into its transcript_mirror frames'
// entries and the other messages.
func frames(t *testing.T, out string) (mirrored []map[string]any, paths []string, msgs []map[string]any) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if m["type"] != "transcript_mirror" {
			msgs = append(msgs, m)
			continue
		}
		paths = append(paths, m["filePath"].(string))
		for _, e := range m["entries"].([]any) {
			mirrored = append(mirrored, e.(map[string]any))
		}
	}
	return mirrored, paths, msgs
}

func fileRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// Print mode with --session-mirror: the frames carry the transcript, record
// for record; a resume that --resume-drops-turn refuses is an
// error_during_execution result and exit 1, and sends no request; without
// stream-json output the flag is a usage error.
func TestPrintSessionMirrorAndResumeDropsTurn(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("first")), llmtest.Reply(llmtest.Text("second")))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Chdir(t.TempDir())
	out, errOut, code := mainIn("-p", "one", "--output-format", "stream-json", "--verbose", "--session-mirror", "--session-id", "aaaaaaaa-1111-4111-8111-111111111111")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mirrored, paths, _ := frames(t, out)
	if len(paths) == 0 || filepath.Base(paths[0]) != "aaaaaaaa-1111-4111-8111-111111111111.jsonl" {
		t.Fatalf("mirror frames for %v", paths)
	}
	recs := fileRecords(t, paths[0])
	if len(recs) < 2 || !reflect.DeepEqual(mirrored, recs) {
		t.Fatalf("mirrored %v\nfile %v", mirrored, recs)
	}
	// The first prompt's record is the one turn; resuming at nothing
	// before it while naming another turn is refused.
	first, _ := recs[0]["uuid"].(string)
	out, _, code = mainIn("-p", "two", "--output-format", "stream-json", "--verbose", "--resume", "aaaaaaaa-1111-4111-8111-111111111111",
		"--resume-session-at", first, "--resume-drops-turn", "bbbbbbbb-1111-4111-8111-111111111111")
	_, _, msgs := frames(t, out)
	if code != 1 || len(msgs) != 1 || msgs[0]["subtype"] != "error_during_execution" ||
		!strings.HasPrefix(msgs[0]["errors"].([]any)[0].(string), "Resume rejected by --resume-drops-turn:") {
		t.Fatalf("exit %d, messages %v", code, msgs)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: the refused resume asked the model", n)
	}
	if _, errOut, code := mainIn("-p", "x", "--session-mirror"); code == 0 || !strings.Contains(errOut, "--session-mirror needs --output-format stream-json") {
		t.Errorf("text output with --session-mirror: exit %d, %s", code, errOut)
	}
}
