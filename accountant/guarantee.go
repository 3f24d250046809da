package accountant

import (
	"fmt"

	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/param"
)

// Guarantee is an (ε, δ)-differential-privacy guarantee (Definition 3.3.1).
type Guarantee struct {
	Eps   float64 `json:"eps"`
	Delta float64 `json:"delta"`
}

// String formats g as "(ε, δ)-DP", each number by decimal.FormatBound.
func (g Guarantee) String() string {
	return fmt.Sprintf("(%s, %s)-DP", decimal.FormatBound(g.Eps), decimal.FormatBound(g.Delta))
}

// checkStep validates the guarantee of one composed mechanism: ε > 0 and
// δ in [0, 1).
func checkStep(prefix string, g Guarantee) error {
	if err := param.Positive(prefix+"eps", g.Eps); err != nil {
		return err
	}
	return param.Delta(prefix+"delta", g.Delta)
}
