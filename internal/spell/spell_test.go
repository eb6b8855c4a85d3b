package spell

import "testing"

func TestDistance(t *testing.T) {
	if d := Distance("kitten", "sitting", 10); d != 3 {
		t.Errorf("Distance = %d", d)
	}
	if d := Distance("a", "abcdef", 3); d != 3 {
		t.Errorf("limited Distance = %d", d)
	}
}
