package setup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/votefile"
)

// plannedInt is LNMax whose plan chooses a whole number.
type plannedInt struct {
	ensemble.LNMax
	Draws int `json:"draws" flag:"draws" help:"draws"`
}

func (plannedInt) Plan(votefile.Input) ensemble.Planned {
	return ensemble.Planned{Setting: "Laplace scale", Flag: "draws"}
}

// TestCheckSettings: a registry whose mechanism has a setting that could
// not take the value a command gives it panics when the commands are
// built, naming the mechanism, the flag and why; darrm's does not.
func TestCheckSettings(t *testing.T) {
	NewMechanisms(ensemble.Mechanisms())
	for _, c := range []struct {
		name string
		reg  ensemble.Registry
		want string
	}{
		{"noise of another type", ensemble.Registry{struct {
			ensemble.LNMax
			Kind string `json:"kind" flag:"noise" help:"its noise"`
		}{}}, "mechanism lnmax: setting --noise (string): the command sets --noise to a noisymax.Noise"},
		{"a whole-number m", ensemble.Registry{struct {
			ensemble.RR
			N int `json:"n" flag:"m" help:"its m"`
		}{}}, "setting --m (int): the command sets --m to a float64"},
		{"a plan's whole number", ensemble.Registry{plannedInt{}}, "setting --draws (int): a plan chooses it"},
		{"one flag of two types", append(ensemble.Mechanisms(), struct {
			ensemble.GNMax
			Scale int `json:"scale" flag:"laplace-scale" help:"its scale"`
		}{}), "setting --laplace-scale (int): another mechanism's setting of that flag is a float64"},
	} {
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			NewMechanisms(c.reg)
			return ""
		}()
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want a panic with %q", c.name, got, c.want)
		}
	}
}

// TestBindSettingsRefusesCommandFlag: a mechanism's own setting whose flag
// the command defines itself (--workers, its goroutines) panics when the
// command binds the settings, where the command's flag took the value
// given for the setting and the mechanism never saw it.
func TestBindSettingsRefusesCommandFlag(t *testing.T) {
	reg := append(ensemble.Mechanisms(), struct {
		ensemble.LNMax
		Workers int `json:"workers" flag:"workers" help:"its own workers"`
	}{})
	cmd := &cobra.Command{Use: "aggregate"}
	cmd.Flags().Int("workers", 0, "goroutines")
	got := func() (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		NewMechanisms(reg).BindSettings(cmd, votefile.TwoClass, votefile.ManyClasses)
		return ""
	}()
	if want := "setting --workers: aggregate defines --workers itself"; !strings.Contains(got, want) {
		t.Errorf("%q, want a panic with %q", got, want)
	}
	own := &cobra.Command{Use: "aggregate"}
	NewMechanisms(ensemble.Mechanisms()).BindSettings(own, votefile.TwoClass, votefile.ManyClasses)
	if own.Flags().Lookup("sigma2") == nil {
		t.Error("darrm's registry: --sigma2 not bound")
	}
}
