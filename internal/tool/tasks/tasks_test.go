package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

// call runs the named tool through a registry, validating input first as the
// engine does, and returns the result text and structured JSON.
func call(t *testing.T, env *tool.Env, name, input string) (string, string, error) {
	t.Helper()
	reg := tool.NewRegistry(Tools()...)
	tl, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	if err := reg.Validate(tl, json.RawMessage(input)); err != nil {
		return "", "", err
	}
	res, err := tl.Run(context.Background(), env, json.RawMessage(input))
	if err != nil {
		return "", "", err
	}
	structured, err := json.Marshal(res.Structured)
	if err != nil {
		t.Fatal(err)
	}
	return llm.TextOf(res.Content), string(structured), nil
}

func mustCall(t *testing.T, env *tool.Env, name, input string) (string, string) {
	t.Helper()
	text, structured, err := call(t, env, name, input)
	if err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
	return text, structured
}

func TestCreateUpdateListGet(t *testing.T) {
	env := &tool.Env{}
	text, structured := mustCall(t, env, "TaskCreate", `{"subject":"Write parser","description":"Parse the grammar","activeForm":"Writing parser","metadata":{"area":"lang"}}`)
	if text != "Task #1 created: Write parser" {
		t.Errorf("create text %q", text)
	}
	if want := `{"task":{"id":"1","subject":"Write parser","description":"Parse the grammar","activeForm":"Writing parser","status":"pending","blocks":[],"blockedBy":[],"metadata":{"area":"lang"}}}`; structured != want {
		t.Errorf("create structured\n got %s\nwant %s", structured, want)
	}
	mustCall(t, env, "TaskCreate", `{"subject":"Test parser","description":"Table tests"}`)

	text, structured = mustCall(t, env, "TaskUpdate", `{"taskId":"1","status":"in_progress","owner":"main","metadata":{"area":null,"pr":12}}`)
	if text != "Task #1 updated: status pending → in_progress, owner, metadata." {
		t.Errorf("update text %q", text)
	}
	for _, want := range []string{`"success":true`, `"updatedFields":["status","owner","metadata"]`, `"statusChange":{"from":"pending","to":"in_progress"}`, `"metadata":{"pr":12}`} {
		if !strings.Contains(structured, want) {
			t.Errorf("update structured %s lacks %s", structured, want)
		}
	}
	text, _ = mustCall(t, env, "TaskUpdate", `{"taskId":"1","owner":"main"}`)
	if text != "Task #1 unchanged." {
		t.Errorf("no-op update text %q", text)
	}

	text, structured = mustCall(t, env, "TaskList", `{}`)
	if want := "#1 [in_progress] Write parser (owner: main)\n#2 [pending] Test parser"; text != want {
		t.Errorf("list text\n got %q\nwant %q", text, want)
	}
	if !strings.HasPrefix(structured, `{"tasks":[{"id":"1"`) {
		t.Errorf("list structured %s", structured)
	}

	text, structured = mustCall(t, env, "TaskGet", `{"taskId":"2"}`)
	if want := "Task #2: Test parser\nStatus: pending\nDescription:\nTable tests"; text != want {
		t.Errorf("get text\n got %q\nwant %q", text, want)
	}
	if !strings.HasPrefix(structured, `{"task":{"id":"2","subject":"Test parser"`) {
		t.Errorf("get structured %s", structured)
	}
}

func TestBlockersAreSymmetric(t *testing.T) {
	env := &tool.Env{}
	for i := 1; i <= 4; i++ {
		mustCall(t, env, "TaskCreate", fmt.Sprintf(`{"subject":"T%d","description":""}`, i))
	}
	mustCall(t, env, "TaskUpdate", `{"taskId":"1","addBlocks":["2","3"]}`)
	text, _ := mustCall(t, env, "TaskUpdate", `{"taskId":"3","addBlockedBy":["2","1"]}`)
	if text != "Task #3 updated: blockedBy." {
		t.Errorf("text %q", text)
	}
	l := Of(env)
	byID := map[string]Task{}
	for _, task := range l.Snapshot() {
		byID[task.ID] = task
	}
	check := func(id string, blocks, blockedBy []string) {
		t.Helper()
		if got := byID[id]; !slices.Equal(got.Blocks, blocks) || !slices.Equal(got.BlockedBy, blockedBy) {
			t.Errorf("#%s blocks %v blockedBy %v, want %v %v", id, got.Blocks, got.BlockedBy, blocks, blockedBy)
		}
	}
	check("1", []string{"2", "3"}, []string{})
	check("2", []string{"3"}, []string{"1"})
	check("3", []string{}, []string{"1", "2"})

	text, _ = mustCall(t, env, "TaskList", `{}`)
	if !strings.Contains(text, "#3 [pending] T3 (blocked by #1, #2)") {
		t.Errorf("list does not show blockers:\n%s", text)
	}
	text, _ = mustCall(t, env, "TaskUpdate", `{"taskId":"1","status":"completed"}`)
	if text != "Task #1 updated: status pending → completed. Now unblocked: #2." {
		t.Errorf("complete text %q", text)
	}
	text, _ = mustCall(t, env, "TaskGet", `{"taskId":"3"}`)
	if !strings.Contains(text, "Blocked by: #1, #2 (still open: #2)") {
		t.Errorf("get text:\n%s", text)
	}

	// Cycles and self-references are refused and change nothing.
	for _, in := range []string{
		`{"taskId":"3","addBlocks":["1"]}`,
		`{"taskId":"1","addBlockedBy":["3"]}`,
		`{"taskId":"2","addBlocks":["2"]}`,
		`{"taskId":"4","addBlocks":["1"],"addBlockedBy":["9"]}`,
	} {
		if _, _, err := call(t, env, "TaskUpdate", in); !tool.IsInputError(err) {
			t.Errorf("%s: want input error, got %v", in, err)
		}
	}
	if got := l.Snapshot()[3]; len(got.Blocks)+len(got.BlockedBy) != 0 {
		t.Errorf("refused update changed #4: %+v", got)
	}
}

