package setup

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
)

// memoKey holds, in the context of a command that darrm runs, the
// accountant.Memo of the run (WithMemo).
type memoKey struct{}

// WithMemo returns ctx holding m, the memo of one run of darrm: every
// library call of the run keeps in it what it computed for the calls
// that ask again (a release's count, its total, its ledger's charges and
// its summary compose the same labels), and the cache folder, when the
// command opens it (CacheFlags.Open), keeps its one-bit answers for the
// next run (accountant.Memo.Save).
func WithMemo(ctx context.Context, m *accountant.Memo) context.Context {
	return context.WithValue(ctx, memoKey{}, m)
}

// Memo returns the memo of cmd's run (WithMemo); nil, which keeps nothing
// from one call to the next, for a command run without one.
func Memo(cmd *cobra.Command) *accountant.Memo {
	if ctx := cmd.Context(); ctx != nil {
		m, _ := ctx.Value(memoKey{}).(*accountant.Memo)
		return m
	}
	return nil
}
