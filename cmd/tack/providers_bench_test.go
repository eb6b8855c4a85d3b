package main

// BenchmarkSayHiByProvider: the whole process of `-p "say hi"` on each
// provider's wire format, against its fake, with the variables a user of
// that provider sets. With CLAUDE_BIN naming a Claude Code binary, the same
// runs on it, with the same variables, for the four providers it speaks.
//
//	go test ./cmd/tack -run XXX -bench SayHiByProvider -benchtime 20x
//	CLAUDE_BIN=/path/to/claude go test ./cmd/tack -run XXX -bench SayHiByProvider -benchtime 10x

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// providerRun is one provider's fake and the environment that selects it.
type providerRun struct {
	name    string
	claude  bool // Claude Code speaks this provider
	prepare func(b *testing.B, srv *llmtest.Server, home string) []string
}

var providerRuns = []providerRun{
	{"anthropic", true, func(b *testing.B, srv *llmtest.Server, home string) []string {
		return []string{"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + srv.URL()}
	}},
	{"bedrock", true, func(b *testing.B, srv *llmtest.Server, home string) []string {
		f := llmtest.NewBedrock(b, srv, llmtest.BedrockAuth{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", Region: "us-east-1"})
		return []string{"CLAUDE_CODE_USE_BEDROCK=1", "ANTHROPIC_BEDROCK_BASE_URL=" + f.URL(), "AWS_EC2_METADATA_DISABLED=true",
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=secret"}
	}},
	// Claude Code's Google client takes its token from oauth2.googleapis.com
	// whatever the key file's token_uri says, so only tack runs with the
	// fake's service account; both run through a gateway that authenticates.
	{"vertex", false, func(b *testing.B, srv *llmtest.Server, home string) []string {
		v := llmtest.NewVertex(b, srv, "bench-project", "us-east5")
		creds := v.WriteServiceAccount(b, home, "bench-project")
		return []string{"CLAUDE_CODE_USE_VERTEX=1", "ANTHROPIC_VERTEX_BASE_URL=" + v.URL() + "/v1",
			"CLOUD_ML_REGION=us-east5", "ANTHROPIC_VERTEX_PROJECT_ID=bench-project", "GOOGLE_APPLICATION_CREDENTIALS=" + creds}
	}},
	{"vertex-gateway", true, func(b *testing.B, srv *llmtest.Server, home string) []string {
		v := llmtest.NewVertex(b, srv, "bench-project", "us-east5")
		v.NoAuth = true
		return []string{"CLAUDE_CODE_USE_VERTEX=1", "ANTHROPIC_VERTEX_BASE_URL=" + v.URL() + "/v1",
			"CLOUD_ML_REGION=us-east5", "ANTHROPIC_VERTEX_PROJECT_ID=bench-project", "CLAUDE_CODE_SKIP_VERTEX_AUTH=1"}
	}},
	{"foundry", true, func(b *testing.B, srv *llmtest.Server, home string) []string {
		f := llmtest.NewFoundry(b, srv, "foundry-key")
		return []string{"CLAUDE_CODE_USE_FOUNDRY=1", "ANTHROPIC_FOUNDRY_BASE_URL=" + f.URL() + "/anthropic/",
			"ANTHROPIC_FOUNDRY_API_KEY=foundry-key"}
	}},
	{"openai-compatible", false, func(b *testing.B, srv *llmtest.Server, home string) []string {
		settings := `{"providers": {"local": {"type": "openai", "baseURL": "` + srv.URL() + `/v1", "apiKeyEnv": "LOCAL_KEY",
			"models": {"qwen": {"contextWindow": 32768}}}}, "model": "local/qwen"}`
		if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
			b.Fatal(err)
		}
		return []string{"LOCAL_KEY=" + chatKey}
	}},
}

func BenchmarkSayHiByProvider(b *testing.B) {
	bins := map[string]string{"tack": tackBin}
	if c := os.Getenv("CLAUDE_BIN"); c != "" {
		bins["claude"] = c
	}
	for _, p := range providerRuns {
		for _, who := range []string{"tack", "claude"} {
			bin, ok := bins[who]
			if !ok || (who == "claude" && !p.claude) {
				continue
			}
			b.Run(p.name+"/"+who, func(b *testing.B) {
				srv := llmtest.Start(b, llmtest.Options{ChatKey: chatKey, Loop: true, Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("hi"))}})
				home, dir := b.TempDir(), b.TempDir()
				if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
					b.Fatal(err)
				}
				env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
					"ANTHROPIC_API_KEY=", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
					"DISABLE_ERROR_REPORTING=1"}, p.prepare(b, srv, home)...)
				var cpu, wall []time.Duration
				var rss []int64
				b.ResetTimer()
				for b.Loop() {
					cmd := exec.Command(bin, "-p", "say hi")
					cmd.Dir, cmd.Env = dir, env
					start := time.Now()
					out, err := cmd.CombinedOutput()
					wall = append(wall, time.Since(start))
					if err != nil || strings.TrimSpace(string(out)) != "hi" {
						b.Fatalf("%s on %s: %v\n%s", who, p.name, err, out)
					}
					ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
					cpu = append(cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
					rss = append(rss, ru.Maxrss)
				}
				b.ReportMetric(float64(median(cpu))/1e6, "cpu-ms")
				b.ReportMetric(float64(median(wall))/1e6, "wall-ms")
				b.ReportMetric(float64(median(rss))/1024, "maxrss-MiB")
			})
		}
	}
}

func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
