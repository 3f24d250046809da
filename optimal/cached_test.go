package optimal

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/gamma"
)

// TestCachedReverifiesTamperedEntry stores, with a valid checksum and the
// original (certified) certificate, an entry whose gamma was replaced by
// the exact majority. Cached must check the gamma itself, report the
// entry, and return and store a recomputed, certified gamma.
func TestCachedReverifiesTamperedEntry(t *testing.T) {
	ctx, d := context.Background(), tempCache(t)
	p, prior := params(11, 3, 1e-5), gamma.UniformPrior()
	good, _, _, err := Cached(ctx, d, p, prior, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	putTampered(t, d, good)
	var reported []error
	e, cached, _, err := Cached(ctx, d, p, prior, Options{}, func(err error) { reported = append(reported, err) })
	if err != nil {
		t.Fatal(err)
	}
	var ce *cache.CorruptError
	if len(reported) != 1 || !errors.As(reported[0], &ce) || !strings.Contains(ce.Error(), "violated") {
		t.Errorf("tampered entry reported as %v", reported)
	}
	if cached || e.Certificate.Status != gamma.Certified || !slices.Equal(e.Gamma, good.Gamma) {
		t.Errorf("cached %v, status %v, gamma %v; want the recomputed gamma_opt", cached, e.Certificate.Status, e.Gamma)
	}
	if _, err := Reverified(ctx, d, cache.Key{Params: p, Prior: prior.String()}, 0); err != nil {
		t.Errorf("the entry was not replaced: %v", err)
	}
}
