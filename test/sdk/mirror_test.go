package sdk

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// mirrorRun is one query of mirror.mjs.
type mirrorRun struct {
	Messages []map[string]any `json:"messages"`
	Error    string           `json:"error"`
}

func (r mirrorRun) result() map[string]any {
	for _, m := range r.Messages {
		if m["type"] == "result" {
			return m
		}
	}
	return nil
}

// mirrorOutput is what mirror.mjs prints.
type mirrorOutput struct {
	Runs         []mirrorRun                 `json:"runs"`
	SessionID    string                      `json:"sessionId"`
	Transcript   string                      `json:"transcript"`
	FirstFile    []map[string]any            `json:"firstFile"`
	FirstEntries map[string][]map[string]any `json:"firstEntries"`
	Keys         []string                    `json:"keys"`
	Entries      map[string][]map[string]any `json:"entries"`
	Answers      []string                    `json:"answers"`
	AtResult     struct {
		Store []map[string]any `json:"store"`
		File  []map[string]any `json:"file"`
	} `json:"atResult"`
	Stderr []string `json:"stderr"`
}

func runMirror(t *testing.T, srv *llmtest.Server, scenario string) mirrorOutput {
	t.Helper()
	var out mirrorOutput
	runScript(t, srv, &out, nil, "mirror.mjs", scenario, tackBin, workDir(t))
	t.Logf("tack's stderr: %s", strings.Join(out.Stderr, ""))
	return out
}

