// Command stream is the floor of `tack -p PROMPT`: a static Go program that
// makes the same one streamed Messages request with net/http, writes the
// answer's text and exits. It reads no settings, sends no tools and keeps
// no transcript: what is left is the least a Go client can do, so the
// harness prints tack's figures as a ratio to its own.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: stream PROMPT (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY from the environment)")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "stream:", err)
		os.Exit(1)
	}
}

func run(prompt string) error {
	base := os.Getenv("ANTHROPIC_BASE_URL")
	if base == "" {
		base = "https://api.anthropic.com"
	}
	body, err := json.Marshal(map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": prompt}},
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(base, "/")+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", os.Getenv("ANTHROPIC_API_KEY"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /v1/messages: %s", resp.Status)
	}
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		var ev struct {
			Type  string `json:"type"`
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("event: %w", err)
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
			_, _ = out.WriteString(ev.Delta.Text)
		}
		if ev.Type == "message_stop" {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	_ = out.WriteByte('\n')
	return out.Flush()
}
