package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
)

// pateFlags are the parameters of a multi-class PATE aggregator.
type pateFlags struct {
	Sigma2    float64 `flag:"sigma2" help:"GNMax: deviation of the noise on each class count (> 0)"`
	Threshold float64 `flag:"threshold" help:"confident-gnmax: answer when the largest count plus noise reaches this"`
	Sigma1    float64 `flag:"sigma1" help:"confident-gnmax: deviation of the threshold step's noise (> 0)"`
}

// mech returns the aggregator's parameters, checking that --threshold and
// --sigma1 go together.
func (f *pateFlags) mech(cmd *cobra.Command, noise accountant.PATENoise) (accountant.ConfidentGNMax, error) {
	fs := cmd.Flags()
	if fs.Changed("threshold") != fs.Changed("sigma1") {
		return accountant.ConfidentGNMax{}, cli.Usagef("--threshold and --sigma1 go together: they are the threshold step of confident-gnmax")
	}
	m := accountant.ConfidentGNMax{Threshold: f.Threshold, Sigma1: f.Sigma1, Sigma2: f.Sigma2, Noise: noise}
	if fs.Changed("sigma1") && !(f.Sigma1 > 0) {
		return m, cli.Usagef("--sigma1 = %v: must be > 0", f.Sigma1)
	}
	return m, flagError(m.Validate(), nil)
}

// multiInput opens the votes for a multi-class command: a counts file
// (--input-format counts), class indices (--classes C), or 0/1 votes read
// as two classes.
type multiInputFlags struct {
	Classes  int               `flag:"classes" help:"number of classes C: the votes are class indices 0..C-1 (with --input-format counts, every row must have C counts)"`
	InFormat ensemble.Format   `flag:"input-format" help:"votes as csv or jsonl, or counts: rows of C vote counts (auto: JSON lines if the first line starts with [ or {)"`
	Header   ensemble.Presence `flag:"header" help:"CSV header row: auto, yes or no"`
	ID       ensemble.Presence `flag:"id" help:"id column: auto, yes or no"`
}

// multi reports whether the flags ask for multi-class votes.
func (f *multiInputFlags) multi(cmd *cobra.Command) bool {
	return f.InFormat == ensemble.FormatCounts || cmd.Flags().Changed("classes")
}

func (f *multiInputFlags) open(cmd *cobra.Command, r io.Reader, name string) (*ensemble.MultiReader, error) {
	opts := ensemble.MultiOptions{Input: ensemble.InputClasses, Classes: f.Classes, Header: f.Header, ID: f.ID, Format: f.InFormat}
	if f.InFormat == ensemble.FormatCounts {
		opts.Input, opts.Format = ensemble.InputCounts, ensemble.FormatAuto
	}
	mr, err := ensemble.NewMultiReader(r, name, opts)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return mr, nil
}

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
		Short: "PATE's privacy of GNMax or Confident-GNMax on multi-class votes: data-independent, data-dependent, and released by smooth sensitivity",
		Args:  cli.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.RequireFlags(cmd, "sigma2"); err != nil {
				return err
			}
			m, err := f.mech(cmd, f.Noise)
			if err != nil {
				return err
			}
			name := cli.InputArg(args)
			file, err := cli.OpenInput(cmd.InOrStdin(), name)
			if err != nil {
				return err
			}
			defer file.Close()
			var answers []accountant.Answer
			if f.Labels != "" {
				if answers, err = readAnswers(f.Labels); err != nil {
					return cli.Usagef("--labels %v", err)
				}
			}
			k, c, rows, err := readMultiVotes(cmd, &f.multiInputFlags, file, cli.InputName(name))
			if err != nil {
				return err
			}
			if answers != nil && len(answers) != len(rows) {
				return cli.Usagef("--labels %s has %d rows, %s %d queries", f.Labels, len(answers), cli.InputName(name), len(rows))
			}
			acct, err := accountant.NewPATEAccount(m, k, c, f.Orders)
			if err != nil {
				return flagError(err, map[string]string{"alpha": "--orders"})
			}
			for i, row := range rows {
				a := accountant.AnswerUnknown
				if answers != nil {
					a = answers[i]
				}
				if err := acct.Add(row, a); err != nil {
					return cli.Usagef("query %d: %v", i+1, err)
				}
			}
			res, err := acct.Result(f.Delta, f.Conversion)
			if err != nil {
				return flagError(err, map[string]string{"delta": "--target-delta"})
			}
			d := report.AccountPATE{Mechanism: "gnmax", Mech: m, Conversion: f.Conversion, Delta: f.Delta, Result: res}
			if m.Confident() {
				d.Mechanism = "confident-gnmax"
			}
			fs := cmd.Flags()
			if fs.Changed("beta") != fs.Changed("sigma-ss") {
				return cli.Usagef("--beta and --sigma-ss go together (fix both, or let both be chosen)")
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
// released eps.
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
	var ch accountant.GNSSChoice
	if fixed {
		ch = accountant.GNSSChoice{Beta: beta, Sigma: sigma}
		if ch.SS, err = accountant.SmoothSensitivity(ls, beta); err == nil {
			ch.Cost, err = accountant.GNSSRDP(beta, sigma, order)
		}
		if err != nil {
			return flagError(err, map[string]string{"sigma": "--sigma-ss", "order": "--ss-order"})
		}
	} else if ch, err = accountant.ChooseGNSS(rdp, ls, order); err != nil {
		return err
	}
	z, err := ensemble.StandardNormalLattice(src)
	if err != nil {
		return err
	}
	noisy := max(0, rdp+ch.SS*ch.Sigma*z)
	eps, err := accountant.ConvertRDP(noisy+ch.Cost, order, d.Delta, d.Conversion)
	if err != nil {
		return err
	}
	d.Beta, d.SS, d.SigmaSS, d.GNSS, d.EpsReleased = &ch.Beta, &ch.SS, &ch.Sigma, &ch.Cost, &eps
	return nil
}

