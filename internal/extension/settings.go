package extension

import (
	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/jsontree"
)

// This file turns plugins on and off in a settings file's enabledPlugins,
// through config.EditFile: only the bytes of the member concerned change,
// the file is replaced atomically keeping its mode, and a file that is a
// symbolic link has its target rewritten.

// SetPluginEnabled sets enabledPlugins[id] to enabled in the settings file
// at path, creating the file or the object when missing.
func SetPluginEnabled(path, id string, enabled bool) error {
	val := []byte("false")
	if enabled {
		val = []byte("true")
	}
	return config.EditFile(path, func(e *jsontree.Editor) (bool, error) {
		// EditFile writes nothing when the value was already there.
		return true, e.Set([]string{"enabledPlugins", id}, val)
	})
}

// RemovePluginSetting deletes enabledPlugins[id] from the settings file at
// path; removed is false when it was not there (nor the file).
func RemovePluginSetting(path, id string) (removed bool, err error) {
	err = config.EditFile(path, func(e *jsontree.Editor) (bool, error) {
		removed, err = e.Remove([]string{"enabledPlugins", id})
		return removed, err
	})
	return removed && err == nil, err
}
