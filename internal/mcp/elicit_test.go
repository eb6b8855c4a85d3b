package mcp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/tool"
)

// elicitLog records who was asked what about an elicitation.
type elicitLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *elicitLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, fmt.Sprintf(format, args...))
}

func (l *elicitLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// TestElicitationSeams runs server-everything's trigger-elicitation-request
// with the seams the session's hooks plug into: BeforeElicit answering in
// the user's place, AfterElicit seeing every answer (a hook's, the user's,
// the decline for want of a user) and changing it before it goes to the
// server.
func TestElicitationSeams(t *testing.T) {
	js := everythingJS(t)
	ada := map[string]any{"name": "Ada Lovelace", "check": true}
	for _, c := range []struct {
		name string
		// before answers when it returns an action; user is Elicit's
		// answer, "" for no Elicit; after replaces the answer when it
		// returns an action.
		before, user, after string
		// want is in the tool's result; seen is what the seams were told.
		want string
		seen []string
		// declined: the notice that nobody could be asked.
		declined bool
	}{
		{name: "answered before the user is asked", before: "accept", user: "cancel",
			want: "- Name: Ada Lovelace", seen: []string{"before everything form", "after accept"}},
		{name: "the user answers", user: "cancel",
			want: "cancelled", seen: []string{"before everything form", "user", "after cancel"}},
		{name: "no user: declined", want: "declined", declined: true,
			seen: []string{"before everything form", "after decline"}},
		{name: "the last word after the user", user: "decline", after: "accept",
			want: "- Agreed to terms: true", seen: []string{"before everything form", "user", "after decline"}},
		{name: "the last word when nobody could be asked", after: "accept",
			want: "- Name: Ada Lovelace", seen: []string{"before everything form", "after decline"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			log := &elicitLog{}
			answer := func(action string) ElicitationResult {
				res := ElicitationResult{Action: action}
				if action == ElicitAccept {
					// A map of its own: the SDK fills the schema's
					// defaults into the content it is given, and the
					// subtests run in parallel.
					res.Content = maps.Clone(ada)
				}
				return res
			}
			opts := Options{
				Registry: tool.NewRegistry(),
				BeforeElicit: func(_ context.Context, req ElicitationRequest) (ElicitationResult, bool) {
					log.add("before %s %s", req.Server, req.Mode)
					if req.Schema["type"] != "object" || !strings.Contains(req.Message, "provide inputs") {
						t.Errorf("request %+v", req)
					}
					return answer(c.before), c.before != ""
				},
				AfterElicit: func(_ context.Context, _ ElicitationRequest, res ElicitationResult) ElicitationResult {
					log.add("after %s", res.Action)
					if c.after != "" {
						return answer(c.after)
					}
					return res
				},
			}
			if c.user != "" {
				opts.Elicit = func(context.Context, ElicitationRequest) (ElicitationResult, error) {
					log.add("user")
					return answer(c.user), nil
				}
			}
			rec := &recorder{}
			m := New(rec.options(opts))
			defer m.Close()
			m.Start(context.Background(), []ServerConfig{{Name: "everything", Command: "node", Args: []string{js, "stdio"}}})
			if !m.WaitReady(context.Background(), 30*time.Second) {
				t.Fatalf("not ready: %+v", m.Statuses())
			}
			const name = "mcp__everything__trigger-elicitation-request"
			eventually(t, 10*time.Second, name, func() bool { _, ok := opts.Registry.Get(name); return ok })
			if got := textOf(call(t, opts.Registry, name, map[string]any{})); !strings.Contains(got, c.want) {
				t.Errorf("result %q lacks %q", got, c.want)
			}
			if got := log.list(); !slices.Equal(got, c.seen) {
				t.Errorf("seams told\n got %q\nwant %q", got, c.seen)
			}
			_, notices, _ := rec.snapshot()
			declined := slices.ContainsFunc(notices, func(n Notice) bool { return strings.Contains(n.Message, "no user to ask") })
			if declined != c.declined {
				t.Errorf("notice of a decline for want of a user: %v, want %v (%+v)", declined, c.declined, notices)
			}
		})
	}
}
