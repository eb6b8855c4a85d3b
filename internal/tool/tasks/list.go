// Package tasks is the session task list the model keeps to plan and track
// multi-step work: the TaskCreate, TaskUpdate, TaskList and TaskGet tools,
// and List, the list itself, which other parts of tack (the terminal UI)
// read through Of. Creating a task and marking one completed ask the
// session's tool.TaskApprover first (the TaskCreated and TaskCompleted
// hooks), which may refuse.
package tasks

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/tackcode/tack/internal/tool"
)

// Status is where a task stands.
type Status string

const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
)

// statusDeleted is the pseudo-status TaskUpdate accepts to remove a task.
const statusDeleted = "deleted"

// ErrNotFound is returned for an id that names no task of the list.
var ErrNotFound = errors.New("no such task")

// Task is one entry of the list. Blocks and BlockedBy are kept symmetric:
// when #1 blocks #2, #2 is blocked by #1.
type Task struct {
	ID          string         `json:"id"`
	Subject     string         `json:"subject"`
	Description string         `json:"description"`
	ActiveForm  string         `json:"activeForm,omitempty"`
	Status      Status         `json:"status"`
	Owner       string         `json:"owner,omitempty"`
	Blocks      []string       `json:"blocks"`
	BlockedBy   []string       `json:"blockedBy"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// clone returns a copy sharing nothing mutable with t. Metadata values are
// shared, which is safe because the list replaces them and never edits them.
func (t *Task) clone() Task {
	c := *t
	c.Blocks = slices.Clone(t.Blocks)
	c.BlockedBy = slices.Clone(t.BlockedBy)
	c.Metadata = maps.Clone(t.Metadata)
	if c.Blocks == nil {
		c.Blocks = []string{}
	}
	if c.BlockedBy == nil {
		c.BlockedBy = []string{}
	}
	return c
}

// List is one session's tasks, in creation order. It is safe for concurrent use.
type List struct {
	mu     sync.Mutex
	lastID int
	tasks  []*Task
}

// stateKey keys the session's List in tool.Env state.
type stateKey struct{}

// Of returns the task list of env's session, creating an empty one on first use.
func Of(env *tool.Env) *List {
	return env.State(stateKey{}, func() any { return &List{} }).(*List)
}

// Snapshot returns a copy of every task, in creation order.
func (l *List) Snapshot() []Task {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Task, len(l.tasks))
	for i, t := range l.tasks {
		out[i] = t.clone()
	}
	return out
}

// Get returns a copy of the task with id.
func (l *List) Get(id string) (Task, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.find(id)
	if t == nil {
		return Task{}, fmt.Errorf("%w: #%s", ErrNotFound, id)
	}
	return t.clone(), nil
}

// Create adds a pending task and returns it. Ids are "1", "2", … and are
// never reused, even after a deletion or a refusal. When approve is not
// nil it is asked first, with the task as it will be and without the list
// locked (a hook may take a while): an error from it, wrapped in a
// *RefusedError, refuses the task, which is then never in the list.
func (l *List) Create(subject, description, activeForm string, metadata map[string]any, approve func(Task) error) (Task, error) {
	l.mu.Lock()
	l.lastID++
	t := &Task{
		ID:          strconv.Itoa(l.lastID),
		Subject:     subject,
		Description: description,
		ActiveForm:  activeForm,
		Status:      Pending,
	}
	mergeMetadata(t, metadata)
	l.mu.Unlock()
	if approve != nil {
		if err := approve(t.clone()); err != nil {
			return Task{}, &RefusedError{Err: err}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// In id order, which is creation order, though another Create may have
	// been approved sooner.
	i := len(l.tasks)
	for i > 0 && idNumber(l.tasks[i-1].ID) > idNumber(t.ID) {
		i--
	}
	l.tasks = slices.Insert(l.tasks, i, t)
	return t.clone(), nil
}

// idNumber is the number of a task id ("12": 12).
func idNumber(id string) int {
	n, _ := strconv.Atoi(id)
	return n
}

// RefusedError is a change to the list that the approver given to Create
// or Update refused; Err is the approver's reason.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Patch is a change to one task. Nil and empty fields leave the task as it is.
type Patch struct {
	Subject     *string `json:"subject"`
	Description *string `json:"description"`
	ActiveForm  *string `json:"activeForm"`
	// Status is pending, in_progress, completed, or deleted to remove the task.
	Status *string `json:"status"`
	Owner  *string `json:"owner"`
	// AddBlocks names tasks that cannot start until this one is completed.
	AddBlocks []string `json:"addBlocks"`
	// AddBlockedBy names tasks that must be completed before this one.
	AddBlockedBy []string `json:"addBlockedBy"`
	// Metadata is merged into the task's; a nil value removes the key.
	Metadata map[string]any `json:"metadata"`
}

// Change is the outcome of an Update.
type Change struct {
	// Task is the task after the change, or as it was when it was deleted.
	Task    Task
	Deleted bool
	// Fields names what changed, by input property name.
	Fields []string
	// From is the status before the change, when the status changed.
	From Status
	// Unblocked lists pending tasks whose last open blocker this change completed.
	Unblocked []string
}

// Update applies p to the task with id. Nothing changes when p is invalid:
// an unknown id or status, a self-reference, or a blocker that would close a
// cycle (tasks waiting on each other could never start). When p marks a
// task completed that was not, approve (when not nil) is asked first, with
// the task as p would leave its subject and description, and without the
// list locked: an error from it, wrapped in a *RefusedError, refuses the
// whole change.
func (l *List) Update(id string, p Patch, approve func(Task) error) (Change, error) {
	if approve != nil && p.Status != nil && Status(*p.Status) == Completed {
		if err := l.approveCompletion(id, p, approve); err != nil {
			return Change{}, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.find(id)
	if t == nil {
		return Change{}, fmt.Errorf("%w: #%s", ErrNotFound, id)
	}
	if p.Status != nil && *p.Status == statusDeleted {
		l.remove(t)
		return Change{Task: t.clone(), Deleted: true, Fields: []string{"status"}}, nil
	}
	if err := l.check(t, p); err != nil {
		return Change{}, err
	}

	var ch Change
	set := func(field string, dst *string, src *string) {
		if src != nil && *src != *dst {
			*dst = *src
			ch.Fields = append(ch.Fields, field)
		}
	}
	set("subject", &t.Subject, p.Subject)
	set("description", &t.Description, p.Description)
	set("activeForm", &t.ActiveForm, p.ActiveForm)
	if p.Status != nil && Status(*p.Status) != t.Status {
		ch.From = t.Status
		t.Status = Status(*p.Status)
		ch.Fields = append(ch.Fields, "status")
		if t.Status == Completed {
			ch.Unblocked = l.unblockedBy(t)
		}
	}
	set("owner", &t.Owner, p.Owner)
	added := false
	for _, b := range p.AddBlocks {
		added = l.link(t, l.find(b)) || added
	}
	if added {
		ch.Fields = append(ch.Fields, "blocks")
	}
	added = false
	for _, b := range p.AddBlockedBy {
		added = l.link(l.find(b), t) || added
	}
	if added {
		ch.Fields = append(ch.Fields, "blockedBy")
	}
	if mergeMetadata(t, p.Metadata) {
		ch.Fields = append(ch.Fields, "metadata")
	}
	ch.Task = t.clone()
	return ch, nil
}

// approveCompletion asks approve whether p may complete the task with id;
// an invalid p is reported as Update would report it, before anyone is
// asked.
func (l *List) approveCompletion(id string, p Patch, approve func(Task) error) error {
	l.mu.Lock()
	t := l.find(id)
	if t == nil {
		l.mu.Unlock()
		return fmt.Errorf("%w: #%s", ErrNotFound, id)
	}
	if err := l.check(t, p); err != nil {
		l.mu.Unlock()
		return err
	}
	done := t.Status == Completed
	after := t.clone()
	l.mu.Unlock()
	if done {
		return nil
	}
	if p.Subject != nil {
		after.Subject = *p.Subject
	}
	if p.Description != nil {
		after.Description = *p.Description
	}
	if err := approve(after); err != nil {
		return &RefusedError{Err: err}
	}
	return nil
}

// check validates p against the list before anything is changed.
func (l *List) check(t *Task, p Patch) error {
	if p.Status != nil {
		switch Status(*p.Status) {
		case Pending, InProgress, Completed:
		default:
			return fmt.Errorf("unknown status %q (want pending, in_progress, completed or deleted)", *p.Status)
		}
	}
	edges := func(ids []string, blocks bool) error {
		for _, id := range ids {
			other := l.find(id)
			switch {
			case other == nil:
				return fmt.Errorf("%w: #%s", ErrNotFound, id)
			case other == t:
				return fmt.Errorf("task #%s cannot block itself", id)
			case blocks && l.waitsOn(t, other):
				return fmt.Errorf("#%s already waits on #%s; #%s blocking it would make a cycle", t.ID, id, t.ID)
			case !blocks && l.waitsOn(other, t):
				return fmt.Errorf("#%s already waits on #%s; making #%s wait on it would make a cycle", id, t.ID, t.ID)
			}
		}
		return nil
	}
	if err := edges(p.AddBlocks, true); err != nil {
		return err
	}
	return edges(p.AddBlockedBy, false)
}

// waitsOn reports whether a is blocked, directly or through other tasks, by b.
func (l *List) waitsOn(a, b *Task) bool {
	seen := map[*Task]bool{}
	stack := []*Task{a}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, id := range cur.BlockedBy {
			next := l.find(id)
			if next == b {
				return true
			}
			if next != nil && !seen[next] {
				seen[next] = true
				stack = append(stack, next)
			}
		}
	}
	return false
}

// link records that blocker blocks blocked, on both sides. It reports
// whether the link is new.
func (l *List) link(blocker, blocked *Task) bool {
	if slices.Contains(blocker.Blocks, blocked.ID) {
		return false
	}
	blocker.Blocks = append(blocker.Blocks, blocked.ID)
	blocked.BlockedBy = append(blocked.BlockedBy, blocker.ID)
	return true
}

// remove deletes t and every reference to it.
func (l *List) remove(t *Task) {
	l.tasks = slices.DeleteFunc(l.tasks, func(x *Task) bool { return x == t })
	for _, o := range l.tasks {
		o.Blocks = slices.DeleteFunc(o.Blocks, func(id string) bool { return id == t.ID })
		o.BlockedBy = slices.DeleteFunc(o.BlockedBy, func(id string) bool { return id == t.ID })
	}
}

// unblockedBy lists the pending tasks blocked by done that have no open
// blocker left.
func (l *List) unblockedBy(done *Task) []string {
	var out []string
	for _, id := range done.Blocks {
		if o := l.find(id); o != nil && o.Status == Pending && len(l.openBlockers(o)) == 0 {
			out = append(out, id)
		}
	}
	return out
}

// openBlockers lists the tasks blocking t that are not completed.
func (l *List) openBlockers(t *Task) []string {
	var out []string
	for _, id := range t.BlockedBy {
		if b := l.find(id); b != nil && b.Status != Completed {
			out = append(out, id)
		}
	}
	return out
}

// OpenBlockers returns the ids of the tasks blocking t that are not
// completed, looking them up in all (a Snapshot).
func OpenBlockers(all []Task, t Task) []string {
	var out []string
	for _, id := range t.BlockedBy {
		for _, b := range all {
			if b.ID == id && b.Status != Completed {
				out = append(out, id)
			}
		}
	}
	return out
}

func (l *List) find(id string) *Task {
	for _, t := range l.tasks {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// mergeMetadata merges m into t's metadata, removing keys whose value is nil,
// and reports whether m held anything.
func mergeMetadata(t *Task, m map[string]any) bool {
	if len(m) == 0 {
		return false
	}
	if t.Metadata == nil {
		t.Metadata = map[string]any{}
	}
	for k, v := range m {
		if v == nil {
			delete(t.Metadata, k)
		} else {
			t.Metadata[k] = v
		}
	}
	if len(t.Metadata) == 0 {
		t.Metadata = nil
	}
	return true
}
