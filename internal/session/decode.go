package session

import (
	"encoding/json"

	"github.com/tackcode/tack/internal/llm"
)

// Record types.
const (
	TypeUser        = "user"
	TypeAssistant   = "assistant"
	TypeSystem      = "system"
	TypeAttachment  = "attachment"
	TypeProgress    = "progress"
	TypeLastPrompt  = "last-prompt"
	TypeCustomTitle = "custom-title"
	TypeAITitle     = "ai-title"
	TypeTag         = "tag"
	TypeSummary     = "summary"
)

// line is what one transcript line holds, decoded once.
type line struct {
	typ       string
	uuid      string
	hasUUID   bool // uuid is a string (the SDK's test for chain records)
	parent    string
	sessionID string
	timestamp string
	cwd       string
	gitBranch string
	subtype   string
	agentID   string
	teamName  bool
	sidechain bool
	isMeta    bool // truthy
	metaTrue  bool // === true, the test the SDK's prompt extraction uses
	compact   bool // isCompactSummary === true
	srcAsst   string

	// user / assistant message
	hasMessage bool
	role       llm.Role
	msgID      string
	model      string
	content    []llm.Block
	contentStr bool // content was a string

	// labels are what metadata records say; nil on the others (nearly
	// every line), which spares each of them the room.
	labels *labels
}

// labels are the members of the metadata records.
type labels struct {
	customTitle, aiTitle, lastPrompt, summary, tag string
	// has is set for each of those given as a string.
	hasTitle, hasAITitle, hasLastPrompt, hasSummary, hasTag bool
}

// label is what ln's metadata members say: none on a line without them.
func (ln *line) label() labels {
	if ln.labels == nil {
		return labels{}
	}
	return *ln.labels
}

// setLabels is ln's labels, to be set.
func (ln *line) setLabels() *labels {
	if ln.labels == nil {
		ln.labels = &labels{}
	}
	return ln.labels
}

// decodeLine decodes one line. ok is false when the line is not a JSON
// object (torn, junk): such lines are skipped.
func decodeLine(data []byte) (line, bool) {
	var d doc
	return d.decodeLine(data)
}

// decodeLine decodes one line with d's tape.
func (d *doc) decodeLine(data []byte) (ln line, ok bool) {
	if d.parse(data) != nil || d.root().kind != kindObject {
		return ln, false
	}
	message := -1
	d.members(0, func(k, v int) {
		ks := d.tape[k]
		key := data[ks.start+1 : ks.end-1]
		if ks.esc {
			// An escaped key is legal but never written by tools; decode it
			// so it still matches.
			key = []byte(ks.str(data))
		}
		if ln.set(data, key, d.tape[v], &d.repeats) {
			message = v
		}
	})
	if message >= 0 && d.tape[message].kind == kindObject && (ln.typ == TypeUser || ln.typ == TypeAssistant) {
		ln.hasMessage = true
		ln.decodeMessage(d, message)
	}
	return ln, true
}

// repeats holds the last value of the members that repeat from record to
// record — the session, the folder, the branch, the model — so that the
// records of a transcript share one string of each rather than a copy
// per record.
type repeats struct{ sessionID, cwd, gitBranch, model string }

// str is v's string, last's when they are equal; last becomes it.
func (r *repeats) str(data []byte, v span, last *string) string {
	if v.kind != kindString {
		return ""
	}
	if *last == "" || !v.is(data, *last) {
		*last = v.str(data)
	}
	return *last
}

// set stores one top-level member and reports whether it is the message.
// A repeated key replaces the earlier one, as in JSON.parse.
func (ln *line) set(data []byte, key []byte, v span, rep *repeats) (isMessage bool) {
	str := func() string {
		if v.kind == kindString {
			return v.str(data)
		}
		return ""
	}
	switch string(key) {
	case "type":
		// The common types share one string instead of one per line.
		switch {
		case v.is(data, TypeUser):
			ln.typ = TypeUser
		case v.is(data, TypeAssistant):
			ln.typ = TypeAssistant
		case v.is(data, TypeSystem):
			ln.typ = TypeSystem
		default:
			ln.typ = str()
		}
	case "uuid":
		ln.uuid, ln.hasUUID = str(), v.kind == kindString
	case "parentUuid":
		ln.parent = str()
	case "sessionId":
		ln.sessionID = rep.str(data, v, &rep.sessionID)
	case "timestamp":
		ln.timestamp = str()
	case "cwd":
		ln.cwd = rep.str(data, v, &rep.cwd)
	case "gitBranch":
		ln.gitBranch = rep.str(data, v, &rep.gitBranch)
	case "subtype":
		ln.subtype = str()
	case "agentId":
		ln.agentID = str()
	case "sourceToolAssistantUUID":
		ln.srcAsst = str()
	case "teamName":
		ln.teamName = v.truthy(data)
	case "isSidechain":
		ln.sidechain = v.truthy(data)
	case "isMeta":
		ln.isMeta, ln.metaTrue = v.truthy(data), v.kind == kindTrue
	case "isCompactSummary":
		ln.compact = v.kind == kindTrue
	case "message":
		return true
	case "customTitle":
		l := ln.setLabels()
		l.customTitle, l.hasTitle = str(), v.kind == kindString
	case "aiTitle":
		l := ln.setLabels()
		l.aiTitle, l.hasAITitle = str(), v.kind == kindString
	case "lastPrompt":
		l := ln.setLabels()
		l.lastPrompt, l.hasLastPrompt = str(), v.kind == kindString
	case "summary":
		l := ln.setLabels()
		l.summary, l.hasSummary = str(), v.kind == kindString
	case "tag":
		l := ln.setLabels()
		l.tag, l.hasTag = str(), v.kind == kindString
	}
	return false
}

