package engine

import (
	"context"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// tally accumulates usage and cost, per model. usage counts the thread's
// own requests only; byModel and cost count every request made on its
// behalf too (its tools' and subagents'), as Claude Code's result does.
type tally struct {
	usage   llm.Usage
	byModel map[string]*modelUsage
	cost    float64
}

type modelUsage struct {
	model llm.Model
	usage llm.Usage
	cost  float64
}

func (t *tally) add(id string, m llm.Model, u llm.Usage, cost float64, own bool) {
	if t.byModel == nil {
		t.byModel = map[string]*modelUsage{}
	}
	mu := t.byModel[id]
	if mu == nil {
		mu = &modelUsage{model: m}
		t.byModel[id] = mu
	}
	mu.usage.Add(u)
	mu.cost += cost
	if own {
		t.usage.Add(u)
	}
	t.cost += cost
}

// fill writes the tally into a result message.
func (t *tally) fill(res *protocol.Result) {
	u := t.usage
	res.Usage = protocol.ResultUsage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens, CacheReadInputTokens: u.CacheReadInputTokens,
	}
	if u.CacheCreation != nil {
		res.Usage.CacheCreation = *u.CacheCreation
	}
	if u.ServerToolUse != nil {
		res.Usage.ServerToolUse = *u.ServerToolUse
	}
	for id, mu := range t.byModel {
		res.ModelUsage[id] = protocol.ModelUsage{
			InputTokens: mu.usage.InputTokens, OutputTokens: mu.usage.OutputTokens,
			CacheReadInputTokens: mu.usage.CacheReadInputTokens, CacheCreationInputTokens: mu.usage.CacheCreationInputTokens,
			WebSearchRequests: mu.usage.WebSearches(), CostUSD: mu.cost,
			ContextWindow: mu.model.ContextWindow, MaxOutputTokens: mu.model.MaxOutput,
		}
	}
	res.TotalCostUSD = t.cost
}

// account adds a response's usage to the session and to the run in progress.
// own says the request is the thread's own (its turns, its compaction), not
// one made for it by a tool or a subagent.
func (s *Session) account(requested string, resp *llm.Response, own bool) {
	id := resp.Model
	if id == "" {
		id = requested
	}
	m := s.cfg.Catalog.Resolve(id, func(string) string { return "" })
	cost := m.Cost(resp.Usage, s.cfg.Catalog.WebSearchPer1k)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total.add(id, m, resp.Usage, cost, own)
	if s.current != nil {
		s.current.add(id, m, resp.Usage, cost, own)
	}
}

// meteredProvider counts the usage of model calls made by tools (WebFetch,
// WebSearch, and the subagents and hook agents that call through it) in
// the session's per-model usage and cost, not in its own usage.
type meteredProvider struct {
	inner llm.Provider
	s     *Session
}

func (p meteredProvider) Stream(ctx context.Context, req *llm.Request, obs llm.Observer) (*llm.Response, error) {
	resp, err := p.inner.Stream(ctx, req, obs)
	if err == nil {
		p.s.account(req.Model, resp, false)
	}
	return resp, err
}
