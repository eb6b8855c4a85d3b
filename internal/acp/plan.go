package acp

import (
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"
)

// planTask is one task of the session's task list, as the plan shows it.
type planTask struct {
	id, subject, status string
}

// taskChange is what TaskCreate and TaskUpdate report in their
// structured results.
type taskChange struct {
	Task *struct {
		ID      string `json:"id"`
		Subject string `json:"subject"`
		Status  string `json:"status"`
	} `json:"task"`
	TaskID       string `json:"taskId"`
	Deleted      bool   `json:"deleted"`
	StatusChange *struct {
		To string `json:"to"`
	} `json:"statusChange"`
}

// trackPlan follows the task list through the calls that change it, and
// sends the plan each time it does.
func (s *session) trackPlan(call *toolCall, structured any) {
	if call.name != "TaskCreate" && call.name != "TaskUpdate" {
		return
	}
	raw, err := json.Marshal(structured)
	if err != nil {
		return
	}
	var ch taskChange
	if json.Unmarshal(raw, &ch) != nil {
		return
	}
	var in callInput
	_ = json.Unmarshal(call.input, &in)
	s.mu.Lock()
	switch {
	case call.name == "TaskCreate" && ch.Task != nil:
		s.plan = append(s.plan, planTask{id: ch.Task.ID, subject: ch.Task.Subject, status: ch.Task.Status})
	case call.name == "TaskUpdate":
		s.updateTask(ch, in)
	}
	entries := make([]sdk.PlanEntry, 0, len(s.plan))
	for _, t := range s.plan {
		entries = append(entries, sdk.PlanEntry{Content: t.subject, Priority: sdk.PlanEntryPriorityMedium, Status: planStatus(t.status)})
	}
	s.mu.Unlock()
	s.send(sdk.UpdatePlan(entries...))
}

// updateTask applies a TaskUpdate to the plan; s.mu is held.
func (s *session) updateTask(ch taskChange, in callInput) {
	id := ch.TaskID
	if id == "" {
		id = in.TaskID
	}
	for i := range s.plan {
		t := &s.plan[i]
		if t.id != id {
			continue
		}
		switch {
		case ch.Deleted:
			s.plan = append(s.plan[:i], s.plan[i+1:]...)
			return
		case ch.StatusChange != nil:
			t.status = ch.StatusChange.To
		}
		if in.Subject != "" {
			t.subject = in.Subject
		}
		return
	}
}

func planStatus(s string) sdk.PlanEntryStatus {
	switch s {
	case "in_progress":
		return sdk.PlanEntryStatusInProgress
	case "completed":
		return sdk.PlanEntryStatusCompleted
	}
	return sdk.PlanEntryStatusPending
}
