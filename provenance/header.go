package provenance

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/votefile"
)

// Kind says whether a release is post-processing of fixed teachers
// (Fixed) or of teachers drawn anew for each query (PerQuery); KindUnstated
// when a header does not say.
type Kind int

const (
	// KindUnstated is a release that says nothing about its teachers (a
	// vote file without a header).
	KindUnstated Kind = iota
	// Fixed teachers are trained models: every label released from their
	// votes, however many, is post-processing of the models, so the
	// teacher-level cap bounds every total; for private teachers it is the
	// only bound, since composing per-query guarantees assumes fresh
	// teachers (accountant.Cap).
	Fixed
	// PerQuery teachers answer each query with a fresh mechanism (new
	// randomness, or a new look at the data, per query): only the
	// composition over the queries bounds the total.
	PerQuery
)

var kindEnum = enum.Names[Kind]{What: "kind", List: []string{Fixed: "fixed", PerQuery: "per-query"}, Zero: "unstated"}

// String returns "fixed" or "per-query".
func (k Kind) String() string { return kindEnum.String(k) }

// MarshalText returns the kind's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText sets k from "fixed" or "per-query".
func (k *Kind) UnmarshalText(b []byte) error {
	return kindEnum.Unmarshal(k, b)
}

// Partition is the rule that split the training data between the
// teachers: KeyedHash or FilePosition (disjoint shares), SharedData (all
// on the whole set), or PartitionUnstated.
type Partition int

const (
	// PartitionUnstated is a release that does not say (no header).
	PartitionUnstated Partition = iota
	// KeyedHash assigns each record to one teacher by a keyed hash of the
	// record's identity: disjoint shares, and a record's share depends on
	// that record alone, so adding or removing a record changes one
	// teacher's data and no other's (parallel composition applies).
	KeyedHash
	// FilePosition cuts the training file into consecutive shares:
	// disjoint, but a record's share depends on the records before it, so
	// adding one can move every later record to another teacher.
	FilePosition
	// SharedData is training data that the teachers share, in whole or in
	// part (e.g. each trained on the whole set with its own randomness).
	SharedData
)

var partitionEnum = enum.Names[Partition]{What: "partition", List: []string{KeyedHash: "keyed-hash", FilePosition: "file-position", SharedData: "shared"}, Zero: "unstated"}

// String returns "keyed-hash", "file-position" or "shared".
func (p Partition) String() string { return partitionEnum.String(p) }

// MarshalText returns the partition's name.
func (p Partition) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText sets p from a partition's name.
func (p *Partition) UnmarshalText(b []byte) error {
	return partitionEnum.Unmarshal(p, b)
}

// origin says how a teacher's guarantee was obtained, as the method of
// its source in a vote file's header names it (votefile.TeacherSource):
// fromStated (the ensemble's owner states it), fromDPSGD (DP-SGD's
// accounting), or nonPrivate (no guarantee: teachers of the one-vote
// relation).
type origin int

const (
	// fromStated is a guarantee the ensemble's owner states, for datasets
	// that differ by adding or removing one record (votefile.AddRemove).
	fromStated origin = iota
	// fromDPSGD is computed by the accountant from the teacher's DP-SGD
	// run (DPSGDRun).
	fromDPSGD
	// nonPrivate teachers have no guarantee (e.g. plain SGD, for GNMax
	// under the one-vote relation).
	nonPrivate
)

var originEnum = enum.Names[origin]{What: "method", List: []string{fromStated: "stated", fromDPSGD: "dp-sgd", nonPrivate: "none"}}

// String returns "stated", "dp-sgd" or "none".
func (o origin) String() string { return originEnum.String(o) }

// originOf returns how the guarantee of a header's group of teachers was
// obtained: the method of its source.
func originOf(g votefile.TeacherGroup) (origin, error) {
	return originEnum.Parse(g.Source.Method)
}

// DPSGDRun is the DP-SGD training a teacher's guarantee was computed
// from: the sampled Gaussian mechanism over its steps (accountant.SGM),
// converted from Rényi DP to (ε, δ) by Conversion at δ = Delta.
type DPSGDRun struct {
	accountant.SGM
	Conversion accountant.Conversion
	Delta      float64
}

// Guarantee returns the (ε, δ) the accountant gives the run at its δ.
func (r DPSGDRun) Guarantee() (accountant.Guarantee, error) {
	eps, _, err := r.SGM.Eps(r.Delta, r.Conversion)
	return accountant.Guarantee{Eps: eps, Delta: r.Delta}, err
}

