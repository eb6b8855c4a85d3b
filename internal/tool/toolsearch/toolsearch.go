// Package toolsearch holds ToolSearch, the tool through which the model
// loads deferred tools: tools sent with defer_loading, which the API keeps
// out of the context until a tool_reference names them.
package toolsearch

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

//go:embed toolsearch.md
var description string

// Name is the tool's name.
const Name = "ToolSearch"

const schema = `{"type":"object","properties":{"query":{"type":"string","description":"select:NAME1,NAME2 to load those tools, or keywords to search the deferred tools"},"max_results":{"type":"number","description":"How many tools a keyword search loads at most (default 5)"}},"required":["query","max_results"],"additionalProperties":false}`

// Tool returns ToolSearch.
func Tool() tool.Tool { return searchTool{} }

type searchTool struct{}

type input struct {
	Query      string  `json:"query"`
	MaxResults float64 `json:"max_results"`
}

// Result is the structured result.
type Result struct {
	Matches []string `json:"matches"`
	Query   string   `json:"query"`
	Missing []string `json:"missing,omitempty"`
	Total   int      `json:"total_deferred_tools"`
}

func (searchTool) Name() string                  { return Name }
func (searchTool) Description() string           { return description }
func (searchTool) InputSchema() json.RawMessage  { return json.RawMessage(schema) }
func (searchTool) ReadOnly(json.RawMessage) bool { return true }

func (t searchTool) Run(_ context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	var in input
	if err := tool.Decode(Name, raw, &in); err != nil {
		return tool.Result{}, err
	}
	if env.Tools == nil {
		return tool.Result{}, fmt.Errorf("no tool catalogue in this session")
	}
	var deferred []tool.Tool
	for _, tl := range env.Tools.Tools() {
		if env.Tools.Deferred(tl.Name()) {
			deferred = append(deferred, tl)
		}
	}
	res := Result{Matches: []string{}, Query: in.Query, Total: len(deferred)}
	q := strings.TrimSpace(in.Query)
	if names, ok := strings.CutPrefix(q, "select:"); ok {
		for _, n := range strings.Split(names, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			if i := slices.IndexFunc(deferred, func(t tool.Tool) bool { return t.Name() == n }); i >= 0 {
				res.Matches = append(res.Matches, n)
			} else if _, loaded := env.Tools.Get(n); loaded {
				res.Matches = append(res.Matches, n) // not deferred: already callable
			} else {
				res.Missing = append(res.Missing, n)
			}
		}
	} else {
		max := int(in.MaxResults)
		if max <= 0 {
			max = 5
		}
		res.Matches = append(res.Matches, search(deferred, q, max)...)
	}
	if len(res.Matches) == 0 {
		msg := "No deferred tool matches " + fmt.Sprintf("%q", q) + "."
		if len(res.Missing) > 0 {
			msg = "No deferred tool is called " + strings.Join(res.Missing, ", ") + "."
		}
		return tool.TextResult(msg, res), nil
	}
	content := make([]llm.Block, 0, len(res.Matches)+1)
	for _, n := range res.Matches {
		ref, _ := json.Marshal(map[string]string{"type": "tool_reference", "tool_name": n})
		content = append(content, llm.Block{Type: "tool_reference", Raw: ref})
	}
	if len(res.Missing) > 0 {
		content = append(content, llm.Text("Not found: "+strings.Join(res.Missing, ", ")))
	}
	return tool.Result{Content: content, Structured: res}, nil
}

// search scores deferred tools by the query's words in their names (worth
// more) and descriptions, best first.
func search(tools []tool.Tool, query string, max int) []string {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	type scored struct {
		name  string
		score int
	}
	var hits []scored
	for _, t := range tools {
		name := strings.ToLower(t.Name())
		desc := strings.ToLower(t.Description())
		score := 0
		for _, w := range words {
			if strings.Contains(name, w) {
				score += 3
			}
			if strings.Contains(desc, w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, scored{t.Name(), score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].name < hits[j].name
	})
	var out []string
	for i := 0; i < len(hits) && i < max; i++ {
		out = append(out, hits[i].name)
	}
	return out
}
