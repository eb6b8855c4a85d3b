package keyhelper_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm/keyhelper"
)

// counting is a helper command that prints key-N on its Nth run, counting
// runs in a file; fail makes the runs after the first fail.
func counting(t *testing.T) (command, counter string) {
	t.Helper()
	dir := t.TempDir()
	counter = filepath.Join(dir, "runs")
	script := filepath.Join(dir, "helper.sh")
	body := `#!/bin/sh
n=$(cat "$COUNTER" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$COUNTER"
if [ -e "$COUNTER.fail" ] && [ $n -gt 1 ]; then echo "vault is down" >&2; exit 3; fi
echo "key-$n"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, counter
}

func runs(t *testing.T, counter string) string {
	b, err := os.ReadFile(counter)
	if err != nil {
		return "0"
	}
	return strings.TrimSpace(string(b))
}

func env(counter string) []string { return []string{"PATH=" + os.Getenv("PATH"), "COUNTER=" + counter} }

func TestKeyIsKeptWithinTheTTL(t *testing.T) {
	cmd, counter := counting(t)
	h := keyhelper.New(cmd, env(counter), time.Hour)
	for range 3 {
		if k, err := h.Key(context.Background()); err != nil || k != "key-1" {
			t.Fatalf("key %q, %v", k, err)
		}
	}
	if n := runs(t, counter); n != "1" {
		t.Errorf("helper ran %s times, want 1", n)
	}
}

func TestKeyIsFetchedAgainAfterTheTTL(t *testing.T) {
	cmd, counter := counting(t)
	h := keyhelper.New(cmd, env(counter), 0) // every key is stale at once
	first, _ := h.Key(context.Background())
	second, err := h.Key(context.Background())
	if err != nil || first != "key-1" || second != "key-2" {
		t.Errorf("keys %q then %q (%v), want key-1 then key-2", first, second, err)
	}
}

func TestRefreshRunsAgainOnlyForTheRefusedKey(t *testing.T) {
	cmd, counter := counting(t)
	h := keyhelper.New(cmd, env(counter), time.Hour)
	k1, _ := h.Key(context.Background())
	var wg sync.WaitGroup
	keys := make([]string, 4)
	for i := range keys {
		wg.Go(func() { keys[i], _ = h.Refresh(context.Background(), k1) })
	}
	wg.Wait()
	for _, k := range keys {
		if k != "key-2" {
			t.Errorf("refreshed keys %q, want all key-2: concurrent refusals of one key run the helper once", keys)
			break
		}
	}
	if n := runs(t, counter); n != "2" {
		t.Errorf("helper ran %s times, want 2", n)
	}
}

func TestFailureKeepsTheOldKeyAndSaysWhy(t *testing.T) {
	cmd, counter := counting(t)
	os.WriteFile(counter+".fail", nil, 0o600)
	h := keyhelper.New(cmd, env(counter), 0)
	var warned []error
	h.Warn = func(err error) { warned = append(warned, err) }
	if k, err := h.Key(context.Background()); k != "key-1" || err != nil {
		t.Fatalf("first: %q %v", k, err)
	}
	k, err := h.Key(context.Background())
	if k != "key-1" || err != nil {
		t.Errorf("got %q, %v; want the old key", k, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0].Error(), "vault is down") || !strings.Contains(warned[0].Error(), cmd) {
		t.Errorf("warnings %v: want one naming the command and its stderr", warned)
	}
	// A refusal of the old key with the helper still failing is an error.
	if _, err := h.Refresh(context.Background(), "key-1"); err == nil || !strings.Contains(err.Error(), "vault is down") {
		t.Errorf("refresh: %v", err)
	}
}

func TestTTLVariable(t *testing.T) {
	get := func(v string) func(string) string {
		return func(k string) string {
			if k == keyhelper.TTLVar {
				return v
			}
			return ""
		}
	}
	for v, want := range map[string]time.Duration{"": keyhelper.DefaultTTL, "0": 0, "1500": 1500 * time.Millisecond} {
		if got, err := keyhelper.TTL(get(v)); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"-1", "5m", "x"} {
		if _, err := keyhelper.TTL(get(v)); err == nil || !strings.Contains(err.Error(), keyhelper.TTLVar) {
			t.Errorf("%q: error %v should name %s", v, err, keyhelper.TTLVar)
		}
	}
}

func TestEmptyOutputIsAnError(t *testing.T) {
	h := keyhelper.New("true", nil, time.Hour)
	if _, err := h.Key(context.Background()); err == nil || !strings.Contains(err.Error(), "printed no key") {
		t.Errorf("got %v", err)
	}
}