func TestDelete(t *testing.T) {
	env := &tool.Env{}
	mustCall(t, env, "TaskCreate", `{"subject":"A","description":""}`)
	mustCall(t, env, "TaskCreate", `{"subject":"B","description":""}`)
	mustCall(t, env, "TaskUpdate", `{"taskId":"2","addBlockedBy":["1"]}`)
	text, structured := mustCall(t, env, "TaskUpdate", `{"taskId":"1","status":"deleted"}`)
	if text != "Task #1 deleted." || !strings.Contains(structured, `"deleted":true`) {
		t.Errorf("delete: %q %s", text, structured)
	}
	all := Of(env).Snapshot()
	if len(all) != 1 || all[0].ID != "2" || len(all[0].BlockedBy) != 0 {
		t.Errorf("after delete: %+v", all)
	}
	if _, _, err := call(t, env, "TaskGet", `{"taskId":"1"}`); !errors.Is(err, ErrNotFound) {
		t.Errorf("get deleted task: %v", err)
	}
	text, _ = mustCall(t, env, "TaskCreate", `{"subject":"C","description":""}`)
	if text != "Task #3 created: C" {
		t.Errorf("ids must not be reused: %q", text)
	}
}

func TestBadInput(t *testing.T) {
	env := &tool.Env{}
	mustCall(t, env, "TaskCreate", `{"subject":"A","description":""}`)
	for _, c := range []struct{ name, input, want string }{
		{"TaskGet", `{"taskId":"7"}`, "no such task: #7"},
		{"TaskUpdate", `{"taskId":"7","status":"completed"}`, "no such task: #7"},
		{"TaskUpdate", `{"taskId":"1","status":"done"}`, "status"},
		{"TaskUpdate", `{"taskId":"1","addBlocks":"2"}`, "addBlocks"},
		{"TaskCreate", `{"subject":" ","description":""}`, "subject must not be empty"},
		{"TaskCreate", `{"subject":"x"}`, "description"},
		{"TaskList", `{"all":true}`, "all"},
	} {
		_, _, err := call(t, env, c.name, c.input)
		if !tool.IsInputError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: got %v, want input error mentioning %q", c.name, c.input, err, c.want)
		}
	}
}

func TestReadOnly(t *testing.T) {
	want := map[string]bool{"TaskCreate": false, "TaskUpdate": false, "TaskList": true, "TaskGet": true}
	for _, tl := range Tools() {
		if tl.ReadOnly(nil) != want[tl.Name()] {
			t.Errorf("%s ReadOnly = %v", tl.Name(), tl.ReadOnly(nil))
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	env := &tool.Env{}
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, _, err := call(t, env, "TaskCreate", fmt.Sprintf(`{"subject":"T%d","description":""}`, i))
			if err != nil {
				t.Error(err)
			}
			if i > 0 {
				// Tasks may not exist yet; only the absence of races matters.
				_, _, _ = call(t, env, "TaskUpdate", fmt.Sprintf(`{"taskId":"%d","addBlockedBy":["%d"],"status":"in_progress"}`, i+1, i))
			}
			_, _, _ = call(t, env, "TaskList", `{}`)
			_, _, _ = call(t, env, "TaskGet", `{"taskId":"1"}`)
			_ = Of(env).Snapshot()
		})
	}
	wg.Wait()
	all := Of(env).Snapshot()
	if len(all) != n {
		t.Fatalf("%d tasks, want %d", len(all), n)
	}
	for i, task := range all {
		if task.ID != strconv.Itoa(i+1) {
			t.Errorf("task %d has id %s", i, task.ID)
		}
	}
}

