package lsp

import (
	"strings"

	"github.com/charmbracelet/x/powernap/pkg/lsp/protocol"
)

// The protocol types are those of powernap's protocol package (Charm's LSP
// client, behind Crush), generated from the LSP 3.17 meta-model by gopls'
// generator, unions included. It was chosen for what it costs: this package
// is linked into every tack run, and that one imports only the standard
// library and does no work at init. What is here is where tack departs from
// its types, and tack's own words for them.

// hover is textDocument/hover's result. The library's Hover narrows contents
// to MarkupContent, as gopls does for itself; other servers may answer a
// MarkedString or a list of them, which the library's union decodes.
type hover struct {
	Contents protocol.Or_Hover_contents `json:"contents"`
}

// hoverText flattens MarkupContent, MarkedString or a list of them.
func hoverText(c protocol.Or_Hover_contents) string {
	switch v := c.Value.(type) {
	case protocol.MarkupContent:
		return strings.TrimSpace(v.Value)
	case protocol.MarkedString:
		return markedText(v)
	case []protocol.MarkedString:
		var parts []string
		for _, s := range v {
			if t := markedText(s); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func markedText(s protocol.MarkedString) string {
	switch v := s.Value.(type) {
	case string:
		return strings.TrimSpace(v)
	case protocol.MarkedStringWithLanguage:
		return strings.TrimSpace(v.Value)
	}
	return ""
}

// clientCapabilities are what tack declares in initialize. encoding/json
// keeps the library's struct-valued capabilities even when empty
// (omitempty does not drop structs), so the lists inside them are set empty
// rather than left to go out as null, which a strictly typed server
// (rust-analyzer's, for one) rejects as a list and so fails initialize.
func clientCapabilities() protocol.ClientCapabilities {
	return protocol.ClientCapabilities{
		TextDocument: protocol.TextDocumentClientCapabilities{
			Synchronization: &protocol.TextDocumentSyncClientCapabilities{DidSave: true},
			Hover:           &protocol.HoverClientCapabilities{ContentFormat: []protocol.MarkupKind{protocol.PlainText, protocol.Markdown}},
			Definition:      &protocol.DefinitionClientCapabilities{LinkSupport: true},
			Implementation:  &protocol.ImplementationClientCapabilities{LinkSupport: true},
			DocumentSymbol:  protocol.DocumentSymbolClientCapabilities{HierarchicalDocumentSymbolSupport: true},
			CallHierarchy:   &protocol.CallHierarchyClientCapabilities{},
			CodeAction: protocol.CodeActionClientCapabilities{CodeActionLiteralSupport: protocol.ClientCodeActionLiteralOptions{
				CodeActionKind: protocol.ClientCodeActionKindOptions{ValueSet: []protocol.CodeActionKind{}}}},
			SemanticTokens: protocol.SemanticTokensClientCapabilities{
				TokenTypes: []string{}, TokenModifiers: []string{}, Formats: []protocol.TokenFormat{}},
		},
		Workspace: protocol.WorkspaceClientCapabilities{
			Configuration:    true,
			WorkspaceFolders: true,
			Symbol:           &protocol.WorkspaceSymbolClientCapabilities{},
		},
	}
}

// kindNames are tack's words for the symbol kinds in its output.
var kindNames = [...]string{protocol.File: "file", protocol.Module: "module", protocol.Namespace: "namespace",
	protocol.Package: "package", protocol.Class: "class", protocol.Method: "method", protocol.Property: "property",
	protocol.Field: "field", protocol.Constructor: "constructor", protocol.Enum: "enum", protocol.Interface: "interface",
	protocol.Function: "function", protocol.Variable: "variable", protocol.Constant: "constant", protocol.String: "string",
	protocol.Number: "number", protocol.Boolean: "boolean", protocol.Array: "array", protocol.Object: "object",
	protocol.Key: "key", protocol.Null: "null", protocol.EnumMember: "enum member", protocol.Struct: "struct",
	protocol.Event: "event", protocol.Operator: "operator", protocol.TypeParameter: "type parameter"}

func kindName(k protocol.SymbolKind) string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "symbol"
}

// uriPath is the file a URI names; a URI of another scheme is shown as it is.
func uriPath(uri protocol.DocumentURI) string {
	if p, err := uri.Path(); err == nil && p != "" {
		return p
	}
	return string(uri)
}
