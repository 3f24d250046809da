package setup

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// ProblemFlags are the DaRRM problem (K, m, eps, Delta, delta) shared by
// solve, verify and the release commands.
type ProblemFlags struct {
	K      int     `flag:"K"`
	M      float64 `flag:"m"`
	Eps    float64 `flag:"eps"`
	Delta  float64 `flag:"Delta"`
	Target float64 `flag:"delta"`
	// relation, when set, holds the command's --relation and --target-eps
	// (solve, verify): commands without them solve and release in DaRRM's
	// relation, or in the one a gamma file states.
	relation *RelationFlags
}

// RelationFlags choose the neighbouring relation of a problem and, in the
// one-vote relation, the release's eps.
type RelationFlags struct {
	Relation  accountant.Relation `flag:"relation" help:"private-teachers or one-vote"`
	TargetEps []float64           `flag:"target-eps"`
	fs        *pflag.FlagSet      // the command's flags, to tell which were given
}

// WithRelation gives the problem flags of cmd the relation flags r, which
// cmd defines.
func (f *ProblemFlags) WithRelation(cmd *cobra.Command, r *RelationFlags) *cobra.Command {
	r.fs, f.relation = cmd.Flags(), r
	return cmd
}

// Params returns the problem with K from --K, which is required.
func (f *ProblemFlags) Params(cmd *cobra.Command) (resolve.Resolved, error) {
	if err := cli.RequireFlags(cmd, "K"); err != nil {
		return resolve.Resolved{}, err
	}
	return f.paramsForK(cmd, f.K, "--K")
}

// paramsForK is Params with K = k, which kName names in an error, for a
// command that takes K from its input (ReadGamma); the caller checks k
// against a given --K. Values the command line does not state come from
// the files' stated, then from the defaults.
func (f *ProblemFlags) paramsForK(cmd *cobra.Command, k int, kName string, files ...resolve.Stated) (resolve.Resolved, error) {
	return f.ParamsNamed(k, kName, "--eps", f.Stated(cmd), files...)
}

// Stated is what the command line states of the problem; with relation
// flags, --target-eps states the release's eps, which is the problem's eps
// in the one-vote relation.
func (f *ProblemFlags) Stated(cmd *cobra.Command) resolve.Stated {
	fs := cmd.Flags()
	s := resolve.Stated{M: cli.Given(fs, "m", f.M), Eps: cli.Given(fs, "eps", f.Eps), Delta: cli.Given(fs, "Delta", f.Delta), TargetDelta: cli.Given(fs, "delta", f.Target)}
	if r := f.relation; r != nil {
		s.Relation = cli.Given(fs, "relation", r.Relation)
		if fs.Changed("target-eps") && len(r.TargetEps) > 0 {
			s.Eps = &r.TargetEps[0]
		}
	}
	return s
}

// ParamsNamed is the problem of k teachers with each value from line, else
// from the first of files that states it, else the default, where k came
// from kName (--K, or an input's size) and line's eps from eps (a flag, or
// a vote file's metadata header), which errors on them name.
func (f *ProblemFlags) ParamsNamed(k int, kName, eps string, line resolve.Stated, files ...resolve.Stated) (resolve.Resolved, error) {
	p := resolve.Problem(k, constraints.Problem{M: f.M, Eps: f.Eps, Delta: f.Delta}, append([]resolve.Stated{line}, files...)...)
	if err := f.checkRelation(p, files); err != nil {
		return p, err
	}
	names := ProblemNames(p.Relation == accountant.OneVote, eps)
	names["K"] = kName
	if p.DeltaDefault {
		// The value refused is then not one the user wrote.
		names["delta"] = "--delta (not given: its default 1-(1-Delta)^m)"
	}
	return p, Flagged(p.Validate(), names)
}

// ProblemNames maps the names of a DaRRM problem's parameters
// (constraints.Problem.Validate) to the flags that give them, in every
// command that takes one: in the one-vote relation eps and m·eps are the
// release's --target-eps; else m·eps is --m times eps, the flag (or vote
// file's header) that gave the teachers' eps.
func ProblemNames(oneVote bool, eps string) map[string]string {
	if oneVote {
		return map[string]string{"eps": "--target-eps", "m·eps": "--target-eps"}
	}
	return map[string]string{"m·eps": "m·eps (--m × " + eps + ")"}
}

// checkRelation refuses the flags that the relation of p has no use for:
// in the one-vote relation the teachers' --m, --eps and --Delta (the
// release's eps is --target-eps, or a gamma file's eps, and is required),
// in DaRRM's --target-eps (the release's eps is m·eps).
func (f *ProblemFlags) checkRelation(p resolve.Resolved, files []resolve.Stated) error {
	if f.relation == nil {
		return nil
	}
	fs := f.relation.fs
	if p.Relation != accountant.OneVote {
		if fs.Changed("target-eps") {
			return cli.Usagef("--target-eps is the release's eps in the one-vote relation (--relation one-vote); in the %v relation it is m·eps (--m, --eps)", p.Relation)
		}
		return nil
	}
	for _, name := range []string{"m", "eps", "Delta"} {
		if fs.Changed(name) {
			return cli.Usagef("--%s is a teacher's guarantee, which the one-vote relation does not use: give the release's (eps, delta) with --target-eps and --delta", name)
		}
	}
	line, err := OneVoteTarget(fs, f.relation.TargetEps, nil)
	if err != nil {
		return err
	}
	stated := line.Eps != nil
	for _, s := range files {
		stated = stated || s.Eps != nil
	}
	if !stated {
		return cli.Usagef("--relation one-vote needs the release's eps: give --target-eps")
	}
	return nil
}

// OneVoteTarget states the problem of a release whose per-query target
// is its own (eps, delta) in the one-vote relation (darrm-one-vote, or
// darrm solve --relation one-vote): the relation, the release's eps, the
// one value eps of --target-eps if it is given in fs, and delta if given.
// Resolved as a one-vote problem (constraints.NewOneVote), the teachers'
// m and Delta are 1 and 0, which the relation does not use, and a delta
// not given is 0: pure. More than one eps is a usage error: a release
// has one.
func OneVoteTarget(fs *pflag.FlagSet, eps []float64, delta *float64) (resolve.Stated, error) {
	s := resolve.Stated{Relation: new(accountant.OneVote), TargetDelta: delta}
	switch {
	case !fs.Changed("target-eps") || len(eps) == 0:
	case len(eps) == 1:
		s.Eps = &eps[0]
	default:
		return s, cli.Usagef("--target-eps: %d values: give the one eps of each release", len(eps))
	}
	return s, nil
}

// ReadGamma reads the gamma file named by args (standard input if none),
// which must have K+1 values for a --K given, and the problem it is for:
// the parameters stated in the file with the command line, which takes
// precedence.
func (f *ProblemFlags) ReadGamma(cmd *cobra.Command, args []string) (gamma.Table, resolve.Resolved, error) {
	name := cli.InputArg(args)
	k := 0
	if cmd.Flags().Changed("K") {
		k = f.K
	}
	tab, err := ReadTable(cmd, "GAMMA", name, k)
	if err != nil {
		return gamma.Table{}, resolve.Resolved{}, err
	}
	kName := "--K"
	if k == 0 {
		// K is the gamma's: an error on it names the file, not a flag.
		kName = fmt.Sprintf("K of the gamma of %s (its %d values)", cli.InputName(name), len(tab.Gamma))
	}
	p, err := f.paramsForK(cmd, tab.Gamma.K(), kName, resolve.FromTable(tab))
	return tab, p, err
}