func (ln *line) decodeMessage(d *doc, msg int) {
	data := d.data
	content := -1
	ln.msgID = ""
	d.members(msg, func(k, v int) {
		key, val := d.tape[k], d.tape[v]
		switch {
		case key.is(data, "role"):
			switch {
			case val.is(data, string(llm.RoleUser)):
				ln.role = llm.RoleUser // one string for every record
			case val.is(data, string(llm.RoleAssistant)):
				ln.role = llm.RoleAssistant
			case val.isString():
				ln.role = llm.Role(val.str(data))
			default:
				ln.role = ""
			}
		case key.is(data, "id"):
			ln.msgID = ""
			if val.isString() {
				ln.msgID = val.str(data)
			}
		case key.is(data, "model"):
			ln.model = d.repeats.str(data, val, &d.repeats.model)
		case key.is(data, "content"):
			content = v
		}
	})
	if content < 0 {
		return
	}
	switch c := d.tape[content]; c.kind {
	case kindString:
		ln.content, ln.contentStr = []llm.Block{llm.Text(c.str(data))}, true
	case kindArray:
		ln.content = decodeBlocks(d, content)
	}
}

// decodeBlocks decodes a block array the way llm.Block.UnmarshalJSON does.
// A block whose fields have the wrong JSON types is left out rather than
// failing the whole message.
func decodeBlocks(d *doc, arr int) []llm.Block {
	out := make([]llm.Block, 0, d.count(arr))
	d.elements(arr, func(v int) {
		if b, ok := decodeBlock(d, v); ok {
			out = append(out, b)
		}
	})
	return out
}

// blockFields are the members of a block that tack models (tape indexes).
type blockFields struct {
	typ, text, id, name, input, toolUseID, content, isError int
	thinking, signature, dataF, source, citations, cache    int
}

func decodeBlock(d *doc, i int) (llm.Block, bool) {
	data := d.data
	v := d.tape[i]
	if v.kind != kindObject {
		return llm.Block{}, false
	}
	f := blockFields{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
	d.members(i, func(k, val int) {
		ks := d.tape[k]
		key := data[ks.start+1 : ks.end-1]
		if ks.esc {
			key = []byte(ks.str(data))
		}
		switch string(key) {
		case "type":
			f.typ = val
		case "text":
			f.text = val
		case "id":
			f.id = val
		case "name":
			f.name = val
		case "input":
			f.input = val
		case "tool_use_id":
			f.toolUseID = val
		case "content":
			f.content = val
		case "is_error":
			f.isError = val
		case "thinking":
			f.thinking = val
		case "signature":
			f.signature = val
		case "data":
			f.dataF = val
		case "source":
			f.source = val
		case "citations":
			f.citations = val
		case "cache_control":
			f.cache = val
		}
	})
	at := func(j int) span {
		if j < 0 {
			return span{}
		}
		return d.tape[j]
	}
	typ := at(f.typ)
	if !typ.isString() {
		return llm.Block{}, false
	}
	b := llm.Block{Type: typ.str(data)}
	okAll := true
	// optString reads a field that must be a string or absent/null.
	optString := func(j int) string {
		switch sp := at(j); sp.kind {
		case kindString:
			return sp.str(data)
		case kindNone, kindNull:
			return ""
		}
		okAll = false
		return ""
	}
	raw := func() json.RawMessage { return append(json.RawMessage(nil), v.raw(data)...) }
	switch b.Type {
	case llm.TypeText:
		b.Text = optString(f.text)
		if c := at(f.citations); c.ok() && !c.isNull() {
			b.Raw = raw()
		}
	case llm.TypeToolUse, llm.TypeServerToolUse:
		b.ID, b.Name = optString(f.id), optString(f.name)
		if in := at(f.input); in.ok() {
			b.Input = append(json.RawMessage(nil), in.raw(data)...)
		}
	case llm.TypeToolResult:
		b.ToolUseID = optString(f.toolUseID)
		switch at(f.isError).kind {
		case kindTrue:
			b.IsError = true
		case kindFalse, kindNull, kindNone:
		default:
			okAll = false
		}
		switch c := at(f.content); c.kind {
		case kindString:
			b.Content = []llm.Block{llm.Text(c.str(data))}
		case kindArray:
			b.Content = decodeBlocks(d, f.content)
		case kindNone, kindNull:
		default:
			okAll = false
		}
	case llm.TypeThinking:
		b.Thinking, b.Signature = optString(f.thinking), optString(f.signature)
	case llm.TypeRedactedThinking:
		b.Data = optString(f.dataF)
	case llm.TypeImage:
		if src := at(f.source); src.kind == kindObject {
			var is llm.ImageSource
			if json.Unmarshal(src.raw(data), &is) != nil {
				return llm.Block{}, false
			}
			b.Source = &is
		} else {
			b.Raw = raw()
		}
	default:
		b.Raw = raw()
		return b, true
	}
	if cc := at(f.cache); cc.kind == kindObject {
		var c llm.CacheControl
		if json.Unmarshal(cc.raw(data), &c) == nil {
			b.CacheControl = &c
		}
	}
	return b, okAll
}
