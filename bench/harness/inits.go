package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// initCost is one package initialiser as GODEBUG=inittrace=1 reports it.
type initCost struct {
	pkg   string
	ms    float64
	bytes int64
}

// inits runs `bin --version` with the runtime's init trace and returns
// every package initialiser, costliest first.
func inits(bin string) ([]initCost, error) {
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var trace bytes.Buffer
	cmd.Stderr = &trace
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s --version: %w", bin, err)
	}
	var out []initCost
	sc := bufio.NewScanner(&trace)
	for sc.Scan() {
		// init PKG @T ms, D ms clock, B bytes, N allocs
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[0] != "init" {
			continue
		}
		ms, err1 := strconv.ParseFloat(f[4], 64)
		b, err2 := strconv.ParseInt(f[7], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("init trace line %q", sc.Text())
		}
		out = append(out, initCost{pkg: f[1], ms: ms, bytes: b})
	}
	slices.SortFunc(out, func(a, b initCost) int { return cmp.Compare(b.ms, a.ms) })
	return out, nil
}

// printInits prints the total cost of tack's package initialisers, which
// run before main in every process, and the costliest of them.
func printInits(bin string, top int) error {
	list, err := inits(bin)
	if err != nil {
		return err
	}
	var ms float64
	var b int64
	for _, c := range list {
		ms += c.ms
		b += c.bytes
	}
	fmt.Printf("\npackage initialisers (GODEBUG=inittrace=1 tack --version): %d, %.2f ms, %.0f KB; the costliest:\n", len(list), ms, float64(b)/1024)
	for _, c := range list[:min(top, len(list))] {
		fmt.Printf("  %-60s %.3f ms  %6.1f KB\n", c.pkg, c.ms, float64(c.bytes)/1024)
	}
	return nil
}
