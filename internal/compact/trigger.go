package compact

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/llm"
)

// DefaultThreshold is the share of the context window at which a conversation
// is compacted automatically when neither the environment nor a setting says
// otherwise.
const DefaultThreshold = 0.8

// EnvThresholdOverride names the environment variable that sets the
// auto-compaction threshold as a percentage of the context window ("70").
const EnvThresholdOverride = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"

// UsedTokens is the size of the context a request filled: everything it read
// (uncached, read from cache and written to cache) plus what it wrote, since
// the output becomes input of the next request.
func UsedTokens(u llm.Usage) int64 {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens + u.OutputTokens
}

// ShouldCompact reports whether the last request filled at least threshold
// (a share in (0, 1]) of a context window of contextWindow tokens. A threshold
// outside (0, 1] means DefaultThreshold. An unknown window (≤ 0) or a zero
// usage never asks for compaction; use EstimateTokens when no usage is known.
func ShouldCompact(lastUsage llm.Usage, contextWindow int, threshold float64) bool {
	if contextWindow <= 0 {
		return false
	}
	if threshold <= 0 || threshold > 1 {
		threshold = DefaultThreshold
	}
	used := UsedTokens(lastUsage)
	return used > 0 && float64(used) >= threshold*float64(contextWindow)
}

// Threshold returns the auto-compaction threshold as a share of the window.
// Precedence: the environment variable EnvThresholdOverride, read through
// getenv (nil means none), then settingPercent (tack's setting, a percentage;
// 0 means unset), then DefaultThreshold. A value that cannot be used is
// skipped for the next one and reported in the error, so the caller can warn
// and still go on with the returned threshold.
func Threshold(getenv func(string) string, settingPercent float64) (float64, error) {
	var problem error
	if getenv != nil {
		if v := strings.TrimSpace(getenv(EnvThresholdOverride)); v != "" {
			share, err := ParsePercent(v)
			if err == nil {
				return share, nil
			}
			problem = fmt.Errorf("%s: %w", EnvThresholdOverride, err)
		}
	}
	if settingPercent != 0 {
		if settingPercent > 0 && settingPercent <= 100 {
			return settingPercent / 100, problem
		}
		err := fmt.Errorf("auto-compaction setting: %g is not a percentage in (0, 100]", settingPercent)
		if problem == nil {
			problem = err
		} else {
			problem = fmt.Errorf("%w; %w", problem, err)
		}
	}
	return DefaultThreshold, problem
}

// ParsePercent reads a percentage such as "75", "72.5" or "75%" and returns it
// as a share in (0, 1]. Values outside (0, 100] are errors: "0.8" means 0.8 %,
// not 80 %, and is accepted as such.
func ParsePercent(s string) (float64, error) {
	v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	pct, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a percentage", s)
	}
	if !(pct > 0 && pct <= 100) { // also rejects NaN
		return 0, fmt.Errorf("%q is not a percentage in (0, 100]", s)
	}
	return pct / 100, nil
}

// bytesPerToken is the rough ratio every estimate in this package uses.
// English prose is close to it; code and JSON have somewhat more tokens per
// byte, which is why requests keep a margin and retry smaller when the API
// says a prompt is too long.
const bytesPerToken = 4

// Image token estimates by encoded size. The API scales large images down
// (about 1,600 tokens at most for a full-size image); small ones cost less.
// Decoding every image to read its dimensions on each estimate would cost far
// more than the precision is worth.
const (
	imageTokensSmall  = 200  // under 16 KiB of data: icons, small crops
	imageTokensMedium = 800  // under 128 KiB
	imageTokensLarge  = 1600 // larger, or a URL whose size is unknown
	messageOverhead   = 4    // role and framing of one message
	blockOverhead     = 3    // framing of one content block
)

// EstimateTokens returns a rough token count of msgs: bytes/4 of their text,
// tool inputs, tool results and other blocks, images by size class. It is
// meant for deciding when to compact and how much to trim when no usage from
// the API is at hand, not for billing.
func EstimateTokens(msgs []llm.Message) int {
	n := 0
	for i := range msgs {
		n += messageTokens(msgs[i])
	}
	return n
}

func messageTokens(m llm.Message) int {
	return messageOverhead + blocksTokens(m.Content)
}

func blocksTokens(blocks []llm.Block) int {
	n := 0
	for i := range blocks {
		n += blockTokens(blocks[i])
	}
	return n
}

func blockTokens(b llm.Block) int {
	switch {
	case b.Type == llm.TypeImage:
		return blockOverhead + imageTokens(b)
	case len(b.Raw) > 0:
		return blockOverhead + byteTokens(len(b.Raw))
	}
	switch b.Type {
	case llm.TypeText:
		return blockOverhead + byteTokens(len(b.Text))
	case llm.TypeToolUse, llm.TypeServerToolUse:
		return blockOverhead + byteTokens(len(b.ID)+len(b.Name)+len(b.Input))
	case llm.TypeToolResult:
		return blockOverhead + byteTokens(len(b.ToolUseID)) + blocksTokens(b.Content)
	case llm.TypeThinking:
		return blockOverhead + byteTokens(len(b.Thinking))
	case llm.TypeRedactedThinking:
		return blockOverhead + byteTokens(len(b.Data))
	}
	return blockOverhead
}

func imageTokens(b llm.Block) int {
	if len(b.Raw) > 0 && b.Source == nil {
		return imageTokensLarge
	}
	if b.Source == nil || b.Source.Type != "base64" {
		return imageTokensLarge
	}
	decoded := len(b.Source.Data) / 4 * 3
	switch {
	case decoded < 16<<10:
		return imageTokensSmall
	case decoded < 128<<10:
		return imageTokensMedium
	}
	return imageTokensLarge
}

func byteTokens(n int) int { return (n + bytesPerToken - 1) / bytesPerToken }
