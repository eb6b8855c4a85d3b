package anthropic

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// rotatingKeys hands out key-1, then key-2… on each Refresh, failing the
// refresh when refreshErr is set.
type rotatingKeys struct {
	mu         sync.Mutex
	n          int
	refreshed  []string // the keys reported refused
	refreshErr error
}

func (k *rotatingKeys) Key(context.Context) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n == 0 {
		k.n = 1
	}
	return "key-" + string(rune('0'+k.n)), nil
}

func (k *rotatingKeys) Refresh(_ context.Context, refused string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refreshed = append(k.refreshed, refused)
	if k.refreshErr != nil {
		return "", k.refreshErr
	}
	k.n++
	return "key-" + string(rune('0'+k.n)), nil
}

// acceptOnly authorizes requests whose x-api-key and bearer token are both key.
func acceptOnly(key string) func(http.Header) bool {
	return func(h http.Header) bool {
		return h.Get("x-api-key") == key && h.Get("Authorization") == "Bearer "+key
	}
}

func TestRefusedHelperKeyIsRefreshedAndTheRequestRetriedOnce(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("in"))}, Authorize: acceptOnly("key-2")})
	keys := &rotatingKeys{}
	p, waits := newTest(Config{Keys: keys, BaseURL: srv.URL()})
	resp, err := p.Stream(context.Background(), request(), llm.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if llm.TextOf(resp.Content) != "in" {
		t.Errorf("content %+v", resp.Content)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[0].Unauthorized || reqs[1].Unauthorized || reqs[1].Header.Get("x-api-key") != "key-2" {
		t.Fatalf("requests: %d, want a refused one with key-1 then one with key-2", len(reqs))
	}
	if len(keys.refreshed) != 1 || keys.refreshed[0] != "key-1" || len(*waits) != 0 {
		t.Errorf("refreshed %q after waits %v: want key-1 refreshed once, at once", keys.refreshed, *waits)
	}
}

func TestHelperKeyRefusedTwiceFailsNamingTheHelper(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("never"))}, Authorize: acceptOnly("nobody")})
	keys := &rotatingKeys{}
	p, _ := newTest(Config{Keys: keys, BaseURL: srv.URL()})
	_, err := p.Stream(context.Background(), request(), llm.Observer{})
	if err == nil || !strings.Contains(err.Error(), "apiKeyHelper") || !strings.Contains(err.Error(), "401") {
		t.Fatalf("error %v: want the refusal naming apiKeyHelper", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2: one refresh, no retries of a 401", n)
	}
}

func TestHelperFailingOnRefreshIsTheError(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("never"))}, Authorize: acceptOnly("nobody")})
	keys := &rotatingKeys{refreshErr: errors.New(`"vault-key" failed: exit status 1: vault sealed`)}
	p, _ := newTest(Config{Keys: keys, BaseURL: srv.URL()})
	_, err := p.Stream(context.Background(), request(), llm.Observer{})
	if err == nil || err.Error() != `apiKeyHelper: "vault-key" failed: exit status 1: vault sealed` {
		t.Fatalf("error %v", err)
	}
}