// An SDK sessionStore gets every record of tack's transcript, as the file
// has it, and a subagent's under its own key; a session resumed from the
// store alone goes on where it was, and a fork of it is stored whole under
// its new id.
func TestSDKSessionStoreMirrorsTheTranscript(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("Running it."), llmtest.ToolUse("Bash", map[string]any{"command": "echo mirrored"})),
		llmtest.Reply(llmtest.ToolUse("Agent", map[string]any{"subagent_type": "general-purpose", "description": "check", "prompt": "SUB-PROMPT"})),
		llmtest.Reply(llmtest.Text("SUB-ANSWER")),
		llmtest.Reply(llmtest.Text("It said mirrored.")),
		llmtest.Reply(llmtest.Text("Again: mirrored.")),
		llmtest.Reply(llmtest.Text("Forked.")))
	out := runMirror(t, srv, "store")
	for i, r := range out.Runs {
		if res := r.result(); r.Error != "" || res == nil || res["subtype"] != "success" {
			t.Fatalf("run %d: error %q, result %v", i, r.Error, res)
		}
	}
	main := map[string]any{"projectKey": filepath.Base(filepath.Dir(out.Transcript)), "sessionId": out.SessionID}
	mainKey, _ := json.Marshal(main)
	if len(out.Keys) != 3 || out.Keys[0] != string(mainKey) {
		t.Fatalf("store keys %v, want %s, the subagent's and the fork's", out.Keys, mainKey)
	}
	var sub struct{ ProjectKey, SessionID, Subpath string }
	if err := json.Unmarshal([]byte(out.Keys[1]), &sub); err != nil || sub.SessionID != out.SessionID || !strings.HasPrefix(sub.Subpath, "subagents/agent-") {
		t.Fatalf("the subagent's key %s (%v)", out.Keys[1], err)
	}
	if got := string(mustJSON(t, out.Entries[out.Keys[1]])); !strings.Contains(got, "SUB-PROMPT") || !strings.Contains(got, "SUB-ANSWER") {
		t.Errorf("the subagent's entries %s", got)
	}
	// The first run: when its result came, the store held what the file
	// held; at its end, the store holds the file, record for record.
	if len(out.AtResult.File) < 4 || !reflect.DeepEqual(out.AtResult.Store, out.AtResult.File) {
		t.Errorf("at the result the store had %d entries, the file %d", len(out.AtResult.Store), len(out.AtResult.File))
	}
	first := out.FirstEntries[string(mainKey)]
	if len(out.FirstFile) < 4 || !reflect.DeepEqual(first, out.FirstFile) {
		t.Fatalf("the store's entries differ from the transcript file:\nstore %v\nfile  %v", first, out.FirstFile)
	}
	// The second run resumed from the store (its file was deleted): its
	// request carries the first conversation, and its records were
	// appended to the same key, chained to the first run's.
	var texts []string
	for _, m := range srv.Requests()[4].Messages {
		texts = append(texts, llm.TextOf(m.Content))
	}
	if got := strings.Join(texts, "|"); !strings.HasPrefix(got, "run it|Running it.|") || !strings.HasSuffix(got, "It said mirrored.|and again") {
		t.Errorf("the resumed request %q", got)
	}
	all := out.Entries[string(mainKey)]
	if len(all) <= len(first) || !reflect.DeepEqual(all[:len(first)], first) {
		t.Fatalf("after the resume the store holds %d entries, not the first run's %d and more", len(all), len(first))
	}
	var leaf string
	for _, e := range first {
		if id, ok := e["uuid"].(string); ok {
			leaf = id
		}
	}
	added := all[len(first):]
	var prompt map[string]any
	for _, e := range added {
		if e["type"] == "user" {
			prompt = e
			break
		}
	}
	if prompt == nil || prompt["parentUuid"] != leaf || !strings.Contains(string(mustJSON(t, prompt["message"])), "and again") {
		t.Errorf("the resumed prompt's record %v does not follow the first run's leaf %s", prompt, leaf)
	}
	if !strings.Contains(string(mustJSON(t, added)), "Again: mirrored.") {
		t.Errorf("the resumed answer is not in the store: %v", added)
	}
	// The fork: the kept conversation copied under the new id, then its
	// own turn.
	var fork struct{ ProjectKey, SessionID, Subpath string }
	if err := json.Unmarshal([]byte(out.Keys[2]), &fork); err != nil || fork.SessionID == out.SessionID || fork.Subpath != "" {
		t.Fatalf("the fork's key %s (%v)", out.Keys[2], err)
	}
	forked := out.Entries[out.Keys[2]]
	var copied, own int
	for _, e := range forked {
		if e["sessionId"] != fork.SessionID {
			t.Errorf("a fork entry of another session: %v", e)
		}
		if _, ok := e["forkedFrom"]; ok {
			copied++
		}
		if e["type"] == "user" && strings.Contains(string(mustJSON(t, e["message"])), "forked") {
			own++
		}
	}
	if copied < 4 || own != 1 || !strings.Contains(string(mustJSON(t, forked)), "Forked.") {
		t.Errorf("the fork's entries (%d copied, %d own prompts): %v", copied, own, forked)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// resumeDropsTurn: a truncation that would also discard a later prompt is
// refused with the result hosts match on; one that discards only the named
// turn goes on from the kept answer.
func TestSDKResumeDropsTurn(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.Text("first answer")),
		llmtest.Reply(llmtest.Text("second answer")),
		llmtest.Reply(llmtest.Text("third answer")),
		llmtest.Reply(llmtest.Text("fifth answer")))
	out := runMirror(t, srv, "drops")
	if len(out.Runs) != 3 || len(out.Answers) != 3 {
		t.Fatalf("runs %d, answers %v", len(out.Runs), out.Answers)
	}
	refused := out.Runs[1]
	res := refused.result()
	const prefix = "Resume rejected by --resume-drops-turn:"
	msg := refused.Error
	t.Logf("the refused resume: error %q, result %v", refused.Error, res)
	if res != nil {
		if res["subtype"] != "error_during_execution" || res["is_error"] != true {
			t.Errorf("the refusal's result %v", res)
		}
		errs, _ := res["errors"].([]any)
		if len(errs) == 1 {
			msg, _ = errs[0].(string)
		}
	}
	if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "33333333-3333-4333-8333-333333333333") {
		t.Errorf("the refused resume: result %v, error %q; want a message starting with %q naming the third prompt", res, refused.Error, prefix)
	}
	accepted := out.Runs[2]
	if r := accepted.result(); accepted.Error != "" || r == nil || r["result"] != "fifth answer" {
		t.Fatalf("the accepted resume: error %q, result %v", accepted.Error, r)
	}
	// Four model requests: the three prompts and the accepted resume, whose
	// conversation ends at the second answer.
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4 (the refused resume sends none)", len(reqs))
	}
	var texts []string
	for _, m := range reqs[3].Messages {
		texts = append(texts, llm.TextOf(m.Content))
	}
	if got := strings.Join(texts, "|"); !strings.HasSuffix(got, "one|first answer|two|second answer|five") {
		t.Errorf("the accepted resume's request %q", got)
	}
}
