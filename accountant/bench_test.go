package accountant

import (
	"context"
	"testing"
)

var sink float64

func BenchmarkComposeGeneral(b *testing.B) {
	step := Guarantee{0.1, 1e-5}
	for b.Loop() {
		g, _ := composeGeneral(step, 10000, 1e-5)
		sink = g.Eps
	}
}

func BenchmarkMaxStepsOptimal(b *testing.B) {
	step, budget := Guarantee{0.01, 1e-7}, Guarantee{2, 1e-3}
	for b.Loop() {
		n, _ := (Composition{Method: Optimal, DeltaPrime: 1e-4}).MaxSteps(step, Budget{Guarantee: budget})
		sink = float64(n)
	}
}

func BenchmarkStepEpsOptimal10000(b *testing.B) {
	for b.Loop() {
		sink, _ = (Composition{Method: Optimal, DeltaPrime: 1e-5}).StepEps(5, 1e-7, 10000)
	}
}

func BenchmarkRhoToDPImproved(b *testing.B) {
	for b.Loop() {
		sink, _, _ = ImprovedConversion.RhoToDP(0.37, 1e-6)
	}
}

func BenchmarkRhoForDPImproved(b *testing.B) {
	for b.Loop() {
		sink, _, _ = rhoForDP(Guarantee{5, 1e-6}, ImprovedConversion)
	}
}

func BenchmarkPABISigmaImproved(b *testing.B) {
	run := PABI{G: 10, Epochs: 50, Dilution: 501}
	for b.Loop() {
		sink, _, _ = run.sigma(Guarantee{5, 1e-6}, ImprovedConversion)
	}
}

// oneBitSpend returns the OneBitSpend of pairs with the guarantee of
// their profile at ε = 0.5.
func oneBitSpend(pairs []BitPair) Spend {
	r, _ := newBitRun(nil, []bitPart{{oneBitLoss(pairs), 1}}, 0)
	return Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.5, Delta: r.delta(0.5)}, Bits: pairs}
}

// BenchmarkOneBitCompose: one composition of 20 steps, a transform of
// 2^19 points, and its profile at one ε.
func BenchmarkOneBitCompose(b *testing.B) {
	loss := oneBitLoss(testBits()["delta"])
	for b.Loop() {
		r, _ := newBitRun(nil, []bitPart{{loss, 20}}, 0)
		sink = r.delta(1)
	}
}

// BenchmarkMaxStepsOneBit: a count's search of a one-bit release, from
// nothing kept.
func BenchmarkMaxStepsOneBit(b *testing.B) {
	s := oneBitSpend(testBits()["delta"])
	budget := Guarantee{Eps: 8, Delta: 0.05}
	for b.Loop() {
		n, _, _ := Account{Step: s, Budget: &Budget{budget}}.MaxSteps(context.Background(), nil)
		sink = float64(n)
	}
}

// BenchmarkFitsRepeatedSearch: whether 20 steps fit, for 12 sets of
// pairs, asked twice, from nothing kept: a plan's search for a
// noise level, done twice by a command that plans or simulates twice
// (more sets of pairs than compositions kept).
func BenchmarkFitsRepeatedSearch(b *testing.B) {
	budget := Guarantee{Eps: 4, Delta: 0.05}
	var steps []Spend
	for i := range 12 {
		pairs := append(testBits()["delta"], BitPair{P: 0.4 + 0.001*float64(i), Q: 0.3})
		steps = append(steps, oneBitSpend(pairs))
	}
	for b.Loop() {
		m := new(Memo)
		for range 2 {
			for _, s := range steps {
				ok, _ := Account{Step: s, Steps: 20, Budget: &Budget{budget}}.Fits(m)
				if ok {
					sink++
				}
			}
		}
	}
}

// BenchmarkMaxStepsDiscreteGaussian: a count's search of two discrete
// Gaussian steps (Confident-GNMax's), its total and totals, from
// nothing kept.
func BenchmarkMaxStepsDiscreteGaussian(b *testing.B) {
	s := Spend{Kind: GaussianSpend, Guarantee: Guarantee{Eps: 1, Delta: 1e-6}, Discrete: true, Gaussian: []GaussianPart{{Sigma: 150, Coords: 1}, {Sigma: 40, Coords: 1}}}
	budget := Guarantee{Eps: 2, Delta: 1e-5}
	for b.Loop() {
		m := new(Memo)
		a := Account{Step: s, Budget: &Budget{budget}}
		n, _, _ := a.MaxSteps(context.Background(), m)
		a.Steps = n
		all, _ := a.Totals(m)
		sink = float64(n + len(all))
	}
}

