package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
)

// textStream is the text block being streamed. Its finished paragraphs
// (outside code fences) are printed as they complete; the rest is shown
// raw in the live region until the block ends.
type textStream struct {
	buf       strings.Builder
	committed int  // bytes of buf already printed
	scanned   int  // bytes of buf whose lines have been looked at
	fence     bool // inside a code fence at scanned
	active    bool
	printed   bool // something of this block was printed (its bullet is out)
}

func (s *textStream) reset() { *s = textStream{} }

// pending returns what has not been printed.
func (s *textStream) pending() string { return s.buf.String()[s.committed:] }

// advance looks at the complete lines not yet scanned and returns the end of
// the last paragraph that is complete (a blank line outside a code fence),
// or -1.
func (s *textStream) advance() int {
	text := s.buf.String()
	cut := -1
	for {
		nl := strings.IndexByte(text[s.scanned:], '\n')
		if nl < 0 {
			return cut
		}
		line := text[s.scanned : s.scanned+nl]
		s.scanned += nl + 1
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			s.fence = !s.fence
		case t == "" && !s.fence:
			cut = s.scanned
		}
	}
}

// toolCall is a tool call on its way: shown live until its result comes.
type toolCall struct {
	id, name string
	input    json.RawMessage
	// subagent progress: tool uses made under this (Agent) call
	subUses int
	subLast string
}

// costTally sums the results of the session's runs.
type costTally struct {
	usd           float64
	apiMS, wallMS int64
	byModel       map[string]agent.ModelUsage
}

func (c *costTally) add(r *agent.ResultMessage) {
	c.usd += r.TotalCostUSD
	c.apiMS += r.DurationAPIMS
	c.wallMS += r.DurationMS
	if c.byModel == nil {
		c.byModel = map[string]agent.ModelUsage{}
	}
	for id, u := range r.ModelUsage {
		t := c.byModel[id]
		t.InputTokens += u.InputTokens
		t.OutputTokens += u.OutputTokens
		t.CacheReadInputTokens += u.CacheReadInputTokens
		t.CacheCreationInputTokens += u.CacheCreationInputTokens
		t.WebSearchRequests += u.WebSearchRequests
		t.CostUSD += u.CostUSD
		t.ContextWindow, t.MaxOutputTokens = u.ContextWindow, u.MaxOutputTokens
		c.byModel[id] = t
	}
}

// engineMessage takes one message of the session.
func (m *Model) engineMessage(em engineMsg) tea.Cmd {
	if em.err != nil {
		m.printError(em.err.Error())
		// A run that could not start gets no result.
		if m.runs > 0 {
			m.runs--
		}
		return nil
	}
	switch msg := em.msg.(type) {
	case *agent.StreamEvent:
		if msg.ParentToolUseID == nil {
			m.streamEvent(msg.Event)
		}
	case *agent.AssistantMessage:
		m.assistant(msg)
		return m.refreshStatusLine()
	case *agent.UserMessage:
		m.user(msg)
		return m.refreshStatusLine()
	case *agent.SystemMessage:
		return m.system(msg)
	case *agent.ResultMessage:
		return m.result(msg)
	}
	return nil
}