// Teachers returns a header's group of count teachers trained by the run,
// with the guarantee the accountant gives it (Guarantee).
func (r DPSGDRun) Teachers(count int) (votefile.TeacherGroup, error) {
	g, err := r.Guarantee()
	if err != nil {
		return votefile.TeacherGroup{}, err
	}
	conv := r.Conversion.String()
	return votefile.TeacherGroup{Count: count, Eps: &g.Eps, Delta: &g.Delta, Source: votefile.TeacherSource{
		Method: fromDPSGD.String(), Sigma: &r.Sigma, SamplingRate: &r.Q, Steps: &r.Steps, Conversion: conv, Delta: &r.Delta}}, nil
}

// StatedTeachers returns a header's group of count teachers whose owner
// states each (g.Eps, g.Delta)-DP for adding or removing one record.
func StatedTeachers(count int, g accountant.Guarantee) votefile.TeacherGroup {
	return votefile.TeacherGroup{Count: count, Eps: &g.Eps, Delta: &g.Delta,
		Source: votefile.TeacherSource{Method: fromStated.String(), Neighbours: votefile.AddRemove}}
}

// nonPrivateTeachers returns a header's group of count teachers that
// have no guarantee.
func nonPrivateTeachers(count int) votefile.TeacherGroup {
	return votefile.TeacherGroup{Count: count, Source: votefile.TeacherSource{Method: nonPrivate.String()}}
}

// replaceOne is the name of the relation a stated guarantee may not have.
const replaceOne = "replace-one"

func headerErr(field string, value any, rule string, args ...any) *votefile.HeaderError {
	v := ""
	if value != nil {
		v = fmt.Sprint(value)
	}
	return &votefile.HeaderError{Field: field, Value: v, Rule: fmt.Sprintf(rule, args...)}
}

// header is a vote file's metadata header as this package reads it: the
// names it states, parsed, and each teacher group's guarantee.
type header struct {
	*votefile.Meta
	relation  accountant.Relation
	kind      Kind
	partition Partition
	groups    []group
}

// group is a header's teacher group read: its guarantee (zero for
// non-private teachers) and where it comes from.
type group struct {
	count     int
	guarantee accountant.Guarantee
	origin    origin
	run       *DPSGDRun
}

// readHeader reads what the header m states, checking every rule of it
// that is not of its form (votefile.Meta.Validate): the names of the
// relation, the kind and the partition, the partition's rule of the
// relation (rulesOfPartitions), each group's source (its method, the
// neighbours of a stated guarantee, add-remove, the run of a DP-SGD one)
// and guarantee (eps > 0, Delta in [0, 1), none for non-private teachers,
// which the private-teachers relation refuses); and a DP-SGD guarantee is
// recomputed by the accountant: a stated eps below what the run gives is
// refused. A broken rule is a *votefile.HeaderError naming the field.
func readHeader(m *votefile.Meta) (*header, error) {
	h := &header{Meta: m}
	for _, f := range []struct {
		key string
		v   string
		dst interface{ UnmarshalText([]byte) error }
	}{{"relation", m.Relation, &h.relation}, {"kind", m.Kind, &h.kind}, {"partition", m.Partition, &h.partition}} {
		if err := f.dst.UnmarshalText([]byte(f.v)); err != nil {
			return nil, headerErr(f.key, nil, "%v", err)
		}
	}
	if field, v, rule := ensembleRule(h.relation, h.kind, h.partition); field != "" {
		return nil, headerErr(field, v.String(), "%s", rule)
	}
	for i, tg := range m.Teachers {
		g, err := h.group(tg, fmt.Sprintf("teachers[%d]", i))
		if err != nil {
			return nil, err
		}
		h.groups = append(h.groups, g)
	}
	return h, nil
}

// runKeys are the keys of a DP-SGD source's run.
var runKeys = []string{"sigma", "sampling_rate", "steps", "conversion", "delta"}

