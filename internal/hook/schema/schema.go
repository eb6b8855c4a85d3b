// Package schema publishes the JSON Schemas (draft 2020-12) of hook
// payloads and hook outputs: one file per event input (<Event>.input.json)
// and one for the output every hook may answer with (output.json). Claude
// Code publishes none; hook authors can validate their scripts against
// these, and tack's tests check its own payloads against them.
package schema

import (
	"embed"
	"fmt"
)

//go:embed *.json
var files embed.FS

// BaseURL is the prefix of every schema's $id; the file name follows it.
const BaseURL = "https://github.com/tackcode/tack/internal/hook/schema/"

// FS holds the schema files.
func FS() embed.FS { return files }

// Input returns the schema of event's payload.
func Input(event string) ([]byte, error) {
	b, err := files.ReadFile(event + ".input.json")
	if err != nil {
		return nil, fmt.Errorf("no input schema for hook event %q", event)
	}
	return b, nil
}

// Output returns the schema of a hook's JSON output.
func Output() []byte {
	b, err := files.ReadFile("output.json")
	if err != nil {
		panic("hook schema: output.json is not embedded") // a build defect
	}
	return b
}
