package compact

import (
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
)

func TestShouldCompact(t *testing.T) {
	tests := []struct {
		name      string
		usage     llm.Usage
		window    int
		threshold float64
		want      bool
	}{
		{"below", llm.Usage{InputTokens: 100_000}, 200_000, 0.8, false},
		{"exactly at", llm.Usage{InputTokens: 160_000}, 200_000, 0.8, true},
		{"all four counts add up", llm.Usage{InputTokens: 10_000, CacheReadInputTokens: 120_000,
			CacheCreationInputTokens: 20_000, OutputTokens: 10_000}, 200_000, 0.8, true},
		{"one short", llm.Usage{InputTokens: 10_000, CacheReadInputTokens: 120_000,
			CacheCreationInputTokens: 20_000, OutputTokens: 9_999}, 200_000, 0.8, false},
		{"lower threshold", llm.Usage{InputTokens: 100_000}, 200_000, 0.5, true},
		{"invalid threshold means default", llm.Usage{InputTokens: 150_000}, 200_000, 0, false},
		{"threshold over 1 means default", llm.Usage{InputTokens: 170_000}, 200_000, 1.5, true},
		{"unknown window", llm.Usage{InputTokens: 1_000_000}, 0, 0.8, false},
		{"no usage", llm.Usage{}, 200_000, 0.8, false},
		{"large window", llm.Usage{InputTokens: 700_000, CacheReadInputTokens: 100_000}, 1_000_000, 0.8, true},
	}
	for _, tt := range tests {
		if got := ShouldCompact(tt.usage, tt.window, tt.threshold); got != tt.want {
			t.Errorf("%s: ShouldCompact = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestThreshold(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvThresholdOverride {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name    string
		getenv  func(string) string
		setting float64
		want    float64
		wantErr string
	}{
		{"default", nil, 0, DefaultThreshold, ""},
		{"nothing set", env(""), 0, DefaultThreshold, ""},
		{"setting", env(""), 65, 0.65, ""},
		{"env beats setting", env("50"), 65, 0.5, ""},
		{"env with percent sign and spaces", env(" 72.5% "), 0, 0.725, ""},
		{"bad env falls back to setting", env("eighty"), 65, 0.65, EnvThresholdOverride},
		{"env out of range", env("150"), 0, DefaultThreshold, "(0, 100]"},
		{"env zero", env("0"), 0, DefaultThreshold, "(0, 100]"},
		{"bad setting", env(""), 120, DefaultThreshold, "setting"},
		{"both bad", env("-3"), -1, DefaultThreshold, "setting"},
		{"full window", env("100"), 0, 1, ""},
	}
	for _, tt := range tests {
		got, err := Threshold(tt.getenv, tt.setting)
		if got != tt.want {
			t.Errorf("%s: threshold %v, want %v", tt.name, got, tt.want)
		}
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one mentioning %q", tt.name, err, tt.wantErr)
		}
	}
	if _, err := ParsePercent("NaN"); err == nil {
		t.Error("ParsePercent(NaN) accepted")
	}
	if v, err := ParsePercent("0.8"); err != nil || v != 0.008 {
		t.Errorf("ParsePercent(0.8) = %v, %v; want 0.008 (a percentage, not a share)", v, err)
	}
}

func TestEstimateTokens(t *testing.T) {
	if n := EstimateTokens(nil); n != 0 {
		t.Errorf("empty: %d", n)
	}
	small := EstimateTokens([]llm.Message{user(text("hi"))})
	if small < 1 || small > 20 {
		t.Errorf("one short message: %d tokens", small)
	}
	// Text is about bytes/4.
	big := EstimateTokens([]llm.Message{user(text(strings.Repeat("abcd", 10_000)))})
	if big < 10_000 || big > 10_050 {
		t.Errorf("40 KB of text: %d tokens, want about 10000", big)
	}
	// Tool inputs and results count, results by their content.
	withTools := EstimateTokens([]llm.Message{
		user(text("go")),
		assistant(toolUse("t1", "Write", `{"content":"`+strings.Repeat("x", 4000)+`"}`)),
		user(result("t1", strings.Repeat("y", 8000))),
	})
	if withTools < 3000 || withTools > 3100 {
		t.Errorf("tool call of 4 KB and result of 8 KB: %d tokens, want about 3000", withTools)
	}
	// Images by size class, not by their base64 length.
	img := func(n int) llm.Block {
		return llm.Block{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: strings.Repeat("A", n)}}
	}
	tiny := EstimateTokens([]llm.Message{user(img(1000))})
	medium := EstimateTokens([]llm.Message{user(img(100_000))})
	huge := EstimateTokens([]llm.Message{user(img(5_000_000))})
	url := EstimateTokens([]llm.Message{user(llm.Block{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "url", URL: "https://x/y.png"}})})
	if !(tiny < medium && medium < huge && huge < 2000 && url == huge) {
		t.Errorf("image estimates tiny %d, medium %d, huge %d, url %d", tiny, medium, huge, url)
	}
	// Thinking counts; its signature does not.
	th := EstimateTokens([]llm.Message{assistant(llm.Block{Type: llm.TypeThinking, Thinking: strings.Repeat("t", 400), Signature: strings.Repeat("s", 4000)})})
	if th < 100 || th > 120 {
		t.Errorf("thinking of 400 bytes: %d tokens", th)
	}
	if got := UsedTokens(llm.Usage{InputTokens: 1, CacheReadInputTokens: 2, CacheCreationInputTokens: 3, OutputTokens: 4}); got != 10 {
		t.Errorf("UsedTokens = %d", got)
	}
}
