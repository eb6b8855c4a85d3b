package extension

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/permission"
)

var hookTypes = []string{hook.TypeCommand, hook.TypeHTTP, hook.TypePrompt, hook.TypeAgent, hook.TypeMCPTool}

// hookContext says where hooks come from and how their text is expanded.
type hookContext struct {
	// source is the Handler.Source of every handler ("plugin:lint",
	// "skill:deploy", "agent:reviewer").
	source string
	// pluginRoot, when set, replaces ${CLAUDE_PLUGIN_ROOT} in commands and
	// is passed to command hooks as CLAUDE_PLUGIN_ROOT.
	pluginRoot string
}

// parseHooks reads a "hooks" value — {"Event": [{"matcher": …, "hooks":
// [handler…]}]}, the shape of settings files — into a hook.Config. The
// first problem found is returned.
func parseHooks(n *node, path, key string, hc hookContext) (hook.Config, *config.Error) {
	if n == nil || n.kind == kindNull {
		return nil, nil
	}
	f := field{path: path}
	if n.kind != kindMap {
		return nil, f.typeErr(n, key, `a mapping of hook events ({"PreToolUse": [...]})`)
	}
	cfg := hook.Config{}
	for _, m := range n.mems {
		ek := key + "." + m.key
		if !config.IsHookEvent(m.key) {
			return nil, &config.Error{Source: config.Source{Path: path, Line: m.line, Col: m.col}, Key: ek, Msg: fmt.Sprintf("unknown hook event %q%s", m.key, didYouMean(m.key, config.HookEvents()))}
		}
		if m.val.kind == kindNull {
			continue
		}
		if m.val.kind != kindSeq {
			return nil, f.typeErr(m.val, ek, "a list of matcher groups")
		}
		for i, g := range m.val.elems {
			gk := fmt.Sprintf("%s[%d]", ek, i)
			mg, err := parseMatcherGroup(g, path, gk, hc)
			if err != nil {
				return nil, err
			}
			cfg[hook.Event(m.key)] = append(cfg[hook.Event(m.key)], mg)
		}
	}
	return cfg, nil
}

func parseMatcherGroup(g *node, path, key string, hc hookContext) (hook.Matcher, *config.Error) {
	f := field{path: path}
	var mg hook.Matcher
	if g.kind != kindMap {
		return mg, f.typeErr(g, key, `a matcher group {"matcher": "...", "hooks": [...]}`)
	}
	if mn := g.get("matcher"); mn != nil && mn.kind != kindNull {
		s, err := f.str(mn, key+".matcher")
		if err != nil {
			return mg, err
		}
		if _, cerr := hook.CompilePattern(s); cerr != nil {
			return mg, errAt(path, mn, key+".matcher", "not a tool name, a '|' list of names or a valid regular expression", cerr)
		}
		mg.Matcher = s
	}
	hs := g.get("hooks")
	if hs == nil || hs.kind == kindNull {
		msg := `missing "hooks" (the list of handlers of this matcher)`
		if g.get("type") != nil || g.get("command") != nil {
			msg = `missing "hooks": handlers go in a nested list, {"matcher": "...", "hooks": [{"type": "command", "command": "..."}]}`
		}
		return mg, errAt(path, g, key, msg, nil)
	}
	if hs.kind != kindSeq {
		return mg, f.typeErr(hs, key+".hooks", "a list of hook handlers")
	}
	for j, h := range hs.elems {
		hd, err := parseHandler(h, path, fmt.Sprintf("%s.hooks[%d]", key, j), hc)
		if err != nil {
			return mg, err
		}
		mg.Hooks = append(mg.Hooks, hd)
	}
	return mg, nil
}

