package llm

// Usage is the token accounting of one response, as the API reports it.
type Usage struct {
	InputTokens              int64          `json:"input_tokens"`
	CacheCreationInputTokens int64          `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64          `json:"cache_read_input_tokens"`
	OutputTokens             int64          `json:"output_tokens"`
	CacheCreation            *CacheCreation `json:"cache_creation,omitempty"`
	ServerToolUse            *ServerToolUse `json:"server_tool_use,omitempty"`
}

// CacheCreation splits cache writes by TTL.
type CacheCreation struct {
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
}

// ServerToolUse counts server-side tool calls billed per use.
type ServerToolUse struct {
	WebSearchRequests int64 `json:"web_search_requests"`
	WebFetchRequests  int64 `json:"web_fetch_requests"`
}

// Add accumulates o into u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.CacheCreationInputTokens += o.CacheCreationInputTokens
	u.CacheReadInputTokens += o.CacheReadInputTokens
	u.OutputTokens += o.OutputTokens
	if o.CacheCreation != nil {
		if u.CacheCreation == nil {
			u.CacheCreation = &CacheCreation{}
		}
		u.CacheCreation.Ephemeral5m += o.CacheCreation.Ephemeral5m
		u.CacheCreation.Ephemeral1h += o.CacheCreation.Ephemeral1h
	}
	if o.ServerToolUse != nil {
		if u.ServerToolUse == nil {
			u.ServerToolUse = &ServerToolUse{}
		}
		u.ServerToolUse.WebSearchRequests += o.ServerToolUse.WebSearchRequests
		u.ServerToolUse.WebFetchRequests += o.ServerToolUse.WebFetchRequests
	}
}

// Cache1h returns the cache-write tokens billed at the one-hour rate.
func (u Usage) Cache1h() int64 {
	if u.CacheCreation == nil {
		return 0
	}
	return u.CacheCreation.Ephemeral1h
}

// WebSearches returns the number of billed web searches.
func (u Usage) WebSearches() int64 {
	if u.ServerToolUse == nil {
		return 0
	}
	return u.ServerToolUse.WebSearchRequests
}
