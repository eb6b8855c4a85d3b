package tui

import "github.com/tackcode/tack/internal/config"

// addAllowRule adds rule to permissions.allow in the settings file at path,
// creating what is missing, as config.AddPermissionRule does: only the
// bytes of the new element (or member) are inserted, and the file is
// replaced atomically, keeping its mode.
func addAllowRule(path, rule string) error {
	_, err := config.AddPermissionRule(path, "allow", rule)
	return err
}
