package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// Ping makes one cheap request, listing a single model (GET /v1/models),
// with no retries: whether the API answers and accepts the credentials,
// for `tack doctor`. A refusal is an *llm.APIError with its status.
func (p *Provider) Ping(ctx context.Context) error {
	_, opts, err := p.keyHeaders(ctx)
	if err != nil {
		return err
	}
	_, err = p.client.Models.List(ctx, sdk.ModelListParams{Limit: sdk.Int(1)}, opts...)
	if err != nil {
		return convertError(err)
	}
	return nil
}
