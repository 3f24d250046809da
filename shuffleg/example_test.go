package shuffleg_test

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/shuffleg"
)

// Example trains a private mean estimate: the problem on four private
// samples, DP-ShuffleG's noise calibrated to (5, 10⁻⁶)-DP, one run.
func Example() {
	task := shuffleg.Task{Loss: shuffleg.SquaredDistance, Reg: shuffleg.Ball{Radius: 10}}
	private := &shuffleg.Dataset{D: 2, X: []float64{0.9, 0.1, 1.1, -0.1, 1.0, 0.0, 0.8, 0.2}}
	p, err := shuffleg.NewProblem(context.Background(), task, private, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := shuffleg.NewPlan(shuffleg.DPShuffleG, p.N(), 0, 20, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := plan.Calibrate(1, accountant.Guarantee{Eps: 5, Delta: 1e-6}, accountant.PaperConversion, accountant.AlphaExact)
	if err != nil {
		fmt.Println(err)
		return
	}
	// A fixed key makes the run reproducible; leave Key nil for a private
	// model, whose randomness then comes from crypto/rand.
	key := [32]byte{1}
	cfg := shuffleg.Config{Algorithm: shuffleg.DPShuffleG, Order: shuffleg.RR, Epochs: 20, Fraction: 1, LR: 0.01, Clip: 1, Sigma: c.Sigma, Key: &key}
	tr, err := shuffleg.Run(context.Background(), p, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("sigma %.4g at eps %.4g (%s)\n", c.Sigma, c.Eps, c.Reference)
	fmt.Printf("optimum %v: %s\n", p.Optimum().X, p.Optimum().Method)
	fmt.Printf("excess after %d epochs: %.3g\n", cfg.Epochs, tr.Excess[cfg.Epochs])
	// Output:
	// sigma 10.19 at eps 5 (Lemma 4.5.2 (PABI + RDP composition))
	// optimum [0.95 0.05]: closed form: prox of the private mean
	// excess after 20 epochs: 0.678
}

// ExampleProblem_Optimum finds the non-private optimum of ridge
// regression, against which a run's excess risk is measured (Trace.Excess).
func ExampleProblem_Optimum() {
	task := shuffleg.Task{Loss: shuffleg.SquaredError, Reg: shuffleg.Ridge{Lambda: 0.1}}
	data := &shuffleg.Dataset{D: 1, X: []float64{1, 2, 3}, Y: []float64{1, 2, 3}}
	p, err := shuffleg.NewProblem(context.Background(), task, data, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x* = %.4f, G(x*) = %.4f\n", p.Optimum().X[0], p.Optimum().Value)
	// Output:
	// x* = 0.9894, G(x*) = 0.0495
}
