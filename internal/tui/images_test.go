package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
)

func TestImagesGoAsImageBlocks(t *testing.T) {
	h := newHarness(t)
	cwd := h.m.cfg.cwd
	png := []byte("\x89PNG\r\n\x1a\nshot")
	for _, name := range []string{"shot one.png", "diagram.webp"} {
		if err := os.WriteFile(filepath.Join(cwd, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Dropping a file on the terminal pastes its path, quoted.
	h.send(tea.PasteMsg{Content: "'" + filepath.Join(cwd, "shot one.png") + "'"})
	if v := h.m.input.Value(); v != "[Image #1]" {
		t.Fatalf("input %q", v)
	}
	h.typeText(" what is wrong here, and in @diagram.webp?")
	h.enter()
	if len(h.be.prompts) != 1 {
		t.Fatalf("prompts %+v (sent %q)", h.be.prompts, h.be.sent)
	}
	p := h.be.prompts[0]
	var images []string
	for _, b := range p.Content {
		if b.Type == agent.BlockImage {
			images = append(images, b.Source.MediaType)
		}
	}
	if strings.Join(images, ",") != "image/png,image/webp" || !strings.Contains(p.Text, "what is wrong here") {
		t.Errorf("prompt %q with images %v", p.Text, images)
	}
	if strings.Contains(p.Text, "\x89PNG") {
		t.Error("an image was attached as text")
	}

	// A path to something else is pasted as text.
	h.send(tea.PasteMsg{Content: filepath.Join(cwd, "notes.txt")})
	if v := h.m.input.Value(); !strings.HasSuffix(v, "notes.txt") {
		t.Errorf("input %q", v)
	}
}

func TestCtrlVAttachesTheClipboardImage(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	var clip []byte
	h := newHarness(t, func(c *modelConfig) { c.clipboardImage = func() ([]byte, error) { return clip, nil } })
	clip = png
	h.press('v', tea.ModCtrl)
	if v := h.m.input.Value(); v != "[Image #1]" {
		t.Fatalf("input %q", v)
	}
	h.typeText(" what is this?")
	h.enter()
	p := h.be.prompts[len(h.be.prompts)-1]
	if len(p.Content) != 2 || p.Content[1].Type != agent.BlockImage || p.Content[1].Source.MediaType != "image/png" {
		t.Errorf("prompt content %+v", p.Content)
	}
}

func TestSystemClipboardImageUsesTheClipboardTool(t *testing.T) {
	dir := t.TempDir()
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	script := "#!/bin/sh\nprintf '" + strings.ReplaceAll(png, "\x00", `\000`) + "'\n"
	script = strings.ReplaceAll(script, "\r", `\r`)
	script = strings.ReplaceAll(script, "\n'", `\n'`)
	if err := os.WriteFile(filepath.Join(dir, "xclip"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	data, err := systemClipboardImage()
	if err != nil || string(data) != png {
		t.Errorf("read %q %v", data, err)
	}
	os.WriteFile(filepath.Join(dir, "xclip"), []byte("#!/bin/sh\necho plain text\n"), 0o755)
	if data, _ := systemClipboardImage(); data != nil {
		t.Errorf("text in the clipboard was taken for an image: %q", data)
	}
}
