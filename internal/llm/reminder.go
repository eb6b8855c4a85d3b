package llm

// The tags around context the model reads in a user turn that nobody typed
// there: memory files, hook output, notices, skill instructions. Claude
// Code's models are trained to take what they enclose as context, not as
// the user's words.
const (
	ReminderOpen  = "<system-reminder>"
	ReminderClose = "</system-reminder>"
)

// Reminder returns text as a model-visible reminder: a text block holding
// it between the reminder tags, the closing one on a line of its own. The
// text starts on the line after the opening tag; a heading, when given,
// stands on the opening tag's line instead, with a blank line before the
// text (Claude Code's memory blocks: "<system-reminder>Contents of PATH
// (kind):\n\nCONTENT\n</system-reminder>").
//
// Every reminder is made here: its bytes are part of the cached prompt
// prefix, so they have one definition.
func Reminder(heading, text string) Block {
	if heading != "" {
		return Text(ReminderOpen + heading + "\n\n" + text + "\n" + ReminderClose)
	}
	return Text(ReminderOpen + "\n" + text + "\n" + ReminderClose)
}
