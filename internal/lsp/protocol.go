package lsp

import "encoding/json"

// The few protocol types tack uses, by their LSP names. Written here rather
// than imported: a full protocol package costs binary size for the handful
// of requests a session makes.

type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// locationLink is what servers may answer to definition requests instead.
type locationLink struct {
	TargetURI            string `json:"targetUri"`
	TargetSelectionRange Range  `json:"targetSelectionRange"`
}

type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity"` // 1 error, 2 warning, 3 information, 4 hint
	Source   string `json:"source,omitempty"`
	Message  string `json:"message"`
}

type textDocumentPosition struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Position Position `json:"position"`
}

// documentSymbol covers both answers a server may give: the hierarchical
// DocumentSymbol and the flat SymbolInformation.
type documentSymbol struct {
	Name           string           `json:"name"`
	Kind           int              `json:"kind"`
	Detail         string           `json:"detail,omitempty"`
	Range          Range            `json:"range"`
	SelectionRange Range            `json:"selectionRange"`
	Location       *Location        `json:"location,omitempty"`
	ContainerName  string           `json:"containerName,omitempty"`
	Children       []documentSymbol `json:"children,omitempty"`
}

type callHierarchyItem struct {
	Name           string          `json:"name"`
	Kind           int             `json:"kind"`
	Detail         string          `json:"detail,omitempty"`
	URI            string          `json:"uri"`
	Range          Range           `json:"range"`
	SelectionRange Range           `json:"selectionRange"`
	Data           json.RawMessage `json:"data,omitempty"`
}

type callHierarchyCall struct {
	From *callHierarchyItem `json:"from,omitempty"`
	To   *callHierarchyItem `json:"to,omitempty"`
}

var symbolKinds = []string{"", "file", "module", "namespace", "package", "class", "method", "property",
	"field", "constructor", "enum", "interface", "function", "variable", "constant", "string",
	"number", "boolean", "array", "object", "key", "null", "enum member", "struct", "event",
	"operator", "type parameter"}

func kindName(k int) string {
	if k > 0 && k < len(symbolKinds) {
		return symbolKinds[k]
	}
	return "symbol"
}