// group reads the header's teacher group tg, at its path.
func (h *header) group(tg votefile.TeacherGroup, at string) (group, error) {
	g := group{count: tg.Count}
	o, err := originOf(tg)
	if err != nil {
		return g, headerErr(at+".source.method", nil, "%v", err)
	}
	g.origin = o
	src := tg.Source
	if o == nonPrivate {
		for _, v := range []struct {
			key string
			v   *float64
		}{{"eps", tg.Eps}, {"Delta", tg.Delta}} {
			if v.v != nil {
				return g, headerErr(at+"."+v.key, *v.v, "non-private teachers (method none) have no guarantee")
			}
		}
	} else {
		switch {
		case tg.Eps == nil:
			return g, headerErr(at+".eps", nil, "is missing")
		case tg.Delta == nil:
			return g, headerErr(at+".Delta", nil, "is missing")
		}
		g.guarantee = accountant.Guarantee{Eps: *tg.Eps, Delta: *tg.Delta}
	}
	if n := src.Neighbours; n != "" {
		switch {
		case o != fromStated:
			return g, headerErr(at+".source.neighbours", n, "only a stated source has neighbours (a dp-sgd run's guarantee is for adding or removing a record; non-private teachers have none)")
		case n == replaceOne:
			return g, headerErr(at+".source.neighbours", n, "darrm's releases and the teachers' cap need each teacher's guarantee for adding or removing a record, which one for replacing a record does not imply: state the add-remove guarantee")
		case n != votefile.AddRemove:
			return g, headerErr(at+".source.neighbours", param.Quote(n), "must be %s", votefile.AddRemove)
		}
	}
	run := []struct {
		key string
		set bool
		v   any
	}{{"sigma", src.Sigma != nil, src.Sigma}, {"sampling_rate", src.SamplingRate != nil, src.SamplingRate},
		{"steps", src.Steps != nil, src.Steps}, {"conversion", src.Conversion != "", src.Conversion}, {"delta", src.Delta != nil, src.Delta}}
	if o != fromDPSGD {
		for _, f := range run {
			if f.set {
				return g, headerErr(at+".source."+f.key, deref(f.v), "only a dp-sgd source has %s", strings.Join(runKeys, ", "))
			}
		}
	} else {
		for _, f := range run {
			if !f.set {
				return g, headerErr(at+".source."+f.key, nil, "is missing")
			}
		}
		g.run = &DPSGDRun{SGM: accountant.SGM{Sigma: *src.Sigma, Q: *src.SamplingRate, Steps: *src.Steps}, Delta: *src.Delta}
		if err := g.run.Conversion.UnmarshalText([]byte(src.Conversion)); err != nil {
			return g, headerErr(at+".source.conversion", nil, "%v", err)
		}
	}
	return g, h.check(g, at)
}

// deref returns the value p points to, for errors.
func deref(p any) any {
	switch p := p.(type) {
	case *float64:
		return *p
	case *int:
		return *p
	}
	return p
}

// check checks the guarantee of the group g, at its path, in the header.
func (h *header) check(g group, at string) error {
	switch g.origin {
	case nonPrivate:
		if h.relation == accountant.PrivateTeachers {
			return headerErr(at+".source.method", "none", "the private-teachers relation needs every teacher's (eps, Delta)")
		}
		return nil
	case fromStated, fromDPSGD:
	default:
		return headerErr(at+".source.method", g.origin.String(), "must be stated, dp-sgd or none")
	}
	var pe *param.Error
	if errors.As(teachersRule(g.guarantee), &pe) {
		return headerErr(at+"."+pe.Name, pe.Value, "%s", pe.Rule)
	}
	if g.origin == fromStated {
		return nil
	}
	r := g.run
	if h.kind != Fixed {
		return headerErr("kind", h.kind.String(), "DP-SGD trains fixed models: the kind of %s must be fixed", at)
	}
	switch {
	case !(r.Sigma > 0) || math.IsInf(r.Sigma, 0):
		return headerErr(at+".source.sigma", r.Sigma, "must be a finite number > 0")
	case !(r.Q > 0 && r.Q <= 1):
		return headerErr(at+".source.sampling_rate", r.Q, "must be in (0, 1]")
	case r.Steps < 1:
		return headerErr(at+".source.steps", r.Steps, "must be an integer >= 1")
	case r.Conversion != accountant.PaperConversion && r.Conversion != accountant.ImprovedConversion:
		return headerErr(at+".source.conversion", r.Conversion.String(), "must be paper or improved")
	case !(r.Delta > 0 && r.Delta < 1):
		return headerErr(at+".source.delta", r.Delta, "must be in (0, 1)")
	case g.guarantee.Delta < r.Delta:
		return headerErr(at+".Delta", g.guarantee.Delta, "the DP-SGD run is converted at delta = %v: Delta must be >= it", r.Delta)
	}
	acc, err := r.Guarantee()
	if err != nil {
		return headerErr(at+".source", nil, "%v", err)
	}
	if g.guarantee.Eps < acc.Eps {
		return headerErr(at+".eps", g.guarantee.Eps, "the DP-SGD run (sigma %v, sampling rate %v, %d steps, %v conversion at delta = %v) is %v by the accountant: eps must be >= %v", r.Sigma, r.Q, r.Steps, r.Conversion, r.Delta, acc, acc.Eps)
	}
	return nil
}