// approver is a tool.TaskApprover that refuses the tasks whose subject
// starts with "no", and records what it was asked.
type approver struct {
	mu    sync.Mutex
	asked []string
}

func (a *approver) decide(what string, task tool.TaskInfo) error {
	a.mu.Lock()
	a.asked = append(a.asked, fmt.Sprintf("%s #%s %s: %s", what, task.ID, task.Subject, task.Description))
	a.mu.Unlock()
	if strings.HasPrefix(task.Subject, "no") {
		return fmt.Errorf("%s of %q refused by policy", what, task.Subject)
	}
	return nil
}

func (a *approver) ApproveCreate(_ context.Context, task tool.TaskInfo) error {
	return a.decide("create", task)
}

func (a *approver) ApproveComplete(_ context.Context, task tool.TaskInfo) error {
	return a.decide("complete", task)
}

func TestApproverDecidesCreationAndCompletion(t *testing.T) {
	a := &approver{}
	env := &tool.Env{TaskApprover: a}
	mustCall(t, env, "TaskCreate", `{"subject":"Parse","description":"the grammar"}`)
	_, _, err := call(t, env, "TaskCreate", `{"subject":"no tests","description":"skip them"}`)
	if err == nil || tool.IsInputError(err) || err.Error() != `create of "no tests" refused by policy` {
		t.Fatalf("refused create: %v (input error: %v)", err, tool.IsInputError(err))
	}
	text, _ := mustCall(t, env, "TaskCreate", `{"subject":"Lex","description":"the tokens"}`)
	if text != "Task #3 created: Lex" {
		t.Errorf("after a refusal: %q (the refused task keeps its id)", text)
	}
	if text, _ := mustCall(t, env, "TaskList", `{}`); text != "#1 [pending] Parse\n#3 [pending] Lex" {
		t.Errorf("list %q", text)
	}

	// A completion whose new subject the approver refuses changes nothing,
	// not even the other fields of the same update.
	_, _, err = call(t, env, "TaskUpdate", `{"taskId":"1","status":"completed","subject":"no parse","owner":"me"}`)
	if err == nil || tool.IsInputError(err) || !strings.Contains(err.Error(), `"no parse" refused`) {
		t.Fatalf("refused completion: %v", err)
	}
	if got, _ := Of(env).Get("1"); got.Status != Pending || got.Subject != "Parse" || got.Owner != "" {
		t.Errorf("task after a refused completion: %+v", got)
	}
	mustCall(t, env, "TaskUpdate", `{"taskId":"1","status":"completed"}`)
	// Not asked again for a task already completed, for other changes, or
	// for an update that is invalid anyway.
	mustCall(t, env, "TaskUpdate", `{"taskId":"1","status":"completed"}`)
	mustCall(t, env, "TaskUpdate", `{"taskId":"3","status":"in_progress"}`)
	if _, _, err := call(t, env, "TaskUpdate", `{"taskId":"3","status":"completed","addBlocks":["3"]}`); !tool.IsInputError(err) {
		t.Errorf("self-block: %v", err)
	}
	want := []string{
		"create #1 Parse: the grammar",
		"create #2 no tests: skip them",
		"create #3 Lex: the tokens",
		"complete #1 no parse: the grammar",
		"complete #1 Parse: the grammar",
	}
	if !slices.Equal(a.asked, want) {
		t.Errorf("asked\n got %q\nwant %q", a.asked, want)
	}
}

func TestApprovedCreationsKeepIDOrder(t *testing.T) {
	// The first creation's approval ends last: the list is still in id order.
	release := make(chan struct{})
	first := make(chan struct{})
	env := &tool.Env{TaskApprover: slowFirst{first: first, release: release}}
	var wg sync.WaitGroup
	wg.Go(func() { mustCall(t, env, "TaskCreate", `{"subject":"one","description":""}`) })
	<-first
	mustCall(t, env, "TaskCreate", `{"subject":"two","description":""}`)
	close(release)
	wg.Wait()
	if text, _ := mustCall(t, env, "TaskList", `{}`); text != "#1 [pending] one\n#2 [pending] two" {
		t.Errorf("list %q", text)
	}
}

// slowFirst holds the approval of task #1 until release is closed.
type slowFirst struct{ first, release chan struct{} }

func (s slowFirst) ApproveCreate(_ context.Context, task tool.TaskInfo) error {
	if task.ID == "1" {
		close(s.first)
		<-s.release
	}
	return nil
}

func (slowFirst) ApproveComplete(context.Context, tool.TaskInfo) error { return nil }
