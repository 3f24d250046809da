package alpha_test

import "example.com/citemod/alpha"

func ExampleNewPlan() {
	_, _ = alpha.NewPlan(1)
}
