package fs

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"unicode/utf8"
)

// Media types Read recognises by content.
const (
	mediaPNG  = "image/png"
	mediaJPEG = "image/jpeg"
	mediaGIF  = "image/gif"
	mediaWebP = "image/webp"
	mediaPDF  = "application/pdf"
)

// sniff returns the media type of an image or PDF from the first bytes of
// a file, or "" for anything else.
func sniff(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return mediaPNG
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return mediaJPEG
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return mediaGIF
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return mediaWebP
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return mediaPDF
	}
	return ""
}

// looksBinary reports whether the start of a file is not text: it holds a
// NUL byte, or more than 30% of it is invalid UTF-8 or control characters.
// complete says head is the whole file, so a rune cut at its end is real.
func looksBinary(head []byte, complete bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if !complete && !utf8.FullRune(head[i:]) {
				i = len(head) // a rune cut by the sample's end
				continue
			}
			bad++
		case r < 0x20 && r != '\n' && r != '\r' && r != '\t' && r != '\f' && r != '\v' && r != 0x1b:
			bad++
		}
		i += size
	}
	return bad*10 > len(head)*3
}

// Limits of images and documents sent to the model.
const (
	// maxImageBytes keeps the base64 form under the API's 5 MB per image.
	maxImageBytes = 3_750_000
	// maxImageSide is the API's largest accepted width or height.
	maxImageSide = 8000
	// fitImageSide is the longest side a too-large image is scaled down to.
	fitImageSide = 2000
	// maxSourceImageBytes is the largest image file Read tries to shrink.
	maxSourceImageBytes = 50 << 20
	// maxPDFBytes keeps a document under the API's 32 MB request size.
	maxPDFBytes = 20 << 20
)

// errCannotShrink means an image is too large and its format cannot be
// decoded here to make it smaller.
var errCannotShrink = errors.New("cannot decode this format to shrink it")

// fitImage returns the image to send: data itself when it fits the API's
// limits, otherwise a scaled-down re-encoding (JPEG, or PNG when it has
// transparency) and its media type.
func fitImage(data []byte, media string) (out []byte, outMedia string, err error) {
	cfg, err := decodeConfig(data, media)
	if err != nil && !errors.Is(err, errCannotShrink) {
		return nil, "", err
	}
	if len(data) <= maxImageBytes && (err != nil || max(cfg.Width, cfg.Height) <= maxImageSide) {
		return data, media, nil
	}
	if err != nil {
		return nil, "", err
	}
	src, err := decodeImage(data, media)
	if err != nil {
		return nil, "", err
	}
	side := fitImageSide
	for range 5 {
		small := shrink(src, side)
		var buf bytes.Buffer
		outMedia = mediaJPEG
		if small.Opaque() {
			err = jpeg.Encode(&buf, small, &jpeg.Options{Quality: 85})
		} else {
			outMedia = mediaPNG
			err = png.Encode(&buf, small)
		}
		if err != nil {
			return nil, "", fmt.Errorf("re-encode image: %w", err)
		}
		if buf.Len() <= maxImageBytes {
			return buf.Bytes(), outMedia, nil
		}
		side = side * 2 / 3
	}
	return nil, "", errors.New("image stays too large even when scaled down")
}

func decodeConfig(data []byte, media string) (image.Config, error) {
	r := bytes.NewReader(data)
	var cfg image.Config
	var err error
	switch media {
	case mediaPNG:
		cfg, err = png.DecodeConfig(r)
	case mediaJPEG:
		cfg, err = jpeg.DecodeConfig(r)
	case mediaGIF:
		cfg, err = gif.DecodeConfig(r)
	default:
		return cfg, errCannotShrink
	}
	if err != nil {
		return cfg, fmt.Errorf("decode image header: %w", err)
	}
	return cfg, nil
}

func decodeImage(data []byte, media string) (image.Image, error) {
	r := bytes.NewReader(data)
	var img image.Image
	var err error
	switch media {
	case mediaPNG:
		img, err = png.Decode(r)
	case mediaJPEG:
		img, err = jpeg.Decode(r)
	case mediaGIF:
		img, err = gif.Decode(r)
	default:
		return nil, errCannotShrink
	}
	if err != nil {
		return nil, fmt.Errorf("decode image: %w", err)
	}
	return img, nil
}

// shrink scales src so its longer side is at most side, averaging the
// source pixels that fall into each target pixel.
func shrink(src image.Image, side int) *image.RGBA {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	scale := float64(side) / float64(max(w, h))
	if scale >= 1 {
		scale = 1
	}
	dw, dh := max(1, int(float64(w)*scale)), max(1, int(float64(h)*scale))
	full := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(full, full.Bounds(), src, b.Min, draw.Src)
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < dh; y++ {
		y0, y1 := y*h/dh, max((y+1)*h/dh, y*h/dh+1)
		for x := 0; x < dw; x++ {
			x0, x1 := x*w/dw, max((x+1)*w/dw, x*w/dw+1)
			var sum [4]int
			for sy := y0; sy < y1; sy++ {
				row := full.Pix[sy*full.Stride:]
				for sx := x0; sx < x1; sx++ {
					p := row[sx*4 : sx*4+4]
					sum[0] += int(p[0])
					sum[1] += int(p[1])
					sum[2] += int(p[2])
					sum[3] += int(p[3])
				}
			}
			n := (y1 - y0) * (x1 - x0)
			o := dst.Pix[y*dst.Stride+x*4:]
			for c := range 4 {
				o[c] = uint8(sum[c] / n)
			}
		}
	}
	return dst
}
