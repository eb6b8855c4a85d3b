package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tackcode/tack/internal/atomicfile"
)

// This file keeps the API key `tack auth login` stores. The file is tack's
// own (Claude Code keeps its OAuth login elsewhere, in a format of its
// own), private to the user, and written in one step.

// CredentialsFile is the name of the stored key's file in the config dir.
const CredentialsFile = "tack-credentials.json"

// storedCredentials is the file's content.
type storedCredentials struct {
	APIKey string `json:"apiKey"`
}

// CredentialsPath is where `tack auth login` stores its key:
// <config dir>/tack-credentials.json.
func CredentialsPath(getenv func(string) string) string {
	return filepath.Join(DefaultConfigDir(getenv), CredentialsFile)
}

// ReadStoredKey returns the key stored at path; "" and no error when there
// is no file.
func ReadStoredKey(path string) (string, error) {
	src, exists, err := ReadJSONFile(path, 64<<10)
	if err != nil {
		return "", fmt.Errorf("read credentials %s: %w", path, err)
	}
	if !exists {
		return "", nil
	}
	var c storedCredentials
	if err := json.Unmarshal(src, &c); err != nil {
		return "", fmt.Errorf("read credentials %s: %w (remove it with tack auth logout)", path, err)
	}
	return strings.TrimSpace(c.APIKey), nil
}

// StoreKey writes key to path, readable by the user only, creating the
// folder when needed.
func StoreKey(path, key string) error {
	key = strings.TrimSpace(key)
	if key == "" {
		return errors.New("store credentials: the key is empty")
	}
	if strings.ContainsAny(key, " \t\r\n") {
		return errors.New("store credentials: a key holds no white space")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	data, err := json.MarshalIndent(storedCredentials{APIKey: key}, "", "  ")
	if err != nil {
		return fmt.Errorf("store credentials: %w", err)
	}
	return atomicfile.Write(path, append(data, '\n'), 0o600)
}

// RemoveStoredKey deletes the file at path and reports whether there was
// one.
func RemoveStoredKey(path string) (bool, error) {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove credentials: %w", err)
	}
	return true, nil
}
