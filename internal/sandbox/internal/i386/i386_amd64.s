//go:build linux && amd64

#include "textflag.h"

// func Socket(domain, typ, proto uint32) int32
TEXT ·Socket(SB),NOSPLIT,$0-20
	MOVL	$359, AX
	MOVL	domain+0(FP), BX
	MOVL	typ+4(FP), CX
	MOVL	proto+8(FP), DX
	INT	$0x80
	MOVL	AX, ret+16(FP)
	RET
