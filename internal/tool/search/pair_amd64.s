//go:build amd64

#include "textflag.h"

// func indexPairBlocks(h []byte, off int, b1, m1, b2, m2 byte) int
//
// Scans the positions p of h in whole blocks of 16 while p+16 <= len(h)-off
// for the first one where h[p]|m1 == b1 and h[p+off]|m2 == b2; returns it,
// or -1. SSE2 only, which every amd64 has.
TEXT ·indexPairBlocks(SB),NOSPLIT,$0-48
	MOVQ	h_base+0(FP), SI
	MOVQ	h_len+8(FP), CX
	MOVQ	off+24(FP), DX
	SUBQ	DX, CX		// CX: number of positions
	LEAQ	(SI)(DX*1), R8	// R8: h[off:]

	MOVBLZX	b1+32(FP), AX
	MOVQ	AX, X1
	PUNPCKLBW	X1, X1
	PSHUFLW	$0, X1, X1
	PUNPCKLQDQ	X1, X1
	MOVBLZX	m1+33(FP), AX
	MOVQ	AX, X2
	PUNPCKLBW	X2, X2
	PSHUFLW	$0, X2, X2
	PUNPCKLQDQ	X2, X2
	MOVBLZX	b2+34(FP), AX
	MOVQ	AX, X3
	PUNPCKLBW	X3, X3
	PSHUFLW	$0, X3, X3
	PUNPCKLQDQ	X3, X3
	MOVBLZX	m2+35(FP), AX
	MOVQ	AX, X4
	PUNPCKLBW	X4, X4
	PSHUFLW	$0, X4, X4
	PUNPCKLQDQ	X4, X4

	XORQ	DI, DI
loop32:
	LEAQ	32(DI), AX
	CMPQ	AX, CX
	JA	loop16
	MOVOU	(SI)(DI*1), X5
	MOVOU	16(SI)(DI*1), X7
	MOVOU	(R8)(DI*1), X6
	MOVOU	16(R8)(DI*1), X8
	POR	X2, X5
	POR	X2, X7
	POR	X4, X6
	POR	X4, X8
	PCMPEQB	X1, X5
	PCMPEQB	X1, X7
	PCMPEQB	X3, X6
	PCMPEQB	X3, X8
	PAND	X6, X5
	PAND	X8, X7
	PMOVMSKB	X5, AX
	PMOVMSKB	X7, BX
	SHLQ	$16, BX
	ORQ	BX, AX
	JNZ	found
	ADDQ	$32, DI
	JMP	loop32
loop16:
	LEAQ	16(DI), AX
	CMPQ	AX, CX
	JA	none
	MOVOU	(SI)(DI*1), X5
	MOVOU	(R8)(DI*1), X6
	POR	X2, X5
	POR	X4, X6
	PCMPEQB	X1, X5
	PCMPEQB	X3, X6
	PAND	X6, X5
	PMOVMSKB	X5, AX
	TESTQ	AX, AX
	JNZ	found
	ADDQ	$16, DI
	JMP	loop16
found:
	BSFQ	AX, AX
	ADDQ	DI, AX
	MOVQ	AX, ret+40(FP)
	RET
none:
	MOVQ	$-1, ret+40(FP)
	RET