// streamEvent is the part of a raw streaming event the UI reads.
type streamEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock struct {
		Type string `json:"type"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
	Usage *struct {
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

func (m *Model) streamEvent(raw json.RawMessage) {
	var ev streamEvent
	if json.Unmarshal(raw, &ev) != nil {
		return
	}
	switch ev.Type {
	case "message_start":
		m.msgBase = m.outTokens
		clear(m.blockTypes)
	case "content_block_stop":
		if m.blockTypes[ev.Index] == agent.BlockText {
			m.flushStream()
			m.streamedTexts++
		}
	case "message_delta":
		if ev.Usage != nil && ev.Usage.OutputTokens > 0 {
			m.outTokens = m.msgBase + ev.Usage.OutputTokens
		}
	case "content_block_start":
		if m.blockTypes == nil {
			m.blockTypes = map[int]string{}
		}
		m.blockTypes[ev.Index] = ev.ContentBlock.Type
		switch ev.ContentBlock.Type {
		case agent.BlockText:
			m.flushStream()
			m.stream.active = true
		case agent.BlockThinking, agent.BlockRedactedThinking:
			m.thinking = true
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			m.stream.active = true
			m.stream.buf.WriteString(ev.Delta.Text)
			m.outTokens += estimateTokens(ev.Delta.Text)
			if cut := m.stream.advance(); cut > m.stream.committed {
				m.printText(m.stream.buf.String()[m.stream.committed:cut])
				m.stream.committed = cut
			}
		case "thinking_delta":
			m.thinking = true
			m.outTokens += estimateTokens(ev.Delta.Thinking)
		case "input_json_delta":
			m.outTokens += estimateTokens(ev.Delta.PartialJSON)
		}
	}
}

func estimateTokens(s string) int64 { return int64(len(s)+3) / 4 }

// printText prints a finished piece of the answer, as Markdown.
func (m *Model) printText(md string) {
	out := m.md.render(md, m.width)
	if out == "" {
		return
	}
	bullet := "  "
	if !m.stream.printed {
		bullet = m.st.accent.Render("⏺") + " "
		m.stream.printed = true
	}
	// Markdown is indented by two; the bullet takes that place on the first
	// line.
	out = strings.TrimPrefix(out, "  ")
	m.print(bullet + out)
}

// flushStream prints what is left of the streamed block.
func (m *Model) flushStream() {
	if rest := m.stream.pending(); strings.TrimSpace(rest) != "" {
		m.printText(rest)
	}
	m.stream.reset()
}

func (m *Model) assistant(msg *agent.AssistantMessage) {
	if msg.ParentToolUseID != nil {
		m.subagentProgress(*msg.ParentToolUseID, msg.Message.Content)
		return
	}
	if u := msg.Message.Usage; u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens > 0 {
		m.lastContext = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
		m.lastUsage = &u
	}
	m.cache.observe(msg, m.now())
	if msg.Error != "" && len(msg.Message.Content) == 0 {
		m.printError(msg.Error)
	}
	for _, b := range msg.Message.Content {
		switch b.Type {
		case agent.BlockText:
			if m.streamedTexts > 0 {
				// Streamed, and printed as it came.
				m.streamedTexts--
				continue
			}
			m.flushStream()
			m.printText(b.Text)
			m.stream.reset()
		case agent.BlockThinking, agent.BlockRedactedThinking:
			m.thinking = false
			n := strings.Count(strings.TrimSpace(b.Thinking), "\n") + 1
			m.print(m.st.dim.Render(fmt.Sprintf("✻ Thought for a while (%d lines, not shown)", n)))
		case agent.BlockToolUse, agent.BlockServerToolUse:
			m.flushStream()
			m.tools = append(m.tools, &toolCall{id: b.ID, name: b.Name, input: b.Input})
		}
	}
}

// subagentProgress counts the tool uses a subagent makes under its call.
func (m *Model) subagentProgress(parent string, content []agent.ContentBlock) {
	tc := m.findTool(parent)
	if tc == nil {
		return
	}
	for _, b := range content {
		if b.Type == agent.BlockToolUse {
			tc.subUses++
			tc.subLast = toolTitle(b.Name, b.Input, m.cfg.cwd)
		}
	}
}

func (m *Model) findTool(id string) *toolCall {
	for _, tc := range m.tools {
		if tc.id == id {
			return tc
		}
	}
	return nil
}

func (m *Model) user(msg *agent.UserMessage) {
	if msg.ParentToolUseID != nil {
		return
	}
	for _, b := range msg.Message.Content {
		if b.Type != agent.BlockToolResult {
			continue
		}
		tc := m.findTool(b.ToolUseID)
		if tc == nil {
			tc = &toolCall{id: b.ToolUseID, name: "tool"}
		} else {
			m.tools = removeTool(m.tools, tc)
		}
		m.print(m.renderToolCall(tc, b, msg.ToolUseResult))
		if !b.IsError {
			m.lines.add(msg.ToolUseResult)
		}
	}
}

func removeTool(tools []*toolCall, tc *toolCall) []*toolCall {
	out := tools[:0]
	for _, t := range tools {
		if t != tc {
			out = append(out, t)
		}
	}
	return out
}

func (m *Model) system(msg *agent.SystemMessage) tea.Cmd {
	switch msg.Subtype {
	case "init":
		if msg.Init != nil {
			m.sessionID, m.modelID = msg.Init.SessionID, msg.Init.Model
			if msg.Init.PermissionMode != "" {
				m.mode = agent.PermissionMode(msg.Init.PermissionMode)
				m.autoCycle = m.autoCycle || m.mode == agent.PermissionAuto
			}
			m.commands = msg.Init.SlashCommands
			m.addDirs = msg.Init.AdditionalDirs
		}
	case "api_retry":
		m.runNotice(retryNotice(msg))
	case "status":
		if s, _ := msg.Fields["status"].(string); s == "compacting" {
			m.runNotice("Compacting the conversation…")
		}
	case "compact_boundary":
		m.cache.expectDrop()
		m.runNotice("")
		m.print(m.st.dim.Render("✻ Conversation compacted"))
	case "model_fallback":
		m.printNotice(fmt.Sprintf("Switched to the fallback model: %v", msg.Fields))
	case "task_started":
		// shown through the Agent call's progress
	case agent.SubtypeHookStatus:
		m.trackHook(msg.Fields)
	}
	return nil
}

// hookStatus is a running hook's statusMessage, which the spinner shows.
type hookStatus struct{ id, text string }

// trackHook follows the hooks with a statusMessage as they start and end.
func (m *Model) trackHook(f map[string]any) {
	id, _ := f["hook_id"].(string)
	text, _ := f["status_message"].(string)
	m.hookStatus = slices.DeleteFunc(m.hookStatus, func(h hookStatus) bool { return h.id == id })
	if running, _ := f["running"].(bool); running && text != "" {
		m.hookStatus = append(m.hookStatus, hookStatus{id: id, text: text})
	}
}

func (m *Model) result(r *agent.ResultMessage) tea.Cmd {
	m.flushStream()
	m.thinking = false
	m.streamedTexts = 0
	// Calls left without a result (an interrupt) are printed as such.
	for _, tc := range m.tools {
		m.print(m.st.dim.Render("⏺ "+toolTitle(tc.name, tc.input, m.cfg.cwd)) + "\n" + m.st.warn.Render("  ⎿  interrupted"))
	}
	m.tools = nil
	m.cost.add(r)
	if r.IsError {
		switch r.TerminalReason {
		case "aborted_streaming", "aborted_tools":
			m.print(m.st.warn.Render("  ⎿  Interrupted · what should tack do instead?"))
		default:
			msg := strings.Join(r.Errors, "; ")
			if msg == "" {
				msg = r.Subtype
			}
			m.printError(msg)
		}
	}
	if m.runs > 0 {
		m.runs--
	}
	if m.runs == 0 {
		m.runNotice("")
		m.outTokens, m.msgBase = 0, 0
		// An async hook may outlive the run; its end would come when
		// nobody listens.
		m.hookStatus = nil
	}
	return m.refreshStatusLine()
}

// runNotice shows (or, with "", clears) a notice about the run in the
// status area, unless the Ctrl-C hint is there: that one stays until it
// expires.
func (m *Model) runNotice(text string) {
	if m.notice != ctrlCHint {
		m.notice = text
	}
}

func (m *Model) printError(text string) {
	m.print(m.st.bad.Render("✗ " + strings.TrimSpace(text)))
}

func (m *Model) printNotice(text string) {
	m.print(m.st.warn.Render("※ " + strings.TrimSpace(text)))
}
