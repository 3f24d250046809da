package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
)

func init() { accountExtra = append(accountExtra, newAccountPATECmd) }

func newAccountPATECmd() *cobra.Command {
	f := struct {
		pateFlags
		multiInputFlags
		Delta      float64               `flag:"target-delta" required:""`
		Orders     []float64             `flag:"orders" help:"Renyi orders (> 1), comma-separated (default: 1.25, 1.5, 1.75, 2 to 100 by 0.5, 40 orders from 100 to 1000)"`
		Noise      accountant.PATENoise  `flag:"noise" help:"noise the release drew: discrete (darrm's releases) or continuous (the PATE paper's)"`
		Labels     string                `flag:"labels" help:"the labels of a release (darrm aggregate's id,label,answered): account its realised cost, the GNMax step only where it answered"`
		Conversion accountant.Conversion `flag:"conversion"`
		SSOrder    float64               `flag:"ss-order" help:"order of the smooth-sensitivity release (default: the data-dependent optimum)"`
		Beta       float64               `flag:"beta" help:"smoothness beta of the smooth-sensitivity release, in (0, 1/(2 order)) (default: chosen from the votes, as the PATE authors do)"`
		SigmaSS    float64               `flag:"sigma-ss" help:"noise multiplier of the smooth-sensitivity release (with --beta; default: chosen from the votes)"`
		Seed       uint64                `flag:"seed"`
		Format     cliout.Format         `flag:"format"`
	}{}
	cmd := newCmd("account-pate", &cobra.Command{
		Use:   "pate [VOTES] [flags]",
		Short: "PATE's privacy of GNMax, Confident-GNMax or LNMax on multi-class votes: data-independent, data-dependent, and released by smooth sensitivity",
		Args:  cli.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			mech := "gnmax"
			switch {
			case fs.Changed("laplace-scale"):
				mech = "lnmax"
			case fs.Changed("threshold") || fs.Changed("sigma1"):
				mech = "confident-gnmax"
			}
			if err := f.checkMech(cmd, mech); err != nil {
				return err
			}
			if mech == "lnmax" {
				for _, fl := range []string{"labels", "noise", "ss-order", "beta", "sigma-ss", "seed"} {
					if fs.Changed(fl) {
						return cli.Usagef("--%s: lnmax is accounted data-independently only, which needs no release, noise model or smooth sensitivity", fl)
					}
				}
			}
			if fs.Changed("beta") != fs.Changed("sigma-ss") {
				return cli.Usagef("--beta and --sigma-ss go together (fix both, or let both be chosen)")
			}
			var m accountant.ConfidentGNMax
			if mech != "lnmax" {
				var err error
				if m, err = f.gnmax(cmd, f.Noise); err != nil {
					return err
				}
			}
			name := cli.InputArg(args)
			file, err := cli.OpenInput(cmd.InOrStdin(), name)
			if err != nil {
				return err
			}
			defer file.Close()
			var answers []labelRow
			if f.Labels != "" {
				if answers, err = readAnswers(f.Labels); err != nil {
					return cli.Usagef("--labels %s: %v", f.Labels, err)
				}
			}
			votes, err := openCounts(cmd, &f.multiInputFlags, file, cli.InputName(name))
			if err != nil {
				return err
			}
			d := report.AccountPATE{Mechanism: mech, Mech: m, Teachers: votes.k, Classes: votes.c, Conversion: f.Conversion, Delta: f.Delta, Realised: answers != nil}
			if mech == "lnmax" {
				n := 0
				for votes.next() {
					n++
				}
				if err := votes.err(); err != nil {
					return err
				}
				lm := accountant.LNMax{Scale: f.LaplaceScale}
				res, err := accountant.LNMaxAccount(lm, n, f.Delta, f.Orders, f.Conversion)
				if err != nil {
					return flagError(err, map[string]string{"alpha": "--orders", "delta": "--target-delta", "laplace scale": "--laplace-scale"})
				}
				d.LNMax, d.Scale = &res, lm.Scale
				return d.Write(cmd.OutOrStdout(), f.Format)
			}
			acct, err := accountant.NewPATEAccount(m, votes.k, votes.c, f.Orders)
			if err != nil {
				return flagError(err, map[string]string{"alpha": "--orders"})
			}
			n := 0
			for votes.next() {
				a := accountant.AnswerUnknown
				if answers != nil {
					if n >= len(answers) {
						return cli.Usagef("--labels %s has %d rows, %s more queries", f.Labels, len(answers), cli.InputName(name))
					}
					if answers[n].id != votes.id {
						return cli.Usagef("--labels %s, row %d: id %q, but query %d of %s has id %q: the labels are of other votes", f.Labels, n+1, answers[n].id, n+1, cli.InputName(name), votes.id)
					}
					a = answers[n].answer
				}
				if err := acct.Add(votes.counts, a); err != nil {
					return cli.Usagef("%s, query %d: %v", cli.InputName(name), n+1, err)
				}
				n++
			}
			if err := votes.err(); err != nil {
				return err
			}
			if answers != nil && len(answers) != n {
				return cli.Usagef("--labels %s has %d rows, %s %d queries", f.Labels, len(answers), cli.InputName(name), n)
			}
			if d.Result, err = acct.Result(f.Delta, f.Conversion); err != nil {
				return flagError(err, map[string]string{"delta": "--target-delta"})
			}
			d.SSFixed = fs.Changed("beta") && fs.Changed("ss-order")
			src := ensemble.NewSource()
			if seed := cli.Given(fs, "seed", f.Seed); seed != nil {
				src, d.Seed = ensemble.NewSeededSource(*seed), seed
			}
			if err := smoothRelease(&d, acct, f.SSOrder, f.Beta, f.SigmaSS, fs.Changed("beta"), src); err != nil {
				return err
			}
			return d.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f, nil)
	return cmd
}

// smoothRelease computes the smooth-sensitivity fields of d and draws the
// released Renyi DP on the lattice accountant.GNSSLattice.
func smoothRelease(d *report.AccountPATE, acct *accountant.PATEAccount, order, beta, sigma float64, fixed bool, src *ensemble.Source) error {
	if order == 0 {
		order = d.Result.Dependent.Order
	}
	d.SSOrder = order
	ls, err := acct.LocalSensitivity(order)
	if err != nil {
		d.SSError = err.Error()
		return nil
	}
	rdp, err := acct.RDPDependent(order)
	if err != nil {
		return flagError(err, map[string]string{"alpha": "--ss-order"})
	}
	margin, err := acct.EvalMargin(order)
	if err != nil {
		return err
	}
	var ch accountant.GNSSChoice
	if fixed {
		ch = accountant.GNSSChoice{Beta: beta, Sigma: sigma}
		if ch.SS, err = accountant.SmoothSensitivity(ls, beta); err == nil {
			_, err = accountant.GNSSRDP(beta, sigma, order)
		}
		if err != nil {
			return flagError(err, map[string]string{"sigma": "--sigma-ss", "order": "--ss-order"})
		}
	} else if ch, err = accountant.ChooseGNSS(rdp, ls, order); err != nil {
		return err
	}
	cost, err := accountant.GNSSLatticeRDP(ch.Beta, ch.Sigma, order)
	if err != nil {
		return flagError(err, map[string]string{"sigma": "--sigma-ss", "order": "--ss-order"})
	}
	dev, err := accountant.GNSSDeviation(ch.SS+margin, ch.Sigma, order)
	if err != nil {
		return err
	}
	noisy, err := ensemble.LatticeGaussian(src, rdp, dev, accountant.GNSSLattice)
	if err != nil {
		return err
	}
	eps, err := accountant.ConvertRDP(max(0, noisy)+cost, order, d.Delta, d.Conversion)
	if err != nil {
		return err
	}
	d.Beta, d.SS, d.Margin, d.SigmaSS, d.Deviation, d.GNSS, d.Released, d.EpsReleased = &ch.Beta, &ch.SS, &margin, &ch.Sigma, &dev, &cost, &noisy, &eps
	return nil
}

// countsReader streams every query's counts and id from a counts or
// class-index file, or a 0/1 vote file read as two classes.
type countsReader struct {
	k, c   int
	counts []int
	id     string
	multi  *ensemble.MultiReader
	votes  *ensemble.VoteReader
	name   string
}

func openCounts(cmd *cobra.Command, f *multiInputFlags, r io.Reader, name string) (*countsReader, error) {
	vf, multi, err := f.openVotes(cmd, r, name)
	if err != nil {
		return nil, err
	}
	cr := &countsReader{name: name}
	if multi {
		if cr.multi, err = f.multi(cmd, vf, name); err != nil {
			return nil, err
		}
		cr.k, cr.c = cr.multi.K(), cr.multi.Classes()
		return cr, nil
	}
	if cr.votes, err = vf.Votes(ensemble.ReadOptions{Header: f.Header, ID: f.ID}); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	cr.k, cr.c, cr.counts = cr.votes.K(), 2, make([]int, 2)
	return cr, nil
}

// next advances to the next query.
func (cr *countsReader) next() bool {
	if cr.multi != nil {
		if !cr.multi.Next() {
			return false
		}
		q := cr.multi.Query()
		cr.counts, cr.id = q.Counts, queryID(q.ID, q.Index)
		return true
	}
	if !cr.votes.Next() {
		return false
	}
	q := cr.votes.Query()
	ones := 0
	for _, v := range q.Votes {
		ones += int(v)
	}
	cr.counts[0], cr.counts[1], cr.id = cr.votes.K()-ones, ones, queryID(q.ID, q.Index)
	return true
}

// err returns the error that stopped next, as bad input.
func (cr *countsReader) err() error {
	var err error
	if cr.multi != nil {
		err = cr.multi.Err()
	} else {
		err = cr.votes.Err()
	}
	if err != nil {
		return cli.Usagef("%v", err)
	}
	return nil
}

// queryID is the id a label file gives a query: its id column, or its
// position from 1.
func queryID(id []byte, index int) string {
	if id == nil {
		return strconv.Itoa(index)
	}
	return string(id)
}

// labelRow is one row of a multi-class label file: the query's id and
// whether the threshold step answered it.
type labelRow struct {
	id     string
	answer accountant.Answer
}

// readAnswers reads the ids and the answered column of a multi-class
// label file (CSV id,label,answered or JSON lines {"id", "label",
// "answered"}, as darrm aggregate writes them), in order; '#' comment
// lines (a NOT FOR RELEASE mark) and blank lines are skipped. A label must
// be there exactly when the row is answered.
func readAnswers(path string) ([]labelRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, ensemble.MaxLineBytes)
	var out []labelRow
	jsonl, header := false, false
	for line := 1; sc.Scan(); line++ {
		l := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
		}
		if !header {
			header, jsonl = true, strings.HasPrefix(l, "{")
			if !jsonl {
				if l != "id,label,answered" {
					return nil, bad("want the header id,label,answered of a multi-class release")
				}
				continue
			}
		}
		var row labelRow
		var labelled, answered bool
		if jsonl {
			var r struct {
				ID       json.RawMessage `json:"id"`
				Label    json.RawMessage `json:"label"`
				Answered *bool           `json:"answered"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.Answered == nil || r.ID == nil {
				return nil, bad("want a JSON object with \"id\", \"label\" and \"answered\"")
			}
			if err := json.Unmarshal(r.ID, &row.id); err != nil {
				row.id = string(r.ID)
			}
			labelled, answered = r.Label != nil && string(r.Label) != "null", *r.Answered
		} else {
			rec, err := csv.NewReader(strings.NewReader(l)).Read()
			if err != nil || len(rec) != 3 {
				return nil, bad("want 3 columns id,label,answered")
			}
			if rec[2] != "0" && rec[2] != "1" {
				return nil, bad("answered %q: must be 0 or 1", rec[2])
			}
			row.id, labelled, answered = rec[0], rec[1] != "", rec[2] == "1"
		}
		if labelled != answered {
			return nil, bad("a label must be given exactly when the query was answered")
		}
		row.answer = accountant.NotAnswered
		if answered {
			row.answer = accountant.Answered
		}
		out = append(out, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no labels")
	}
	return out, nil
}
