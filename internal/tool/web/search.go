package web

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

var (
	//go:embed search.md
	searchDescription string
	//go:embed search_system.md
	searchSystem string
)

const searchSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","minLength":2,"description":"The search terms"},` +
	`"allowed_domains":{"type":"array","items":{"type":"string"},"description":"Only return results from these domains"},` +
	`"blocked_domains":{"type":"array","items":{"type":"string"},"description":"Never return results from these domains"}},` +
	`"required":["query"],"additionalProperties":false}`

const (
	// searchMaxUses caps the searches the model may run for one query.
	searchMaxUses    = 8
	searchMaxTokens  = 4096
	searchServerTool = "web_search_20250305"
	// searchMaxRounds bounds how often a paused turn (stop_reason
	// pause_turn, the API's way to split a long server-tool turn) is resumed.
	searchMaxRounds = 4
)

// searchTool is WebSearch.
type searchTool struct{}

// searchResult is WebSearch's structured result. Results holds, in the
// order the model produced them, the model's text (strings) and the hits of
// each search (searchHits).
type searchResult struct {
	Query           string  `json:"query"`
	Results         []any   `json:"results"`
	DurationSeconds float64 `json:"durationSeconds"`
	// SearchCount is how many searches the model ran.
	SearchCount int `json:"searchCount"`
}

type searchHits struct {
	ToolUseID string `json:"tool_use_id"`
	Content   []hit  `json:"content"`
}

type hit struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

func (searchTool) Name() string                  { return "WebSearch" }
func (searchTool) Description() string           { return searchDescription }
func (searchTool) InputSchema() json.RawMessage  { return json.RawMessage(searchSchema) }
func (searchTool) ReadOnly(json.RawMessage) bool { return true }

func (s searchTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	start := time.Now()
	var in struct {
		Query          string   `json:"query"`
		AllowedDomains []string `json:"allowed_domains"`
		BlockedDomains []string `json:"blocked_domains"`
	}
	if err := tool.Decode(s.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	in.Query = strings.TrimSpace(in.Query)
	if len(in.Query) < 2 {
		return tool.Result{}, tool.BadInput(s.Name(), "query must be at least 2 characters")
	}
	if len(in.AllowedDomains) > 0 && len(in.BlockedDomains) > 0 {
		return tool.Result{}, tool.BadInput(s.Name(), "give allowed_domains or blocked_domains, not both")
	}
	if env.Model.Provider == nil {
		return tool.Result{}, errNoModel
	}

	spec, err := json.Marshal(struct {
		Type           string   `json:"type"`
		Name           string   `json:"name"`
		MaxUses        int      `json:"max_uses"`
		AllowedDomains []string `json:"allowed_domains,omitempty"`
		BlockedDomains []string `json:"blocked_domains,omitempty"`
	}{searchServerTool, "web_search", searchMaxUses, in.AllowedDomains, in.BlockedDomains})
	if err != nil {
		return tool.Result{}, fmt.Errorf("encoding the web_search tool: %w", err)
	}
	req := &llm.Request{
		Model:     env.Model.Main,
		System:    []llm.Block{llm.Text(searchSystem)},
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text("Search the web for: " + in.Query)}}},
		Tools:     []llm.ToolSpec{{Raw: spec}},
		MaxTokens: searchMaxTokens,
	}
	var blocks []llm.Block
	for range searchMaxRounds {
		resp, err := env.Model.Provider.Stream(ctx, req, llm.Observer{})
		if err != nil {
			return tool.Result{}, fmt.Errorf("web search for %q: %w", in.Query, err)
		}
		blocks = append(blocks, resp.Content...)
		if resp.StopReason != "pause_turn" {
			break
		}
		req.Messages = append(req.Messages, resp.Message())
	}

	results, hits, failures := collect(blocks)
	structured := searchResult{Query: in.Query, Results: results, DurationSeconds: time.Since(start).Seconds(), SearchCount: searches(blocks)}
	text := render(in.Query, results, hits)
	isError := len(hits) == 0 && len(failures) > 0
	if isError {
		text = fmt.Sprintf("Web search for %q failed: %s.", in.Query, strings.Join(failures, ", "))
	}
	return tool.Result{Content: []llm.Block{llm.Text(text)}, IsError: isError, Structured: structured}, nil
}

// searches counts the searches the model ran (its server tool calls).
func searches(blocks []llm.Block) int {
	n := 0
	for _, b := range blocks {
		if b.Type == llm.TypeServerToolUse {
			n++
		}
	}
	return n
}

// collect reads the model's answer: its text (consecutive text blocks,
// which the API splits around citations, joined into one string), the hits of
// each search (as searchHits in results, and all together in hits) and the
// error codes of failed searches.
func collect(blocks []llm.Block) (results []any, hits []hit, failures []string) {
	results = []any{}
	var text strings.Builder
	flush := func() {
		if t := strings.TrimSpace(text.String()); t != "" {
			results = append(results, t)
		}
		text.Reset()
	}
	for _, b := range blocks {
		if b.Type == llm.TypeText {
			text.WriteString(b.Text)
			continue
		}
		flush()
		if b.Type != "web_search_tool_result" {
			continue
		}
		found, err := readSearchResult(b.Raw)
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		results = append(results, found)
		hits = append(hits, found.Content...)
	}
	flush()
	return results, hits, failures
}

// readSearchResult reads a web_search_tool_result block, whose content is a
// list of hits or an error object; the error is its error code.
func readSearchResult(raw json.RawMessage) (searchHits, error) {
	var r struct {
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return searchHits{}, errors.New("unreadable search result")
	}
	if c := bytes.TrimSpace(r.Content); len(c) == 0 || c[0] != '[' {
		var e struct {
			ErrorCode string `json:"error_code"`
		}
		_ = json.Unmarshal(c, &e) // an unreadable error is still an error
		return searchHits{}, errors.New(cmp.Or(e.ErrorCode, "unknown error"))
	}
	found := searchHits{ToolUseID: r.ToolUseID}
	if err := json.Unmarshal(r.Content, &found.Content); err != nil {
		return searchHits{}, errors.New("unreadable search result")
	}
	return found, nil
}

// render writes the result for the model: the hits, then the model's text.
func render(query string, results []any, hits []hit) string {
	var b strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&b, "The web search for %q found no results.\n", query)
	} else {
		fmt.Fprintf(&b, "Web search results for %q:\n", query)
		seen := map[string]bool{}
		n := 0
		for _, h := range hits {
			if seen[h.URL] {
				continue
			}
			seen[h.URL] = true
			n++
			fmt.Fprintf(&b, "%d. %s\n   %s\n", n, cmp.Or(strings.TrimSpace(h.Title), h.URL), h.URL)
		}
	}
	var summary []string
	for _, r := range results {
		if t, ok := r.(string); ok {
			summary = append(summary, t)
		}
	}
	if len(summary) > 0 {
		b.WriteString("\n" + strings.Join(summary, "\n\n") + "\n")
	}
	if len(hits) > 0 {
		b.WriteString("\nCite the pages you rely on as Markdown links in your answer.")
	}
	return strings.TrimSpace(b.String())
}
