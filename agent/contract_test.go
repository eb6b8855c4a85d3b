package agent

// This file holds the SDK's hook, MCP and permission types equal to those of
// the layers below (hook, mcp, sandbox, session, runtime): like
// messages_test.go, an internal test that imports them on purpose.

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/runtime"
	"github.com/tackcode/tack/internal/sandbox"
	"github.com/tackcode/tack/internal/session"
)

// The SDK lists every event the hook package fires, in the same order: an
// event added there cannot be left out of the SDK.
func TestHookEventsAreTheEnginesEvents(t *testing.T) {
	var ours []string
	for _, e := range HookEvents() {
		ours = append(ours, string(e))
	}
	var theirs []string
	for _, e := range hook.Events() {
		theirs = append(theirs, string(e))
	}
	if !slices.Equal(ours, theirs) {
		t.Errorf("agent.HookEvents() = %v\nhook.Events()       = %v", ours, theirs)
	}
	// Each has a Hook… constant of its own name.
	consts := stringConstants(t, goFiles(t, "."), "Hook")
	for _, e := range theirs {
		if consts[e] != "Hook"+e {
			t.Errorf("event %s has no constant Hook%s (found %q)", e, e, consts[e])
		}
	}
}

// For every event, a payload with every field of the hook package's input
// type set is read by the SDK as its own input type for that event, which
// encodes back to the same JSON: no field is lost on the way to a callback.
func TestHookInputsAreTheEnginesInputs(t *testing.T) {
	for _, event := range hook.Events() {
		t.Run(string(event), func(t *testing.T) {
			empty, err := hook.ParseInput([]byte(`{"hook_event_name":"` + string(event) + `"}`))
			if err != nil {
				t.Fatal(err)
			}
			filled := reflect.New(reflect.TypeOf(empty)).Elem()
			fill(filled)
			in := filled.Interface().(hook.Input)
			payload, err := in.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			ours, err := ParseHookInput(payload)
			if err != nil {
				t.Fatal(err)
			}
			if string(ours.EventName()) != string(event) || ours.Common().HookEventName != HookEvent(event) {
				t.Errorf("read as %T for %s", ours, ours.EventName())
			}
			if want := strings.TrimSuffix(reflect.TypeOf(empty).Name(), "Input") + "HookInput"; reflect.TypeOf(ours).Elem().Name() != want {
				t.Errorf("read as %T, want %s", ours, want)
			}
			got, err := json.Marshal(ours)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, got, payload)

			// And the other way: every field of the SDK's type reaches the
			// hook package's, so the SDK has no field the engine lacks.
			full := reflect.New(reflect.TypeOf(ours).Elem())
			fill(full.Elem())
			full.Elem().FieldByName("BaseHookInput").FieldByName("HookEventName").SetString(string(event))
			sdk, err := json.Marshal(full.Interface())
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := hook.ParseInput(sdk)
			if err != nil {
				t.Fatal(err)
			}
			back, err := theirs.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, back, sdk)
		})
	}
}

// A callback's answer reaches the hook runner whole: every field of
// HookOutput set gives the runner's Output with the same JSON, and the
// runner's JSON reads back as the same HookOutput.
func TestHookOutputIsTheEnginesOutput(t *testing.T) {
	var out HookOutput
	fill(reflect.ValueOf(&out).Elem())
	got, err := json.Marshal(out.hook())
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, want)
	var full hook.Output
	fill(reflect.ValueOf(&full).Elem())
	theirs, _ := json.Marshal(full)
	var back HookOutput
	if err := json.Unmarshal(theirs, &back); err != nil {
		t.Fatal(err)
	}
	ours, _ := json.Marshal(back)
	sameJSON(t, ours, theirs)
}

// The SDK's copies of the types of mcp, sandbox, session and the runtime's
// constants hold the same fields, JSON and values.
func TestTypesAreTheRuntimes(t *testing.T) {
	for _, c := range []struct {
		ours, theirs any
	}{
		{&Elicitation{}, &mcp.ElicitationRequest{}},
		{&ElicitationAnswer{}, &mcp.ElicitationResult{}},
		{&MCPProgress{}, &mcp.Progress{}},
		{&SandboxSettings{}, &sandbox.Settings{}},
		{&SessionInfo{}, &session.Info{}},
	} {
		fill(reflect.ValueOf(c.theirs).Elem())
		theirs, _ := json.Marshal(c.theirs)
		if err := json.Unmarshal(theirs, c.ours); err != nil {
			t.Fatal(err)
		}
		ours, _ := json.Marshal(c.ours)
		if reflect.TypeOf(c.ours).Elem().NumField() != reflect.TypeOf(c.theirs).Elem().NumField() {
			t.Errorf("%T and %T have different fields", c.ours, c.theirs)
		}
		sameJSON(t, ours, theirs)
	}
	if mine := (&SandboxSettings{Enabled: true, Network: SandboxNetwork{AllowedDomains: []string{"x"}, HTTPProxyPort: 8}}).sandbox(); !mine.Enabled ||
		!slices.Equal(mine.Network.AllowedDomains, []string{"x"}) || mine.Network.HTTPProxyPort != 8 {
		t.Errorf("sandbox settings as the runtime's: %+v", mine)
	}
	if DefaultMCPStartupDeadline != runtime.DefaultMCPStartupDeadline || MaxStructuredOutputRetries != runtime.MaxStructuredRetries {
		t.Errorf("constants %v %v, the runtime's %v %v", DefaultMCPStartupDeadline, MaxStructuredOutputRetries,
			runtime.DefaultMCPStartupDeadline, runtime.MaxStructuredRetries)
	}
	if ErrNoCredentials.Error() != runtime.ErrNoCredentials.Error() {
		t.Errorf("ErrNoCredentials says %q, the runtime's %q", ErrNoCredentials, runtime.ErrNoCredentials)
	}
	if CheckHookMatcher("Bash|Read") != nil || CheckHookMatcher("(") == nil {
		t.Error("CheckHookMatcher does not check as the hook runner does")
	}
}

// fill sets every field reachable from v to a value that is not zero.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.String:
		v.SetString("s-" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(2.5)
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.SetBytes([]byte(`{"k":1}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		key := reflect.New(v.Type().Key()).Elem()
		fill(key)
		val := reflect.New(v.Type().Elem()).Elem()
		if val.Kind() == reflect.Interface {
			val.Set(reflect.ValueOf("v"))
		} else {
			fill(val)
		}
		v.SetMapIndex(key, val)
	}
}

// sameJSON fails unless a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !reflect.DeepEqual(x, y) {
		t.Errorf("JSON differs:\n ours   %s\n theirs %s", a, b)
	}
}