// readMultiVotes reads every query's counts: from a counts or class-index
// file, or a 0/1 vote file as two classes.
func readMultiVotes(cmd *cobra.Command, f *multiInputFlags, r io.Reader, name string) (k, c int, rows [][]int, err error) {
	if f.multi(cmd) {
		mr, err := f.open(cmd, r, name)
		if err != nil {
			return 0, 0, nil, err
		}
		for mr.Next() {
			rows = append(rows, append([]int(nil), mr.Query().Counts...))
		}
		if err := mr.Err(); err != nil {
			return 0, 0, nil, cli.Usagef("%v", err)
		}
		return mr.K(), mr.Classes(), rows, nil
	}
	vr, err := ensemble.NewVoteReader(r, name, ensemble.ReadOptions{Format: f.InFormat, Header: f.Header, ID: f.ID})
	if err != nil {
		return 0, 0, nil, cli.Usagef("%v", err)
	}
	for vr.Next() {
		ones := 0
		for _, v := range vr.Query().Votes {
			ones += int(v)
		}
		rows = append(rows, []int{vr.K() - ones, ones})
	}
	if err := vr.Err(); err != nil {
		return 0, 0, nil, cli.Usagef("%v", err)
	}
	return vr.K(), 2, rows, nil
}

// readAnswers reads the answered column of a multi-class label file (CSV
// id,label,answered or JSON lines with "answered"), in order.
func readAnswers(path string) ([]accountant.Answer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []accountant.Answer
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var body []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "#") && strings.TrimSpace(l) != "" {
			body = append(body, l)
		}
	}
	if len(body) == 0 {
		return nil, errors.New("no labels")
	}
	if strings.HasPrefix(strings.TrimSpace(body[0]), "{") {
		for i, l := range body {
			var row struct {
				Answered *bool `json:"answered"`
			}
			if err := json.Unmarshal([]byte(l), &row); err != nil || row.Answered == nil {
				return nil, fmt.Errorf("line %d: want a JSON object with \"answered\"", i+1)
			}
			out = append(out, answerOf(*row.Answered))
		}
		return out, nil
	}
	recs, err := csv.NewReader(strings.NewReader(strings.Join(body, "\n"))).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs[0]) != 3 || recs[0][2] != "answered" {
		return nil, errors.New("want the header id,label,answered of a multi-class release")
	}
	for i, r := range recs[1:] {
		switch r[2] {
		case "1":
			out = append(out, accountant.Answered)
		case "0":
			out = append(out, accountant.NotAnswered)
		default:
			return nil, fmt.Errorf("row %d: answered %q: must be 0 or 1", i+2, r[2])
		}
	}
	return out, nil
}

func answerOf(b bool) accountant.Answer {
	if b {
		return accountant.Answered
	}
	return accountant.NotAnswered
}
