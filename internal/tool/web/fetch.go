package web

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html/charset"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

var (
	//go:embed fetch.md
	fetchDescription string
	//go:embed fetch_system.md
	fetchSystem string
)

const fetchSchema = `{"type":"object","properties":{` +
	`"url":{"type":"string","format":"uri","description":"The http(s) URL to fetch"},` +
	`"prompt":{"type":"string","description":"What to find in or do with the content"},` +
	`"offset":{"type":"integer","minimum":0,"description":"Where to start reading a long page, as a previous result said"}},` +
	`"required":["url","prompt"],"additionalProperties":false}`

const (
	maxURLLength    = 2000
	maxRedirects    = 10
	answerMaxTokens = 2048
)

// fetchTool is WebFetch. Its limits are fields so that tests can shrink them.
type fetchTool struct {
	maxBytes  int64         // body bytes read; the rest is dropped
	budget    int           // content bytes the small model reads per call
	timeout   time.Duration // for the whole HTTP exchange
	cacheTTL  time.Duration
	cacheSize int // content bytes the session's cache holds at most
	now       func() time.Time
}

func newFetchTool() fetchTool {
	return fetchTool{
		maxBytes:  10 << 20,
		budget:    100_000,
		timeout:   60 * time.Second,
		cacheTTL:  15 * time.Minute,
		cacheSize: 50 << 20,
		now:       time.Now,
	}
}

// fetchResult is WebFetch's structured result.
type fetchResult struct {
	Bytes      int    `json:"bytes"`
	Code       int    `json:"code"`
	CodeText   string `json:"codeText"`
	Result     string `json:"result"`
	DurationMs int64  `json:"durationMs"`
	URL        string `json:"url"`
}

func (fetchTool) Name() string                  { return "WebFetch" }
func (fetchTool) Description() string           { return fetchDescription }
func (fetchTool) InputSchema() json.RawMessage  { return json.RawMessage(fetchSchema) }
func (fetchTool) ReadOnly(json.RawMessage) bool { return true }

