package gamma_test

import (
	"context"
	"slices"
	"testing"

	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/fixtures"
)

// TestOneVoteCertifiesWhatIsSampled: for a gamma that the one-vote
// certificate proves private as given but whose values, rounded down to
// the 2^-53 grid as ensemble samples them, raise an inequality of output 0
// above the budget, Certify returns not that gamma but one on the grid that
// is certified.
func TestOneVoteCertifiesWhatIsSampled(t *testing.T) {
	p, trap, err := fixtures.OneVoteRoundingTrap()
	if err != nil {
		t.Fatal(err)
	}
	got, cert, err := gamma.Certify(context.Background(), p, trap, gamma.VerifyOptions{})
	if err != nil || cert.Status != gamma.Certified {
		t.Fatalf("Certify: %v %v", cert.Status, err)
	}
	if slices.Equal(got, trap) || !slices.Equal(got, got.Realised()) {
		t.Errorf("Certify returned %v for %v: want a certified gamma on the sampling grid", got, trap)
	}
}
