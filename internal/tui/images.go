package tui

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
)

// Images reach the model as image blocks of the prompt: a pasted path to
// an image file (what dropping a file on most terminals pastes) becomes an
// [Image #n] placeholder, and an @mention of an image file attaches it.

// maxImage bounds the size of an attached image (the API's limit is about
// 5 MB once encoded).
const maxImage = 3_750_000

// imageTypes are the image files the API takes, by extension.
var imageTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}

// imageType is the media type of path's image, or "".
func imageType(path string) string { return imageTypes[strings.ToLower(filepath.Ext(path))] }

// loadImage reads the image at path (relative to cwd), as a block.
func loadImage(cwd, path string) (agent.ContentBlock, error) {
	mt := imageType(path)
	if mt == "" {
		return agent.ContentBlock{}, fmt.Errorf("%s is not a PNG, JPEG, GIF or WebP image", path)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return agent.ContentBlock{}, fmt.Errorf("image: %w", err)
	}
	if fi.Size() > maxImage {
		return agent.ContentBlock{}, fmt.Errorf("image %s is %d bytes; the limit is %d", path, fi.Size(), maxImage)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return agent.ContentBlock{}, fmt.Errorf("image: %w", err)
	}
	return agent.ImageBlock(mt, data), nil
}

// pastedImagePath returns the image file a paste names (one line, maybe
// quoted or with escaped blanks, as terminals paste dropped files), or "".
func pastedImagePath(cwd, content string) string {
	p := strings.TrimSpace(content)
	if p == "" || strings.Contains(p, "\n") {
		return ""
	}
	if len(p) >= 2 && (p[0] == '\'' || p[0] == '"') && p[len(p)-1] == p[0] {
		p = p[1 : len(p)-1]
	}
	p = strings.ReplaceAll(p, `\ `, " ")
	p = strings.TrimPrefix(p, "file://")
	if imageType(p) == "" {
		return ""
	}
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(cwd, full)
	}
	if fi, err := os.Stat(full); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return full
}

func imagePlaceholder(n int) string { return fmt.Sprintf("[Image #%d]", n) }

// pasteImage attaches the image at path and puts its placeholder in the
// input.
func (m *Model) pasteImage(path string) {
	img, err := loadImage(m.cfg.cwd, path)
	if err != nil {
		m.printError(err.Error())
		return
	}
	m.images = append(m.images, img)
	m.input.InsertString(imagePlaceholder(len(m.images)))
}

// takeImages returns the images the prompt attaches: the pasted ones whose
// placeholder is still in it, then the @mentioned image files.
func (m *Model) takeImages(prompt string) []agent.ContentBlock {
	var out []agent.ContentBlock
	for i, img := range m.images {
		if strings.Contains(prompt, imagePlaceholder(i+1)) {
			out = append(out, img)
		}
	}
	m.images = nil
	seen := map[string]bool{}
	for _, match := range mentionRE().FindAllStringSubmatch(prompt, -1) {
		rel := strings.TrimRight(match[1], ".,;:!?)")
		if imageType(rel) == "" || seen[rel] {
			continue
		}
		seen[rel] = true
		img, err := loadImage(m.cfg.cwd, rel)
		if err != nil {
			m.printError(err.Error())
			continue
		}
		out = append(out, img)
	}
	return out
}

// clipboardImageMsg is what Ctrl+V found in the clipboard: an image, or
// nothing (then the key pastes text as usual).
type clipboardImageMsg struct {
	data []byte
	key  tea.KeyPressMsg
}

// pasteClipboard looks for an image in the clipboard (Ctrl+V), without
// holding the UI up.
func (m *Model) pasteClipboard(k tea.KeyPressMsg) tea.Cmd {
	read := m.cfg.clipboardImage
	if read == nil {
		read = systemClipboardImage
	}
	return func() tea.Msg {
		data, _ := read()
		return clipboardImageMsg{data: data, key: k}
	}
}

// clipboardImage attaches the clipboard's image, or pastes its text.
func (m *Model) clipboardImage(msg clipboardImageMsg) tea.Cmd {
	if len(msg.data) == 0 {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg.key)
		return cmd
	}
	m.images = append(m.images, agent.ImageBlock(http.DetectContentType(msg.data), msg.data))
	m.input.InsertString(imagePlaceholder(len(m.images)))
	return nil
}

// systemClipboardImage reads a PNG from the clipboard with the tool the
// system has (wl-paste on Wayland, xclip on X11, pngpaste on macOS); nil
// when there is none or the clipboard holds no image.
func systemClipboardImage() ([]byte, error) {
	tools := [][]string{
		{"wl-paste", "--no-newline", "--type", "image/png"},
		{"xclip", "-selection", "clipboard", "-target", "image/png", "-out"},
		{"pngpaste", "-"},
	}
	for _, t := range tools {
		path, err := exec.LookPath(t[0])
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		out, err := exec.CommandContext(ctx, path, t[1:]...).Output()
		cancel()
		if err == nil && len(out) > 8 && imageTypes[extOf(http.DetectContentType(out))] != "" && len(out) <= maxImage {
			return out, nil
		}
	}
	return nil, nil
}

// extOf maps a detected media type to the extension imageTypes knows.
func extOf(mediaType string) string {
	switch mediaType {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ""
}
