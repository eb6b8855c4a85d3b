package session

import (
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/llm"
)

// The functions here rebuild a conversation exactly as the Agent SDK's
// getSessionMessages does (shared/compat/sdk-sessions.md, "How
// getSessionMessages orders messages"), so that tack resumes the very
// conversation the SDK shows.

// node is a chain record: user, assistant, system, attachment or progress
// with a string uuid.
type node struct {
	*line  // the batch's decoded line, which it keeps (a copy would be as large again)
	lineNo int
	index  int    // position in file order, counting chain records only
	first  int    // position of the uuid's first appearance (map order)
	raw    []byte // the line, when kept for Fork
}

// graph holds the chain records of a file by uuid.
type graph struct {
	byUUID map[string]*node
	order  []*node // distinct uuids in order of first appearance
	n      int
}

func newGraph() *graph { return &graph{byUUID: map[string]*node{}} }

// reserve makes room for n records in a graph that holds none yet, so that
// a long transcript's records go in without the map growing step by step.
func (g *graph) reserve(n int) {
	if g.n == 0 {
		g.byUUID, g.order = make(map[string]*node, n), make([]*node, 0, n)
	}
}

// add records n; a repeated uuid replaces the earlier record but keeps its
// first position, as a JavaScript Map does.
func (g *graph) add(n *node) {
	n.index = g.n
	g.n++
	if old := g.byUUID[n.uuid]; old != nil {
		n.first = old.first
		g.order[old.first] = n
	} else {
		n.first = len(g.order)
		g.order = append(g.order, n)
	}
	g.byUUID[n.uuid] = n
}

func (g *graph) parentOf(n *node) *node {
	if n.parent == "" {
		return nil
	}
	return g.byUUID[n.parent]
}

func isMessage(n *node) bool { return n.typ == TypeUser || n.typ == TypeAssistant }

// mainLine is the SDK's test for records that can end the main conversation.
func mainLine(n *node) bool { return !n.sidechain && !n.teamName && n.typ != TypeProgress }

