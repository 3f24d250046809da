//go:build cgo

package lp

// HiGHS asks a callback at every simplex and interior-point iteration
// whether to stop; the binding exposes no callback, so this file
// registers one in C, on the binding's HiGHS instance. The callback reads
// a flag in C memory that a goroutine sets when the solve's context is
// done: no Go code runs inside HiGHS and no Go pointer is kept by C. A
// solve stopped this way leaves HiGHS as after any stop (the model, and
// the basis it reached, from which the next run continues).
//
// The declarations are those of HiGHS 1.12's highs_c_api.h and
// HighsCallbackStruct.h (the binding's include folder is not on this
// package's path): HighsInt is int (HIGHSINT64 is not defined), and
// user_interrupt is the first field of HighsCallbackDataIn, which HiGHS
// keeps there for other bindings.

/*
#include <stdlib.h>

typedef int lpHighsInt;
typedef struct { int user_interrupt; } lpCallbackDataIn;
typedef void (*lpCallback)(int, const char*, const void*, lpCallbackDataIn*, void*);
extern lpHighsInt Highs_setCallback(void* highs, lpCallback cb, void* data);
extern lpHighsInt Highs_startCallback(void* highs, const lpHighsInt type);

enum { lpSimplexInterrupt = 1, lpIpmInterrupt = 2 }; // kHighsCallback*Interrupt

// lpInterrupt copies the flag into HiGHS's request both ways: HiGHS keeps
// the request between runs, so a cleared flag must clear it.
static void lpInterrupt(int type, const char* msg, const void* out, lpCallbackDataIn* in,
		void* flag) {
	in->user_interrupt = __atomic_load_n((int*)flag, __ATOMIC_RELAXED);
}

static lpHighsInt lpWatch(void* highs, int* flag) {
	lpHighsInt st = Highs_setCallback(highs, lpInterrupt, flag);
	if (st == 0) st = Highs_startCallback(highs, lpSimplexInterrupt);
	if (st == 0) st = Highs_startCallback(highs, lpIpmInterrupt);
	return st;
}
*/
import "C"

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"unsafe"

	"github.com/bartolsthoorn/gohighs/highs"
)

// newFlag returns a flag in C memory, cleared; free it with freeFlag.
func newFlag() *int32 { return (*int32)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0))))) }

func freeFlag(f *int32) { C.free(unsafe.Pointer(f)) }

// watch makes h stop its runs while flag is set.
func watch(h *highs.Solver, flag *int32) error {
	p, err := instance(h)
	if err != nil {
		return err
	}
	if st := C.lpWatch(p, (*C.int)(unsafe.Pointer(flag))); st != 0 {
		return fmt.Errorf("lp: set HiGHS's interrupt callback: status %d", int(st))
	}
	return nil
}

// instance returns the HiGHS instance of h: the only field of the
// binding's Solver (v0.1.1, pinned by go.sum). The layout is checked, so
// that a binding that changes it fails here rather than hands C a wrong
// pointer.
func instance(h *highs.Solver) (unsafe.Pointer, error) {
	t := reflect.TypeOf(*h)
	if t.NumField() != 1 || t.Field(0).Type.Kind() != reflect.UnsafePointer {
		return nil, fmt.Errorf("lp: %v is not one pointer to a HiGHS instance, as in gohighs v0.1.1: the interrupt cannot be set", t)
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(h)), nil
}

// run runs HiGHS, stopping it at its next iteration once ctx is done.
func (s *Solver) run(ctx context.Context) (*highs.Solution, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			atomic.StoreInt32(s.stop, 1)
		case <-done:
		}
	}()
	sol, err := s.h.Run()
	close(done)
	<-watched // the flag is not set after this, so clearing it holds
	atomic.StoreInt32(s.stop, 0)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return sol, err
}
