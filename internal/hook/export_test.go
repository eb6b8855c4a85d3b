package hook

// The external tests (package hook_test, which may import hooktest) reach
// these through the names below.
var (
	ParseText   = parseText
	SampleLines = sampleLines
)
