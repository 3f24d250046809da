//go:build cgo

package lp

// The binding exposes no way to delete rows; HiGHS's C API does, and
// keeps the basis of the rows that stay (see interrupt.go for how this
// package reaches the binding's HiGHS instance, and the declarations'
// source).

/*
typedef int lpHighsInt;
extern lpHighsInt Highs_deleteRowsByMask(void* highs, lpHighsInt* mask);
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/bartolsthoorn/gohighs/highs"
)

// deleteRows deletes the rows i of h with del[i] set.
func deleteRows(h *highs.Solver, del []bool) error {
	p, err := instance(h)
	if err != nil {
		return err
	}
	if len(del) == 0 {
		return nil
	}
	mask := make([]C.int, len(del))
	for i, d := range del {
		if d {
			mask[i] = 1
		}
	}
	if st := C.Highs_deleteRowsByMask(p, (*C.int)(unsafe.Pointer(&mask[0]))); st != 0 {
		return fmt.Errorf("lp: delete rows: HiGHS status %d", int(st))
	}
	return nil
}
