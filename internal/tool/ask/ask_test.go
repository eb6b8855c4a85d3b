package ask

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/tooltest"
)

const question = `{"question":"Which one?","header":"Pick","multiSelect":false,"options":[{"label":"A","description":"first"},{"label":"B","description":"second"}]}`

func TestAnswers(t *testing.T) {
	reg := tool.NewRegistry(Tools()...)
	env := tooltest.NewEnv(t)
	res := tooltest.MustCall(t, reg, env, Name, `{"questions":[`+question+`],"answers":{"Which one?":"B"},"annotations":{"Which one?":{"notes":"B is closer"}}}`)
	text := tooltest.Text(res)
	if res.IsError || !strings.Contains(text, `- "Which one?": "B" (their note: "B is closer")`) {
		t.Errorf("result %q", text)
	}
	if out := res.Structured.(Output); out.Answers["Which one?"] != "B" || len(out.Questions) != 1 {
		t.Errorf("structured %+v", out)
	}
}

// Without answers (nobody was asked) the result is an error the model can
// act on, not a failure of the run.
func TestUnanswered(t *testing.T) {
	reg := tool.NewRegistry(Tools()...)
	res, err := tooltest.Call(context.Background(), t, reg, tooltest.NewEnv(t), Name, `{"questions":[`+question+`]}`)
	if err != nil || !res.IsError || !strings.Contains(tooltest.Text(res), "No user can answer") {
		t.Errorf("result %+v, err %v", res, err)
	}
}

func TestBadQuestions(t *testing.T) {
	reg := tool.NewRegistry(Tools()...)
	env := tooltest.NewEnv(t)
	for name, input := range map[string]string{
		"no questions":       `{"questions":[]}`,
		"five questions":     `{"questions":[` + strings.Repeat(question+",", 4) + question + `]}`,
		"one option":         `{"questions":[{"question":"Q?","header":"H","multiSelect":false,"options":[{"label":"A","description":"a"}]}]}`,
		"no multiSelect":     `{"questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"a"},{"label":"B","description":"b"}]}]}`,
		"the same question":  `{"questions":[` + question + `,` + question + `]}`,
		"the same label":     `{"questions":[{"question":"Q?","header":"H","multiSelect":false,"options":[{"label":"A","description":"a"},{"label":"A","description":"b"}]}]}`,
		"an unknown field":   `{"questions":[` + question + `],"extra":1}`,
		"an answer not text": `{"questions":[` + question + `],"answers":{"Which one?":1}}`,
	} {
		tl, _ := reg.Get(Name)
		err := reg.Validate(tl, json.RawMessage(input))
		if err == nil {
			_, err = tl.Run(context.Background(), env, json.RawMessage(input))
		}
		if !tool.IsInputError(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
