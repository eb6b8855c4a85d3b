package anthropic

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// logRequests is the middleware that writes each HTTP request to the
// debug log: method, URL, status, the time to the response's headers and
// the request id. Headers are not logged: they carry the key.
func logRequests(log *slog.Logger) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		start := time.Now()
		log.Debug("API request", "method", req.Method, "url", req.URL.Redacted())
		resp, err := next(req)
		took := time.Since(start).Round(time.Millisecond)
		if err != nil {
			log.Debug("API request failed", "method", req.Method, "url", req.URL.Redacted(), "after", took, "error", err)
			return resp, err
		}
		log.Debug("API response", "method", req.Method, "url", req.URL.Redacted(), "status", resp.StatusCode,
			"after", took, "request_id", resp.Header.Get("request-id"))
		return resp, err
	}
}
