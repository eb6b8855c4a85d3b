package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"
)

// newParser returns a CommonMark parser with the GitHub extensions the
// renderer knows: tables, ~~strikethrough~~ and task lists. They are ours,
// not goldmark/extension's, whose package initialisation (regular
// expressions, the HTML renderer) costs more than the whole core parser and
// would be paid by every start of tack.
func newParser() parser.Parser {
	inline := append(parser.DefaultInlineParsers(),
		util.Prioritized(taskParser{}, 0), // before links: "[ ]"
		util.Prioritized(strikeParser{}, 500),
	)
	paragraph := append(parser.DefaultParagraphTransformers(),
		util.Prioritized(tableTransformer{}, 200),
	)
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(inline...),
		parser.WithParagraphTransformers(paragraph...),
	)
}

// The kinds of our nodes.
var (
	kindStrike   = ast.NewNodeKind("TackStrikethrough")
	kindCheckBox = ast.NewNodeKind("TackTaskCheckBox")
	kindTable    = ast.NewNodeKind("TackTable")
	kindRow      = ast.NewNodeKind("TackTableRow")
	kindCell     = ast.NewNodeKind("TackTableCell")
)

// strike is ~~struck out~~ text.
type strike struct{ ast.BaseInline }

func (n *strike) Kind() ast.NodeKind { return kindStrike }

func (n *strike) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// checkBox is the "[ ]" or "[x]" that starts a task list item.
type checkBox struct {
	ast.BaseInline
	checked bool
}

func (n *checkBox) Kind() ast.NodeKind { return kindCheckBox }

func (n *checkBox) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// align is a table column's alignment.
type align uint8

const (
	alignNone align = iota
	alignLeft
	alignRight
	alignCenter
)

// table holds rows, the first of which is the header.
type table struct {
	ast.BaseBlock
	aligns []align
}

func (n *table) Kind() ast.NodeKind { return kindTable }

func (n *table) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// tableRow holds cells.
type tableRow struct{ ast.BaseBlock }

func (n *tableRow) Kind() ast.NodeKind { return kindRow }

func (n *tableRow) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }

// tableCell holds inline content (its one line is parsed like a paragraph's).
type tableCell struct{ ast.BaseBlock }

func (n *tableCell) Kind() ast.NodeKind { return kindCell }

func (n *tableCell) Dump(source []byte, level int) { ast.DumpHelper(n, source, level, nil, nil) }
