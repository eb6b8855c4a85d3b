//go:build !unix

package prompt

func osVersion() string { return "" }
