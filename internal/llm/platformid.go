package llm

import (
	"strings"

	"github.com/tackcode/tack/internal/lazyregexp"
)

// Cloud platforms name the same models differently: Bedrock as inference
// profiles ("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), Vertex AI
// with the date after an "@" ("claude-sonnet-4-5@20250929"). The
// catalogue keeps the first-party id; PlatformID and FirstPartyID go
// between the two.

// Platforms whose model ids differ from the Anthropic API's.
const (
	PlatformBedrock = "bedrock"
	PlatformVertex  = "vertex"
)

// PlatformID is the model's id on platform: its platform_ids entry, else
// the rule most models follow (us.anthropic.<id> on Bedrock, <id> on
// Vertex). Bedrock ids start with the "us." inference-profile prefix;
// BedrockRegionID moves them to another geography.
func (m Model) PlatformID(platform string) string {
	if id := m.PlatformIDs[platform]; id != "" {
		return id
	}
	if platform == PlatformBedrock {
		return "us.anthropic." + m.ID
	}
	return m.ID
}

// bedrockGeos are the inference-profile prefixes Bedrock knows.
var bedrockGeos = []string{"us", "eu", "apac", "jp", "au", "us-gov", "global"}

// BedrockGeo is the inference-profile prefix of an AWS region, as Claude
// Code derives it: us-gov, us, eu, apac, else global.
func BedrockGeo(region string) string {
	switch {
	case strings.HasPrefix(region, "us-gov-"):
		return "us-gov"
	case strings.HasPrefix(region, "us-"):
		return "us"
	case strings.HasPrefix(region, "eu-"):
		return "eu"
	case strings.HasPrefix(region, "ap-"):
		return "apac"
	}
	return "global"
}

// BedrockRegionID puts a Bedrock model id under the inference profile of
// geo: "us.anthropic.x" becomes "eu.anthropic.x", "anthropic.x" gains the
// prefix; anything else (an ARN, another vendor's model) is left alone.
func BedrockRegionID(id, geo string) string {
	for _, g := range bedrockGeos {
		if rest, ok := strings.CutPrefix(id, g+".anthropic."); ok {
			return geo + ".anthropic." + rest
		}
	}
	if strings.HasPrefix(id, "anthropic.") {
		return geo + "." + id
	}
	return id
}

// platformSuffix is a Bedrock version suffix ("-v1:0", "-v1").
var platformSuffix = lazyregexp.New(`-v\d+(:\d+)?$`)

// FirstPartyID is the Anthropic API's id for a platform's model id (an
// inference profile or its ARN, a Vertex id with "@date"); other ids come
// back unchanged.
func FirstPartyID(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 && strings.HasPrefix(id, "arn:") {
		id = id[i+1:]
	}
	for _, g := range bedrockGeos {
		if rest, ok := strings.CutPrefix(id, g+".anthropic."); ok {
			id = "anthropic." + rest
			break
		}
	}
	if rest, ok := strings.CutPrefix(id, "anthropic."); ok {
		id = platformSuffix().ReplaceAllString(rest, "")
	}
	return strings.Replace(id, "@", "-", 1)
}
