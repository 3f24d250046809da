package datasets_test

import (
	"fmt"

	"github.com/darrm/darrm/experiments/datasets"
)

// ExampleLoad builds the COMPAS lasso-logistic problem's private and public
// sets from a folder laid out as scripts/fetch-data.sh and the catalog say
// (here the package's small synthetic fixture).
func ExampleLoad() {
	pair, err := datasets.Load("testdata", "compas", datasets.Classification)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("D: %d samples, P: %d samples, d = %d\n", pair.Private.Len(), pair.Public.Len(), pair.Private.D)
	// Output: D: 3 samples, P: 3 samples, d = 11
}