// private reports whether every teacher has a guarantee.
func (h *header) private() bool {
	for _, g := range h.groups {
		if g.origin == nonPrivate {
			return false
		}
	}
	return true
}

// common returns one guarantee that every teacher has: the largest ε and
// the largest Δ of any teacher (each teacher that is (ε_i, Δ_i)-DP is also
// (max ε, max Δ)-DP), and whether the teachers' guarantees differ. DaRRM's
// certificate assumes one (ε, Δ) for all K teachers, so a release from
// teachers with different guarantees uses this common bound. It is zero
// when no teacher has a guarantee.
func (h *header) common() (g accountant.Guarantee, heterogeneous bool) {
	var first *accountant.Guarantee
	for _, t := range h.groups {
		if t.origin == nonPrivate {
			continue
		}
		if first == nil {
			first = &t.guarantee
		} else if t.guarantee != *first {
			heterogeneous = true
		}
		g.Eps, g.Delta = max(g.Eps, t.guarantee.Eps), max(g.Delta, t.guarantee.Delta)
	}
	return g, heterogeneous
}

// binding returns what the header states of its ensemble, with the
// teachers' (ε, Δ) t.
func (h *header) binding(t accountant.Guarantee) Binding {
	return Binding{Ensemble: h.Ensemble, Teachers: Teachers{K: h.K, Each: t, Relation: h.relation, Kind: h.kind, Partition: h.partition}}
}

// teachers returns the guarantee a release takes every teacher of the
// header to have, when it states every teacher's: their common bound (the
// largest ε and the largest Δ: each teacher that is (ε_i, Δ_i)-DP is also
// (max ε, max Δ)-DP; DaRRM's certificate assumes one (ε, Δ) for all K
// teachers), not FromFlags, and whether the teachers' guarantees differ;
// false without a header or with non-private teachers.
func (c *CheckedHeader) teachers() (TeacherGuarantee, bool) {
	if c.h == nil || !c.h.private() {
		return TeacherGuarantee{}, false
	}
	g, het := c.h.common()
	return TeacherGuarantee{Guarantee: g, Heterogeneous: het}, true
}

// ReleaseTeachers returns the teachers' (ε, Δ) of a two-class release from
// the votes the header heads, given what the caller states (s: its Eps
// and Delta, nil when not stated, and Calibrated, the mechanism
// registry's answer, ensemble.Calibrated), after Check. With a header that
// states every teacher's guarantee the answer is the header's common
// bound (the largest ε and the largest Δ). Without a header, or with
// non-private teachers (whose header states no guarantee: GNMax's target
// is then a choice, not a property of the teachers), both must be stated:
// there is no default for a property of the user's own teachers. Every
// refusal is a *TeachersError.
func (c *CheckedHeader) ReleaseTeachers(s Stated) (TeacherGuarantee, error) {
	b, err := c.Check(s)
	if err != nil {
		return TeacherGuarantee{}, err
	}
	if t, ok := c.teachers(); ok {
		return t, nil
	}
	why := "the vote file has no metadata header, so they must be stated (there is no default for a property of your teachers)"
	if c.meta != nil {
		why = "the vote file's metadata header states non-private teachers, so the guarantee the release is calibrated to must be stated"
	}
	switch {
	case s.Eps == nil && s.Delta == nil:
		return TeacherGuarantee{}, &TeachersError{Field: "eps and Delta", Rule: why}
	case s.Eps == nil:
		return TeacherGuarantee{}, &TeachersError{Field: "eps", Rule: why}
	case s.Delta == nil:
		return TeacherGuarantee{}, &TeachersError{Field: "Delta", Rule: why}
	}
	return TeacherGuarantee{Guarantee: b.Each, FromFlags: true}, nil
}

// Header returns the metadata header of votes of the ensemble b among
// classes classes, in layout: its id, K, relation, kind and partition,
// and as its teachers the groups given (StatedTeachers,
// DPSGDRun.Teachers) or, without, all K teachers with b's guarantee,
// stated, or non-private teachers when it is zero. Check checks it.
func (b Binding) Header(classes int, layout votefile.Layout, groups ...votefile.TeacherGroup) *votefile.Meta {
	if len(groups) == 0 {
		groups = []votefile.TeacherGroup{nonPrivateTeachers(b.K)}
		if b.Each != (accountant.Guarantee{}) {
			groups[0] = StatedTeachers(b.K, b.Each)
		}
	}
	return &votefile.Meta{Ensemble: b.Ensemble, K: b.K, Classes: classes, Layout: layout, Relation: b.Relation.String(),
		Kind: b.Kind.String(), Partition: b.Partition.String(), Teachers: groups}
}
