package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestCheckSettings: a setting given to a mechanism that does not take it
// is named with the mechanisms that do (each once) and their kind of
// votes; a setting needed and not given is asked for unless stated (a
// label file's header) or not one the command has.
func TestCheckSettings(t *testing.T) {
	lookup := func(name provenance.MechanismName, in votefile.Input) mechanismInfo {
		info, err := lookupInfo(name, in)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	rr, conf := lookup(ensemble.RR{}.Name(), votefile.TwoClass), lookup(ensemble.ConfidentGNMax{}.Name(), votefile.ManyClasses)
	for _, tc := range []struct {
		name   string
		info   mechanismInfo
		flags  []string
		stated []string
		want   string // "" for no error
	}{
		{"all taken", rr, []string{"m", "rr-composition"}, nil, ""},
		{"another kind's", rr, []string{"sigma2"}, nil, "--sigma2 is not a setting of rr on two-class votes, which takes --m, --eps, --Delta, --delta, --rr-composition, --rr-delta-prime (--sigma2 is a setting of gnmax, confident-gnmax on multi-class votes"},
		{"needed", conf, []string{"sigma2", "sigma1"}, nil, "--threshold is required by confident-gnmax"},
		{"needed, stated", conf, []string{"sigma1", "threshold", "delta"}, []string{"sigma2"}, ""},
	} {
		cmd := newAggregateCmd()
		for _, n := range tc.flags {
			v := "1"
			if n == "rr-composition" {
				v = "general"
			}
			if err := cmd.Flags().Set(n, v); err != nil {
				t.Fatal(err)
			}
		}
		err := checkSettings(cmd, tc.info, tc.stated)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A command without the flags of a mechanism's needs asks for none.
	bare := &cobra.Command{Use: "bare"}
	if err := checkSettings(bare, conf, nil); err != nil {
		t.Errorf("needed, not the command's: %v", err)
	}
}
