package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

const testHTML = `<!doctype html><html><head><title>T</title><style>body{}</style></head>
<body><script>alert("x")</script><h1>Install</h1><p>Run <code>go get example.com/x</code> then read <a href="/docs/intro">the intro</a>.</p>
<table><tr><th>flag</th><th>meaning</th></tr><tr><td>-v</td><td>verbose</td></tr></table></body></html>`

// newSite serves the pages the tests fetch. Its /away redirect points at
// the same server under the name localhost, which is another host.
func newSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, testHTML)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "line one\n<b>not html</b>\n")
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"version":"1.2.3"}`)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		u, _ := url.Parse(srv.URL)
		http.Redirect(w, r, "http://localhost:"+u.Port()+"/page", http.StatusFound)
	})
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	})
	mux.HandleFunc("/mislabelled", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("PK\x03\x04\x00\x00binary"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("0123456789\n", 1000))
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func testFetchTool() fetchTool {
	f := newFetchTool()
	f.maxBytes = 4000
	f.budget = 1000
	return f
}

func TestFetchContent(t *testing.T) {
	site := newSite(t)
	f := testFetchTool()
	env := &tool.Env{}
	for _, c := range []struct {
		path      string
		want      []string
		notWant   []string
		binary    bool
		truncated bool
	}{
		{path: "/page", want: []string{"# Install", "`go get example.com/x`", "[the intro](" + site.URL + "/docs/intro)", "| flag | meaning |"}, notWant: []string{"alert", "body{}"}},
		{path: "/plain", want: []string{"line one\n<b>not html</b>\n"}},
		{path: "/data.json", want: []string{`{"version":"1.2.3"}`}},
		{path: "/latin1", want: []string{"café"}},
		{path: "/moved", want: []string{"# Install"}},
		{path: "/image.png", binary: true},
		{path: "/mislabelled", binary: true},
		{path: "/big", want: []string{"0123456789\n"}, truncated: true},
	} {
		t.Run(c.path, func(t *testing.T) {
			u, _ := url.Parse(site.URL + c.path)
			p, err := f.fetch(context.Background(), env, u)
			if err != nil {
				t.Fatal(err)
			}
			if p.code != 200 || p.codeText != "OK" {
				t.Errorf("code %d %q", p.code, p.codeText)
			}
			if p.binary != c.binary || p.truncated != c.truncated {
				t.Errorf("binary %v truncated %v", p.binary, p.truncated)
			}
			for _, w := range c.want {
				if !strings.Contains(p.content, w) {
					t.Errorf("content lacks %q:\n%s", w, p.content)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(p.content, w) {
					t.Errorf("content has %q:\n%s", w, p.content)
				}
			}
			if c.truncated && p.bytes != int(f.maxBytes) {
				t.Errorf("read %d bytes, want the cap %d", p.bytes, f.maxBytes)
			}
		})
	}
}

// runFetch calls WebFetch without a model: only for results that need none.
func runFetch(t *testing.T, f fetchTool, env *tool.Env, input string) (tool.Result, fetchResult) {
	t.Helper()
	reg := tool.NewRegistry(f)
	if err := reg.Validate(f, json.RawMessage(input)); err != nil {
		t.Fatalf("input %s: %v", input, err)
	}
	res, err := f.Run(context.Background(), env, json.RawMessage(input))
	if err != nil {
		t.Fatalf("WebFetch %s: %v", input, err)
	}
	fr, ok := res.Structured.(fetchResult)
	if !ok {
		t.Fatalf("structured result is %T", res.Structured)
	}
	if fr.Result != llm.TextOf(res.Content) {
		t.Errorf("structured result %q differs from content %q", fr.Result, llm.TextOf(res.Content))
	}
	return res, fr
}

func TestFetchResultsWithoutModel(t *testing.T) {
	site := newSite(t)
	f := testFetchTool()
	env := &tool.Env{}
	u, _ := url.Parse(site.URL)

	res, fr := runFetch(t, f, env, fmt.Sprintf(`{"url":%q,"prompt":"p"}`, site.URL+"/away"))
	want := fmt.Sprintf("http://localhost:%s/page", u.Port())
	if res.IsError || fr.Code != 302 || !strings.Contains(fr.Result, "another host: "+want) || !strings.Contains(fr.Result, "not followed") {
		t.Errorf("cross-host redirect: %+v", fr)
	}
	if fr.URL != site.URL+"/away" {
		t.Errorf("structured url %q", fr.URL)
	}

	res, fr = runFetch(t, f, env, fmt.Sprintf(`{"url":%q,"prompt":"p"}`, site.URL+"/missing"))
	if res.IsError || fr.Code != 404 || !strings.Contains(fr.Result, "HTTP 404 Not Found") {
		t.Errorf("404: %v %+v", res.IsError, fr)
	}

	res, fr = runFetch(t, f, env, fmt.Sprintf(`{"url":%q,"prompt":"p"}`, site.URL+"/image.png"))
	if !res.IsError || !strings.Contains(fr.Result, "image/png") || fr.Bytes == 0 {
		t.Errorf("binary: %v %+v", res.IsError, fr)
	}

	// Content that needs the model fails cleanly when there is none.
	_, err := f.Run(context.Background(), env, json.RawMessage(fmt.Sprintf(`{"url":%q,"prompt":"p"}`, site.URL+"/plain")))
	if !errors.Is(err, errNoModel) {
		t.Errorf("no model: %v", err)
	}
}

func TestFetchBadInput(t *testing.T) {
	f := testFetchTool()
	for _, in := range []string{
		`{"url":"ftp://example.com/x","prompt":"p"}`,
		`{"url":"not a url","prompt":"p"}`,
		`{"url":"https://user:pw@example.com/","prompt":"p"}`,
		`{"url":"https://example.com/","prompt":"  "}`,
		`{"url":"https://example.com/` + strings.Repeat("a", maxURLLength) + `","prompt":"p"}`,
	} {
		if _, err := f.Run(context.Background(), &tool.Env{}, json.RawMessage(in)); !tool.IsInputError(err) {
			t.Errorf("%.80s: want input error, got %v", in, err)
		}
	}
	reg := tool.NewRegistry(f)
	if err := reg.Validate(f, json.RawMessage(`{"url":"https://example.com/","prompt":"p","offset":-1}`)); !tool.IsInputError(err) {
		t.Errorf("negative offset: %v", err)
	}
}

func TestParseURLUpgrades(t *testing.T) {
	for in, want := range map[string]string{
		"http://example.com/a?b=1#frag":  "https://example.com/a?b=1",
		"https://example.com/":           "https://example.com/",
		"http://127.0.0.1:8080/x":        "http://127.0.0.1:8080/x",
		"http://localhost:3000/":         "http://localhost:3000/",
		"http://[::1]:3000/":             "http://[::1]:3000/",
		" http://docs.example.org/page ": "https://docs.example.org/page",
	} {
		u, err := parseURL(in)
		if err != nil || u.String() != want {
			t.Errorf("parseURL(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
}

// redirectTo serves every request, whatever its host, from target, and
// counts the requests and the schemes they asked for.
type redirectTo struct {
	target *url.URL
	hits   atomic.Int32
	scheme atomic.Value
}

func (rt *redirectTo) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.hits.Add(1)
	rt.scheme.Store(req.URL.Scheme)
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = rt.target.Scheme, rt.target.Host, ""
	return http.DefaultTransport.RoundTrip(out)
}

func TestFetchCacheAndUpgrade(t *testing.T) {
	site := newSite(t)
	target, _ := url.Parse(site.URL)
	rt := &redirectTo{target: target}
	env := &tool.Env{HTTP: &http.Client{Transport: rt}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := testFetchTool()
	f.now = func() time.Time { return now }

	u, _ := parseURL("http://docs.example.org/plain")
	for range 2 {
		if _, err := f.load(context.Background(), env, u); err != nil {
			t.Fatal(err)
		}
	}
	if rt.hits.Load() != 1 || rt.scheme.Load() != "https" {
		t.Errorf("%d requests, scheme %v; want 1 over https", rt.hits.Load(), rt.scheme.Load())
	}
	now = now.Add(16 * time.Minute)
	if _, err := f.load(context.Background(), env, u); err != nil {
		t.Fatal(err)
	}
	if rt.hits.Load() != 2 {
		t.Errorf("expired entry not refetched: %d requests", rt.hits.Load())
	}

	// Local pages are never cached.
	local, _ := url.Parse(site.URL + "/plain")
	for range 2 {
		if _, err := f.load(context.Background(), env, local); err != nil {
			t.Fatal(err)
		}
	}
	if rt.hits.Load() != 4 {
		t.Errorf("local page cached: %d requests", rt.hits.Load())
	}
}

func TestPageCacheEvicts(t *testing.T) {
	c := &pageCache{entries: map[string]cachedPage{}}
	now := time.Now()
	c.put("a", page{content: "aaaa"}, now, now.Add(time.Minute), 10)
	c.put("b", page{content: "bbbb"}, now, now.Add(2*time.Minute), 10)
	c.put("c", page{content: "cccc"}, now, now.Add(3*time.Minute), 10)
	if _, ok := c.get("a", now); ok {
		t.Error("a should have been evicted first")
	}
	if _, ok := c.get("c", now); !ok || c.size != 8 {
		t.Errorf("c missing or size %d", c.size)
	}
	c.put("huge", page{content: strings.Repeat("x", 11)}, now, now.Add(time.Hour), 10)
	if _, ok := c.get("huge", now); ok {
		t.Error("a page larger than the cache was cached")
	}
}

func TestWindow(t *testing.T) {
	content := strings.Repeat("abcdefghi\n", 10) // 100 bytes
	part, from, next, err := window(content, 0, 35)
	if err != nil || from != 0 || next != 30 || part != content[:30] {
		t.Errorf("first part: %q %d %d %v", part, from, next, err)
	}
	part, _, next, _ = window(content, 90, 35)
	if next != 0 || part != "abcdefghi\n" {
		t.Errorf("last part: %q %d", part, next)
	}
	if _, _, _, err := window(content, 100, 35); err == nil {
		t.Error("offset at the end accepted")
	}
	// No line break near the end: cut at a rune boundary.
	part, _, next, _ = window("ééééé", 0, 5)
	if part != "éé" || next != 4 {
		t.Errorf("rune cut: %q %d", part, next)
	}
	if _, from, _, _ := window("ééééé", 3, 5); from != 2 {
		t.Errorf("offset inside a rune moved to %d, want 2", from)
	}
}