// leaf picks the user or assistant record the conversation ends at: among
// main-line records no main-line record points to, the one latest in the
// file from which walking up reaches a message. nil when there is none.
func (g *graph) leaf() *node {
	if len(g.order) == 0 {
		return nil
	}
	// pointed is by position in order: a record's parent is another
	// record of the graph, or no record (a uuid pointed to that no line
	// holds).
	pointed := make([]bool, len(g.order))
	for _, n := range g.order {
		if mainLine(n) {
			if p := g.parentOf(n); p != nil {
				pointed[p.first] = true
			}
		}
	}
	var cands []*node
	for _, n := range g.order {
		if mainLine(n) && !pointed[n.first] {
			cands = append(cands, n)
		}
	}
	slices.SortFunc(cands, func(a, b *node) int { return b.index - a.index })
	dead := map[string]bool{}
	for _, c := range cands {
		var walked []string
		seen := map[string]bool{}
		for cur := c; cur != nil && !dead[cur.uuid] && !seen[cur.uuid]; cur = g.parentOf(cur) {
			if isMessage(cur) {
				return cur
			}
			seen[cur.uuid] = true
			walked = append(walked, cur.uuid)
		}
		for _, u := range walked {
			dead[u] = true
		}
	}
	// No main-line leaf: fall back to every terminal record, preferring
	// messages that are not sidechain, team or meta.
	referenced := make(map[string]bool, len(g.order))
	for _, n := range g.order {
		if n.parent != "" {
			referenced[n.parent] = true
		}
	}
	var found []*node
	for _, n := range g.order {
		if referenced[n.uuid] {
			continue
		}
		seen := map[string]bool{}
		for cur := n; cur != nil && !seen[cur.uuid]; cur = g.parentOf(cur) {
			seen[cur.uuid] = true
			if isMessage(cur) {
				found = append(found, cur)
				break
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	latest := func(ns []*node) *node {
		best := ns[0]
		for _, n := range ns[1:] {
			if n.index > best.index {
				best = n
			}
		}
		return best
	}
	var plain []*node
	for _, n := range found {
		if !n.sidechain && !n.teamName && !n.isMeta {
			plain = append(plain, n)
		}
	}
	if len(plain) > 0 {
		return latest(plain)
	}
	return latest(found)
}

// chain walks up from leaf to the root (null parent, unknown uuid or a
// cycle), then pulls back in the pieces off that path.
func (g *graph) chain(leaf *node) []*node {
	// A walk up from the leaf that meets no record twice visits at most
	// every record; the set of the records met is needed only when the
	// walk turns out longer (a cycle) or leaves records out (pullIn).
	path := make([]*node, 0, len(g.order))
	for cur := leaf; cur != nil; cur = g.parentOf(cur) {
		if len(path) == len(g.order) {
			return g.chainOfCycle(leaf)
		}
		path = append(path, cur)
	}
	slices.Reverse(path)
	if len(path) == len(g.order) {
		return path // every record is on the path: nothing to pull in
	}
	on := make(map[string]bool, len(path))
	for _, n := range path {
		on[n.uuid] = true
	}
	return g.pullIn(path, on)
}

// chainOfCycle is chain for a leaf whose walk up meets a record again: the
// walk stops before it.
func (g *graph) chainOfCycle(leaf *node) []*node {
	var path []*node
	on := map[string]bool{}
	for cur := leaf; cur != nil && !on[cur.uuid]; cur = g.parentOf(cur) {
		on[cur.uuid] = true
		path = append(path, cur)
	}
	slices.Reverse(path)
	return g.pullIn(path, on)
}

func toolIDs(n *node, typ string) []string {
	var ids []string
	if n.contentStr {
		return nil
	}
	for i := range n.content {
		b := &n.content[i]
		if b.Type != typ {
			continue
		}
		if typ == llm.TypeToolUse && b.ID != "" {
			ids = append(ids, b.ID)
		} else if typ == llm.TypeToolResult && b.ToolUseID != "" {
			ids = append(ids, b.ToolUseID)
		}
	}
	return ids
}

// isToolResultRecord: a user record with a parent whose content array holds
// a tool_result block.
func isToolResultRecord(n *node) bool {
	if n.typ != TypeUser || n.parent == "" || n.contentStr || !n.hasMessage {
		return false
	}
	for i := range n.content {
		if n.content[i].Type == llm.TypeToolResult {
			return true
		}
	}
	return false
}

func assistantID(n *node) string {
	if n.typ != TypeAssistant || !n.hasMessage {
		return ""
	}
	return n.msgID
}

// pullIn inserts, right after the last chain assistant of each API message,
// the pieces of that message that are off the chain (same message.id) and
// the tool results that answer it, sorted by timestamp.
func (g *graph) pullIn(path []*node, on map[string]bool) []*node {
	if len(path) == len(g.order) {
		return path // every record is on the path: nothing to pull in
	}
	var chainAsst []*node
	lastOfID := map[string]*node{}
	for _, n := range path {
		if n.typ == TypeAssistant {
			chainAsst = append(chainAsst, n)
			if id := assistantID(n); id != "" {
				lastOfID[id] = n
			}
		}
	}
	if len(chainAsst) == 0 {
		return path
	}
	byID := map[string][]*node{}
	// owner maps a tool_use id to the record holding it; nil when records of
	// different API messages claim it.
	owner := map[string]*node{}
	ownerSet := map[string]bool{}
	var results []*node
	for _, n := range g.order {
		if id := assistantID(n); id != "" {
			byID[id] = append(byID[id], n)
			for _, tu := range toolIDs(n, llm.TypeToolUse) {
				prev, had := owner[tu], ownerSet[tu]
				if !had || prev != nil && assistantID(prev) == id {
					owner[tu] = n
				} else {
					owner[tu] = nil
				}
				ownerSet[tu] = true
			}
		} else if isToolResultRecord(n) {
			results = append(results, n)
		}
	}
	attached := map[string][]*node{}
	type edge struct{ parent, child string }
	attachedSeen := map[edge]bool{}
	attach := func(parent string, n *node) {
		k := edge{parent, n.uuid}
		if attachedSeen[k] {
			return
		}
		attachedSeen[k] = true
		attached[parent] = append(attached[parent], n)
	}
	sameSide := func(a, b *node) bool { return a.sidechain == b.sidechain && a.agentID == b.agentID }
	for _, r := range results {
		attach(r.parent, r)
		if r.srcAsst != "" && r.srcAsst != r.parent {
			if src := g.byUUID[r.srcAsst]; src != nil && sameSide(r, src) {
				attach(src.uuid, r)
			}
		}
		for _, id := range toolIDs(r, llm.TypeToolResult) {
			if x := owner[id]; x != nil && sameSide(r, x) {
				attach(x.uuid, r)
			}
		}
	}
	answered := map[string]bool{}
	for _, n := range path {
		for _, id := range toolIDs(n, llm.TypeToolResult) {
			answered[id] = true
		}
	}
	done := map[string]bool{}
	after := map[string][]*node{}
	total := 0
	for _, a := range chainAsst {
		id := assistantID(a)
		if id == "" || done[id] {
			continue
		}
		done[id] = true
		pieces := byID[id]
		if pieces == nil {
			pieces = []*node{a}
		}
		inPieces := map[string]bool{}
		for _, p := range pieces {
			inPieces[p.uuid] = true
		}
		var off, direct, indirect []*node
		for _, p := range pieces {
			if !on[p.uuid] {
				off = append(off, p)
			}
		}
		seen := map[string]bool{}
		for _, p := range pieces {
			for _, h := range attached[p.uuid] {
				if on[h.uuid] || seen[h.uuid] {
					continue
				}
				seen[h.uuid] = true
				if inPieces[h.parent] {
					direct = append(direct, h)
				} else {
					indirect = append(indirect, h)
				}
			}
		}
		if len(indirect) > 0 {
			covered := make(map[string]bool, len(answered))
			for k := range answered {
				covered[k] = true
			}
			for _, h := range direct {
				for _, x := range toolIDs(h, llm.TypeToolResult) {
					covered[x] = true
				}
			}
			slices.SortStableFunc(indirect, func(x, y *node) int { return x.first - y.first })
			for _, h := range indirect {
				ids := toolIDs(h, llm.TypeToolResult)
				if !slices.ContainsFunc(ids, func(x string) bool {
					o := owner[x]
					return !covered[x] && o != nil && inPieces[o.uuid]
				}) {
					continue
				}
				for _, x := range ids {
					covered[x] = true
				}
				direct = append(direct, h)
			}
		}
		if len(off) == 0 && len(direct) == 0 {
			continue
		}
		byTime := func(x, y *node) int { return strings.Compare(x.timestamp, y.timestamp) }
		slices.SortStableFunc(off, byTime)
		slices.SortStableFunc(direct, byTime)
		ins := append(off, direct...)
		for _, n := range ins {
			on[n.uuid] = true
		}
		total += len(ins)
		after[lastOfID[id].uuid] = ins
	}
	if total == 0 {
		return path
	}
	out := make([]*node, 0, len(path)+total)
	for _, n := range path {
		out = append(out, n)
		out = append(out, after[n.uuid]...)
	}
	return out
}