func parseHandler(n *node, path, key string, hc hookContext) (hook.Handler, *config.Error) {
	f := field{path: path}
	h := hook.Handler{Source: hc.source, Origin: fmt.Sprintf("%s:%d", path, n.line)}
	if n.kind != kindMap {
		return h, f.typeErr(n, key, `a hook handler {"type": "command", "command": "..."}`)
	}
	for _, m := range n.mems {
		k, v := key+"."+m.key, m.val
		if v.kind == kindNull {
			continue
		}
		var err *config.Error
		switch m.key {
		case "type":
			if h.Type, err = f.str(v, k); err == nil && !slices.Contains(hookTypes, h.Type) {
				err = errAt(path, v, k, fmt.Sprintf("unknown hook type %q (want command, http, prompt, agent or mcp_tool)", h.Type), nil)
			}
		case "command":
			h.Command, err = f.str(v, k)
		case "timeout":
			if v.kind != kindNumber {
				return h, f.typeErr(v, k, "a number of seconds")
			}
			sec, perr := strconv.ParseFloat(v.str, 64)
			if perr != nil || sec < 0 || sec > math.MaxInt32 {
				err = errAt(path, v, k, fmt.Sprintf("timeout %s is not a usable number of seconds", v.str), nil)
			}
			h.Timeout = sec
		case "statusMessage":
			h.StatusMessage, err = f.str(v, k)
		case "once":
			h.Once, err = f.boolean(v, k)
		case "async":
			h.Async, err = f.boolean(v, k)
		case "if":
			if h.If, err = f.str(v, k); err == nil {
				if _, perr := permission.ParseRule(h.If); perr != nil {
					err = errAt(path, v, k, fmt.Sprintf("invalid condition %q", h.If), perr)
				}
			}
		case "onFailure":
			if h.OnFailure, err = f.str(v, k); err == nil && h.OnFailure != "continue" && h.OnFailure != "block" {
				err = errAt(path, v, k, fmt.Sprintf("onFailure %q is neither continue nor block", h.OnFailure), nil)
			}
		case "url":
			h.URL, err = f.str(v, k)
		case "headers":
			h.Headers, err = stringMap(v, path, k)
		case "allowedEnvVars":
			h.AllowedEnvVars, err = f.list(v, k)
		case "prompt":
			h.Prompt, err = f.str(v, k)
		case "model":
			h.Model, err = f.str(v, k)
		case "server":
			h.Server, err = f.str(v, k)
		case "tool":
			h.Tool, err = f.str(v, k)
		case "input":
			if v.kind != kindMap {
				return h, f.typeErr(v, k, "a mapping")
			}
			h.Input = v.json()
		}
		if err != nil {
			return h, err
		}
	}
	if h.Type == "" {
		return h, errAt(path, n, key, `missing "type" (want command, http, prompt, agent or mcp_tool)`, nil)
	}
	var need string
	switch h.Type {
	case hook.TypeCommand:
		if strings.TrimSpace(h.Command) == "" {
			need = "command"
		}
	case hook.TypeHTTP:
		if strings.TrimSpace(h.URL) == "" {
			need = "url"
		}
	case hook.TypePrompt, hook.TypeAgent:
		if strings.TrimSpace(h.Prompt) == "" {
			need = "prompt"
		}
	case hook.TypeMCPTool:
		if h.Server == "" || h.Tool == "" {
			need = "server and tool"
		}
	}
	if need != "" {
		return h, errAt(path, n, key, fmt.Sprintf("missing %s (required for type %q)", need, h.Type), nil)
	}
	if hc.pluginRoot != "" {
		h.Command = expandPluginRoot(h.Command, hc.pluginRoot)
		h.URL = expandPluginRoot(h.URL, hc.pluginRoot)
		if h.Type == hook.TypeCommand {
			h.Env = map[string]string{"CLAUDE_PLUGIN_ROOT": hc.pluginRoot}
		}
	}
	return h, nil
}

// expandPluginRoot replaces ${CLAUDE_PLUGIN_ROOT} (and the bare form) by root.
func expandPluginRoot(s, root string) string {
	if !strings.Contains(s, "CLAUDE_PLUGIN_ROOT") {
		return s
	}
	s = strings.ReplaceAll(s, "${CLAUDE_PLUGIN_ROOT}", root)
	return strings.ReplaceAll(s, "$CLAUDE_PLUGIN_ROOT", root)
}

func stringMap(n *node, path, key string) (map[string]string, *config.Error) {
	f := field{path: path}
	if n.kind != kindMap {
		return nil, f.typeErr(n, key, "a mapping of names to strings")
	}
	out := make(map[string]string, len(n.mems))
	for _, m := range n.mems {
		s, err := f.str(m.val, key+"."+m.key)
		if err != nil {
			return nil, err
		}
		out[m.key] = s
	}
	return out, nil
}

// mergeHooks appends src's matcher groups to dst's, event by event.
func mergeHooks(dst, src hook.Config) hook.Config {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = hook.Config{}
	}
	for _, ev := range slices.Sorted(maps.Keys(src)) {
		dst[ev] = append(dst[ev], src[ev]...)
	}
	return dst
}
