package docstest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// sumLineRE is a line of sha256sum's check format with a path relative to
// the data folder (lines naming a shell variable, such as the downloaded
// archive in a temporary folder, do not match).
var sumLineRE = regexp.MustCompile(`(?m)^[0-9a-f]{64}  ([A-Za-z0-9_./-]+)$`)

// DataFiles returns the files scripts/fetch-data.sh puts into the data
// folder, read from the checksums the script verifies them against, so the
// list is kept in one place.
func DataFiles(script []byte) ([]string, error) {
	var files []string
	for _, m := range sumLineRE.FindAllSubmatch(script, -1) {
		files = append(files, string(m[1]))
	}
	if len(files) == 0 {
		return nil, errors.New("scripts/fetch-data.sh lists no checksummed files (lines \"SHA256  path\"), so the docs test cannot tell whether the data are present")
	}
	return files, nil
}

// MissingData returns "" when every file is present (and not empty) in dir,
// and otherwise why not, naming the first file missing.
func MissingData(dir string, files []string) string {
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Sprintf("no data in %s (%s is missing; run scripts/fetch-data.sh)", dir, f)
		case err != nil:
			return fmt.Sprintf("data in %s unreadable: %v", dir, err)
		case fi.Size() == 0:
			return fmt.Sprintf("data in %s incomplete: %s is empty (run scripts/fetch-data.sh)", dir, f)
		}
	}
	return ""
}
