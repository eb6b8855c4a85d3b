package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// The official Agent SDK (test/sdk, @anthropic-ai/claude-agent-sdk) reads
// what tack writes, and rebuilds the same chain tack does.

type sdkInfo struct {
	SessionID    string `json:"sessionId"`
	Summary      string `json:"summary"`
	CustomTitle  string `json:"customTitle"`
	FirstPrompt  string `json:"firstPrompt"`
	GitBranch    string `json:"gitBranch"`
	Cwd          string `json:"cwd"`
	CreatedAt    int64  `json:"createdAt"`
	LastModified int64  `json:"lastModified"`
	FileSize     int64  `json:"fileSize"`
}

type sdkMessage struct {
	Type             string          `json:"type"`
	UUID             string          `json:"uuid"`
	SessionID        *string         `json:"session_id"`
	Message          json.RawMessage `json:"message"`
	ParentToolUseID  *string         `json:"parent_tool_use_id"`
	ParentAgentID    *string         `json:"parent_agent_id"`
	IsCompactSummary bool            `json:"isCompactSummary"`
}

type sdkOutput struct {
	Sessions []sdkInfo `json:"sessions"`
	ByID     map[string]struct {
		Info       *sdkInfo     `json:"info"`
		Messages   []sdkMessage `json:"messages"`
		WithSystem []sdkMessage `json:"withSystem"`
	} `json:"byId"`
}

// sdkRun runs test/sdk/read-session.mjs for the project cwd.
func sdkRun(t *testing.T, configDir, cwd string, ids ...string) sdkOutput {
	t.Helper()
	sdkDir, err := filepath.Abs(filepath.Join("..", "..", "test", "sdk"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; run scripts/test, which installs what the interop tests need")
	}
	if _, err := os.Stat(filepath.Join(sdkDir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "package.json")); err != nil {
		t.Fatal("test/sdk/node_modules is missing: run scripts/test (it runs `npm ci --omit=optional` in test/sdk)")
	}
	cmd := exec.Command(node, append([]string{filepath.Join(sdkDir, "read-session.mjs"), cwd}, ids...)...)
	cmd.Dir = sdkDir
	cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+configDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("read-session.mjs: %v\n%s", err, stderr.Bytes())
	}
	var res sdkOutput
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("read-session.mjs output: %v\n%s", err, out)
	}
	return res
}

// sdkProject makes a config dir and a project directory and returns them
// with the project's transcript directory.
func sdkProject(t *testing.T) (configDir, cwd, projectDir string) {
	configDir = t.TempDir()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return configDir
		}
		return ""
	}
	return configDir, cwd, ProjectDir(ConfigDir(env), cwd, env)
}

