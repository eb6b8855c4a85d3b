// Package libs imports, for their side effects alone, the packages tack
// links that are not its own: the standard library's and its dependencies'.
// The floor programs of bench/floor, built with -tags floorlibs, import it,
// and the harness runs them beside tack: what they cost over the plain
// floor is what linking those packages costs any program (their
// initialisers, and the pages these touch), which no change inside tack can
// take away; what tack costs over them is tack's own.
package libs
