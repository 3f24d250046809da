package votefile_test

import (
	"fmt"
	"os"

	"github.com/darrm/darrm/votefile"
)

// Reading PATE's published layout: a NumPy array of class labels, one
// row per teacher, one column per query.
func ExampleFile_Classes_numPy() {
	f, err := os.Open("../testdata/pate-teachers-labels-K25.npy")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	vf, err := votefile.Open(f, "pate-teachers-labels-K25.npy", votefile.FormatAuto)
	if err != nil {
		fmt.Println(err)
		return
	}
	in, err := vf.Classes(votefile.ClassOptions{Input: votefile.InputClasses, Classes: 10, TeachersInRows: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	queries := 0
	for in.Next() {
		queries++
	}
	fmt.Println(in.Format(), "K =", in.K(), "C =", in.Classes(), "queries:", queries, in.Err())
	// Output: npy K = 25 C = 10 queries: 60 <nil>
}
