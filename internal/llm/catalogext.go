package llm

import "fmt"

// With returns a catalogue that also holds extra: the models of configured
// providers, named "<provider>/<id>". The receiver is not changed (the
// built-in catalogue is shared). An id already in the catalogue is an
// error.
func (c *Catalog) With(extra []Model) (*Catalog, error) {
	out := *c
	out.Models = append(append(make([]Model, 0, len(c.Models)+len(extra)), c.Models...), extra...)
	out.byID = make(map[string]int, len(out.Models))
	for id, i := range c.byID {
		out.byID[id] = i
	}
	for i, m := range extra {
		if _, dup := out.byID[m.ID]; dup {
			return nil, fmt.Errorf("model %q is in the catalogue twice", m.ID)
		}
		m.Known = true
		out.Models[len(c.Models)+i] = m
		out.byID[m.ID] = len(c.Models) + i
	}
	return &out, nil
}
