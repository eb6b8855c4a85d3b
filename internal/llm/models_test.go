package llm

import (
	"math"
	"strings"
	"testing"
)

func noEnv(string) string { return "" }

func TestResolve(t *testing.T) {
	c := Catalogue()
	cases := map[string]string{
		"":                          "claude-opus-5-5",
		"opus":                      "claude-opus-5-5",
		"sonnet":                    "claude-sonnet-5-5",
		"haiku":                     "claude-haiku-4-5",
		"claude-sonnet-4-6":         "claude-sonnet-4-6",
		"claude-opus-5-5-20261001":  "claude-opus-5-5-20261001",
		"claude-experimental-thing": "claude-experimental-thing",
	}
	for in, want := range cases {
		if got := c.Resolve(in, noEnv).ID; got != want {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
	dated := c.Resolve("claude-opus-5-5-20261001", noEnv)
	if !dated.Known || dated.Price.Input != 4 || dated.ContextWindow != 1000000 {
		t.Errorf("a dated id takes its base model's data: %+v", dated)
	}
	unknown := c.Resolve("claude-experimental-thing", noEnv)
	if unknown.Known || unknown.Price.Input != 0 || unknown.MaxOutput == 0 {
		t.Errorf("unknown model %+v", unknown)
	}
	env := func(k string) string {
		if k == "ANTHROPIC_DEFAULT_SONNET_MODEL" {
			return "claude-sonnet-4-5"
		}
		return ""
	}
	if got := c.Resolve("sonnet", env).ID; got != "claude-sonnet-4-5" {
		t.Errorf("alias override: %s", got)
	}
}

func TestCost(t *testing.T) {
	m := Catalogue().Resolve("opus", noEnv) // $4 in, $20 out, $5 5m write, $8 1h write, $0.40 read
	u := Usage{InputTokens: 1e6, OutputTokens: 1e6, CacheCreationInputTokens: 3e6, CacheReadInputTokens: 1e6,
		CacheCreation: &CacheCreation{Ephemeral5m: 2e6, Ephemeral1h: 1e6}, ServerToolUse: &ServerToolUse{WebSearchRequests: 100}}
	want := 4 + 20 + 2*5 + 1*8 + 0.4 + 100*10.0/1000
	if got := m.Cost(u, Catalogue().WebSearchPer1k); math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %v, want %v", got, want)
	}
	// Without a TTL breakdown, cache writes are billed at the 5-minute rate.
	if got := m.Cost(Usage{CacheCreationInputTokens: 1e6}, 0); math.Abs(got-5) > 1e-9 {
		t.Errorf("cost %v", got)
	}
}

func TestParseCatalogRejectsMistakes(t *testing.T) {
	for name, data := range map[string]string{
		"duplicate id":    `{"default":"a","models":[{"id":"a","context_window":1,"max_output":1},{"id":"a","context_window":1,"max_output":1}]}`,
		"duplicate alias": `{"default":"a","models":[{"id":"a","aliases":["x"],"context_window":1,"max_output":1},{"id":"b","aliases":["x"],"context_window":1,"max_output":1}]}`,
		"no limits":       `{"default":"a","models":[{"id":"a"}]}`,
		"bad default":     `{"default":"zz","models":[{"id":"a","context_window":1,"max_output":1}]}`,
		"not json":        `{`,
	} {
		if _, err := ParseCatalog([]byte(data)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestUsageAdd(t *testing.T) {
	var u Usage
	u.Add(Usage{InputTokens: 1, OutputTokens: 2, CacheCreation: &CacheCreation{Ephemeral1h: 3}})
	u.Add(Usage{InputTokens: 1, ServerToolUse: &ServerToolUse{WebSearchRequests: 2}})
	if u.InputTokens != 2 || u.OutputTokens != 2 || u.Cache1h() != 3 || u.WebSearches() != 2 {
		t.Errorf("%+v", u)
	}
}

// TestCatalogueHasTheSeedsModels: every model id the seeds and the compat
// notes name resolves to a known model with a price, and every price keeps
// Anthropic's ratios to the input price (5-minute cache write 1.25×, 1-hour
// write 2×, cache read 0.1×).
func TestCatalogueHasTheSeedsModels(t *testing.T) {
	c := Catalogue()
	for _, id := range []string{"claude-opus-4-7", "claude-opus-5-5", "claude-opus-4-5", "claude-sonnet-4-5-20250514", "claude-haiku-4-5-20250514"} {
		if m := c.Resolve(id, noEnv); !m.Known || m.Price.Input == 0 || m.Price.CacheRead == 0 || m.Price.CacheWrite1h == 0 {
			t.Errorf("%s: %+v", id, m)
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, m := range c.Models {
		p := m.Price
		if !near(p.CacheWrite5m, 1.25*p.Input) || !near(p.CacheWrite1h, 2*p.Input) || !near(p.CacheRead, 0.1*p.Input) {
			t.Errorf("%s: cache prices %+v do not follow the input price", m.ID, p)
		}
	}
}

func TestCheck(t *testing.T) {
	c := Catalogue()
	for _, name := range []string{"", "default", "opus", "claude-opus-4-7", "claude-experimental-thing", "us.anthropic.claude-opus-4-7-v1"} {
		if _, err := c.Check(name, noEnv); err != nil {
			t.Errorf("Check(%q): %v", name, err)
		}
	}
	_, err := c.Check("sonet", noEnv)
	if err == nil || !strings.Contains(err.Error(), `unknown model "sonet" (did you mean "sonnet"?)`) || !strings.Contains(err.Error(), "opus, sonnet, haiku") {
		t.Errorf("a misspelt alias: %v", err)
	}
	if _, err := c.Check("gpt-4o", noEnv); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("a name far from any: %v", err)
	}
}

func TestAllowed(t *testing.T) {
	c := Catalogue()
	list := []string{"sonnet", "claude-haiku-4-5"}
	cases := map[string]bool{"sonnet": true, "claude-sonnet-5-5": true, "haiku": true, "opus": true /* the default */, "claude-sonnet-4-6": false, "fable": false}
	for name, want := range cases {
		if got := c.Allowed(c.Resolve(name, noEnv), list, noEnv); got != want {
			t.Errorf("Allowed(%s) = %v, want %v", name, got, want)
		}
	}
	if !c.Allowed(c.Resolve("fable", noEnv), nil, noEnv) {
		t.Error("no list allows every model")
	}
}
