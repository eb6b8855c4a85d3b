package llm

import "testing"

func TestReminder(t *testing.T) {
	tests := []struct{ heading, text, want string }{
		{"", "SessionStart hook additional context: x", "<system-reminder>\nSessionStart hook additional context: x\n</system-reminder>"},
		{"", "a\nb", "<system-reminder>\na\nb\n</system-reminder>"},
		{"Contents of /p/CLAUDE.md (project instructions):", "Be brief.",
			"<system-reminder>Contents of /p/CLAUDE.md (project instructions):\n\nBe brief.\n</system-reminder>"},
	}
	for _, tt := range tests {
		got := Reminder(tt.heading, tt.text)
		if got.Type != TypeText || got.Text != tt.want {
			t.Errorf("Reminder(%q, %q) = %+v, want text %q", tt.heading, tt.text, got, tt.want)
		}
	}
}