func (f fetchTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	start := time.Now()
	var in struct {
		URL    string `json:"url"`
		Prompt string `json:"prompt"`
		Offset int    `json:"offset"`
	}
	if err := tool.Decode(f.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	u, err := parseURL(in.URL)
	if err != nil {
		return tool.Result{}, &tool.InputError{Tool: f.Name(), Err: err}
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return tool.Result{}, tool.BadInput(f.Name(), "prompt must not be empty")
	}
	if in.Offset < 0 {
		return tool.Result{}, tool.BadInput(f.Name(), "offset must not be negative")
	}

	p, err := f.load(ctx, env, u)
	if err != nil {
		return tool.Result{}, err
	}
	res := fetchResult{Bytes: p.bytes, Code: p.code, CodeText: p.codeText, URL: in.URL}
	finish := func(text string, isError bool) (tool.Result, error) {
		res.Result = text
		res.DurationMs = time.Since(start).Milliseconds()
		return tool.Result{Content: []llm.Block{llm.Text(text)}, IsError: isError, Structured: res}, nil
	}
	switch {
	case p.redirect != "":
		return finish(fmt.Sprintf("%s redirects (%d %s) to another host: %s\n"+
			"The redirect was not followed. If that address is what you want, call WebFetch again with url %q.",
			u, p.code, p.codeText, p.redirect, p.redirect), false)
	case p.code < 200 || p.code > 299:
		// The fetch worked and its answer is the status, as Claude Code
		// reports it: a result, not a failed call.
		return finish(fmt.Sprintf("Fetching %s failed: HTTP %d %s.", u, p.code, p.codeText), false)
	case p.binary:
		return finish(fmt.Sprintf("%s is %s content, which WebFetch cannot read: it reads HTML, text and JSON.", u, p.mediaType), true)
	case strings.TrimSpace(p.content) == "":
		return finish(fmt.Sprintf("%s returned an empty page.", u), false)
	}

	part, from, next, err := window(p.content, in.Offset, f.budget)
	if err != nil {
		return tool.Result{}, &tool.InputError{Tool: f.Name(), Err: err}
	}
	var where string
	if from > 0 || next > 0 {
		end := next
		if end == 0 {
			end = len(p.content)
		}
		where = fmt.Sprintf("This is bytes %d to %d of a %d-byte page.", from, end, len(p.content))
	}
	answer, err := f.ask(ctx, env, u, part, where, in.Prompt)
	if err != nil {
		return tool.Result{}, fmt.Errorf("applying the prompt to %s: %w", u, err)
	}
	if next > 0 {
		answer += fmt.Sprintf("\n\n[%s The rest was not read: call WebFetch again with the same url and offset %d to continue.]", where, next)
	} else if where != "" {
		answer += fmt.Sprintf("\n\n[%s This is the last part.]", where)
	}
	if p.truncated {
		answer += fmt.Sprintf("\n\n[The page is larger than %d bytes; only its first %d bytes were read.]", f.maxBytes, f.maxBytes)
	}
	return finish(answer, false)
}

// parseURL checks a URL given by the model and upgrades http to https,
// except for the local machine, which seldom serves TLS.
func parseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > maxURLLength {
		return nil, fmt.Errorf("the URL is longer than %d characters", maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid URL %q: only http and https URLs can be fetched", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("invalid URL %q: no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("invalid URL %q: URLs carrying credentials are not fetched", raw)
	}
	if u.Scheme == "http" && !isLocal(u.Hostname()) {
		u.Scheme = "https"
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// isLocal reports whether host names this machine.
func isLocal(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameHost reports whether a redirect from a to b stays on the same server,
// taking www.example.com and example.com as one.
func sameHost(a, b *url.URL) bool {
	strip := func(u *url.URL) string { return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.") }
	return strip(a) == strip(b) && a.Port() == b.Port()
}

// page is what fetching a URL brought back.
type page struct {
	code      int
	codeText  string
	bytes     int    // size of the body read
	mediaType string // from Content-Type, or sniffed
	binary    bool   // a media type WebFetch does not read
	content   string // Markdown or text, in UTF-8
	truncated bool   // the body was cut at maxBytes
	redirect  string // target of a redirect to another host, not followed
}

// load returns the page at u, from the session's cache when it is fresh.
// Pages of the local machine are not cached: they change as the user works.
func (f fetchTool) load(ctx context.Context, env *tool.Env, u *url.URL) (page, error) {
	key := u.String()
	cache := sessionCache(env)
	cacheable := !isLocal(u.Hostname())
	if cacheable {
		if p, ok := cache.get(key, f.now()); ok {
			return p, nil
		}
	}
	p, err := f.fetch(ctx, env, u)
	if err != nil {
		return page{}, err
	}
	if cacheable && p.code < 400 {
		now := f.now()
		cache.put(key, p, now, now.Add(f.cacheTTL), f.cacheSize)
	}
	return p, nil
}

// fetch GETs u, following redirects on the same host only.
func (f fetchTool) fetch(ctx context.Context, env *tool.Env, u *url.URL) (page, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return page{}, fmt.Errorf("fetching %s: %w", u, err)
	}
	req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.1")
	req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; tack-WebFetch/1.0)")

	client := *env.HTTPClient() // a copy, to set our own redirect policy
	client.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if !sameHost(via[0].URL, next.URL) {
			return http.ErrUseLastResponse // reported to the model instead
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return page{}, fmt.Errorf("fetching %s: %w", u, err)
	}
	defer resp.Body.Close()

	p := page{code: resp.StatusCode, codeText: http.StatusText(resp.StatusCode)}
	if p.code >= 300 && p.code <= 399 {
		if loc, err := resp.Location(); err == nil {
			p.redirect = loc.String()
		}
		return p, nil
	}
	if p.code < 200 || p.code > 299 {
		return p, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return page{}, fmt.Errorf("reading %s: %w", u, err)
	}
	if int64(len(body)) > f.maxBytes {
		body, p.truncated = body[:f.maxBytes], true
	}
	p.bytes = len(body)

	contentType := resp.Header.Get("Content-Type")
	var kind contentKind
	p.mediaType, kind = classify(contentType, body)
	switch kind {
	case kindBinary:
		p.binary = true
	case kindText:
		p.content = string(toUTF8(body, contentType))
	case kindHTML:
		md, err := toMarkdown(ctx, string(toUTF8(body, contentType)), resp.Request.URL)
		if err != nil {
			return page{}, fmt.Errorf("converting %s to Markdown: %w", u, err)
		}
		p.content = md
	}
	return p, nil
}

type contentKind int

const (
	kindBinary contentKind = iota
	kindText
	kindHTML
)

// classify tells how to read a body from its Content-Type, sniffing the
// body when the header is missing or says nothing useful.
func classify(contentType string, body []byte) (string, contentKind) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt == "" || mt == "application/octet-stream" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return mt, kindHTML
	case !isTextType(mt):
		return mt, kindBinary
	}
	// A NUL byte near the start means a mislabelled binary file.
	if bytes.IndexByte(body[:min(len(body), 8000)], 0) >= 0 {
		return mt, kindBinary
	}
	return mt, kindText
}

// isTextType reports whether a media type is text worth reading as it is.
func isTextType(mt string) bool {
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/yaml", "application/x-yaml", "application/toml",
		"application/x-ndjson", "application/x-sh", "application/sql", "application/graphql":
		return true
	}
	return false
}