func TestSDKReadsTackTranscripts(t *testing.T) {
	configDir, cwd, dir := sdkProject(t)
	path := filepath.Join(dir, sid1+".jsonl")
	meta := Meta{SessionID: sid1, Cwd: cwd, Version: "0.1.0", GitBranch: "main", Entrypoint: "cli"}
	s := &script{t: t, w: NewWriter(path, meta, "")}
	s.w.now = clock()
	s.user(llm.Text("<system-reminder>\nContents of "+cwd+"/CLAUDE.md\n</system-reminder>"), llm.Text("List the files"))
	s.assistant("msg_1", llm.Text("I'll list them."), toolUse("toolu_1", "Bash", `{"command":"ls"}`))
	if err := s.w.Record(&protocol.User{UUID: "u-res", Message: llm.Message{Role: llm.RoleUser,
		Content: []llm.Block{llm.ToolResult("toolu_1", "a.txt\nb.txt", false)}}, ToolUseResult: map[string]any{"stdout": "a.txt\nb.txt"}}); err != nil {
		t.Fatal(err)
	}
	s.assistant("msg_2", llm.Text("There are two files."))
	s.sync()
	s.user(llm.Text("Now count them"))
	s.assistant("msg_3", llm.Text("2"))
	s.sync()
	if err := s.w.SetTitle("files-session"); err != nil {
		t.Fatal(err)
	}
	s.close()
	// A crash tore the next record.
	appendFile(t, path, `{"parentUuid":"a-0006","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"te`)

	wantUUIDs := []string{"u-0001", "a-0002", "a-0003", "u-res", "a-0004", "u-0005", "a-0006"}
	out := sdkRun(t, configDir, cwd, sid1)
	if len(out.Sessions) != 1 {
		t.Fatalf("listSessions: %+v", out.Sessions)
	}
	info := out.Sessions[0]
	if info.SessionID != sid1 || info.Summary != "files-session" || info.CustomTitle != "files-session" ||
		info.FirstPrompt != "List the files" || info.Cwd != cwd || info.GitBranch != "main" ||
		info.CreatedAt != time.Date(2026, 1, 2, 3, 4, 1, 0, time.UTC).UnixMilli() {
		t.Errorf("listSessions: %+v", info)
	}
	if got := out.ByID[sid1].Info; got == nil || *got != info {
		t.Errorf("getSessionInfo: %+v", got)
	}
	checkSDKMessages(t, out.ByID[sid1].Messages, sid1, wantUUIDs)
	// Messages come back exactly as written.
	tr := mustLoad(t, path)
	for i, m := range out.ByID[sid1].Messages {
		var rec struct {
			Message json.RawMessage `json:"message"`
		}
		line := findLine(t, path, m.UUID)
		json.Unmarshal(line, &rec)
		if !jsonEqual(rec.Message, m.Message) {
			t.Errorf("message %d: %s, wrote %s", i, m.Message, rec.Message)
		}
	}
	// tack agrees with the listing.
	list, err := List(dir)
	if err != nil || len(list) != 1 || list[0].Summary != info.Summary || list[0].FirstPrompt != info.FirstPrompt ||
		list[0].Cwd != info.Cwd || list[0].GitBranch != info.GitBranch || list[0].Created.UnixMilli() != info.CreatedAt ||
		list[0].Size != info.FileSize || abs(list[0].Modified.UnixMilli()-info.LastModified) > 1 {
		t.Errorf("List: %+v, SDK %+v (%v)", list, info, err)
	}

	// Resume: the torn line is cut, the chain goes on, the SDK sees it all.
	s.w = NewWriter(path, meta, tr.Leaf)
	s.w.now = clock()
	s.user(llm.Text("and sort them"))
	s.assistant("msg_4", llm.Text("a.txt, b.txt"))
	s.close()
	out = sdkRun(t, configDir, cwd, sid1)
	checkSDKMessages(t, out.ByID[sid1].Messages, sid1, append(wantUUIDs, "u-0007", "a-0008"))
	if out.Sessions[0].Summary != "files-session" {
		t.Errorf("summary after resume %q", out.Sessions[0].Summary)
	}

	// An offline rename, then a fork: both are seen.
	if err := SetName(dir, sid1, "renamed"); err != nil {
		t.Fatal(err)
	}
	fork, err := Fork(dir, sid1, sid3, "")
	if err != nil {
		t.Fatal(err)
	}
	out = sdkRun(t, configDir, cwd, sid1, sid3)
	if out.ByID[sid1].Info.Summary != "renamed" || out.ByID[sid3].Info.Summary != "renamed (fork)" {
		t.Errorf("summaries %q %q", out.ByID[sid1].Info.Summary, out.ByID[sid3].Info.Summary)
	}
	var forkUUIDs []string
	for _, e := range fork.Chain() {
		forkUUIDs = append(forkUUIDs, e.UUID)
	}
	checkSDKMessages(t, out.ByID[sid3].Messages, sid3, forkUUIDs)
}

