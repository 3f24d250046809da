package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnvDir is the environment variable that overrides the data folder.
const EnvDir = "DARRM_DATA"

// ErrNoDir is DefaultDir's error when the environment names no data
// folder: neither $DARRM_DATA, $XDG_DATA_HOME nor a home directory.
var ErrNoDir = errors.New("datasets: no data folder")

// resolve returns dir, or DefaultDir when dir is "".
func resolve(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return DefaultDir()
}

// DefaultDir returns the folder where scripts/fetch-data.sh puts the data
// and where darrm looks for it: $DARRM_DATA if set, else
// $XDG_DATA_HOME/darrm, else ~/.local/share/darrm. The script computes the
// same folder, so the two agree without configuration.
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "darrm"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%w (set %s): %v", ErrNoDir, EnvDir, err)
	}
	return filepath.Join(home, ".local", "share", "darrm"), nil
}
