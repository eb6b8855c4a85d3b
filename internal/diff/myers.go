package diff

import "math"

// minExpensive is the least number of edits one split search may explore
// before it settles for an approximate split point. It bounds the effort on
// huge, very different inputs; typical edits never come near it.
const minExpensive = 1024

// compare marks the lines of a that are removed and the lines of b that are
// added by a shortest edit script from a to b (near-shortest when the inputs
// are huge and very different).
func compare(a, b []string) (removed, added []bool) {
	removed, added = make([]bool, len(a)), make([]bool, len(b))

	// Most edits are local: strip the common prefix and suffix up front.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a, b = a[pre:len(a)-suf], b[pre:len(b)-suf]

	// Compare small integers rather than strings.
	ids := make(map[string]int, len(a)+len(b))
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	xa, yb := intern(a), intern(b)

	// A line that occurs on one side only can never match: mark it now and
	// leave it out of the search, which makes rewrites of whole files cheap.
	inA, inB := make([]bool, len(ids)), make([]bool, len(ids))
	for _, id := range xa {
		inA[id] = true
	}
	for _, id := range yb {
		inB[id] = true
	}
	xv, xmap := keep(xa, inB, removed[pre:])
	yv, ymap := keep(yb, inA, added[pre:])

	d := newDiffer(xv, yv)
	d.seq(0, len(xv), 0, len(yv))
	for i, r := range d.removed {
		if r {
			removed[pre+xmap[i]] = true
		}
	}
	for j, ad := range d.added {
		if ad {
			added[pre+ymap[j]] = true
		}
	}
	return removed, added
}

// keep returns the ids whose line also occurs on the other side, with their
// original indexes, and marks the others in changed.
func keep(ids []int, other []bool, changed []bool) (kept, index []int) {
	kept, index = make([]int, 0, len(ids)), make([]int, 0, len(ids))
	for i, id := range ids {
		if other[id] {
			kept = append(kept, id)
			index = append(index, i)
		} else {
			changed[i] = true
		}
	}
	return kept, index
}

// differ is Myers' O(ND) algorithm in linear space (the middle-snake
// divide and conquer), after GNU diff's analyze.c, with its heuristic that
// bounds the work of each split.
type differ struct {
	xv, yv         []int
	removed, added []bool
	// fd and bd hold, per diagonal k = x-y (offset by off), the furthest x
	// reached by the forward and the backward search.
	fd, bd       []int
	off          int
	tooExpensive int
}

func newDiffer(xv, yv []int) *differ {
	n := len(xv) + len(yv) + 3
	expensive := 1
	for diags := n; diags != 0; diags >>= 2 {
		expensive <<= 1
	}
	return &differ{
		xv: xv, yv: yv,
		removed: make([]bool, len(xv)), added: make([]bool, len(yv)),
		fd: make([]int, n), bd: make([]int, n), off: len(yv) + 1,
		tooExpensive: max(expensive, minExpensive),
	}
}

// seq marks the changes between xv[xoff:xlim] and yv[yoff:ylim].
func (d *differ) seq(xoff, xlim, yoff, ylim int) {
	for {
		for xoff < xlim && yoff < ylim && d.xv[xoff] == d.yv[yoff] {
			xoff++
			yoff++
		}
		for xlim > xoff && ylim > yoff && d.xv[xlim-1] == d.yv[ylim-1] {
			xlim--
			ylim--
		}
		if xoff == xlim || yoff == ylim {
			break
		}
		xmid, ymid := d.split(xoff, xlim, yoff, ylim)
		if (xmid == xoff && ymid == yoff) || (xmid == xlim && ymid == ylim) {
			// No progress possible (cannot happen with an exact split, but
			// keep the approximation honest): replace the whole box.
			break
		}
		d.seq(xoff, xmid, yoff, ymid)
		// Loop on the second half rather than recurse, so a run of
		// approximate splits near one end cannot grow the stack.
		xoff, yoff = xmid, ymid
	}
	for x := xoff; x < xlim; x++ {
		d.removed[x] = true
	}
	for y := yoff; y < ylim; y++ {
		d.added[y] = true
	}
}

// split returns a point on a shortest path through the box (or, once the
// search grows too expensive, a point on a good path).
func (d *differ) split(xoff, xlim, yoff, ylim int) (xmid, ymid int) {
	xv, yv, fd, bd, off := d.xv, d.yv, d.fd, d.bd, d.off
	dmin, dmax := xoff-ylim, xlim-yoff
	fmid, bmid := xoff-yoff, xlim-ylim
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	odd := (fmid-bmid)&1 != 0
	fd[off+fmid] = xoff
	bd[off+bmid] = xlim

	for c := 1; ; c++ {
		// One more edit forward; sentinels outside the range never win.
		if fmin > dmin {
			fmin--
			fd[off+fmin-1] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			fd[off+fmax+1] = -1
		} else {
			fmax--
		}
		for k := fmax; k >= fmin; k -= 2 {
			tlo, thi := fd[off+k-1], fd[off+k+1]
			x := thi
			if tlo >= thi {
				x = tlo + 1
			}
			y := x - k
			for x < xlim && y < ylim && xv[x] == yv[y] {
				x++
				y++
			}
			fd[off+k] = x
			if odd && bmin <= k && k <= bmax && bd[off+k] <= x {
				return x, y
			}
		}

		// One more edit backward.
		if bmin > dmin {
			bmin--
			bd[off+bmin-1] = math.MaxInt
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			bd[off+bmax+1] = math.MaxInt
		} else {
			bmax--
		}
		for k := bmax; k >= bmin; k -= 2 {
			tlo, thi := bd[off+k-1], bd[off+k+1]
			x := thi - 1
			if tlo < thi {
				x = tlo
			}
			y := x - k
			for xoff < x && yoff < y && xv[x-1] == yv[y-1] {
				x--
				y--
			}
			bd[off+k] = x
			if !odd && fmin <= k && k <= fmax && x <= fd[off+k] {
				return x, y
			}
		}

		if c < d.tooExpensive {
			continue
		}
		// Too expensive: split at the furthest point either search reached,
		// measured by progress along the box's main diagonal.
		fxybest, fxbest := -1, 0
		for k := fmax; k >= fmin; k -= 2 {
			x := min(fd[off+k], xlim)
			y := x - k
			if ylim < y {
				x, y = ylim+k, ylim
			}
			if fxybest < x+y {
				fxybest, fxbest = x+y, x
			}
		}
		bxybest, bxbest := math.MaxInt, 0
		for k := bmax; k >= bmin; k -= 2 {
			x := max(xoff, bd[off+k])
			y := x - k
			if y < yoff {
				x, y = yoff+k, yoff
			}
			if x+y < bxybest {
				bxybest, bxbest = x+y, x
			}
		}
		if (xlim+ylim)-bxybest < fxybest-(xoff+yoff) {
			return fxbest, fxybest - fxbest
		}
		return bxbest, bxybest - bxbest
	}
}