func checkSDKMessages(t *testing.T, msgs []sdkMessage, sessionID string, want []string) {
	t.Helper()
	var got []string
	for _, m := range msgs {
		got = append(got, m.UUID)
		if m.SessionID == nil || *m.SessionID != sessionID || m.ParentToolUseID != nil || m.ParentAgentID != nil {
			t.Errorf("message %s: session_id %v parent_tool_use_id %v", m.UUID, m.SessionID, m.ParentToolUseID)
		}
		if (m.Type != "user" && m.Type != "assistant") || len(m.Message) == 0 {
			t.Errorf("message %s: type %s", m.UUID, m.Type)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("getSessionMessages uuids\n got %v\nwant %v", got, want)
	}
}

func findLine(t *testing.T, path, uuid string) []byte {
	data, _ := os.ReadFile(path)
	for _, l := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(l, []byte(`"uuid":"`+uuid+`"`)) {
			return l
		}
	}
	t.Fatalf("no line with uuid %s", uuid)
	return nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// TestSDKAgreesOnTheChain writes tricky transcripts (compaction, meta
// records, forks, parallel tool results, and hundreds of corrupted ones)
// and checks that tack's chain is the SDK's, record for record.
func TestSDKAgreesOnTheChain(t *testing.T) {
	configDir, cwd, dir := sdkProject(t)
	os.MkdirAll(dir, 0o700)
	files := map[string][]byte{}

	compacted := filepath.Join(dir, sid2+".jsonl")
	s := &script{t: t, w: NewWriter(compacted, Meta{SessionID: sid2, Cwd: cwd, Version: "0.1.0", Entrypoint: "cli"}, "")}
	s.w.now = clock()
	s.user(llm.Text("before"))
	s.assistant("msg_1", llm.Text("answer"))
	if err := s.w.RecordMeta("meta-1", llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("skill body")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.w.WriteCompactBoundary("Summary of before.", CompactMetadata{Trigger: "manual", PreTokens: 42}); err != nil {
		t.Fatal(err)
	}
	s.user(llm.Text("after"))
	s.assistant("msg_2", toolUse("t1", "Read", `{}`))
	s.close()
	files[sid2], _ = os.ReadFile(compacted)

	// Over 5 MiB the SDK reads only from the last compact boundary, which it
	// finds by looking for "compact_boundary" at the start of lines.
	big, _ := os.ReadFile(bigTranscript(t, t.TempDir(), 4500))
	if len(big) <= 5<<20 {
		t.Fatalf("only %d bytes", len(big))
	}
	bigPath := filepath.Join(dir, sid3+".jsonl")
	os.WriteFile(bigPath, big, 0o600)
	s = &script{t: t, w: NewWriter(bigPath, Meta{SessionID: sid3, Cwd: cwd, Version: "0.1.0"}, mustLoad(t, bigPath).Leaf), n: 90000}
	s.w.now = clock()
	if err := s.w.WriteCompactBoundary("Summary of a long session.", CompactMetadata{Trigger: "auto", PreTokens: 190000}); err != nil {
		t.Fatal(err)
	}
	s.user(llm.Text("go on"))
	s.assistant("msg_big", llm.Text("ok"))
	s.close()
	files[sid3], _ = os.ReadFile(bigPath)

	rng := rand.New(rand.NewPCG(3, 4))
	n := 0
	add := func(data []byte) {
		n++
		id := fmt.Sprintf("%08x-0000-4000-8000-000000000000", n)
		files[id] = data
		os.WriteFile(filepath.Join(dir, id+".jsonl"), data, 0o600)
	}
	for _, c := range corpus(t) {
		add(c)
		lines := strings.SplitAfter(string(c), "\n")
		for range 60 {
			mutated := append([]string(nil), lines...)
			j := rng.IntN(len(mutated))
			switch rng.IntN(5) {
			case 0:
				b := []byte(mutated[j])
				if len(b) > 0 {
					b[rng.IntN(len(b))] = "{}[]\",:0\\ \n"[rng.IntN(11)]
				}
				mutated[j] = string(b)
			case 1:
				mutated = append(mutated[:j], mutated[j+1:]...)
			case 2:
				mutated = append(mutated[:j+1], mutated[j:]...)
			case 3:
				k := rng.IntN(len(mutated))
				mutated[j], mutated[k] = mutated[k], mutated[j]
			case 4:
				mutated[j] = mutated[j][:rng.IntN(len(mutated[j])+1)]
			}
			add([]byte(strings.Join(mutated, "")))
		}
	}
	ids := make([]string, 0, len(files))
	for id := range files {
		ids = append(ids, id)
	}
	out := sdkRun(t, configDir, cwd, ids...)
	compared := 0
	for _, id := range ids {
		tr, err := loadFrom(bytes.NewReader(files[id]), id+".jsonl", false)
		if err != nil {
			t.Fatal(err)
		}
		var ours []string
		for _, e := range tr.Chain() {
			// What getSessionMessages leaves out of the chain it built.
			if e.IsMeta || e.Type == TypeAttachment || e.Type == TypeProgress || tr.graph.byUUID[e.UUID].sidechain || tr.graph.byUUID[e.UUID].teamName {
				continue
			}
			ours = append(ours, e.UUID)
		}
		var theirs []string
		for _, m := range out.ByID[id].WithSystem {
			theirs = append(theirs, m.UUID)
		}
		if strings.Join(ours, ",") != strings.Join(theirs, ",") {
			show := func(v any) string { return fmt.Sprintf("%.2000v", v) }
			t.Errorf("session %s: tack's chain %s, the SDK's %s\n%s", id, show(ours), show(theirs), show(string(files[id])))
		}
		compared++
	}
	for _, id := range []string{sid2, sid3} {
		if got := out.ByID[id].Messages; len(got) != 3 || !got[0].IsCompactSummary {
			t.Errorf("compacted session %s: %+v", id, got)
		}
	}
	t.Logf("%d transcripts compared", compared)
}
