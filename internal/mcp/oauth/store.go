package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/tackcode/tack/internal/atomicfile"
)

// record is what tack keeps about one server's authorization: the client it
// authorized as, the endpoints to refresh at, and the token. One JSON file
// per server, readable by the user only.
type record struct {
	// Server and URL name the server the record belongs to; they are kept
	// for whoever reads the file, the file name being a hash.
	Server string `json:"server"`
	URL    string `json:"url"`

	// ClientID is the client the token was issued to. ClientSecret is kept
	// only for a client tack registered itself (a pre-configured secret
	// stays in the configuration).
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// Registered marks a client tack registered dynamically (RFC 7591): it
	// is reused for later flows, with RedirectURI, the redirect URI it was
	// registered with.
	Registered  bool   `json:"registered,omitempty"`
	RedirectURI string `json:"redirect_uri,omitempty"`

	AuthURL   string           `json:"authorization_endpoint"`
	TokenURL  string           `json:"token_endpoint"`
	AuthStyle oauth2.AuthStyle `json:"auth_style,omitempty"`

	// Scopes are the scopes granted, the base of the next step-up.
	Scopes []string `json:"scopes,omitempty"`

	Token *storedToken `json:"token,omitempty"`
}

// storedToken is the persisted part of an oauth2.Token.
type storedToken struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

func fromOAuth2(t *oauth2.Token) *storedToken {
	return &storedToken{AccessToken: t.AccessToken, TokenType: t.TokenType, RefreshToken: t.RefreshToken, Expiry: t.Expiry}
}

func (t *storedToken) oauth2() *oauth2.Token {
	return &oauth2.Token{AccessToken: t.AccessToken, TokenType: t.TokenType, RefreshToken: t.RefreshToken, Expiry: t.Expiry}
}

// clone returns a deep copy, so that a record handed out is never changed
// under its reader.
func (r *record) clone() *record {
	if r == nil {
		return nil
	}
	c := *r
	c.Scopes = append([]string(nil), r.Scopes...)
	if r.Token != nil {
		t := *r.Token
		c.Token = &t
	}
	return &c
}

// config is the OAuth client configuration the record's token refreshes with.
// secret is the pre-configured client secret, used when the record's client
// is the pre-configured one.
func (r *record) config(s Server) *oauth2.Config {
	secret := r.ClientSecret
	if !r.Registered && r.ClientID == s.ClientID {
		secret = s.ClientSecret
	}
	return &oauth2.Config{
		ClientID:     r.ClientID,
		ClientSecret: secret,
		Endpoint:     oauth2.Endpoint{AuthURL: r.AuthURL, TokenURL: r.TokenURL, AuthStyle: r.AuthStyle},
		Scopes:       r.Scopes,
	}
}

// store keeps records as files in one directory.
type store struct {
	dir string
}

// path is the file of a server: its name made safe for a file name, then a
// hash of name and URL, so that two servers of one name (in two projects)
// or a server whose URL changed never share tokens.
func (s *store) path(srv Server) string {
	sum := sha256.Sum256([]byte(srv.Name + "\x00" + srv.URL))
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, srv.Name)
	if len(safe) > 40 {
		safe = safe[:40]
	}
	return filepath.Join(s.dir, safe+"-"+hex.EncodeToString(sum[:6])+".json")
}

// load reads the record of a server; nil without error when there is none.
func (s *store) load(srv Server) (*record, error) {
	p := s.path(srv)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading OAuth tokens: %w", err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("reading OAuth tokens %s: %w", p, err)
	}
	if r.Server != srv.Name || r.URL != srv.URL {
		return nil, fmt.Errorf("OAuth tokens %s belong to server %q at %s", p, r.Server, r.URL)
	}
	return &r, nil
}

// save writes the record atomically (a temporary file renamed over the old
// one), readable and writable by the user only, so that a crash or a
// concurrent tack never leaves a torn file.
func (s *store) save(srv Server, r *record) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("saving OAuth tokens: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("saving OAuth tokens: %w", err)
	}
	if err := atomicfile.Write(s.path(srv), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving OAuth tokens: %w", err)
	}
	return nil
}

// remove deletes the record of a server; a missing one is not an error.
func (s *store) remove(srv Server) error {
	if err := os.Remove(s.path(srv)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting OAuth tokens: %w", err)
	}
	return nil
}
