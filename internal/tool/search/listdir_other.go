//go:build !linux

package search

import "os"

// listDir appends the entries of directory path to d.names and d.ents.
func listDir(path string, d *dirScratch) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	for _, e := range entries {
		switch t := e.Type(); {
		case t.IsDir():
			d.add([]byte(e.Name()), kindDir)
		case t.IsRegular():
			d.add([]byte(e.Name()), kindFile)
		}
	}
	return err
}
