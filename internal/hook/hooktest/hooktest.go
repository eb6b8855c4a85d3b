// Package hooktest is what end-to-end hook tests share: settings that log
// every hook payload to a file, and a reader of that log that checks each
// payload against its event's published JSON Schema. Only tests import it;
// the tack binary does not link it.
//
// A typical test:
//
//	log := filepath.Join(t.TempDir(), "hooks.jsonl")
//	settings := map[string]any{"hooks": hooktest.LoggingHooks(log)}
//	// … run tack with settings …
//	got := hooktest.ReadLog(t, log)
//	if evs := hooktest.Events(got); !slices.Equal(evs, want) { … }
//	batch := hooktest.Only(got, hook.PostToolBatch)
package hooktest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/schema"
)

// logCommand appends its standard input, and a newline, to the log as ONE
// write on a file opened O_APPEND (dd reads all of stdin first with
// iflag=fullblock, and writes blocks of bs): hooks running in parallel
// never interleave their lines.
const logCommand = `{ cat; echo; } | dd of=%s oflag=append conv=notrunc iflag=fullblock bs=64M status=none`

// LoggingHooks returns a settings "hooks" value with, for each of events
// (every event when none is given), one command hook that appends its
// payload as one line to logPath. logPath must not contain a single quote.
func LoggingHooks(logPath string, events ...hook.Event) map[string]any {
	if strings.Contains(logPath, "'") {
		panic("hooktest.LoggingHooks: the log path may not contain a single quote: " + logPath)
	}
	if len(events) == 0 {
		events = hook.Events()
	}
	cmd := fmt.Sprintf(logCommand, "'"+logPath+"'")
	out := make(map[string]any, len(events))
	for _, ev := range events {
		out[string(ev)] = []any{map[string]any{
			"matcher": "",
			"hooks":   []any{map[string]any{"type": "command", "command": cmd}},
		}}
	}
	return out
}

// Payload is one logged hook payload.
type Payload struct {
	Event hook.Event
	// Fields is the payload decoded (numbers as float64, as encoding/json
	// decodes them into any).
	Fields map[string]any
	// Raw is the payload's bytes as the hook read them.
	Raw []byte
}

// String returns the string field key, or "" when it is absent or not a
// string.
func (p Payload) String(key string) string {
	s, _ := p.Fields[key].(string)
	return s
}

// Has reports whether the payload has the key.
func (p Payload) Has(key string) bool {
	_, ok := p.Fields[key]
	return ok
}

// Input decodes the payload as the hook package's input type of its event.
func (p Payload) Input() (hook.Input, error) { return hook.ParseInput(p.Raw) }

// ReadLog returns the payloads logged at logPath, in the order they were
// written (none when the file does not exist: no hook fired). It fails the
// test on a line that is not a JSON object, names no known event, or does
// not validate against its event's schema, naming the event and what is
// wrong.
func ReadLog(t testing.TB, logPath string) []Payload {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("hook log: %v", err)
	}
	var out []Payload
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 256<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		p, err := parse(line)
		if err != nil {
			t.Fatalf("%s:%d: %v\n%s", logPath, n, err, excerpt(line))
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("hook log %s: %v", logPath, err)
	}
	return out
}

// excerpt is the start of a line for a failure message: a payload may
// carry a whole file.
func excerpt(line []byte) string {
	const max = 400
	if len(line) <= max {
		return string(line)
	}
	return fmt.Sprintf("%s… (%d bytes)", line[:max], len(line))
}

// parse reads and validates one logged payload.
func parse(line []byte) (Payload, error) {
	p := Payload{Raw: bytes.Clone(line)}
	if err := json.Unmarshal(line, &p.Fields); err != nil {
		return p, fmt.Errorf("not a JSON object: %w", err)
	}
	p.Event = hook.Event(p.String("hook_event_name"))
	if err := Validate(line); err != nil {
		return p, err
	}
	return p, nil
}

// Validate checks payload against the input schema of its hook_event_name;
// the error names the event and every violation.
func Validate(payload []byte) error {
	var head struct {
		Event string `json:"hook_event_name"`
	}
	if err := json.Unmarshal(payload, &head); err != nil {
		return fmt.Errorf("not a hook payload: %w", err)
	}
	all, err := compiled()
	if err != nil {
		return err
	}
	s := all[head.Event+".input.json"]
	if s == nil {
		return fmt.Errorf("hook_event_name %q: no such event", head.Event)
	}
	if err := validate(s, payload); err != nil {
		return fmt.Errorf("%s payload does not match its schema: %w", head.Event, err)
	}
	return nil
}

// ValidateOutput checks a hook's JSON answer against output.json.
func ValidateOutput(output []byte) error {
	all, err := compiled()
	if err != nil {
		return err
	}
	if err := validate(all["output.json"], output); err != nil {
		return fmt.Errorf("hook output does not match its schema: %w", err)
	}
	return nil
}

func validate(s *jsonschema.Schema, doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(v)
}

// Schemas returns every published schema compiled, keyed by file name
// ("PreToolUse.input.json", "output.json"). They are compiled once per
// process.
func Schemas() (map[string]*jsonschema.Schema, error) { return compiled() }

var compiled = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	names, err := fs.Glob(schema.FS(), "*.json")
	if err != nil {
		return nil, fmt.Errorf("hook schemas: %w", err)
	}
	for _, name := range names {
		b, err := schema.FS().ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("hook schema %s: %w", name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("hook schema %s: %w", name, err)
		}
		if err := c.AddResource(schema.BaseURL+name, doc); err != nil {
			return nil, fmt.Errorf("hook schema %s: %w", name, err)
		}
	}
	out := make(map[string]*jsonschema.Schema, len(names))
	for _, name := range names {
		s, err := c.Compile(schema.BaseURL + name)
		if err != nil {
			return nil, fmt.Errorf("compile hook schema %s: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
})

// Only returns the payloads of event, in order.
func Only(payloads []Payload, event hook.Event) []Payload {
	var out []Payload
	for _, p := range payloads {
		if p.Event == event {
			out = append(out, p)
		}
	}
	return out
}

// Events returns the event of each payload, in order: what a test compares
// with the order it expects.
func Events(payloads []Payload) []hook.Event {
	out := make([]hook.Event, len(payloads))
	for i, p := range payloads {
		out[i] = p.Event
	}
	return out
}
