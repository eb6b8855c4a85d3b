//go:build !linux

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
)

var errNoUnnamed = errors.New("no unnamed files on this system")

// openUnnamed fails: only Linux has O_TMPFILE.
func openUnnamed(string, fs.FileMode) (*os.File, error) { return nil, errNoUnnamed }

func linkUnnamed(*os.File, string) error { return errNoUnnamed }
