package hook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/lazyregexp"
)

// envRef is a $VAR or ${VAR} reference in an http hook's header value.
var envRef = lazyregexp.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// wildcard compiles an allowedHttpHookUrls pattern: "*" matches any run of
// characters, everything else itself, and the pattern covers the whole URL.
func wildcard(p string) *regexp.Regexp {
	parts := strings.Split(p, "*")
	for i, s := range parts {
		parts[i] = regexp.QuoteMeta(s)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

func (r *Runner) urlAllowed(u string) bool {
	if r.urlAllow == nil {
		return true
	}
	for _, re := range r.urlAllow {
		if re.MatchString(u) {
			return true
		}
	}
	return false
}

// runHTTP posts the payload to an http hook. A 2xx answer is read like a
// command hook's exit-0 stdout (empty: nothing to say; JSON object: the
// hook's Output; other text: plain output). Anything else — a refused URL,
// a network error, another status — is a non-blocking error.
func (r *Runner) runHTTP(ctx context.Context, h Handler, payload []byte) answer {
	if !r.urlAllowed(h.URL) {
		return answer{status: StatusError, message: fmt.Sprintf("http hook URL %s is not allowed by allowedHttpHookUrls", h.URL)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(payload))
	if err != nil {
		return answer{status: StatusError, message: fmt.Sprintf("http hook: %v", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	allowed := r.headerVars(h)
	for k, v := range h.Headers {
		req.Header.Set(k, envRef().ReplaceAllStringFunc(v, func(ref string) string {
			name := strings.Trim(ref, "${}")
			if !slices.Contains(allowed, name) {
				return ""
			}
			return lookupEnv(r.env, name)
		}))
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return answer{status: StatusCancelled}
		}
		return answer{status: StatusError, message: fmt.Sprintf("http hook %s: %v", h.URL, err)}
	}
	defer resp.Body.Close()
	body := newCapped(r.maxOut)
	_, err = io.Copy(body, resp.Body)
	a := answer{stdout: body.String(), output: body.String()}
	if err != nil {
		if ctx.Err() != nil {
			a.status = StatusCancelled
			return a
		}
		a.status, a.message = StatusError, fmt.Sprintf("http hook %s: reading the response: %v", h.URL, err)
		return a
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a.status = StatusError
		a.message = fmt.Sprintf("http hook %s answered %s", h.URL, resp.Status)
		if s := strings.TrimSpace(a.stdout); s != "" {
			a.message += ": " + firstLine(s)
		}
		return a
	}
	a.status, a.text = StatusSuccess, a.stdout
	return a
}

// headerVars is the variables h may expand in its headers: its
// allowedEnvVars, cut down to the settings' httpHookAllowedEnvVars when
// that list is set.
func (r *Runner) headerVars(h Handler) []string {
	global := r.opts.Settings.HTTPHookAllowedEnvVars
	if global == nil {
		return h.AllowedEnvVars
	}
	var out []string
	for _, v := range h.AllowedEnvVars {
		if slices.Contains(global, v) {
			out = append(out, v)
		}
	}
	return out
}

// lookupEnv finds name in an environment list; the last entry wins, as
// for a process started with it.
func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	return line
}