// toUTF8 decodes body from the charset its Content-Type or HTML declares.
// A body that is valid UTF-8 is kept unless the header names another charset,
// since a guess from the first bytes is easily wrong.
func toUTF8(body []byte, contentType string) []byte {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || (!certain && utf8.Valid(body)) {
		return body
	}
	if out, err := enc.NewDecoder().Bytes(body); err == nil {
		return out
	}
	return body
}

// toMarkdown converts an HTML page to Markdown, making links absolute.
func toMarkdown(ctx context.Context, html string, pageURL *url.URL) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
	return conv.ConvertString(html,
		converter.WithContext(ctx),
		converter.WithDomain(pageURL.Scheme+"://"+pageURL.Host))
}

// window returns the part of content that starts at offset and fits budget,
// where that part starts, and where the next one starts (0 when this part
// reaches the end). A part ends after a line break when one falls in its
// last quarter, and never inside a UTF-8 sequence.
func window(content string, offset, budget int) (part string, from, next int, err error) {
	if offset > 0 && offset >= len(content) {
		return "", 0, 0, fmt.Errorf("offset %d is past the end of the page (%d bytes)", offset, len(content))
	}
	for offset > 0 && !utf8.RuneStart(content[offset]) {
		offset--
	}
	end := offset + budget
	if end >= len(content) {
		return content[offset:], offset, 0, nil
	}
	if i := strings.LastIndexByte(content[offset:end], '\n'); i >= budget*3/4 {
		end = offset + i + 1
	} else {
		for end > offset+1 && !utf8.RuneStart(content[end]) {
			end--
		}
	}
	return content[offset:end], offset, end, nil
}

// ask has the small model apply prompt to part of a page.
func (f fetchTool) ask(ctx context.Context, env *tool.Env, u *url.URL, part, where, prompt string) (string, error) {
	if env.Model.Provider == nil {
		return "", errNoModel
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "<page source=%q>\n%s\n</page>\n\n", u.String(), part)
	if where != "" {
		msg.WriteString(where + "\n\n")
	}
	msg.WriteString(prompt)
	resp, err := env.Model.Provider.Stream(ctx, &llm.Request{
		Model:     env.Model.Small,
		System:    []llm.Block{llm.Text(fetchSystem)},
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text(msg.String())}}},
		MaxTokens: answerMaxTokens,
	}, llm.Observer{})
	if err != nil {
		return "", err
	}
	answer := strings.TrimSpace(llm.TextOf(resp.Content))
	if answer == "" {
		return "", errors.New("the model gave no answer")
	}
	return answer, nil
}