// darrmBits are the dominating pairs of a DaRRM label of issue 68's
// case: K = 11 teachers each (0.05, 1e-9)-DP, m = 2, gamma_opt of the
// uniform prior (Spend.Dominating of what darrm aggregate composes), whose
// largest loss, 7.5, has mass 8e-10.
var darrmBits = []BitPair{
	{P: 0.5217243302072422, Q: 0.4782756697927587},
	{P: 0.46980413404394555, Q: 0.4698041288801331},
	{P: 0.4408141175212005, Q: 0.4013114947426906},
	{P: 0.4335662209548198, Q: 0.40032031101186116},
	{P: 0.4335662209542961, Q: 0.4003203110113364},
	{P: 0.4245185007994913, Q: 0.39785774017281395},
	{P: 0.424518500798967, Q: 0.39785774017228853},
	{P: 0.4107224509252013, Q: 0.3908646729502658},
	{P: 0.4107224509246761, Q: 0.3908646729497397},
	{P: 0.374461226415405, Q: 0.3612253864527678},
	{P: 0.3744612264148787, Q: 0.3612253864522409},
	{P: 0.3589360539165048, Q: 0.32522306741842927},
	{P: 0.35893605391598055, Q: 0.3252230674184292},
	{P: 0.3473788178018892, Q: 0.3202938797483339},
	{P: 0.3473788178013641, Q: 0.32029387974780743},
	{P: 0.33212224990042066, Q: 0.31250037919446605},
	{P: 0.3321222498998948, Q: 0.312500379193939},
	{P: 0.3064377266553161, Q: 0.2964892276292507},
	{P: 0.3064377266547894, Q: 0.2964892276287231},
	{P: 0.28047951639140967, Q: 0.2537883596134593},
	{P: 0.266284098682901, Q: 0.24651285343470244},
	{P: 0.2662840986823745, Q: 0.24651285343417456},
	{P: 0.24949213039372353, Q: 0.23795795714373216},
	{P: 0.2494921303931965, Q: 0.2379579571432039},
	{P: 0.24109128169421212, Q: 0.22936492097486944},
	{P: 0.2407734050240557, Q: 0.22903074740636464},
	{P: 0.21015021445082482, Q: 0.1905263519694423},
	{P: 0.19707035326908848, Q: 0.1837435772820167},
	{P: 0.19707035326856095, Q: 0.18374357728148788},
	{P: 0.18962687097801276, Q: 0.18228129040449703},
	{P: 0.18962687097748487, Q: 0.18228129040396787},
	{P: 0.1511382844303254, Q: 0.13727034440083477},
	{P: 0.14200458834208884, Q: 0.13221903880821773},
	{P: 0.1420045883415602, Q: 0.13221903880768796},
	{P: 0.14196085415729376, Q: 0.13217326392649417},
	{P: 0.14196085415676532, Q: 0.13217326392596457},
	{P: 0.10285122806337986, Q: 0.09306363783258054},
	{P: 0.09185094839429848, Q: 0.08450903473695713},
	{P: 0.09185094839376924, Q: 0.08450903473642699},
	{P: 0.07830065860629984, Q: 0.07830065774446186},
	{P: 0.06173640856077467, Q: 0.05586141071082905},
	{P: 0.04012889446862849, Q: 0.03817178460312788},
	{P: 0.04012888371710499, Q: 0.038171774850913824},
	{P: 0.03007786325312666, Q: 0.028610947795142463},
	{P: 0.030077863252596423, Q: 0.02861094779514246},
	{P: 0.020565948616172437, Q: 0.018608839621113756},
	{P: 0.0006520754845072866, Q: 0.0006520671460411009},
	{P: 2.2947051616188226e-08, Q: 1.895371121163333e-08},
	{P: 7.834283522748145e-10, Q: 4.215516824501706e-13},
	{P: 7.834281306941866e-10, Q: 4.2155166933564454e-13},
}

// BenchmarkMaxStepsDaRRM: issue 68's budgeted release from nothing
// kept: the count a budget (8, 1e-8) allows of the DaRRM labels of
// darrmBits (79), and the total to publish.
func BenchmarkMaxStepsDaRRM(b *testing.B) {
	s := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 0.1, Delta: 1.9999999990000004e-09}, Bits: darrmBits}
	for b.Loop() {
		n, t, _ := Account{Step: s, Budget: &Budget{Guarantee{Eps: 8, Delta: 1e-8}}}.MaxSteps(context.Background(), nil)
		sink = float64(n) + t.Guarantee.Eps
	}
}

// BenchmarkDiscreteGaussianDelta: the profile of 1,000 steps of
// Confident-GNMax's two discrete Gaussians, each iteration at an ε not
// asked before, as a search for ε asks it.
func BenchmarkDiscreteGaussianDelta(b *testing.B) {
	sums, err := discreteSums(nil, []GaussianPart{{Sigma: 40, Coords: 2}, {Sigma: 150, Coords: 1}}, 1000)
	if err != nil {
		b.Fatal(err)
	}
	one, err := discreteSums(nil, []GaussianPart{{Sigma: 40, Coords: 2}}, 1000)
	if err != nil {
		b.Fatal(err)
	}
	eps := 1.0
	for b.Loop() {
		eps += 0x1p-30
		sink = discreteGaussianDelta(eps, sums) + discreteGaussianDelta(eps, one)
	}
}

// BenchmarkOneBitDelta: the profile of a composition of 300 steps (a
// transform of 2^19 points, made once) at an ε not asked before, as each
// probe of a search for ε sums it.
func BenchmarkOneBitDelta(b *testing.B) {
	r, err := newBitRun(nil, []bitPart{{oneBitLoss(testBits()["delta"]), 300}}, 1e-8)
	if err != nil {
		b.Fatal(err)
	}
	r.ready()
	eps := 1.0
	for b.Loop() {
		eps += 0x1p-20
		sink = r.delta(eps)
	}
}

// testMemo is the memo of the package's tests: the compositions that many
// tests ask of the same steps are made once per test binary, as a
// command's one Memo makes them once for its run. A test that counts what
// is composed holds a Memo of its own.
var testMemo = new(Memo)
