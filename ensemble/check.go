package ensemble

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// releaseBinding checks agg against the votes of in as ReleaseTo does,
// before anything is drawn: a two-class aggregator needs 0/1 votes and a
// multi-class one counts; what its mechanism states (K, the classes, the
// relation and the teachers' (ε, Δ) it assumes, if any) and the partition
// the caller asserts (PartitionUnstated: none) must be the header's
// (provenance.CheckedHeader.Check; a header that breaks a rule is an
// error at its place, votefile.Reader.HeaderError); and K and the classes
// must be the file's. Votes without a header assert nothing: a release in
// the one-vote relation from them needs an asserted partition that keeps
// it (provenance.Check: the table of which partition keeps which
// relation). The header is h, checked where the votes were opened, or,
// when h is nil, checked here (provenance.CheckHeader): once a release.
func releaseBinding(in votefile.Reader, agg Labeler, partition provenance.Partition, h *provenance.CheckedHeader) (provenance.Binding, error) {
	if inputOf(agg) != in.Input() {
		return provenance.Binding{}, fmt.Errorf("the %s aggregator labels %v, but the vote file is read as %v", agg.Name(), inputOf(agg), in.Input())
	}
	priv := agg.Privacy()
	s := provenance.Stated{By: fmt.Sprintf("the %s mechanism", agg.Name()), K: agg.K(), Classes: agg.Classes(), Relation: &priv.Relation,
		Partition: partition, Release: true, Calibrated: priv.Teachers != (accountant.Guarantee{})}
	if priv.Teachers != (accountant.Guarantee{}) {
		s.Eps, s.Delta = &priv.Teachers.Eps, &priv.Teachers.Delta
	}
	var err error
	if h == nil {
		if h, err = provenance.CheckHeader(in.Meta()); err != nil {
			return provenance.Binding{}, in.HeaderError(err)
		}
	}
	b, err := h.Check(s)
	if err != nil {
		return provenance.Binding{}, in.HeaderError(err)
	}
	if in.K() != agg.K() || in.Classes() != agg.Classes() {
		return provenance.Binding{}, fmt.Errorf("the vote file has K = %d votes per row over %d classes, the %s aggregator K = %d over %d", in.K(), in.Classes(), agg.Name(), agg.K(), agg.Classes())
	}
	return b, nil
}

// inputOf returns the kind of votes agg labels.
func inputOf(agg Labeler) votefile.Input {
	if twoClass(agg) {
		return votefile.TwoClass
	}
	return votefile.ManyClasses
}
