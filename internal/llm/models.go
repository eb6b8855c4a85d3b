package llm

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
)

//go:embed models.json
var modelsJSON []byte

// Price is a model's list price in USD per million tokens.
type Price struct {
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
}

// Model is one catalogue entry.
type Model struct {
	ID            string   `json:"id"`
	Aliases       []string `json:"aliases,omitempty"`
	DisplayName   string   `json:"display_name"`
	ContextWindow int      `json:"context_window"`
	MaxOutput     int      `json:"max_output"`
	// Effort says whether the model takes an effort (output_config.effort).
	Effort bool  `json:"effort,omitempty"`
	Price  Price `json:"price"`
	// PlatformIDs are the model's ids on cloud platforms where they differ
	// from the usual rule (see PlatformID).
	PlatformIDs map[string]string `json:"platform_ids,omitempty"`
	// Known is false for an id absent from the catalogue: its limits are
	// conservative guesses and its price is unknown (zero).
	Known bool `json:"-"`
}

// Catalog is the parsed model catalogue.
type Catalog struct {
	Default        string  `json:"default"`
	Small          string  `json:"small"`
	WebSearchPer1k float64 `json:"web_search_per_1k_usd"`
	Models         []Model `json:"models"`
	byID           map[string]int
	byAlias        map[string]int
}

// Catalogue returns the built-in model catalogue. It is parsed once and never
// changes, so it is safe to share.
var Catalogue = sync.OnceValue(func() *Catalog {
	c, err := ParseCatalog(modelsJSON)
	if err != nil {
		panic(fmt.Sprintf("built-in models.json: %v", err)) // a build defect, caught by tests
	}
	return c
})

// ParseCatalog reads a catalogue in the models.json format.
func ParseCatalog(data []byte) (*Catalog, error) {
	var c Catalog
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	c.byID = make(map[string]int, len(c.Models))
	c.byAlias = make(map[string]int)
	for i := range c.Models {
		m := &c.Models[i]
		m.Known = true
		if m.ID == "" || m.ContextWindow <= 0 || m.MaxOutput <= 0 {
			return nil, fmt.Errorf("model %d (%q): id, context_window and max_output are required", i, m.ID)
		}
		if _, dup := c.byID[m.ID]; dup {
			return nil, fmt.Errorf("model %q listed twice", m.ID)
		}
		c.byID[m.ID] = i
		for _, a := range m.Aliases {
			if _, dup := c.byAlias[a]; dup {
				return nil, fmt.Errorf("alias %q used twice", a)
			}
			c.byAlias[a] = i
		}
	}
	if _, ok := c.byAlias[c.Default]; !ok {
		if _, ok := c.byID[c.Default]; !ok {
			return nil, fmt.Errorf("default model %q is not in the catalogue", c.Default)
		}
	}
	return &c, nil
}

// aliasEnv lets a deployment point an alias at another model id, as Claude
// Code's ANTHROPIC_DEFAULT_*_MODEL variables do.
var aliasEnv = map[string]string{
	"opus":   "ANTHROPIC_DEFAULT_OPUS_MODEL",
	"sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL",
	"haiku":  "ANTHROPIC_DEFAULT_HAIKU_MODEL",
}

// Resolve turns an alias or id into a model. getenv may be nil. An unknown id
// is returned as given (the API may know it), with Known false; a dated id
// such as claude-opus-5-5-20261001 takes the limits and price of its base id.
func (c *Catalog) Resolve(name string, getenv func(string) string) Model {
	name = strings.TrimSpace(name)
	if name == "" {
		name = c.Default
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if env, ok := aliasEnv[name]; ok {
		if v := getenv(env); v != "" && v != name {
			m := c.Resolve(v, func(string) string { return "" })
			return m
		}
	}
	if i, ok := c.byAlias[name]; ok {
		return c.Models[i]
	}
	if i, ok := c.byID[name]; ok {
		return c.Models[i]
	}
	if m, ok := c.resolveID(name); ok {
		return m
	}
	if fp := FirstPartyID(name); fp != name {
		// A platform's id: the first-party model's limits and price.
		if m, ok := c.resolveID(fp); ok {
			m.ID, m.Aliases = name, nil
			return m
		}
	}
	return Model{ID: name, DisplayName: name, ContextWindow: 200000, MaxOutput: 32000}
}

// resolveID finds an id or a dated form of one in the catalogue.
func (c *Catalog) resolveID(name string) (Model, bool) {
	if i, ok := c.byID[name]; ok {
		return c.Models[i], true
	}
	for i := range c.Models {
		if base := c.Models[i].ID; strings.HasPrefix(name, base+"-") {
			m := c.Models[i]
			m.ID = name
			m.Aliases = nil
			return m, true
		}
	}
	return Model{}, false
}

// Cost is the price in USD of usage on this model.
func (m Model) Cost(u Usage, webSearchPer1k float64) float64 {
	p := m.Price
	w1h := u.Cache1h()
	w5m := u.CacheCreationInputTokens - w1h
	usd := float64(u.InputTokens)*p.Input +
		float64(u.OutputTokens)*p.Output +
		float64(w5m)*p.CacheWrite5m +
		float64(w1h)*p.CacheWrite1h +
		float64(u.CacheReadInputTokens)*p.CacheRead
	return usd/1e6 + float64(u.WebSearches())*webSearchPer1k/1000
}
