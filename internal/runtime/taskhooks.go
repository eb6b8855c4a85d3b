package runtime

import (
	"context"
	"fmt"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/tool"
)

// taskHooks is the thread's tool.TaskApprover: the task-list tools ask the
// TaskCreated hooks before a task is added and the TaskCompleted hooks
// before one is marked completed. A block (exit code 2, decision "block")
// refuses the change and its reason is the tool's error, which the model
// reads. continue:false, which in Claude Code stops the teammate that made
// the change, refuses it too and shows the stop reason to the user: tack
// has no teammates, and a tool cannot end the run it is part of.
type taskHooks struct{ t *thread }

func (h taskHooks) ApproveCreate(ctx context.Context, task tool.TaskInfo) error {
	return h.t.approveTask(ctx, hook.TaskCreated, "creating", task, func(b hook.Base) hook.Input {
		return &hook.TaskCreatedInput{Base: b, TaskID: task.ID, TaskSubject: task.Subject, TaskDescription: task.Description}
	})
}

func (h taskHooks) ApproveComplete(ctx context.Context, task tool.TaskInfo) error {
	return h.t.approveTask(ctx, hook.TaskCompleted, "completing", task, func(b hook.Base) hook.Input {
		return &hook.TaskCompletedInput{Base: b, TaskID: task.ID, TaskSubject: task.Subject, TaskDescription: task.Description}
	})
}

// approveTask runs the hooks of ev on the payload payload makes, and
// returns the refusal the tool reports, if any.
func (t *thread) approveTask(ctx context.Context, ev hook.Event, doing string, task tool.TaskInfo, payload func(hook.Base) hook.Input) error {
	if t.hooks == nil || !t.hooks.Has(ev) {
		return nil
	}
	out := t.hooks.Run(ctx, payload(t.hookBase()))
	for _, m := range append(out.SystemMessages, out.Errors...) {
		t.s.notify(m)
	}
	what := fmt.Sprintf("%s task #%s (%q)", doing, task.ID, task.Subject)
	switch {
	case out.Block:
		return fmt.Errorf("%s hook blocked %s: %s", ev, what, out.Reason)
	case out.Stop:
		reason := out.StopReason
		if reason == "" {
			reason = "no reason given"
		}
		t.s.notify(fmt.Sprintf("%s hook stopped %s: %s", ev, what, reason))
		return fmt.Errorf("%s hook stopped %s: %s", ev, what, reason)
	}
	return nil
}
