package plan

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tackcode/tack/internal/tool"
)

type modes struct{ mode string }

func (m *modes) Mode() string              { return m.mode }
func (m *modes) SetMode(mode string) error { m.mode = mode; return nil }

func TestExitPlanMode(t *testing.T) {
	m := &modes{mode: "plan"}
	env := &tool.Env{Modes: m}
	res, err := Tools()[0].Run(context.Background(), env, json.RawMessage(`{"plan":"1. edit main.go"}`))
	if err != nil || m.mode != "default" || res.Structured.(exitResult).Plan != "1. edit main.go" {
		t.Fatalf("res %+v err %v mode %s", res, err, m.mode)
	}
	if _, err := Tools()[0].Run(context.Background(), env, json.RawMessage(`{"plan":"again"}`)); !tool.IsInputError(err) {
		t.Errorf("outside plan mode: %v", err)
	}
}
