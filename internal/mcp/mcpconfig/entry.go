package mcpconfig

import (
	"encoding/json"
	"strconv"
)

// StdioEntry is the JSON entry of a stdio server, as `claude mcp add` writes
// it: {"type":"stdio","command":…,"args":[…],"env":{…}}, args and env always
// present, env in the order given.
func StdioEntry(command string, args []string, env []KV) json.RawMessage {
	b := []byte(`{"type":"stdio","command":`)
	b = appendQuoted(b, command)
	b = append(b, `,"args":`...)
	b = append(b, stringsJSON(args)...)
	b = append(b, `,"env":`...)
	b = appendKVs(b, env)
	return append(b, '}')
}

// RemoteEntry is the JSON entry of an http, sse or ws server, as
// `claude mcp add --transport http` writes it: {"type":…,"url":…} with
// "headers" (in the order given) and "oauth" when there are any.
func RemoteEntry(t Type, url string, headers []KV, oauth *OAuth) json.RawMessage {
	b := []byte(`{"type":`)
	b = appendQuoted(b, string(t))
	b = append(b, `,"url":`...)
	b = appendQuoted(b, url)
	if len(headers) > 0 {
		b = append(b, `,"headers":`...)
		b = appendKVs(b, headers)
	}
	if oauth != nil && (oauth.ClientID != "" || oauth.CallbackPort != 0) {
		b = append(b, `,"oauth":{`...)
		sep := ""
		if oauth.ClientID != "" {
			b = appendQuoted(append(b, `"clientId":`...), oauth.ClientID)
			sep = ","
		}
		if oauth.CallbackPort != 0 {
			b = strconv.AppendInt(append(b, sep+`"callbackPort":`...), int64(oauth.CallbackPort), 10)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendKVs appends pairs as a JSON object; a repeated key keeps its last
// value, at its first place.
func appendKVs(b []byte, kvs []KV) []byte {
	last := map[string]string{}
	for _, kv := range kvs {
		last[kv.Key] = kv.Value
	}
	b = append(b, '{')
	done := map[string]bool{}
	for _, kv := range kvs {
		if done[kv.Key] {
			continue
		}
		done[kv.Key] = true
		if len(done) > 1 {
			b = append(b, ',')
		}
		b = append(appendQuoted(b, kv.Key), ':')
		b = appendQuoted(b, last[kv.Key])
	}
	return append(b, '}')
}
